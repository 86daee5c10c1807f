"""Slow work off the GUI thread: waited for (without freezing it), or run while a dialog
stays usable and shows its progress."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QEventLoop, QObject, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton

log = logging.getLogger(__name__)
T = TypeVar("T")


def wait_off_gui_thread(work: Callable[[], T], timeout_s: float) -> T | None:
    """Run ``work`` on a worker thread while this thread keeps handling Qt events (a second
    start's wake-up, repaints); its result, or None if it has not finished in ``timeout_s``
    (it is then left to finish on its own). An exception in ``work`` is raised here."""
    box: list[T] = []
    error: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(work())
        except BaseException as e:  # handed to the waiting thread
            error.append(e)
        finally:
            done.set()

    threading.Thread(target=run, name="background-wait", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(
        lambda: loop.quit() if done.is_set() or time.monotonic() >= deadline else None
    )
    timer.start()
    if not done.is_set():
        loop.exec()
    timer.stop()
    if error:
        raise error[0]
    return box[0] if box else None


Report = Callable[[str, float | None], None]  # (what is being done, fraction done or None)


class BackgroundJob:
    """One piece of slow work at a time (a download, a check) on a worker thread, its progress
    and its end handed to callbacks on the GUI thread.

    The thread talks to the widgets only through a queue read by a timer on the GUI thread: a
    thread that held a dialog (or any Qt object) could drop the last reference to it and so
    destroy it outside the GUI thread, which crashed the process at times. So ``work`` must
    hold no Qt object either: it gets a ``report(label, fraction)`` to call (fraction None:
    unknown), and what it returns reaches ``on_done``. An exception it does not handle itself
    is logged and reaches ``on_error``: the dialog never waits on a dead thread.
    """

    def __init__(
        self,
        parent: QObject,
        name: str,
        *,
        on_progress: Callable[[str, float | None], None],
        on_done: Callable[[Any], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        self.name = name  # the worker thread's
        self.on_progress, self.on_done, self.on_error = on_progress, on_done, on_error
        self.running = False
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._poll = QTimer(parent)
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._drain)

    def start(self, work: Callable[[Report], Any]) -> None:
        inbox, name = self._inbox, self.name

        def report(label: str, fraction: float | None) -> None:
            inbox.put(("progress", (label, fraction)))

        def guarded() -> None:  # no reference to a Qt object: see the class
            try:
                result = work(report)
            except Exception as err:
                log.exception("%s failed", name)
                inbox.put(("error", err))
            else:
                inbox.put(("done", result))

        self.running = True
        self._poll.start()
        threading.Thread(target=guarded, name=name, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                kind, arg = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "progress":
                self.on_progress(*arg)
                continue
            self._poll.stop()
            self.running = False
            if kind == "done":
                self.on_done(arg)
            else:
                self.on_error(arg)


def stop_download(cancel: threading.Event, button: QPushButton, status: QLabel) -> None:
    """Cancel, said at once: a stalled connection notices it at its next read (up to 10 s
    later), and until then the button seemed to do nothing."""
    cancel.set()
    button.setEnabled(False)
    status.setText("Stopping the download…")


def show_progress(bar: QProgressBar, status: QLabel, label: str, fraction: float | None) -> None:
    """A job's progress on a dialog's bar (busy while the fraction is unknown) and line."""
    status.setText(label)
    if fraction is None:
        bar.setRange(0, 0)
    else:
        bar.setRange(0, 1000)
        bar.setValue(round(fraction * 1000))
