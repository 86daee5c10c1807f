"""The live state a status line shows (issue 17 point 4): speech-to-screen delay over the last
words and how long the translation is behind, from the same LiveMetrics as the logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from subtitler.pipeline.events import LevelEvent, SubtitleEvent
from subtitler.pipeline.metrics import RECENT_WORDS, LiveMetrics
from subtitler.types import AsrUpdate, Word
from tests.unit.test_pipeline import make


def asr(seg: int, words: list[tuple[str, float]], at: float, final: bool = False) -> AsrUpdate:
    ws = tuple(Word(w, end - 0.2, end) for w, end in words)
    text = " ".join(w for w, _ in words)
    return AsrUpdate(seg, text, "", final, 0.0, at, at, committed_words=ws)


def shown(u: AsrUpdate, at: float, partial: bool = False) -> SubtitleEvent:
    return SubtitleEvent(
        u.segment_id, u.text, "x", ("x",) * 11, u.final, u.emitted_at, at, partial=partial
    )


def test_latency_is_the_median_delay_of_the_last_words_shown() -> None:
    m = LiveMetrics()
    assert m.status(0.0) == (None, 0.0, 0)
    u1 = asr(0, [("good", 1.0), ("morning", 1.5)], at=2.0)
    m.on_asr(u1)
    m.on_translation(shown(u1, at=2.1))  # words ended 1.0 and 1.5: 1.1 and 0.6 s to screen
    assert m.status(2.2) == (pytest.approx(0.85), 0.0, 0)
    u2 = asr(0, [("good", 1.0), ("morning", 1.5), ("all", 2.5)], at=3.0, final=True)
    m.on_asr(u2)
    m.on_translation(shown(u2, at=3.5))  # "all": 1.0 s
    assert m.status(3.6) == (pytest.approx(1.0), 0.0, 0)
    # Only the newest words count: a slow start is forgotten.
    for i in range(RECENT_WORDS):
        u = asr(1 + i, [("w", 10.0 + i)], at=10.2 + i, final=True)
        m.on_asr(u)
        m.on_translation(shown(u, at=10.5 + i))
    latency, _, _ = m.status(40.0)
    assert latency is not None and abs(latency - 0.5) < 1e-9


def test_lag_is_how_long_the_oldest_unanswered_update_has_waited() -> None:
    m = LiveMetrics()
    a = asr(0, [("one", 0.5)], at=1.0)
    b = asr(0, [("one", 0.5), ("two", 1.2)], at=1.5)
    c = asr(0, [("one", 0.5), ("two", 1.2), ("three", 1.8)], at=2.0)
    for u in (a, b, c):
        m.on_asr(u)
    assert m.status(2.5)[1] == pytest.approx(1.5)  # nothing translated yet: a came at 1.0
    m.on_translation(shown(a, at=2.6, partial=False))
    assert m.status(2.7)[1] == pytest.approx(1.2)  # b waits since 1.5
    m.on_translation(shown(c, at=2.8))  # c answers b too (b is stale)
    assert m.status(2.9)[1] == 0.0
    d = asr(0, [("one", 0.5)], at=3.0, final=True)
    m.on_asr(d)
    m.finish_segment(0)  # a line that ends is no longer waited for
    assert m.status(4.0)[1] == 0.0


def test_behind_the_newest_line_counts_and_older_lines_wait() -> None:
    """A translator behind the speech serves the newest line first: the lag is that line's,
    and the finished lines still to translate are counted apart."""
    m = LiveMetrics()
    done1 = asr(0, [("one.", 0.5)], at=1.0, final=True)
    done2 = asr(1, [("two.", 1.5)], at=2.0, final=True)
    newest = asr(2, [("three", 2.5)], at=3.0)
    for u in (done1, done2, newest):
        m.on_asr(u)
    assert m.status(3.5) == (None, pytest.approx(0.5), 2)
    m.on_translation(shown(newest, at=3.6))
    assert m.status(4.0) == (pytest.approx(1.1), 0.0, 2)
    m.on_translation(shown(done2, at=4.1))
    m.finish_segment(1)
    assert m.status(4.2)[1:] == (0.0, 1)


def test_the_pipeline_sends_them_with_the_input_level(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    levels = ev.of(LevelEvent)
    assert levels and levels[0].latency_s is None  # before anything was shown
    # (The fake source runs faster than its audio: the delays' values mean nothing here.)
    assert any(e.latency_s is not None for e in levels)
    assert all(e.lag_s >= 0.0 for e in levels)
