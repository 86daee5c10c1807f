"""Worker events -> a Qt signal delivered on the GUI thread (queued across threads)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from subtitler.session import Event


class EventBridge(QObject):
    """Call ``post`` from any thread; slots connected to ``delivered`` run on the GUI thread."""

    delivered = Signal(object)

    def post(self, ev: Event) -> None:
        # Emitting from a worker thread to a receiver living in the GUI thread is queued by
        # Qt, so workers never wait for a repaint.
        self.delivered.emit(ev)
