"""Models from the app: download with progress and cancel, check, use and remove, through the
real download code from a fake hub on 127.0.0.1; every failure says what to click."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QPushButton

from subtitler.config import AppConfig
from subtitler.models import download as dl
from subtitler.models.catalog import Catalog
from subtitler.ui.models_dialog import ModelsDialog
from tests.helpers.fake_hub import MT_REPO, FakeHub, serving_models
from tests.integration.test_models_download import asr_entry, mt_entry


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path) -> Iterator[FakeHub]:
    with serving_models(monkeypatch, tiny_gguf.read_bytes()) as h:
        yield h


def dialog(qtbot, root: Path, cfg: AppConfig | None = None) -> ModelsDialog:  # type: ignore[no-untyped-def]
    dlg = ModelsDialog(cfg or AppConfig(), Catalog((asr_entry(), mt_entry()), {}), root=root)
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def row(dlg: ModelsDialog, model_id: str) -> list[str]:
    i = [e.id for e in dlg.entries].index(model_id)
    item = dlg.table.topLevelItem(i)
    assert item is not None
    return [item.text(c) for c in range(dlg.table.columnCount())]


def wait_idle(qtbot, dlg: ModelsDialog) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not dlg.busy, timeout=60_000)


def test_download_check_use_and_remove(qtbot, hub: FakeHub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "models"
    dlg = dialog(qtbot, root)
    # (a test entry: no licence terms, so whether it may be used at work is not known)
    assert row(dlg, "tiny-mt")[1:] == [
        "Translation", "16 MB", "50 MB", "not known", "Not downloaded", "",
    ]  # fmt: skip
    dlg.select("tiny-mt")
    assert dlg.download_btn.isEnabled() and not dlg.use_btn.isEnabled()
    dlg.download_btn.click()
    assert dlg.busy and dlg.cancel_btn.isVisible() and not dlg.remove_btn.isEnabled()
    wait_idle(qtbot, dlg)
    assert dlg.status.text() == "tiny is downloaded: click Use this model to switch."
    assert row(dlg, "tiny-mt")[5] == "Downloaded"
    path = dl.model_path(mt_entry(), root)
    assert path.read_bytes() == hub.files[f"{MT_REPO}/tiny.gguf"]

    dlg.verify_btn.click()  # sizes, checksums, and llama.cpp loads it in a worker process
    wait_idle(qtbot, dlg)
    assert dlg.status.text() == "tiny is complete and loads."

    with qtbot.waitSignal(dlg.chosen) as used:
        dlg.use_btn.click()
    cfg = used.args[0]
    assert Path(cfg.mt.model_path) == path and cfg.mt.template == "chatml"
    assert row(dlg, "tiny-mt")[6] == "in use"
    assert not dlg.remove_selected(confirm=False)  # not the model in use
    assert dlg.status.text().startswith("tiny is in use: click Use this model on another")

    dlg.cfg = AppConfig()  # (another model chosen since)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    dlg.verify_btn.click()
    wait_idle(qtbot, dlg)
    assert dlg.status.text() == (
        "tiny: tiny.gguf: sha256 changed since download (file damaged). "
        "Click Remove, then Download."
    )
    assert dlg.remove_selected(confirm=False)
    assert not path.exists() and row(dlg, "tiny-mt")[5] == "Not downloaded"
    assert dlg.status.text().startswith("Removed tiny (")


def test_each_model_says_its_licence_before_download(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Whether a model may be used at work is a column, and the selected model's licence in
    plain words is shown above the buttons, before Download is clicked."""
    from subtitler.models.catalog import load_catalog

    dlg = ModelsDialog(AppConfig(), load_catalog(), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    dlg.show()
    assert dlg.table.headerItem().text(4) == "Use at work"
    assert row(dlg, "tower-plus-2b-q4_k_m")[4] == "no"
    assert row(dlg, "qwen3-4b-q4_k_m")[4] == row(dlg, "whisper-small")[4] == "yes"
    dlg.select("tower-plus-2b-q4_k_m")
    assert dlg.download_btn.isEnabled()
    said = dlg.licence.text()
    assert said.startswith("Tower+ 2B (Q4_K_M) is under the Creative Commons BY-NC-SA 4.0: ")
    assert "not for commercial use" in said and "creativecommons.org/licenses/by-nc-sa" in said
    dlg.select("qwen3-4b-q4_k_m")
    assert "Apache License 2.0: free to use, also at work" in dlg.licence.text()


def test_cancel_then_continue(qtbot, hub: FakeHub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hub.add(MT_REPO, "tiny.gguf", hub.files[f"{MT_REPO}/tiny.gguf"] * 40)  # long enough to stop
    dlg = dialog(qtbot, tmp_path / "models")
    dlg.select("tiny-mt")
    dlg._cancel.set()  # (pressed before the first block arrives: deterministic)
    original = dlg._cancel.clear
    dlg._cancel.clear = lambda: None  # type: ignore[method-assign]
    dlg.download_btn.click()
    wait_idle(qtbot, dlg)
    dlg._cancel.clear = original  # type: ignore[method-assign]
    button = dlg.download_btn.text()  # (the button the message names, as it reads)
    assert dlg.status.text() == f"Download cancelled: click {button} to go on."
    dlg.download_btn.click()
    wait_idle(qtbot, dlg)
    assert row(dlg, "tiny-mt")[5] == "Downloaded"


def test_no_network_says_what_to_do(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    dlg = dialog(qtbot, tmp_path / "models")
    dlg.select("tiny-asr")
    dlg.download_btn.click()
    wait_idle(qtbot, dlg)
    text = dlg.status.text()
    # Issue 27 point 7: it said to click "Continue download", a button that did not exist
    # (nothing was downloaded: the button reads "Download").
    assert dlg.download_btn.text() == "Download"
    assert text.endswith("Check the connection, then click Download."), text
    assert "Errno" not in text and "it refused the connection" in text
    assert "\n" not in text and dlg.bar.isHidden() and dlg.download_btn.isEnabled()


def test_action_threads_hold_no_qt_object(
    qtbot, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import threading

    from PySide6.QtCore import QObject

    targets = []
    real_thread = threading.Thread

    def spy(*a, **kw):  # type: ignore[no-untyped-def]
        if kw.get("name") == "model-action":
            targets.append(kw["target"])
        return real_thread(*a, **kw)

    monkeypatch.setattr(threading, "Thread", spy)
    dlg = dialog(qtbot, tmp_path / "models")
    dlg.select("tiny-asr")
    dlg.download_btn.click()
    wait_idle(qtbot, dlg)
    assert row(dlg, "tiny-asr")[5] == "Downloaded"

    def held(fn: object) -> list[object]:
        cells = [c.cell_contents for c in getattr(fn, "__closure__", None) or ()]
        return cells + [x for c in cells if callable(c) for x in held(c)]

    (guarded,) = targets
    assert not any(isinstance(x, QObject) for x in held(guarded))


def test_the_tray_opens_models_and_a_pick_is_saved(
    qtbot, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import os

    from subtitler import paths, settings_store
    from subtitler.models import catalog
    from tests.helpers.catalogs import with_fixture
    from tests.ui.test_app_state import make_app

    monkeypatch.setenv(paths.MODELS_DIR_ENV, str(tmp_path / "models"))
    # The packaged catalog and a model on disk already (the test translator: a local entry).
    monkeypatch.setattr(catalog, "load_catalog", lambda *a, **kw: with_fixture())
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.tray.show_models.emit()
    dlg = app.models
    assert dlg is not None and dlg.isVisible()
    qtbot.addWidget(dlg)
    assert {e.kind for e in dlg.entries} == {"asr", "mt"}
    # A model that is on disk already is usable at once.
    fixture = next(e for e in dlg.entries if e.local_path is not None)
    dlg.select(fixture.id)
    assert row(dlg, fixture.id)[5] == "Included" and dlg.use_btn.isEnabled()
    dlg.use_btn.click()
    assert app.config.mt.model_path == str(dl.model_path(fixture))
    saved = settings_store.load(tmp_path / "config.toml").config
    assert saved.mt.model_path == str(dl.model_path(fixture))
    dlg.grab().save(str(Path(os.environ.get("SUBTITLER_SHOTS", tmp_path)) / "models.png"))
    app.quit()


def test_settings_open_models_at_the_chosen_model(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A model shown as "not downloaded" in Settings offers a way to download it: the Models…
    button beside it opens the Models window on that model (the one chosen in the pane, even
    before Apply); the window opens on the model in use otherwise."""
    from subtitler import paths
    from tests.ui.test_app_state import make_app

    monkeypatch.setenv(paths.MODELS_DIR_ENV, str(tmp_path / "models"))
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    pane.asr_model.setCurrentIndex(pane.asr_model.findData("base"))
    speech_button = pane.asr_model.parentWidget().findChildren(QPushButton)
    (button,) = [b for b in speech_button if b.text() == "Models…"]
    button.click()
    dlg = app.models
    assert dlg is not None and dlg.isVisible()
    qtbot.addWidget(dlg)
    picked = dlg.selected()
    assert picked is not None and (picked.kind, picked.size_name) == ("asr", "base")
    small = next(e for e in dlg.entries if e.size_name == "small")
    assert row(dlg, small.id)[5:] == ["Not downloaded", "chosen: download it"]  # not "in use"
    assert dlg.download_btn.isEnabled()
    dlg.close()
    app.models = None
    app.open_models()  # from the tray: at the speech model in use ("small" by default)
    assert app.models is not None
    qtbot.addWidget(app.models)
    first = app.models.selected()
    assert first is not None and first.size_name == "small"
    app.quit()


def test_esc_stops_a_download_as_close_does(qtbot, hub: FakeHub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Close (and the title bar) stop a download under way; Esc hid the window and the
    download went on unseen."""
    import threading

    from PySide6.QtCore import Qt

    stalled, release = threading.Event(), threading.Event()
    hub.midway[f"{MT_REPO}/tiny.gguf"] = (1 << 20, lambda: (stalled.set(), release.wait(30)))
    dlg = dialog(qtbot, tmp_path / "models")
    dlg.select("tiny-mt")
    dlg.download_btn.click()
    qtbot.waitUntil(stalled.is_set, timeout=30_000)
    qtbot.keyClick(dlg, Qt.Key.Key_Escape)
    assert not dlg.isVisible()
    release.set()
    wait_idle(qtbot, dlg)
    assert dlg.status.text().startswith("Download cancelled")
    assert not dl.model_path(mt_entry(), tmp_path / "models").exists()


def test_the_licence_link_is_reached_and_opened_by_keyboard(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Tab reaches the selected model's licence line, then its 'Read the licence', and Enter
    opens it (it could be clicked only: a keyboard user never read the licence the window
    points to)."""
    from PySide6.QtCore import QObject, Qt, QUrl, Slot
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QApplication

    from subtitler.models.catalog import load_catalog
    from tests.helpers.windows import tab_order

    opened: list[str] = []

    class Browser(QObject):  # (what the system's browser is handed)
        @Slot(QUrl)
        def show(self, url: QUrl) -> None:
            opened.append(url.toString())

    browser = Browser()
    QDesktopServices.setUrlHandler("https", browser, "show")
    dlg = ModelsDialog(AppConfig(), load_catalog(), root=tmp_path / "models")
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.select("tower-plus-2b-q4_k_m")
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg, timeout=2000)
    order = tab_order(dlg)
    assert order.index(dlg.licence) == order.index(dlg.table) + 1
    dlg.table.setFocus()
    qtbot.keyClick(dlg.table, Qt.Key.Key_Tab)
    assert dlg.focusWidget() is dlg.licence  # (a screen reader reads the licence line)
    qtbot.keyClick(dlg.licence, Qt.Key.Key_Tab)  # onto its link, as Qt's labels do
    assert dlg.focusWidget() is dlg.licence
    qtbot.keyClick(dlg.licence, Qt.Key.Key_Return)
    QDesktopServices.unsetUrlHandler("https")
    assert opened and "creativecommons.org/licenses/by-nc-sa" in opened[0]
