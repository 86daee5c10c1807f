"""The overlay with two inputs (issue 31), a real window offscreen: every line says who spoke,
both sides' open lines show at once, the Others' open line is the newest row at the bottom, and
the window grows to hold both sides' rows."""

from __future__ import annotations

import dataclasses
from collections import Counter

from PySide6.QtGui import QFontMetricsF

from subtitler.config import DisplayConfig
from subtitler.pipeline.events import SubtitleEvent
from subtitler.types import OTHERS, YOU
from subtitler.ui.captions import MAIN, SOURCE
from subtitler.ui.overlay import PAD
from tests.ui.overlay_shots import check_frame, event, save, shown_overlay


def said(seg: int, text: str, side: str, final: bool = False, source: str = "") -> SubtitleEvent:
    return dataclasses.replace(event(seg, text, final, source), side=side)


def drawn(o) -> list[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
    """The caption rows of the last frame, top to bottom: (line, side, text)."""
    return [(pl.row.segment_id, pl.row.side, pl.row.text) for pl in o.placed]


def check_rows(o) -> None:  # type: ignore[no-untyped-def]
    """Every row whole inside the window, at most ``display.lines`` rows per side and stream,
    each line's rows together."""
    for pl in o.placed:
        assert pl.rect.top() >= 0 and pl.rect.bottom() <= o.height() - PAD + 0.01, pl
    assert max(Counter((pl.row.side, pl.row.stream) for pl in o.placed).values()) <= o.display.lines
    segs = [pl.row.segment_id for pl in o.placed]
    assert len(set(segs)) == len([s for i, s in enumerate(segs) if i == 0 or segs[i - 1] != s])


def test_both_sides_speak_at_once(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(mask_k=0))
    one_side, bottom = o.height(), o.geometry().bottom()
    o.on_subtitle(said(1, "Guten Morgen zusammen.", OTHERS, final=True))
    o.on_subtitle(said(2, "Wir fangen an", OTHERS))
    # The user answers while they still speak: the user's own words, in the reader's language.
    o.on_subtitle(said(3, "Bonjour", YOU, source="Good morning"))
    o.grab()
    check_rows(o)
    assert drawn(o) == [
        (1, OTHERS, "Others: Guten Morgen zusammen."),
        (3, YOU, "You: Good morning"),
        (2, OTHERS, "Others: Wir fangen an"),  # theirs, in the user's language, at the bottom
    ]
    assert o.drawn[0] == "Others: Wir fangen an"  # (drawn bottom first)
    # Room for two rows of each side: the window grew by one side's rows, its bottom kept.
    row = QFontMetricsF(o.font_for()).lineSpacing()
    assert o.sides == 2 and abs(o.height() - one_side - 2 * row) <= 1
    assert o.geometry().bottom() == bottom
    save(o, tmp_path, "two-sides")
    # The user's line finishes; theirs is still open and stays the newest row.
    o.on_subtitle(said(3, "Bonjour à tous.", YOU, final=True, source="Good morning, all."))
    o.on_subtitle(said(4, "On y", YOU, source="Shall we"))
    o.on_subtitle(said(2, "Wir fangen an mit", OTHERS))
    o.grab()
    assert drawn(o) == [
        (1, OTHERS, "Others: Guten Morgen zusammen."),
        (3, YOU, "You: Good morning, all."),
        (4, YOU, "You: Shall we"),
        (2, OTHERS, "Others: Wir fangen an mit"),
    ]
    check_rows(o)


def test_bilingual_per_side(qtbot) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(mask_k=0, bilingual=True, lines=1))
    o.on_subtitle(said(1, "Hallo.", OTHERS, final=True, source="Hello."))
    o.on_subtitle(said(2, "Bonjour.", YOU, final=True, source="Good day."))
    o.grab()
    # Each line in the reader's language as its main row: theirs translated, the user's as
    # said (its translation for the others in the small row).
    assert [(pl.row.side, pl.row.stream, pl.row.text) for pl in o.placed] == [
        (OTHERS, SOURCE, "Others: Hello."),
        (OTHERS, MAIN, "Hallo."),
        (YOU, SOURCE, "You: Bonjour."),
        (YOU, MAIN, "Good day."),
    ]
    assert [ln.side for ln in o.lines()] == [OTHERS, YOU]


def test_one_input_is_as_before(qtbot) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(mask_k=0))
    height = o.height()
    o.on_subtitle(event(1, "Guten Morgen.", final=True))
    o.on_subtitle(event(2, "Wir fangen an"))
    o.on_subtitle(event(3, "Jetzt"))  # one input: the new open line replaces the last
    o.grab()
    check_frame(o)
    assert drawn(o) == [(1, "", "Guten Morgen."), (3, "", "Jetzt")]
    assert (o.sides, o.height()) == (1, height)
