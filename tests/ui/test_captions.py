"""subtitler.ui.captions without Qt: wrapping, roll-up rows per language, the status words.

Rows are measured in columns here (a CJK character two): the overlay adds its pixel width."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from subtitler.display.lines import ShownLine
from subtitler.pipeline.events import LevelEvent
from subtitler.types import SILENCE_DBFS
from subtitler.ui.captions import (
    MAIN,
    SOURCE,
    Row,
    caption_rows,
    columns,
    level_bars,
    status_text,
    wrap,
)


def cols(n: int) -> Callable[[str], bool]:
    return lambda text: columns(text) <= n


def fits(text: str, small: bool) -> bool:
    """12 columns a row, 16 for the small source rows."""
    return columns(text) <= (16 if small else 12)


def shape(rows: list[Row]) -> list[tuple[int, str, str]]:
    return [(r.segment_id, r.stream, r.text) for r in rows]


def test_columns_count_cjk_as_two() -> None:
    assert columns("Budget") == 6 and columns("会議") == 4 and columns("東京でZoom") == 10
    assert columns("ｱ") == 1 and columns("Ａ") == 2  # half-width kana, full-width Latin


@pytest.mark.parametrize(
    ("text", "width", "rows"),
    [
        # between words
        (
            "Das Budget ist im letzten Jahr gewachsen.",
            12,
            ["Das Budget", "ist im", "letzten Jahr", "gewachsen."],
        ),
        # between characters in Japanese, 5 to a row at 10 columns
        ("会議は午後三時に始まります。", 10, ["会議は午後", "三時に始ま", "ります。"]),
        # never a row starting with 、 or 。 (it takes the character before it down)
        ("今日は、晴れです。", 6, ["今日", "は、晴", "れで", "す。"]),
        # a Latin word inside Japanese stays whole
        ("東京でZoom会議", 8, ["東京で", "Zoom会議"]),
        # never a row ending with 「 (it goes down with the character after it)
        ("彼は「はい」と言った。", 6, ["彼は", "「は", "い」と", "言っ", "た。"]),
        # a word longer than a row is split between characters
        ("Donaudampfschifffahrt ist lang", 10, ["Donaudampf", "schifffahr", "t ist lang"]),
        # Chinese with full-width commas
        ("我们先讨论结果，然后回答问题。", 16, ["我们先讨论结果，", "然后回答问题。"]),
        ("我们先讨论结果，然后回答问题。", 14, ["我们先讨论结", "果，然后回答问", "题。"]),
        ("", 10, []),
        ("  zwei   Leerzeichen ", 40, ["zwei Leerzeichen"]),
    ],
)
def test_wrap(text: str, width: int, rows: list[str]) -> None:
    assert wrap(text, cols(width)) == rows


def test_a_run_of_punctuation_longer_than_a_row_still_wraps() -> None:
    assert wrap("あ。。。。。", cols(6)) == ["あ。。", "。。。"]
    assert wrap("x", cols(0)) == ["x"]  # a character wider than a row: alone on its row


def test_roll_up_keeps_the_last_n_rows_of_the_main_language() -> None:
    done = ShownLine(1, "s1", "Das Budget ist im letzten Jahr gewachsen.", True)
    growing = [
        ShownLine(2, "s2", text, False)
        for text in (
            "",
            "Wir",
            "Wir sprechen",
            "Wir sprechen heute über",
            "Wir sprechen heute über Zahlen.",
        )
    ]
    got = [shape(caption_rows([done, g], 2, fits, False)) for g in growing]
    assert got == [
        [(1, MAIN, "letzten Jahr"), (1, MAIN, "gewachsen.")],
        [(1, MAIN, "gewachsen."), (2, MAIN, "Wir")],
        [(1, MAIN, "gewachsen."), (2, MAIN, "Wir sprechen")],
        [(2, MAIN, "Wir sprechen"), (2, MAIN, "heute über")],
        [(2, MAIN, "heute über"), (2, MAIN, "Zahlen.")],
    ]
    assert shape(caption_rows([done], 3, fits, False)) == [
        (1, MAIN, "ist im"),
        (1, MAIN, "letzten Jahr"),
        (1, MAIN, "gewachsen."),
    ]
    assert caption_rows([], 2, fits, False) == [] and caption_rows([done], 0, fits, False) == []


def test_a_rewritten_open_line_is_wrapped_anew() -> None:
    done = ShownLine(1, "s1", "Guten Tag.", True)
    before = ShownLine(2, "s2", "Das Budget ist im letzten Jahr gewachsen", False)
    after = ShownLine(2, "s2", "Der Haushalt wuchs", False)
    assert shape(caption_rows([done, before], 2, fits, False)) == [
        (2, MAIN, "letzten Jahr"),
        (2, MAIN, "gewachsen"),
    ]
    assert shape(caption_rows([done, after], 2, fits, False)) == [
        (2, MAIN, "Der Haushalt"),
        (2, MAIN, "wuchs"),
    ]
    shorter = ShownLine(2, "s2", "Der Etat", False)  # one row: the line above comes back
    assert shape(caption_rows([done, shorter], 2, fits, False)) == [
        (1, MAIN, "Guten Tag."),
        (2, MAIN, "Der Etat"),
    ]


def test_bilingual_rows_are_grouped_by_line_source_first() -> None:
    lines = [
        ShownLine(1, "Good morning.", "Guten Morgen.", True),
        ShownLine(2, "The budget grew by twelve percent", "Das Budget wuchs", False),
    ]
    assert shape(caption_rows(lines, 2, fits, True)) == [
        (2, SOURCE, "… by twelve"),  # its last two rows of three, marked as a continuation
        (2, SOURCE, "percent"),
        (2, MAIN, "Das Budget"),
        (2, MAIN, "wuchs"),
    ]
    untranslated_yet = [lines[0], ShownLine(2, "The budget", "", False)]
    assert shape(caption_rows(untranslated_yet, 2, fits, True)) == [
        (1, SOURCE, "Good morning."),
        (1, MAIN, "Guten"),
        (1, MAIN, "Morgen."),
        (2, SOURCE, "The budget"),  # the newest line's source before its translation
    ]
    # An older line's source does not stay once its translation has rolled out: it would
    # stand right above the next line's source as if it were part of it.
    older = [
        ShownLine(1, "Good morning.", "Hallo.", True),
        ShownLine(2, "The budget grew", "Das Budget wuchs", False),
    ]
    assert shape(caption_rows(older, 2, fits, True)) == [
        (2, SOURCE, "The budget grew"),
        (2, MAIN, "Das Budget"),
        (2, MAIN, "wuchs"),
    ]
    # Nor does an older line's translation stay once its source has rolled out (issue 27):
    # it would read as the translation of the source under it.
    taller_source = [
        ShownLine(1, "Good morning.", "Hallo.", True),
        ShownLine(2, "The budget grew by twelve", "Das Budget", False),
    ]
    assert shape(caption_rows(taller_source, 2, fits, True)) == [
        (2, SOURCE, "The budget grew"),
        (2, SOURCE, "by twelve"),
        (2, MAIN, "Das Budget"),
    ]
    # An untranslated line (the translation is its source) has no source row.
    same = [ShownLine(3, "Zoom", "Zoom", True)]
    assert shape(caption_rows(same, 2, fits, True)) == [(3, MAIN, "Zoom")]


def test_extra_targets_have_their_own_rows_under_the_main_ones() -> None:
    lines = [
        ShownLine(1, "Hi.", "Hallo.", True, "de", (("ja", "こんにちは。"),)),
        ShownLine(
            2, "Good", "Guten Morgen euch allen", False, "de", (("ja", "皆さんおはようございます"),)
        ),
    ]
    assert shape(caption_rows(lines, 2, fits, True)) == [
        (2, SOURCE, "Good"),
        (2, MAIN, "Guten Morgen"),
        (2, MAIN, "euch allen"),
        (2, "ja", "皆さんおはよ"),
        (2, "ja", "うございます"),
    ]
    # The newest line's Japanese not there yet: the older line's shows, with its translation.
    waiting = [lines[0], ShownLine(2, "Good", "Guten Tag", False, "de")]
    assert shape(caption_rows(waiting, 2, fits, False)) == [
        (1, MAIN, "Hallo."),
        (1, "ja", "こんにちは。"),
        (2, MAIN, "Guten Tag"),
    ]


def test_level_bars_follow_the_level_in_decibels() -> None:
    levels = (SILENCE_DBFS, -60.0, -50.0, -40.0, -30.5, -20.0, -10.5, -10.0, 0.0)
    assert [level_bars(db, 5) for db in levels] == [0, 0, 0, 2, 3, 4, 5, 5, 5]


def test_status_words() -> None:
    assert status_text(LevelEvent(-20.0, 0, 1.84, 0.31)) == (
        "1.8 s speech→screen · 0.3 s behind · no audio lost"
    )
    assert status_text(LevelEvent(-20.0, 12, None, 0.0)) == (
        "— speech→screen · keeping up · 12 blocks lost"
    )
    assert status_text(LevelEvent(-20.0, 1, 0.5, 4.0)).endswith("4.0 s behind · 1 block lost")
    assert status_text(LevelEvent(-20.0, 0, 0.5, 0.2, 3)).endswith(
        "0.2 s behind · 3 lines to translate · no audio lost"
    )
    assert status_text(None) == "not listening"


def test_a_line_of_megabytes_shows_its_end_and_lays_out_only_that() -> None:
    """A translation server's answer of 10 MB was taken as a line: the overlay laid it all
    out (a quadratic loop in one word) and froze. Only its end is laid out."""
    from tests.helpers.bounded import run_bounded

    word = "x" * 1_000_000 + " ist gewachsen."
    rows = run_bounded(lambda: caption_rows([ShownLine(1, "s", word, True)], 2, fits, False))
    (before, last) = shape(rows)  # (where the word's last row ends: it is not laid out whole)
    assert last == (1, MAIN, "gewachsen.") and before[2].lstrip("x") == " ist"
    source = "Das Budget " * 100_000 + "ist gewachsen."
    text = "The budget " * 100_000 + "has grown."
    rows = run_bounded(lambda: caption_rows([ShownLine(1, source, text, True)], 2, fits, True))
    assert shape(rows) == [
        (1, SOURCE, "… Budget ist"),
        (1, SOURCE, "gewachsen."),
        (1, MAIN, "budget has"),
        (1, MAIN, "grown."),
    ]
    tail = "x" * 30 + " ist"  # a word longer than a row is split between characters
    assert wrap(tail, cols(12)) == ["x" * 12, "x" * 12, "x" * 6 + " ist"]
