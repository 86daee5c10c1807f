"""The translation thread's inbox: the newest update of a segment wins; finals are never lost."""

from __future__ import annotations

import threading
from collections import deque

from subtitler.types import AsrUpdate


class Mailbox:
    """Queue of ASR updates where a pending non-final update is replaced by a newer one of the
    same segment. A final update is never replaced or dropped, so every segment's last word
    reaches the translator even when it is slower than the recogniser."""

    def __init__(self) -> None:
        self._items: deque[AsrUpdate] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.replaced = 0  # updates superseded before the translator saw them

    def put(self, update: AsrUpdate) -> None:
        with self._cond:
            if self._items:
                last = self._items[-1]
                if not last.final and last.segment_id == update.segment_id:
                    self._items[-1] = update
                    self.replaced += 1
                    self._cond.notify_all()
                    return
            self._items.append(update)
            self._cond.notify_all()

    def get(self, timeout: float | None = None) -> AsrUpdate | None:
        """The oldest pending update, or None on timeout or after close()."""
        with self._cond:
            if not self._items and not self._closed:
                self._cond.wait(timeout)
            if self._items:
                return self._items.popleft()
            return None

    def has_newer(self, segment_id: int) -> bool:
        """Is an update for this segment waiting? (a running decode of it may be abandoned)"""
        with self._cond:
            return any(u.segment_id == segment_id for u in self._items)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)
