"""Run a call that must end (a file read that could block): fail the test instead of hanging."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_bounded(fn: Callable[[], T], seconds: float = 10.0) -> T:
    """``fn()`` on a daemon thread; AssertionError if it has not returned after ``seconds``
    (the thread is left blocked: a FIFO's open waits for a writer that never comes)."""
    box: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    th = threading.Thread(target=target, name="bounded-call", daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), f"still running after {seconds:g} s (blocked?)"
    if errors:
        raise errors[0]
    return box[0]
