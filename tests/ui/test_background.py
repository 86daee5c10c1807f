"""Slow work (the first-run network check) waits off the GUI thread."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QTimer

from subtitler.ui.background import wait_off_gui_thread


def test_events_are_handled_while_waiting(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The work can only finish once the GUI thread has handled an event: a wait that blocked
    the GUI thread would never see it."""
    released = threading.Event()
    QTimer.singleShot(0, released.set)

    def work() -> str:
        assert released.wait(10)
        return "answer"

    assert wait_off_gui_thread(work, 10) == "answer"


def test_gives_up_after_its_time(qtbot) -> None:  # type: ignore[no-untyped-def]
    never = threading.Event()
    try:
        assert wait_off_gui_thread(lambda: never.wait(30), 0.2) is None
    finally:
        never.set()


def test_an_error_in_the_work_is_raised_to_the_caller(qtbot) -> None:  # type: ignore[no-untyped-def]
    def work() -> None:
        raise OSError("boom")

    with pytest.raises(OSError, match="boom"):
        wait_off_gui_thread(work, 5)
