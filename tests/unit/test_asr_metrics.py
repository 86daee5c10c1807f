"""Commit delay and the benchmark summary on fixed updates."""

from __future__ import annotations

import pytest

from subtitler.asr.streaming import RunInfo
from subtitler.types import AsrUpdate, Word
from subtitler_research.asr.metrics import commit_delays, summarize

A, B, C = Word(" a", 0.0, 0.5), Word(" b", 0.6, 1.0), Word(" c.", 1.1, 1.5)


def upd(seg: int, words: tuple[Word, ...], at: float, t1: float, final: bool = False) -> AsrUpdate:
    return AsrUpdate(seg, "", "", final, 0.0, t1, at, committed_words=words)


def test_commit_delay_counts_each_word_once_at_its_first_commit() -> None:
    ups = [
        upd(0, (), 1.0, 1.0),
        upd(0, (A,), 2.0, 2.0),
        upd(0, (A, B), 3.0, 3.0),
        upd(0, (A, B, C), 3.5, 3.4, final=True),
        upd(1, (A,), 4.0, 4.0),  # same word object in another segment: a new word
    ]
    assert commit_delays(ups) == [1.5, 2.0, 2.0, 3.5]
    r = summarize(ups, [RunInfo(1.0, 1.0, False), RunInfo(3.4, 3.0, True)], 10.0, 0.5, 2)
    assert (r.commit_delay_median, r.words, r.segments, r.updates) == (2.0, 4, 1, 5)
    assert (r.rtf, r.updates_per_s, r.buffer_mean_s, r.buffer_max_s) == (0.05, 0.5, 2.0, 3.0)
    assert r.lag_max_s == pytest.approx(0.1) and r.lag_last_s == 0.0
    assert (r.dropped_blocks, r.runs) == (2, 2)
    assert "commit delay median 2.00 s" in "\n".join(r.lines())
