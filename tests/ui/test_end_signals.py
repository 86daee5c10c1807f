"""A termination signal quits the app through its own Quit, once, and only while it runs."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from subtitler.ui.end_signals import quit_on_end_signals

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_an_end_signal_calls_quit_once_in_the_event_loop(
    qapp: QApplication, qtbot: QtBot, name: str
) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), _wakeup_fd()
    quits: list[int] = []
    with quit_on_end_signals(lambda: quits.append(1)):
        os.kill(os.getpid(), getattr(signal, name))
        os.kill(os.getpid(), signal.SIGTERM)  # a second request while quitting
        qtbot.waitUntil(lambda: quits == [1], timeout=5000)
        qtbot.wait(200)
        assert quits == [1]
    after = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), _wakeup_fd()
    assert after == before  # the handlers and the wake-up socket as they were


def _wakeup_fd() -> int:
    fd = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(fd)
    return fd
