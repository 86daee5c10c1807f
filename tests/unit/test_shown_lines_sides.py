"""ShownLines with two inputs (issue 31): each side its own open line and its own last lines,
the Others' open line last; one input (side "") reads exactly as before."""

from __future__ import annotations

from subtitler.display.lines import ShownLines
from subtitler.pipeline.events import SubtitleEvent
from subtitler.types import OTHERS, YOU


def ev(seg: int, text: str, final: bool, side: str = "", target: int = 0) -> SubtitleEvent:
    """An event whose mask-k hides nothing (the rule is tested elsewhere)."""
    return SubtitleEvent(
        seg, f"src {seg}", text, (text,) * 11, final, 0.0, 0.0, target=target, side=side
    )


def shown(lines: ShownLines, n: int = 6, side: str | None = None) -> list[tuple[int, str, str]]:
    return [(ln.segment_id, ln.side, ln.text) for ln in lines.lines(0, n, side)]


def test_each_side_keeps_its_open_line() -> None:
    s = ShownLines()
    s.add(ev(1, "Guten Tag", False, OTHERS))
    s.add(ev(2, "Hello", False, YOU))  # the user speaks over them: both lines stay open
    assert shown(s) == [(2, YOU, "Hello"), (1, OTHERS, "Guten Tag")]
    s.add(ev(2, "Hello all.", True, YOU))  # the user's line finishes: theirs stays open
    s.add(ev(3, "Next", False, YOU))
    assert shown(s) == [(2, YOU, "Hello all."), (3, YOU, "Next"), (1, OTHERS, "Guten Tag")]
    s.add(ev(1, "Guten Tag allerseits.", True, OTHERS))
    assert shown(s) == [
        (1, OTHERS, "Guten Tag allerseits."),
        (2, YOU, "Hello all."),
        (3, YOU, "Next"),
    ]


def test_one_side_replaces_only_its_own_open_line() -> None:
    # With one input a new open line replaces the last one (as before); with two, only the
    # same side's.
    one = ShownLines()
    one.add(ev(1, "a", False))
    one.add(ev(2, "b", False))
    assert shown(one) == [(2, "", "b")]
    two = ShownLines()
    two.add(ev(1, "a", False, OTHERS))
    two.add(ev(2, "b", False, YOU))
    two.add(ev(3, "c", False, YOU))
    assert shown(two) == [(3, YOU, "c"), (1, OTHERS, "a")]


def test_each_side_keeps_its_last_lines() -> None:
    s = ShownLines(keep=3)
    s.add(ev(0, "mine", True, YOU))
    for i in range(1, 6):  # the others talk on: the user's one line is still theirs to see
        s.add(ev(i, f"theirs {i}", True, OTHERS))
    assert shown(s, n=2) == [(0, YOU, "mine"), (4, OTHERS, "theirs 4"), (5, OTHERS, "theirs 5")]
    assert shown(s, n=6) == [(0, YOU, "mine")] + [(i, OTHERS, f"theirs {i}") for i in (3, 4, 5)]


def test_a_side_picks_its_lines_and_lines_without_a_side_always_show() -> None:
    s = ShownLines()
    s.add(ev(1, "theirs", True, OTHERS))
    s.add(ev(2, "mine", True, YOU))
    s.add(ev(3, "open mine", False, YOU))
    assert shown(s, side=YOU) == [(2, YOU, "mine"), (3, YOU, "open mine")]
    assert shown(s, side=OTHERS) == [(1, OTHERS, "theirs")]
    one = ShownLines()  # one input: no side, so a page asking for one still shows every line
    one.add(ev(1, "a", True))
    one.add(ev(2, "b", False))
    assert shown(one, side=YOU) == shown(one) == [(1, "", "a"), (2, "", "b")]


def test_extra_targets_follow_their_line_on_either_side() -> None:
    s = ShownLines()
    s.add(ev(1, "Hallo", False, OTHERS))
    s.add(ev(2, "Hi", False, YOU))
    s.add(ev(2, "Salut", False, YOU, target=1))
    got = {ln.segment_id: ln.extra for ln in s.lines(0, 6)}
    assert got == {1: (), 2: (("", "Salut"),)}


def test_a_line_withdrawn_as_an_echo_leaves_the_screen() -> None:
    s = ShownLines()
    s.add(ev(1, "We ship on Friday", False, OTHERS))
    s.add(ev(2, "We ship", False, YOU))  # the leak, shown before it was known for one
    gone = SubtitleEvent(2, "", "", ("",) * 11, True, 0.0, 0.0, side=YOU)
    s.add(gone)
    assert shown(s) == [(1, OTHERS, "We ship on Friday")]  # no blank row left behind
    s.add(ev(3, "Sounds good.", True, YOU))
    assert shown(s) == [(3, YOU, "Sounds good."), (1, OTHERS, "We ship on Friday")]


def test_an_open_line_in_a_script_without_spaces_shows_its_words_as_said() -> None:
    """A line still being spoken hides its last word, or in a script written without spaces
    its last character: a Thai line (no translation, or one spoken in the reader's language)
    was blank until it ended; never a Thai vowel cut off its consonant either."""
    s = ShownLines()
    said = "ประเทศไทยมีประชากรมากกว่าหกสิบล้านคน"
    s.add(SubtitleEvent(1, said, "", ("",) * 11, False, 0.0, 0.0))
    (line,) = s.lines(3, 6)
    assert line.source == line.text == "ประเทศไทยมีประชากรมากกว่าหกสิบล้านค"
    s.add(SubtitleEvent(1, "เมืองหลวงคือกรุงเทพ", "", ("",) * 11, False, 0.0, 0.0))
    assert s.lines(3, 6)[0].source == "เมืองหลวงคือกรุงเท"
    s.add(SubtitleEvent(1, "ไม่ได้ไป", "", ("",) * 11, False, 0.0, 0.0))
    assert s.lines(3, 6)[0].source == "ไม่ได้"  # not "ไม่ได้ไ"
    s.add(SubtitleEvent(1, "我们明天开会", "", ("",) * 11, False, 0.0, 0.0))
    assert s.lines(3, 6)[0].source == "我们明天开"
