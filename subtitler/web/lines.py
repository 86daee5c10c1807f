"""The lines a subtitle display shows, kept without Qt: the page's copy of the overlay's rule.

Finished lines in full, the open (unfinished) line with display-only mask-k, exactly as
``subtitler.ui.overlay.SubtitleOverlay.lines`` does (tests/ui/test_web_page.py compares them).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from subtitler.pipeline.events import SubtitleEvent

KEEP = 12  # finished lines remembered (the overlay keeps as many)


@dataclass(frozen=True)
class ShownLine:
    segment_id: int
    source: str
    text: str  # what is displayed: the translation, masked while the line is open
    final: bool


class ShownLines:
    """Feed it SubtitleEvents in order; ``lines(k, n)`` is what a display with mask-k shows."""

    def __init__(self, keep: int = KEEP) -> None:
        self._done: deque[ShownLine] = deque(maxlen=keep)
        self._open: SubtitleEvent | None = None

    def add(self, ev: SubtitleEvent) -> None:
        if ev.final:
            self._done.append(
                ShownLine(ev.segment_id, ev.source, ev.translation or ev.source, True)
            )
            if self._open is not None and self._open.segment_id == ev.segment_id:
                self._open = None
        else:
            self._open = ev

    def clear(self) -> None:
        self._done.clear()
        self._open = None

    def lines(self, k: int, n: int) -> list[ShownLine]:
        """The last ``n`` lines: finished ones in full, the open one as mask-k shows it."""
        out = list(self._done)
        ev = self._open
        if ev is not None:
            shown = ev.shown(k) if ev.translation else ev.source
            out.append(ShownLine(ev.segment_id, ev.source, shown, False))
        return out[-n:] if n > 0 else []
