"""Waiting for slow work without freezing the GUI thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QEventLoop, QTimer

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
