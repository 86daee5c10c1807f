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


def test_a_job_reports_progress_and_its_result_on_the_gui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QWidget

    from subtitler.ui.background import BackgroundJob, Report

    owner = QWidget()
    qtbot.addWidget(owner)
    seen: list[tuple[str, object, bool]] = []
    gui = threading.current_thread()

    def note(kind: str, value: object) -> None:
        seen.append((kind, value, threading.current_thread() is gui))

    job = BackgroundJob(
        owner,
        "test-job",
        on_progress=lambda label, f: note("progress", (label, f)),
        on_done=lambda r: note("done", r),
        on_error=lambda e: note("error", str(e)),
    )

    def work(report: Report) -> int:
        assert threading.current_thread().name == "test-job"
        report("half", 0.5)
        report("busy", None)
        return 42

    job.start(work)
    assert job.running
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert seen == [
        ("progress", ("half", 0.5), True),
        ("progress", ("busy", None), True),
        ("done", 42, True),
    ]

    def fail(report: Report) -> None:
        raise OSError("disk gone")

    seen.clear()
    job.start(fail)  # the same job again, after the first ended
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert seen == [("error", "disk gone", True)]
