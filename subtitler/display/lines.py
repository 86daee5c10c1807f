"""The lines a subtitle display shows: one rule for the overlay and the page.

Finished lines in full, the open (unfinished) line with display-only mask-k (its source
without its last word, which may be cut or still change); the overlay
(``subtitler.ui.overlay``) and the browser page (``subtitler.web.server``) both show what
:class:`ShownLines` gives. With several target languages (issue 19) each line also carries
the extra targets' text, under the same rule.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from dataclasses import dataclass
from typing import Protocol

KEEP = 12  # finished lines remembered (the overlay keeps as many)


class Subtitle(Protocol):
    """What a display reads of one translation of a line (the pipeline's SubtitleEvent)."""

    @property
    def segment_id(self) -> int: ...

    @property
    def source(self) -> str: ...

    @property
    def translation(self) -> str:
        """The full translation."""
        ...

    @property
    def final(self) -> bool: ...

    @property
    def lang(self) -> str:
        """The language of ``translation``."""
        ...

    @property
    def extra(self) -> bool:
        """A translation into one of the extra target languages (shown under the main one)."""
        ...

    @property
    def target(self) -> int:
        """Which target: 0 the main one, 1.. the extra ones."""
        ...

    def shown(self, k: int) -> str:
        """The text shown with mask-k."""
        ...


@dataclass(frozen=True)
class ShownLine:
    segment_id: int
    source: str
    text: str  # what is displayed: the translation, masked while the line is open
    final: bool
    lang: str = ""  # the language of ``text`` (the main target)
    # (language, what is displayed) of each extra target language with a text, in order
    extra: tuple[tuple[str, str], ...] = ()


def open_source(text: str, k: int) -> str:
    """What a display shows of the source of a line still being spoken: with mask-k on
    (k > 0) its last word is hidden, as the translation's last tokens are: the recogniser
    may still change it, and audio cut mid-word makes it part of a word ("and fl", "may
    be-"). Chinese or Japanese (no spaces): its last character."""
    text = text.rstrip()
    if k <= 0 or not text:
        return text
    if " " in text:
        return text.rsplit(" ", 1)[0].rstrip()
    if unicodedata.east_asian_width(text[-1]) in ("W", "F"):
        return text[:-1]
    return ""  # one word, perhaps cut


def shown_text(ev: Subtitle, k: int) -> str:
    """What a display shows of one target's event: all of a final one, the open one masked."""
    return ev.translation if ev.final else ev.shown(k)


class ExtraTargets:
    """The extra target languages' newest event per line (segment), for the displays."""

    def __init__(self, keep: int = 4 * KEEP) -> None:
        self._events: dict[int, dict[int, Subtitle]] = {}
        self.keep = keep

    def add(self, ev: Subtitle) -> None:
        self._events.setdefault(ev.segment_id, {})[ev.target] = ev
        while len(self._events) > self.keep:  # the oldest lines are long gone from view
            del self._events[min(self._events)]

    def shown(self, segment_id: int, k: int) -> tuple[tuple[str, str], ...]:
        """(language, text) of each extra target of a line that has a text, in their order."""
        got = self._events.get(segment_id, {})
        out = ((got[t].lang, shown_text(got[t], k)) for t in sorted(got))
        return tuple((lang, text) for lang, text in out if text)

    def clear(self) -> None:
        self._events.clear()


class ShownLines:
    """Feed it Subtitles in order; ``lines(k, n)`` is what a display with mask-k shows."""

    def __init__(self, keep: int = KEEP) -> None:
        self._done: deque[ShownLine] = deque(maxlen=keep)
        self._open: Subtitle | None = None
        self._extra = ExtraTargets()

    def add(self, ev: Subtitle) -> None:
        if ev.extra:
            self._extra.add(ev)
        elif ev.final:
            self._finish(
                ShownLine(ev.segment_id, ev.source, ev.translation or ev.source, True, lang=ev.lang)
            )
            if self._open is not None and self._open.segment_id <= ev.segment_id:
                self._open = None
        else:
            self._open = ev

    def _finish(self, line: ShownLine) -> None:
        """A finished line, in the order lines were said: a translator behind the speech shows
        a line finished as it stands and sends its translation after newer lines; that
        replaces the line where it is, or is dropped if it has rolled out of memory."""
        lines, keep = list(self._done), self._done.maxlen or KEEP
        at = next((i for i, ln in enumerate(lines) if ln.segment_id >= line.segment_id), len(lines))
        if at < len(lines) and lines[at].segment_id == line.segment_id:
            lines[at] = line
        elif at > 0 or len(lines) < keep:  # else older than every line kept: long gone
            lines.insert(at, line)
        self._done = deque(lines[-keep:], maxlen=keep)

    def clear(self) -> None:
        self._done.clear()
        self._open = None
        self._extra.clear()

    def lines(self, k: int, n: int) -> list[ShownLine]:
        """The last ``n`` lines: finished ones in full, the open one as mask-k shows it."""
        out = list(self._done)
        ev = self._open
        if ev is not None:
            source = open_source(ev.source, k)
            shown = ev.shown(k) if ev.translation else source
            out.append(ShownLine(ev.segment_id, source, shown, False, lang=ev.lang))
        out = out[-n:] if n > 0 else []
        return [
            ShownLine(ln.segment_id, ln.source, ln.text, ln.final, ln.lang, extra)
            if (extra := self._extra.shown(ln.segment_id, k))
            else ln
            for ln in out
        ]
