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
    assert dlg.result_config == AppConfig()
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
    assert dlg.status.text() == (
        f"Download stopped: cannot write tiny-asr to {blocker / 'tiny-asr'}: Not a directory"
    )
    assert dlg.cancel_btn.isHidden() and dlg.bar.isHidden() and dlg.result_config == AppConfig()


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
