"""The first start with no models makes no connection before the user asks for a download
(issue 28: it resolved and connected to the model hub to decide what the dialog says)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import huggingface_hub.constants as hub_constants
import pytest
from PySide6.QtCore import QObject, Signal
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
