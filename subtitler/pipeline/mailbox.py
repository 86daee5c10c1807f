"""The translation thread's inbox: the newest update of a segment wins; finals are never lost,
and when the translator falls behind the speech the line being read now comes first."""

from __future__ import annotations

import threading
from collections import deque

from subtitler.types import AsrUpdate


class Mailbox:
    """Queue of ASR updates where a pending non-final update is replaced by a newer one of the
    same segment. A final update is never replaced or dropped, so every segment's last word
    reaches the translator even when it is slower than the recogniser.

    Order: oldest first, except that a finished line older than the newest finished one waits
    while anything newer does (it is *deferred*): a translator slower than the speech serves
    the newest finished line and the open one, which the reader sees, and translates older
    lines when it catches up, for the transcript. A translator that keeps up never has more
    than one finished line waiting, so for it nothing changes.

    With two inputs (``AsrUpdate.side``) both sides' lines share the queue, in the order they
    came; which line is newer and which waits behind it is asked within a side, so that a
    line of one side never waits because the other side spoke since.
    """

    def __init__(self) -> None:
        self._items: deque[AsrUpdate] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.replaced = 0  # updates superseded before the translator saw them

    def put(self, update: AsrUpdate) -> None:
        with self._cond:
            # Only a segment's newest update can be pending (the next one replaces it), and
            # with one input it is the last item; with two the other side's may come after it.
            for i in range(len(self._items) - 1, -1, -1):
                u = self._items[i]
                if u.segment_id == update.segment_id:
                    if not u.final:
                        self._items[i] = update
                        self.replaced += 1
                        self._cond.notify_all()
                        return
                    break
                if u.side == update.side:
                    break  # a later line of this side: the segment has nothing pending
            self._items.append(update)
            self._cond.notify_all()

    def put_back(self, update: AsrUpdate) -> None:
        """Return an update taken but not finished (a deferred line given up for newer work):
        it is served as if it had never been taken."""
        with self._cond:
            at = next(
                (i for i, u in enumerate(self._items) if u.segment_id > update.segment_id),
                len(self._items),
            )
            self._items.insert(at, update)
            self._cond.notify_all()

    def _deferred(self) -> list[int]:
        """Indexes of the finished lines older than the newest finished one of their side
        (under the lock)."""
        newest: dict[str, int] = {}
        for u in self._items:
            if u.final:
                newest[u.side] = max(newest.get(u.side, u.segment_id), u.segment_id)
        return [i for i, u in enumerate(self._items) if u.final and u.segment_id != newest[u.side]]

    def get(self, timeout: float | None = None) -> AsrUpdate | None:
        """The next update to translate (see the class), or None on timeout or after close()."""
        with self._cond:
            if not self._items and not self._closed:
                self._cond.wait(timeout)
            if not self._items:
                return None
            later = set(self._deferred())
            pick = next((i for i in range(len(self._items)) if i not in later), 0)
            u = self._items[pick]
            del self._items[pick]
            return u

    def waiting_behind(self) -> list[AsrUpdate]:
        """The finished lines that wait behind newer ones, oldest first."""
        with self._cond:
            return [self._items[i] for i in self._deferred()]

    def deferred(self) -> int:
        """How many finished lines wait behind newer ones (the translator is behind)."""
        with self._cond:
            return len(self._deferred())

    def has_newer(self, segment_id: int) -> bool:
        """Is an update for this segment waiting? (a running decode of it may be abandoned)"""
        with self._cond:
            return any(u.segment_id == segment_id for u in self._items)

    def has_later(self, segment_id: int, side: str = "") -> bool:
        """Is an update of a later segment of ``side`` waiting? (a deferred line may give way
        to it)"""
        with self._cond:
            return any(u.segment_id > segment_id and u.side == side for u in self._items)

    def has_later_final(self, segment_id: int, side: str = "") -> bool:
        """Is a later segment's final of ``side`` waiting? (then this segment's final is
        deferred)"""
        with self._cond:
            return any(
                u.final and u.segment_id > segment_id and u.side == side for u in self._items
            )

    def final_of(self, segment_id: int) -> AsrUpdate | None:
        """The waiting final update of a segment, if there is one (left in place)."""
        with self._cond:
            return next((u for u in self._items if u.final and u.segment_id == segment_id), None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)
