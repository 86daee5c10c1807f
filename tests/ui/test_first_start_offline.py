"""The first start with no models makes no connection before the user asks for a download
(issue 28: it resolved and connected to the model hub to decide what the dialog says)."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import huggingface_hub.constants as hub_constants
import pytest
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

import subtitler.ui.app as ui_app
from subtitler.app import parser
from subtitler.models import hardware
from subtitler.ui.firstrun import FirstRunDialog

DATA = Path(__file__).resolve().parents[1] / "data"


class _Guard(QObject):
    """The single-instance lock, always ours (no lock file, no local socket)."""

    activated = Signal()
    command = Signal(str)
    problem = ""

    def __init__(self, data_dir: Path) -> None:
        super().__init__()

    def acquire(self) -> bool:
        return True

    def release(self) -> None:
        pass


class _App:
    """The running app, not started: only what run_app wires up."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        pass

    def bring_forward(self) -> None:
        pass

    def toggle(self, command: str) -> None:
        pass

    def start(self) -> None:
        pass

    def quit(self) -> None:
        pass

    def shut_down(self) -> None:
        pass


def test_the_first_start_offers_models_without_connecting(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connects: list[object] = []

    def no_network(*a: Any, **kw: Any) -> Any:
        connects.append(a[0] if a else kw)
        raise OSError("no connection may be made here")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    # As on a user's machine (the tests run with the hub's offline mode on).
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    hw = hardware.HardwareInfo("Linux", "x86_64", 4, 16 << 30, 12 << 30, False, False, 0)
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: hw)
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path / "models"))  # nothing downloaded
    shown: list[FirstRunDialog] = []

    def skip(dlg: FirstRunDialog) -> int:
        shown.append(dlg)
        return 0  # "Skip for now"

    monkeypatch.setattr(FirstRunDialog, "exec", skip)
    monkeypatch.setattr(ui_app, "SingleInstance", _Guard)
    monkeypatch.setattr(ui_app, "SubtitlerApp", _App)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    args = parser().parse_args(
        ["--config", str(tmp_path / "config.toml"), "--replay", str(DATA / "LJ001-0002.flac")]
    )
    assert ui_app.run_app(args, tmp_path / "data") == 0
    assert connects == []  # not even a name lookup
    (dlg,) = shown
    assert dlg.plan.network is None and dlg.download_btn.isEnabled()
    text = dlg.text.text()
    assert "huggingface.co, which is looked up only when you click Download" in text
    assert "No network" not in text


@pytest.mark.parametrize("way", ["skip", "files"])
def test_every_way_through_the_first_run_ends_in_the_running_app(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_en: Path, way: str
) -> None:
    """Issue 27 points 1 and 3: whichever way the first run ends, the overlay runs and says
    what the app does; Skip keeps the languages and the models recommended (the app then says
    what to download), files on this computer are used."""
    from PySide6.QtTest import QTest

    from subtitler import settings_store
    from tests.integration.test_engine_workers import FIXTURE

    hw = hardware.HardwareInfo("Linux", "x86_64", 4, 16 << 30, 12 << 30, False, False, 0)
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: hw)
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path / "models"))  # nothing downloaded
    dialogs: list[FirstRunDialog] = []

    def go_through(dlg: FirstRunDialog) -> int:
        dialogs.append(dlg)
        dlg.shown.setCurrentIndex(dlg.shown.findData("fr"))
        dlg.next_btn.click()
        if way == "skip":
            dlg.skip_btn.click()
            return 0
        dlg.choose_local()
        dlg.speech_path.setText(str(tiny_en))
        dlg.mt_path.setText(str(FIXTURE))
        dlg.use_btn.click()
        deadline = time.monotonic() + 60
        while dlg.result() != 1 and time.monotonic() < deadline:
            QTest.qWait(50)
        return int(dlg.result())

    apps: list[ui_app.SubtitlerApp] = []

    class Seen(ui_app.SubtitlerApp):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            apps.append(self)

    settled: list[Any] = []  # what the overlay said then (run_app shuts the app down after)

    def run_until_settled(self: QApplication) -> int:
        (app,) = apps
        qtbot.waitUntil(lambda: app.overlay.state.run in ("stopped", "finished"), timeout=90_000)
        settled.append((app.overlay.state, app.overlay.isVisible()))
        return 0

    monkeypatch.setattr(FirstRunDialog, "exec", go_through)
    monkeypatch.setattr(ui_app, "SingleInstance", _Guard)
    monkeypatch.setattr(ui_app, "SubtitlerApp", Seen)
    monkeypatch.setattr(QApplication, "exec", run_until_settled)
    config = tmp_path / "config.toml"
    argv = ["--config", str(config)]
    if way == "files":  # (a replay's settings are not saved: they are for one run)
        argv += ["--replay", str(DATA / "LJ001-0008.flac"), "--speed", "4"]
    assert ui_app.run_app(parser().parse_args(argv), tmp_path / "data") == 0
    (app,) = apps
    try:
        saved = app.config if way == "files" else settings_store.load(config).config
        assert saved.mt.tgt_lang == "fr" == app.config.mt.tgt_lang
        ((state, shown),) = settled
        assert shown and not app.overlay.isVisible()  # shown while it ran, hidden at its end
        if way == "skip":
            plan = dialogs[0].plan
            (asr,) = [e for e in plan.offer if e.kind == "asr"]
            assert saved.asr.model == asr.size_name  # the one recommended, not "small"
            assert state.run == "stopped"
            assert state.text == (
                f"Stopped: speech model {asr.name} is not downloaded: click Download in Models "
                "(tray menu), or choose a model folder in Settings"
            )
            assert app.tray.run_action.text() == "Start"
        else:
            assert (saved.asr.model, saved.mt.model_path) == (str(tiny_en), str(FIXTURE))
            assert state.text == "Replay finished", state.text
            assert any(line.translation for line in app.overlay.lines())
    finally:
        app.quit()


def test_the_app_stops_however_its_event_loop_ends(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_en: Path
) -> None:
    """The system can end the event loop without the app's Quit (a logout on macOS or
    Windows): the pipeline is stopped and the settings saved all the same (before: left
    running, the line being said never written)."""
    from subtitler.pipeline.pipeline import PipelineState
    from tests.integration.test_engine_workers import FIXTURE

    apps: list[ui_app.SubtitlerApp] = []

    class Seen(ui_app.SubtitlerApp):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            apps.append(self)

    def ended_by_the_system(self: QApplication) -> int:
        (app,) = apps
        qtbot.waitUntil(
            lambda: (
                app.session.pipeline is not None
                and app.session.pipeline.state is PipelineState.RUNNING
            ),
            timeout=60_000,
        )
        return 0

    monkeypatch.setattr(ui_app, "SingleInstance", _Guard)
    monkeypatch.setattr(ui_app, "SubtitlerApp", Seen)
    monkeypatch.setattr(QApplication, "exec", ended_by_the_system)
    argv = ["--config", str(tmp_path / "config.toml"), "--replay", str(DATA / "LJ001-0008.flac")]
    argv += ["--asr-model", str(tiny_en), "--mt-model", str(FIXTURE)]
    assert ui_app.run_app(parser().parse_args(argv), tmp_path / "data") == 0
    (app,) = apps
    try:
        assert app.session.pipeline is not None
        assert app.session.pipeline.state is PipelineState.STOPPED
        assert app.session.pipeline.finished.is_set()
    finally:
        app.quit()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_the_first_run_dialog_ends_the_app(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or a logout's SIGTERM) while the first run asks for models ends the app, as it
    does once the app runs (it printed a KeyboardInterrupt and the dialog stayed open)."""
    hw = hardware.HardwareInfo("Linux", "x86_64", 4, 16 << 30, 12 << 30, False, False, 0)
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: hw)
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path / "models"))  # nothing downloaded
    real_exec = FirstRunDialog.exec
    left: list[str] = []

    def exec_then_ctrl_c(dlg: FirstRunDialog) -> int:
        QTimer.singleShot(300, lambda: os.kill(os.getpid(), signal.SIGINT))
        # (should the signal go unheard, the dialog is closed here: the test fails, not hangs)
        QTimer.singleShot(5000, lambda: (left.append("still open"), dlg.reject()))
        return int(real_exec(dlg))

    started: list[object] = []

    class App(_App):
        def __init__(self, *a: Any, **kw: Any) -> None:
            started.append(self)

    monkeypatch.setattr(FirstRunDialog, "exec", exec_then_ctrl_c)
    monkeypatch.setattr(ui_app, "SingleInstance", _Guard)
    monkeypatch.setattr(ui_app, "SubtitlerApp", App)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    args = parser().parse_args(["--config", str(tmp_path / "config.toml")])
    before = signal.getsignal(signal.SIGINT)
    assert ui_app.run_app(args, tmp_path / "data") == 0
    assert left == [] and started == []  # ended by the signal, the app never started
    assert signal.getsignal(signal.SIGINT) == before


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler in place, as at a real start. In one full run both cases
    below found another (the signal neither raised nor ended the test; the app went on and
    shut down). Cause not found: nothing here installs one but quit_on_end_signals, which puts
    the old one back. Setting Python's handler sets the process's too. Put back as found."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old if old is not None else signal.default_int_handler)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("during", ["reading the settings", "starting the app"])
@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_before_the_app_handles_it_ends_the_app(
    during: str, qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real SIGINT before the app's own handler is in place: while the settings and the
    hardware were read it printed a KeyboardInterrupt traceback; while the app was starting
    it ended run_app without stopping what had started."""
    ended: list[str] = []

    def ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)  # (Python's own handler: KeyboardInterrupt here)
        time.sleep(1)
        ended.append("not interrupted")

    class Guard(_Guard):
        def release(self) -> None:
            ended.append("lock released")

    class App(_App):
        def start(self) -> None:
            if during == "starting the app":
                ctrl_c()

        def shut_down(self) -> None:
            ended.append("shut down")

    real_prepare = ui_app.prepare

    def prepare(*a: Any, **kw: Any) -> Any:
        start = real_prepare(*a, **kw)
        if during == "reading the settings":
            ctrl_c()
        return start

    monkeypatch.setattr(ui_app, "prepare", prepare)
    monkeypatch.setattr(ui_app, "SingleInstance", Guard)
    monkeypatch.setattr(ui_app, "SubtitlerApp", App)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    argv = ["--config", str(tmp_path / "config.toml"), "--replay", str(DATA / "LJ001-0008.flac")]
    argv += ["--asr-model", str(tmp_path / "asr"), "--mt-model", str(tmp_path / "mt.gguf")]
    try:
        rc: object = ui_app.run_app(parser().parse_args(argv), tmp_path / "data")
    except KeyboardInterrupt:  # (not out of the test: pytest would end the whole run)
        rc = "KeyboardInterrupt"
    assert rc == 0
    if during == "starting the app":
        assert ended == ["shut down", "lock released"]
    else:
        assert ended == ["lock released"]
