"""Caption rows with two inputs (issue 31), without Qt: each line starts with who spoke, each
side keeps its own rows, and a name stays on a line whose first rows rolled out."""

from __future__ import annotations

from subtitler.display.lines import ShownLine
from subtitler.types import OTHERS, YOU
from subtitler.ui.captions import MAIN, SOURCE, Row, caption_rows, columns


def fits(text: str, small: bool) -> bool:
    """20 columns a row, 24 for the small source rows."""
    return columns(text) <= (24 if small else 20)


def shape(rows: list[Row]) -> list[tuple[int, str, str, str]]:
    return [(r.segment_id, r.side, r.stream, r.text) for r in rows]


def line(seg: int, text: str, side: str, final: bool = True, source: str = "") -> ShownLine:
    return ShownLine(seg, source or f"src {seg}", text, final, "de", side=side)


def test_each_line_is_named_and_each_side_keeps_its_rows() -> None:
    lines = [
        line(1, "Guten Tag.", OTHERS),
        line(2, "Hallo.", YOU),
        line(3, "Wie geht es?", OTHERS),
        line(4, "Gut.", YOU, final=False),
        line(5, "Schön", OTHERS, final=False),
    ]
    # Two rows each: the user's lines do not push the others' out, nor the other way round.
    assert shape(caption_rows(lines, 2, fits, bilingual=False)) == [
        (2, YOU, MAIN, "You: Hallo."),
        (3, OTHERS, MAIN, "Others: Wie geht es?"),
        (4, YOU, MAIN, "You: Gut."),
        (5, OTHERS, MAIN, "Others: Schön"),
    ]


def test_a_name_stays_when_the_first_rows_roll_out() -> None:
    text = "eins zwei drei vier fünf sechs sieben acht"
    rows = caption_rows([line(1, text, OTHERS, final=False)], 2, fits, bilingual=False)
    # "Others: eins zwei", "drei vier fünf sechs" rolled out: the rows left still say who speaks.
    assert [r.text for r in rows] == ["Others: … sieben", "acht"]


def test_bilingual_names_the_line_on_its_first_row() -> None:
    lines = [line(1, "Hallo.", YOU, source="Hello."), line(2, "Hi.", OTHERS, source="Salut.")]
    assert shape(caption_rows(lines, 1, fits, bilingual=True)) == [
        (1, YOU, SOURCE, "You: Hello."),
        (1, YOU, MAIN, "Hallo."),
        (2, OTHERS, SOURCE, "Others: Salut."),
        (2, OTHERS, MAIN, "Hi."),
    ]


def test_lines_without_a_side_are_not_named_and_share_their_rows() -> None:
    lines = [line(1, "Guten Tag.", ""), line(2, "Hallo.", ""), line(3, "Wie geht es?", "")]
    assert shape(caption_rows(lines, 2, fits, bilingual=False)) == [
        (2, "", MAIN, "Hallo."),
        (3, "", MAIN, "Wie geht es?"),
    ]
