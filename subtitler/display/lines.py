"""The lines a subtitle display shows: one rule for the overlay and the page.

Finished lines in full, the open (unfinished) line with display-only mask-k (its source
without its last word, which may be cut or still change); the overlay
(``subtitler.ui.overlay``) and the browser page (``subtitler.web.server``) both show what
:class:`ShownLines` gives. With several target languages (issue 19) each line also carries
the extra targets' text, under the same rule.

With two inputs (issue 31) every line has a side, who spoke it (types.YOU, types.OTHERS): each
side has its own open line (both can speak at once; a new line of one side never replaces the
other's) and keeps its own last lines. With one input every line's side is "", and all of
this reads as one side: the lines are exactly those shown before sides existed.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from subtitler.display.masking import joined
from subtitler.mt.scripts import unspaced
from subtitler.types import OTHERS, YOU

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

    @property
    def side(self) -> str:
        """Who spoke it (types.YOU / types.OTHERS; "" with one input)."""
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
    side: str = ""  # who spoke it (types.YOU / types.OTHERS; "" with one input)


def readers_first(lines: list[ShownLine]) -> list[ShownLine]:
    """The lines as the user's own overlay shows them: each in the reader's language first.
    The meeting's lines are translated into it; the user's own lines are said in it, so
    their words as said are the main row and their translation for the others comes second
    (under the bilingual setting, where an original goes). Lines without a side as they are."""
    return [
        dataclasses.replace(ln, source=ln.text, text=ln.source) if ln.side == YOU else ln
        for ln in lines
    ]


def open_source(text: str, k: int) -> str:
    """What a display shows of the source of a line still being spoken: with mask-k on
    (k > 0) its last word is hidden, as the translation's last tokens are: the recogniser
    may still change it, and audio cut mid-word makes it part of a word ("and fl", "may
    be-"). Chinese, Japanese or Thai (no spaces): its last character, with its vowel."""
    text = text.rstrip()
    if k <= 0 or not text:
        return text
    if " " in text:
        return text.rsplit(" ", 1)[0].rstrip()
    if unspaced(text[-1]) or unicodedata.east_asian_width(text[-1]) in ("W", "F"):
        cut = len(text) - 1
        while cut > 0 and joined(text[cut - 1], text[cut]):
            cut -= 1
        return text[:cut]
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


def _open_order(ev: Subtitle) -> tuple[bool, int]:
    """Where open lines go among themselves: the Others' open line last, nearest the newest
    row, where a roll-up caption's reader looks; the overlay's reader is the user, and what
    the others say, translated into the user's language, is what the user reads. The user's
    own open line (a check of how their words come out) sits above it."""
    return (ev.side == OTHERS, ev.segment_id)


def _last_per_side(lines: list[ShownLine], n: int) -> list[ShownLine]:
    """The last ``n`` lines of each side, in their order (one side: the last ``n``)."""
    left: dict[str, int] = {}
    out: list[ShownLine] = []
    for ln in reversed(lines):
        if left.setdefault(ln.side, n) > 0:
            left[ln.side] -= 1
            out.append(ln)
    out.reverse()
    return out


class ShownLines:
    """Feed it Subtitles in order; ``lines(k, n)`` is what a display with mask-k shows."""

    def __init__(self, keep: int = KEEP) -> None:
        self._done: list[ShownLine] = []  # in the order said (segment ids)
        self._keep = keep  # finished lines remembered per side
        self._open: dict[str, Subtitle] = {}  # each side's open line
        self._extra = ExtraTargets()

    def add(self, ev: Subtitle) -> None:
        if ev.extra:
            self._extra.add(ev)
        elif ev.final and not (ev.translation or ev.source).strip():
            # A line that ended with no words (withdrawn: the meeting's audio heard by the
            # microphone): it leaves the screen rather than stay as a blank row.
            self._done = [ln for ln in self._done if ln.segment_id != ev.segment_id]
            open_line = self._open.get(ev.side)
            if open_line is not None and open_line.segment_id == ev.segment_id:
                del self._open[ev.side]
        elif ev.final:
            text = ev.translation or ev.source
            self._finish(
                ShownLine(ev.segment_id, ev.source, text, True, lang=ev.lang, side=ev.side)
            )
            open_line = self._open.get(ev.side)
            if open_line is not None and open_line.segment_id <= ev.segment_id:
                del self._open[ev.side]
        else:
            self._open[ev.side] = ev

    def _finish(self, line: ShownLine) -> None:
        """A finished line, in the order lines were said: a translator behind the speech shows
        a line finished as it stands and sends its translation after newer lines; that
        replaces the line where it is, or is dropped if it has rolled out of memory (older
        than every line its side keeps, with as many kept)."""
        lines, keep = self._done, self._keep
        at = next((i for i, ln in enumerate(lines) if ln.segment_id >= line.segment_id), len(lines))
        if at < len(lines) and lines[at].segment_id == line.segment_id:
            lines[at] = line
        else:
            mine = [ln.segment_id for ln in lines if ln.side == line.side]
            if len(mine) < keep or mine[0] < line.segment_id:  # else long gone
                lines.insert(at, line)
        self._done = _last_per_side(lines, keep)

    def clear(self) -> None:
        self._done.clear()
        self._open.clear()
        self._extra.clear()

    def lines(self, k: int, n: int, side: str | None = None) -> list[ShownLine]:
        """The last ``n`` lines of each side (one input: the last ``n``): finished ones in
        full, in the order said, then the open ones as mask-k shows them. ``side``: only the
        lines of that side, and those without one (None: every line)."""
        out = list(self._done)
        for ev in sorted(self._open.values(), key=_open_order):
            source = open_source(ev.source, k)
            shown = ev.shown(k) if ev.translation else source
            out.append(ShownLine(ev.segment_id, source, shown, False, lang=ev.lang, side=ev.side))
        if side is not None:
            out = [ln for ln in out if ln.side in (side, "")]
        out = _last_per_side(out, n) if n > 0 else []
        return [
            dataclasses.replace(ln, extra=extra)
            if (extra := self._extra.shown(ln.segment_id, k))
            else ln
            for ln in out
        ]
