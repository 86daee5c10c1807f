"""The first-run dialog: downloads through the real code from a fake hub on 127.0.0.1, and
says plainly when there is no network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.config import AppConfig
from subtitler.models.firstrun import FirstRunPlan, ModelState
from subtitler.ui.firstrun import FirstRunDialog
from tests.helpers.fake_hub import MT_REPO, FakeHub, serving_models
from tests.integration.test_models_download import asr_entry, mt_entry


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path) -> Iterator[FakeHub]:
    with serving_models(monkeypatch, tiny_gguf.read_bytes()) as h:
        yield h


def plan(network: bool | None) -> FirstRunPlan:
    missing_asr = ModelState("asr", "missing", None, asr_entry(), "not downloaded")
    missing_mt = ModelState("mt", "missing", None, mt_entry(), "not downloaded")
    msgs = ("This computer: CPU only.",)
    if network is False:
        msgs += ("No network connection: models cannot be downloaded now.",)
    return FirstRunPlan(
        "small", missing_asr, missing_mt, (asr_entry(), mt_entry()), 17_000_000, network, msgs
    )


def test_download_from_the_dialog(qtbot, hub: FakeHub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dlg = FirstRunDialog(AppConfig(), plan(True), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    assert dlg.download_btn.isEnabled()
    with qtbot.waitSignal(dlg.accepted, timeout=30_000):
        dlg.download_btn.click()
    cfg = dlg.result_config
    assert Path(cfg.mt.model_path) == tmp_path / "models" / "tiny-mt" / "tiny.gguf"
    assert Path(cfg.mt.model_path).read_bytes() == hub.files[f"{MT_REPO}/tiny.gguf"]
    assert cfg.mt.template == "chatml"  # the catalog's template for that entry
    assert (Path(cfg.asr.model) / "model.bin").exists()
    assert dlg.status.text() == "Models ready."


def test_cancel_during_a_stalled_download_is_said_at_once(
    qtbot, hub: FakeHub, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A stalled connection notices a cancel at its next read (up to 10 s later): until then
    the button seemed to do nothing."""
    import threading

    key = f"{MT_REPO}/tiny.gguf"
    stalled, release = threading.Event(), threading.Event()
    hub.midway[key] = (1 << 20, lambda: (stalled.set(), release.wait(30)))
    dlg = FirstRunDialog(AppConfig(), plan(True), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    dlg.download_btn.click()
    qtbot.waitUntil(stalled.is_set, timeout=30_000)
    dlg.cancel_btn.click()
    assert dlg.status.text() == "Stopping the download…" and not dlg.cancel_btn.isEnabled()
    release.set()  # (the connection's next read: the cancel is seen)
    qtbot.waitUntil(lambda: dlg.cancel_btn.isHidden(), timeout=30_000)
    assert dlg.status.text().startswith("Download stopped: download cancelled")
    dlg.download_btn.click()  # again: its Cancel works again
    assert dlg.cancel_btn.isEnabled()
    with qtbot.waitSignal(dlg.accepted, timeout=30_000):
        pass


def test_no_network_is_said_plainly(qtbot) -> None:  # type: ignore[no-untyped-def]
    dlg = FirstRunDialog(AppConfig(), plan(False))
    qtbot.addWidget(dlg)
    assert not dlg.download_btn.isEnabled()
    assert "No network connection" in dlg.text.text()
    assert dlg.local_btn.isEnabled()


def test_download_failure_keeps_the_dialog_usable(
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    dlg = FirstRunDialog(AppConfig(), plan(True), root=tmp_path)
    qtbot.addWidget(dlg)
    dlg.download_btn.click()
    qtbot.waitUntil(lambda: dlg.download_btn.isEnabled(), timeout=30_000)
    assert dlg.status.text().startswith("Download stopped:")
    assert dlg.status.text().endswith(
        "Click Download to try again, or use model files on this computer."
    )
    # What Skip keeps: the models recommended (to download later), not downloaded ones.
    assert (dlg.result_config.asr.model, dlg.result_config.mt.model_path) == (
        "tiny-test",
        "tiny-mt",
    )
    assert dlg.bar.isHidden()  # no progress bar still busy next to "stopped"


def test_unwritable_models_folder_keeps_the_dialog_usable(
    qtbot, hub: FakeHub, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "models"
    blocker.write_text("a file where the folder should be")
    dlg = FirstRunDialog(AppConfig(), plan(True), root=blocker)
    qtbot.addWidget(dlg)
    dlg.download_btn.click()
    qtbot.waitUntil(lambda: dlg.download_btn.isEnabled(), timeout=30_000)
    assert dlg.status.text().startswith(
        f"Download stopped: cannot write tiny-asr to {blocker / 'tiny-asr'}: Not a directory."
    )
    assert dlg.cancel_btn.isHidden() and dlg.bar.isHidden()
    assert not dlg.result_config.asr.model.startswith(str(blocker))


def test_download_thread_holds_no_qt_object(
    qtbot, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The thread's last reference to the dialog (or any QObject) would destroy it outside the
    GUI thread when it ends: that crashed pytest now and then after this dialog's tests."""
    import threading

    from PySide6.QtCore import QObject

    targets = []
    real_thread = threading.Thread

    def spy(*a, **kw):  # type: ignore[no-untyped-def]
        if kw.get("name") == "model-download":
            targets.append(kw["target"])
        return real_thread(*a, **kw)

    monkeypatch.setattr(threading, "Thread", spy)
    dlg = FirstRunDialog(AppConfig(), plan(True), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    with qtbot.waitSignal(dlg.accepted, timeout=30_000):
        dlg.download_btn.click()
    (work,) = targets
    held = [c.cell_contents for c in work.__closure__ or ()]
    assert held and not any(isinstance(x, QObject) for x in held), held


# -- issue 27 point 1 and 4: languages first, files on this computer in the dialog --------------


def _real_planner(tmp_path: Path, calls: list[AppConfig] | None = None):  # type: ignore[no-untyped-def]
    from subtitler.models.firstrun import plan_first_run
    from tests.helpers.windows import LAPTOP

    def planner(cfg: AppConfig) -> FirstRunPlan:
        if calls is not None:
            calls.append(cfg)
        return plan_first_run(cfg, LAPTOP, root=tmp_path / "models")

    return planner


def test_the_first_run_asks_which_languages_first(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The first run never asked: the user got en -> de. It asks "I hear / show me", this
    computer's language the first guess, and offers the models for the pair chosen."""
    from subtitler.ui.firstrun import guess_languages

    calls: list[AppConfig] = []
    planner = _real_planner(tmp_path, calls)
    guess = guess_languages(AppConfig(), True, "fr")
    assert guess == ("en", "fr")  # a French computer: French subtitles of English speech
    assert guess_languages(AppConfig(), True, "en") == ("", "en")  # any language, in English
    dlg = FirstRunDialog(AppConfig(), planner(AppConfig()), planner=planner, languages=guess)
    qtbot.addWidget(dlg)
    dlg.show()
    assert dlg.pages.currentIndex() == 0 and dlg.languages() == ("en", "fr")
    assert (calls[-1].asr.language, calls[-1].mt.tgt_lang) == ("en", "fr")
    dlg.shown.setCurrentIndex(dlg.shown.findData("ja"))
    dlg.heard.setCurrentIndex(dlg.heard.findData(""))  # any language
    assert calls[-1].mt.tgt_lang == "ja" and calls[-1].asr.language is None
    dlg.next_btn.click()
    assert dlg.pages.currentIndex() == 1
    assert "Recommended translation model" in dlg.text.text()
    dlg.skip_btn.click()
    cfg = dlg.result_config
    assert (cfg.asr.language, cfg.mt.tgt_lang) == (None, "ja")


def test_skip_keeps_the_languages_and_the_models_recommended(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Skip left Whisper small configured while the dialog recommended Whisper base."""
    planner = _real_planner(tmp_path)
    plan = planner(AppConfig())
    dlg = FirstRunDialog(AppConfig(), plan, planner=planner, languages=("en", "de"))
    qtbot.addWidget(dlg)
    offered = {e.kind: e for e in dlg.plan.offer}
    assert offered["asr"].size_name != AppConfig().asr.model  # (the catalog's pick here)
    dlg.next_btn.click()
    dlg.skip_btn.click()
    cfg = dlg.result_config
    assert cfg.asr.model == offered["asr"].size_name and cfg.mt.model_path == offered["mt"].id
    assert (cfg.asr.language, cfg.mt.src_lang, cfg.mt.tgt_lang) == ("en", "en", "de")


def test_files_on_this_computer_are_chosen_in_the_dialog_and_never_lost(
    qtbot, tmp_path: Path, tiny_en: Path, tiny_gguf: Path
) -> None:  # type: ignore[no-untyped-def]
    """Two file pickers opened in a row without a word; a refused GGUF threw the Whisper
    folder chosen a moment before away, and said to choose a template the dialog has not.
    Now one page: each problem under its field with what to do, what was given stays."""
    checked: list[Path] = []
    verdict = {"problem": "tiny-q8_0.gguf: damaged: it translates a test sentence as nothing"}

    def check(path: Path, template: str) -> None:
        checked.append(path)
        if verdict["problem"] and path.suffix == ".gguf":  # (the speech model passes)
            raise RuntimeError(verdict["problem"])

    planner = _real_planner(tmp_path)
    dlg = FirstRunDialog(
        AppConfig(), planner(AppConfig()), planner=planner, languages=("en", "de"), check=check
    )
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.next_btn.click()
    dlg.local_btn.click()
    assert dlg.pages.currentIndex() == 2  # no file picker opened by itself
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("not a model")
    dlg.speech_path.setText(str(tiny_en))
    dlg.mt_path.setText(str(not_gguf))
    dlg.use_btn.click()
    assert dlg.mt_problem.isVisible() and "Choose another .gguf file" in dlg.mt_problem.text()
    assert "notes.gguf" in dlg.mt_problem.text() and not dlg.speech_problem.isVisible()
    assert dlg.speech_path.text() == str(tiny_en) and dlg.isVisible()  # kept
    dlg.mt_path.setText(str(tiny_gguf))  # a model file, whose real test fails
    dlg.use_btn.click()
    qtbot.waitUntil(lambda: dlg.use_btn.isEnabled(), timeout=10_000)
    assert checked == [tiny_en, tiny_gguf] and dlg.isVisible()  # (each its real test)
    assert dlg.mt_problem.text().startswith(verdict["problem"] + ". Choose another .gguf file")
    assert dlg.speech_path.text() == str(tiny_en)
    verdict["problem"] = ""
    with qtbot.waitSignal(dlg.accepted, timeout=10_000):
        dlg.use_btn.click()
    cfg = dlg.result_config
    assert (cfg.asr.model, cfg.mt.model_path, cfg.mt.template) == (
        str(tiny_en),
        str(tiny_gguf),
        "auto",
    )
    assert cfg.mt.tgt_lang == "de"


def files_page(qtbot, tmp_path: Path) -> FirstRunDialog:  # type: ignore[no-untyped-def]
    """The real dialog on its page of model files on this computer (the real checks)."""
    planner = _real_planner(tmp_path)
    dlg = FirstRunDialog(AppConfig(), planner(AppConfig()), planner=planner, languages=("en", "de"))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.choose_local()
    return dlg


def test_a_translator_file_gets_its_real_test_in_the_dialog(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The real check (loaded once in a worker process, a test sentence translated): the
    project's test translator passes; the same file with a header llama.cpp aborts on (whose
    quick checks pass) is refused there."""
    from tests.integration.test_engine_workers import FIXTURE as fixture
    from tests.integration.test_engine_workers import corrupt

    broken = corrupt("duplicate-token", tmp_path / "broken.gguf")
    dlg = files_page(qtbot, tmp_path)
    dlg.mt_path.setText(str(broken))
    dlg.use_btn.click()
    qtbot.waitUntil(lambda: dlg.use_btn.isEnabled(), timeout=60_000)
    said = dlg.mt_problem.text()
    assert dlg.mt_problem.isVisible() and said.startswith("broken.gguf: llama.cpp crashed"), said
    assert said.endswith("(download it later from the tray menu → Models…)")
    dlg.mt_path.setText(str(fixture))
    with qtbot.waitSignal(dlg.accepted, timeout=60_000):
        dlg.use_btn.click()
    assert dlg.result_config.mt.model_path == str(fixture)


def test_a_whisper_folder_gets_its_real_test_in_the_dialog(
    qtbot, tmp_path: Path, tiny_en: Path
) -> None:  # type: ignore[no-untyped-def]
    """A Whisper folder whose model.bin was cut short passed the look at its files: "Models
    ready.", and the speech model failed at the start. It is loaded once and given a clip of
    speech, as the translator is given a sentence."""
    import shutil

    cut = tmp_path / "whisper-cut"
    shutil.copytree(tiny_en, cut)
    with (cut / "model.bin").open("r+b") as f:
        f.truncate((cut / "model.bin").stat().st_size // 2)
    dlg = files_page(qtbot, tmp_path)
    dlg.speech_path.setText(str(cut))
    dlg.use_btn.click()
    qtbot.waitUntil(lambda: dlg.use_btn.isEnabled(), timeout=60_000)
    said = dlg.speech_problem.text()
    assert dlg.speech_problem.isVisible() and dlg.isVisible() and not dlg.mt_problem.isVisible()
    assert "whisper-cut" in said and "Choose the folder that holds model.bin" in said, said
    dlg.speech_path.setText(str(tiny_en))
    with qtbot.waitSignal(dlg.accepted, timeout=60_000):
        dlg.use_btn.click()
    assert dlg.result_config.asr.model == str(tiny_en)


def test_the_dialog_says_each_offered_models_licence(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before Download: each offered model's licence in plain words (the defaults' allow use
    at work)."""
    from subtitler.models.firstrun import plan_first_run
    from tests.unit.test_models_hardware_firstrun import machine

    offered = plan_first_run(AppConfig(), machine(), root=tmp_path, network=True)
    dlg = FirstRunDialog(AppConfig(), offered, root=tmp_path)
    qtbot.addWidget(dlg)
    text = dlg.text.text()
    for e in offered.offer:
        assert f"{e.name} · " in text and e.licence_text in text
    assert text.count("free to use, also at work and for commercial purposes") == 2


def test_esc_during_a_download_stops_it(qtbot, hub: FakeHub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Esc (or Skip, or the title bar's close) while the models download: the dialog closes
    as Skip does and the download stops (it went on unseen: the app started without the
    models, which were fetched all the same and not used, while Models… could fetch the same
    files again at once)."""
    import threading

    from PySide6.QtCore import Qt

    key = f"{MT_REPO}/tiny.gguf"
    stalled, release = threading.Event(), threading.Event()
    hub.midway[key] = (1 << 20, lambda: (stalled.set(), release.wait(30)))
    dlg = FirstRunDialog(AppConfig(), plan(True), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.download_btn.click()
    qtbot.waitUntil(stalled.is_set, timeout=30_000)
    with qtbot.waitSignal(dlg.rejected, timeout=5_000):
        qtbot.keyClick(dlg, Qt.Key.Key_Escape)
    release.set()
    qtbot.waitUntil(lambda: dlg.cancel_btn.isHidden(), timeout=30_000)
    assert not (tmp_path / "models" / "tiny-mt" / "tiny.gguf").exists()
    assert dlg.status.text().startswith("Download stopped: download cancelled")


def test_esc_on_the_files_page_goes_back_keeping_what_was_typed(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Esc there is Back (it closed the whole dialog as Skip: the paths typed were thrown
    away and the app started without models); from the models page it skips."""
    from PySide6.QtCore import Qt

    dlg = files_page(qtbot, tmp_path)
    dlg.speech_path.setText("/home/ann/models/whisper-small")
    qtbot.keyClick(dlg.speech_path, Qt.Key.Key_Escape)
    assert dlg.isVisible() and dlg.pages.currentIndex() == 1
    dlg.local_btn.click()
    assert dlg.speech_path.text() == "/home/ann/models/whisper-small"
    qtbot.keyClick(dlg.speech_path, Qt.Key.Key_Escape)
    with qtbot.waitSignal(dlg.rejected, timeout=2_000):
        qtbot.keyClick(dlg.local_btn, Qt.Key.Key_Escape)


@pytest.mark.parametrize("network", [True, False])
def test_enter_on_the_languages_page_leads_to_the_models_action(qtbot, network: bool) -> None:  # type: ignore[no-untyped-def]
    """Enter is Next, then the models page has its action in focus: Download (or, with no
    network, Use files on this computer…). Focus fell on Back: a second Enter went back."""
    from PySide6.QtCore import Qt

    dlg = FirstRunDialog(AppConfig(), plan(network), root=None)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.activateWindow()
    qtbot.waitActive(dlg)
    dlg.heard.setFocus()
    qtbot.keyClick(dlg.heard, Qt.Key.Key_Return)
    assert dlg.pages.currentIndex() == 1
    assert dlg.focusWidget() is (dlg.download_btn if network else dlg.local_btn)
    qtbot.keyClick(dlg.local_btn, Qt.Key.Key_Space)
    assert dlg.pages.currentIndex() == 2 and dlg.focusWidget() is dlg.speech_path
