"""Garbage collection on the GUI thread only.

Python's cyclic collector runs in whichever thread happens to allocate when a threshold is
crossed. In this app that is often a pipeline thread (loading a model, reading audio): a cycle
that holds a Qt wrapper is then freed there, and Qt objects deleted outside the GUI thread crash
PySide6 (seen in the UI tests: a segfault "Garbage-collecting" in the pipeline's start thread,
and "Slot 'SubtitlerApp::' not found" from a connection whose receiver went that way). The
automatic collector is therefore turned off while the app runs, and a timer on the GUI thread
runs the same generational collections between events (the approach calibre takes for the same
reason). Reference counting still frees everything that is not in a cycle at once.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000


class GuiThreadCollector(QObject):
    """While started, cycles are collected by a timer on the thread that owns this object."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect)
        self._was_enabled = False

    def start(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Back to Python's own collector (as it was before start), after a last collection."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()

    def collect(self) -> None:
        """The collections Python would have run by now: a generation once its count passes
        its threshold, as gc does on allocation."""
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if c0 < t0:
            return
        generation = 0
        if c1 >= t1:
            generation = 2 if c2 >= t2 else 1
        gc.collect(generation)
