"""Which rows of text a caption display draws, without Qt: roll-up live-caption rows.

Each line (segment) starts on a new row; rows are at most as wide as ``fits`` allows (the
overlay's pixel width and ``display.line_chars`` columns). Each language stream (the source when
bilingual, the main target, each extra target) keeps its last ``n`` rows across the lines:
the newest at the bottom, older rows of the same or earlier lines above, until newer rows push
them out. Rows stay grouped by line, so a source row always sits right above the translation
rows of the same line (an older line's source rows go when its translation rows have gone).
With two inputs (issue 31) each side (who spoke) keeps its own last ``n`` rows of each stream,
and a line's first row starts with its speaker's name ("Others: …"); with one input there is
one side, unnamed, and the rows are as before. The status line's words are made here too.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from subtitler import sides
from subtitler.display.lines import ShownLine
from subtitler.session import LevelEvent
from subtitler.types import SILENCE_DBFS

SOURCE = "source"  # the stream of the source rows (bilingual mode)
MAIN = "main"  # the main target's stream; an extra target's stream is its language code

# Never at the start of a row (kinsoku): closing brackets and punctuation, small kana, the
# long-vowel mark, and the Latin ones that a space may precede ("Bonjour !").
CLOSING = frozenset(
    "、。，．！？：；」』）〕】》〉｝］〙〗〟’”»›ー々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ・…‥"
    ",.!?:;)]}%"
)
# Never at the end of a row: opening brackets and quotes.
OPENING = frozenset("「『（〔【《〈｛［〘〖〝‘“«‹([{")

Fits = Callable[[str, bool], bool]  # (row text, small (a source row)) -> it fits a row


@dataclass(frozen=True)
class Row:
    """One row of text to draw."""

    text: str
    segment_id: int
    stream: str  # SOURCE, MAIN or an extra target's language code
    small: bool  # drawn in the small font (the source rows)
    side: str = ""  # who spoke its line (types.YOU / types.OTHERS; "" with one input)


def wide(ch: str) -> bool:
    """A Chinese, Japanese or Korean full-width character (two columns)."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def columns(text: str) -> int:
    """Width in columns: a wide (CJK) character counts as two, as in caption guidelines."""
    return sum(2 if wide(ch) else 1 for ch in text)


def _units(text: str) -> list[tuple[bool, str]]:
    """The pieces a row may not break inside, each with whether a space precedes it: a word
    of space-delimited text (a Latin word inside Japanese too), a single CJK character; closing
    punctuation sticks to the piece before it and opening punctuation to the piece after."""
    units: list[tuple[bool, list[str]]] = []  # (a piece's characters: a long word in linear time)
    space = glue = False
    for ch in text:
        if ch.isspace():
            space, glue = True, False
            continue
        if ch in CLOSING and units:
            units[-1][1].extend((" ", ch) if space else (ch,))
        elif units and (glue or (not space and not wide(ch) and not wide(units[-1][1][-1]))):
            units[-1][1].append(ch)
        else:
            units.append((space, [ch]))
        glue = ch in OPENING
        space = False
    return [(space, "".join(chars)) for space, chars in units]


def _fitting_prefix(text: str, fits: Callable[[str], bool]) -> int:
    """Length of the longest prefix of ``text`` that fits (at least 1), not leaving closing
    punctuation to start the rest."""
    lo, hi = 1, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(text[:mid]):
            lo = mid
        else:
            hi = mid - 1
    longest = lo
    while 1 < lo < len(text) and text[lo:].lstrip()[:1] in CLOSING:
        lo -= 1
    if text[lo:].lstrip()[:1] in CLOSING:  # a run of punctuation longer than a row
        return longest
    return lo


def wrap(text: str, fits: Callable[[str], bool]) -> list[str]:
    """Greedy wrap into rows that fit: between words, between CJK characters, never before
    closing punctuation; a piece longer than a row (a file path, a long compound) is split
    between characters."""
    rows: list[str] = []
    cur = ""
    for space, unit in _units(text):
        cand = f"{cur}{' ' if space else ''}{unit}" if cur else unit
        if fits(cand):
            cur = cand
            continue
        if cur:
            rows.append(cur)
        while len(unit) > 1 and not fits(unit):
            n = _fitting_prefix(unit, fits)
            rows.append(unit[:n].rstrip())
            unit = unit[n:].lstrip()
        cur = unit
    if cur:
        rows.append(cur)
    return rows


def streams(line: ShownLine, bilingual: bool) -> list[tuple[str, str, bool]]:
    """(stream, text, small) of one line, top to bottom: its source (bilingual, when it is not
    the text itself: an untranslated line), the main target's text, each extra target's."""
    out: list[tuple[str, str, bool]] = []
    if bilingual and line.source and line.source != line.text:
        out.append((SOURCE, line.source, True))
    out.append((MAIN, line.text, False))
    out += [(lang or f"extra{i}", text, False) for i, (lang, text) in enumerate(line.extra, 1)]
    return out


# The end of a line that is laid out: the rows shown hold at most 6 x 120 characters, and a
# translation of megabytes froze the overlay laying it all out.
LAID_OUT_CHARS = 4000
CONTINUED = "… "  # the start of a source row whose line began on rows rolled out above


def caption_rows(lines: Sequence[ShownLine], n: int, fits: Fits, bilingual: bool) -> list[Row]:
    """The rows to draw, top to bottom: each side's last ``n`` rows of each stream, grouped by
    line. An older line shows its source and extra rows only along with its own translation
    rows: alone they would read as belonging to the line under them (the newest line's source
    may come before its translation). In bilingual mode a line's translation rows show only
    under its own source rows (issue 27: an older line's translation stayed, its source gone,
    right above the next line's source), and a source whose first rows rolled out starts with
    "…" (it read as a sentence of its own, in lower case). A line with a side starts with its
    speaker's name, kept ("You: … ") when its first rows roll out: who said a row must never be
    left to guess."""
    free: dict[tuple[str, str], int] = {}  # rows each side's streams still have room for
    seen: set[str] = set()  # sides with their newest line placed
    gone: set[str] = set()  # sides whose older lines have rolled out
    blocks: list[list[Row]] = []
    for line in reversed(lines):
        side = line.side
        if side in gone:
            continue
        block: list[Row] = []
        taken: dict[str, int] = {}
        parts = streams(line, bilingual)
        name = sides.label(side)
        for i, (stream, text, small) in enumerate(parts):
            room = free.get((side, stream), n)
            if room <= 0 or not text:
                continue
            lead = f"{name}: " if name and i == 0 else ""
            kept = _last_rows(text, _sized(fits, small), room, stream == SOURCE, lead)
            taken[stream] = len(kept)
            block += [Row(t, line.segment_id, stream, small, side) for t in kept]
        has_source = any(stream == SOURCE for stream, _, _ in parts)
        if side in seen and (not taken.get(MAIN) or (has_source and not taken.get(SOURCE))):
            full = free.get((side, MAIN), n) <= 0
            if full or (has_source and free.get((side, SOURCE), n) <= 0):
                gone.add(side)  # the lines above this have rolled out (or would show half)
            continue
        seen.add(side)
        for stream, k in taken.items():
            free[side, stream] = free.get((side, stream), n) - k
        blocks.append(block)
    return [row for block in reversed(blocks) for row in block]


def _last_rows(
    text: str, fits: Callable[[str], bool], room: int, mark: bool, lead: str = ""
) -> list[str]:
    """The last ``room`` rows of ``lead`` (a speaker's name) and ``text``; where the first
    rows are left out, the rows shown start with ``lead`` if any, then CONTINUED if ``mark``
    or a lead (as many words as then fit)."""
    if len(text) > LAID_OUT_CHARS:
        text = text[-LAID_OUT_CHARS:]  # (its first rows are left out whatever they are)
    rows = wrap(lead + text, fits)
    if len(rows) <= room or not (mark or lead):
        return rows[-room:]
    for first in range(len(rows) - room, len(rows)):
        marked = wrap(lead + CONTINUED + _after(lead + text, rows[:first]), fits)
        if len(marked) <= room:
            return marked
    return rows[-room:]


def _after(text: str, rows: Sequence[str]) -> str:
    """``text`` from where ``rows`` (its first rows, as wrapped) end."""
    skip = sum(1 for row in rows for ch in row if not ch.isspace())
    i = 0
    while skip and i < len(text):
        if not text[i].isspace():
            skip -= 1
        i += 1
    return text[i:].strip()


def _sized(fits: Fits, small: bool) -> Callable[[str], bool]:
    return lambda text: fits(text, small)


def level_bars(level_dbfs: float, bars: int) -> int:
    """How many of ``bars`` meter bars an input level lights: -50 dBFS none, -10 dBFS all."""
    if level_dbfs <= SILENCE_DBFS:
        return 0
    return max(0, min(bars, math.ceil((level_dbfs + 50) / 40 * bars)))


def status_text(level: LevelEvent | None) -> str:
    """The status line's words: speech-to-screen delay, how far behind, audio lost."""
    if level is None:
        return "not listening"
    latency = "—" if level.latency_s is None else f"{level.latency_s:.1f} s"
    behind = "keeping up" if level.lag_s < 0.05 else f"{level.lag_s:.1f} s behind"
    if level.waiting_lines:
        w = level.waiting_lines
        behind += f" · {w} line{'s' if w > 1 else ''} to translate"
    n = level.dropped_blocks
    lost = "no audio lost" if n <= 0 else f"{n} block{'s' if n > 1 else ''} lost"
    return f"{latency} speech→screen · {behind} · {lost}"
