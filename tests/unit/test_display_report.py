"""The replay's display figures (issue 17 point 5): visible changes (the flicker rate), those
that took words back, and the gaps a line being spoken went without an update."""

from __future__ import annotations

import pytest

from subtitler.pipeline.events import MAX_K, SubtitleEvent
from subtitler.types import AsrUpdate
from subtitler_research.pipeline.display import display_report, visible_changes


def ev(seg: int, t: float, shown: str, final: bool = False) -> SubtitleEvent:
    return SubtitleEvent(seg, "src", shown, (shown,) * (MAX_K + 1), final, t, t)


def asr(seg: int, t: float) -> AsrUpdate:
    return AsrUpdate(seg, "src", "", False, 0.0, t, t)


SUBS = [
    ev(0, 1.0, "Guten"),
    ev(0, 1.5, "Guten"),  # the same text again: no change
    ev(0, 2.0, "Guten Morgen"),
    ev(0, 4.0, "Guten Abend"),  # takes "Morgen" back
    ev(0, 4.5, "Guten Abend.", final=True),  # "Abend" -> "Abend." is a changed word
    ev(1, 6.0, "Wir"),
    ev(1, 6.5, "Wir beginnen.", final=True),
]
ASR = [asr(0, 0.5), asr(0, 1.0), asr(1, 5.0), asr(1, 6.0)]


def test_visible_changes() -> None:
    got = [(c.t, c.segment_id, c.text, c.erased) for c in visible_changes(SUBS, 3, "de")]
    assert got == [
        (1.0, 0, "Guten", 0),
        (2.0, 0, "Guten Morgen", 0),
        (4.0, 0, "Guten Abend", 1),
        (4.5, 0, "Guten Abend.", 1),
        (6.0, 1, "Wir", 0),
        (6.5, 1, "Wir beginnen.", 0),
    ]


def test_display_report() -> None:
    r = display_report(SUBS, ASR, 3, "de")
    # 6 changes, 2 of them rewrites, over 0.5 .. 6.5 s.
    assert r["display_changes"] == 6
    assert r["ne_displayed"] == 0.5  # 2 words taken back, 4 in the finished lines
    assert r["display_changes_per_s"] == pytest.approx(1.0)
    assert r["display_rewrites_per_s"] == pytest.approx(2 / 6, abs=1e-4)
    # Segment 0: 0.5 -> 1.0 -> 2.0 -> 4.0 -> 4.5; segment 1: 5.0 -> 6.0 -> 6.5.
    assert r["update_gap_max_s"] == 2.0
    assert r["update_gap_median_s"] == 0.75
    assert r["update_gaps_within_target"] == pytest.approx(5 / 6, abs=1e-4)
    # Every event counts as a refresh, the one that changed nothing at 1.5 s too.
    assert r["refresh_gap_max_s"] == 2.0 and r["refresh_gap_median_s"] == 0.5
    # The screen: 0.5 (first update) -> 1.0 -> 2.0 -> 4.0 -> 4.5 -> 6.0 -> 6.5 changes.
    assert r["screen_update_gap_max_s"] == 2.0 and r["screen_update_gap_median_s"] == 0.75
    assert r["screen_update_gaps_within_target"] == pytest.approx(5 / 6, abs=1e-4)
    assert r["screen_refresh_gap_max_s"] == 2.0  # 2.0 -> 4.0: nothing in between


def test_chinese_counts_characters() -> None:
    subs = [ev(0, 1.0, "我们明天"), ev(0, 2.0, "我们今天", final=True)]
    assert [c.erased for c in visible_changes(subs, 3, "zh")] == [0, 2]
