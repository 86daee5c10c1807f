"""The oracle backend: TSV parsing, words heard so far, seeded flicker, speech frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.backend import AsrError
from subtitler.types import Word
from subtitler_research.asr.oracle import OracleBackend, OracleVad, read_words_tsv

WORDS = [
    Word(" And", 0.30, 0.50),
    Word(" so,", 0.55, 0.90),
    Word(" my", 1.00, 1.20),
    Word(" fellow", 1.25, 1.60),
    Word(" Americans.", 1.70, 2.40),
]


def silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * 16000), np.float32)


def texts(o: OracleBackend, t0: float, t1: float) -> list[tuple[str, float, float]]:
    h = o.transcribe(silence(t1 - t0), t0=t0, prompt="", language=None)
    return [(w.text, round(w.start, 3), round(w.end, 3)) for w in h.words]


def test_read_words_tsv(tmp_path: Path) -> None:
    p = tmp_path / "w.tsv"
    p.write_text("# talk\n0.30\t0.50\tAnd\n\n0.55\t0.9\tso,\n", encoding="utf-8")
    assert read_words_tsv(p) == [Word(" And", 0.3, 0.5), Word(" so,", 0.55, 0.9)]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("0.3 0.5 And", "3 fields"),
        ("0.3\tx\tAnd", "number"),
        ("0.9\t0.5\tAnd", "order"),
        ("0.3\t0.5\t ", "empty word"),
    ],
)
def test_bad_tsv_line_names_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    p = tmp_path / "bad.tsv"
    p.write_text(f"0.1\t0.2\tok\n{line}\n", encoding="utf-8")
    with pytest.raises(AsrError, match=r"bad.tsv:2: expected start<TAB>end<TAB>word"):
        read_words_tsv(p)


def test_missing_and_empty_tsv(tmp_path: Path) -> None:
    with pytest.raises(AsrError, match="word file not found"):
        read_words_tsv(tmp_path / "nope.tsv")
    (tmp_path / "e.tsv").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(AsrError, match="no words"):
        read_words_tsv(tmp_path / "e.tsv")


def test_without_flicker_hypothesis_is_the_words_heard_so_far() -> None:
    o = OracleBackend(WORDS, flicker_p=0.0)
    # At 1.4 s 3/7 of "fellow" is spoken: it appears cut off, ending at the buffer end.
    assert texts(o, 0.0, 1.4) == [
        (" And", 0.3, 0.5),
        (" so,", 0.55, 0.9),
        (" my", 1.0, 1.2),
        (" fe", 1.25, 1.4),
    ]
    # Times are relative to the buffer; words before the buffer are not heard.
    assert texts(o, 1.0, 2.5) == [
        (" my", 0.0, 0.2),
        (" fellow", 0.25, 0.6),
        (" Americans.", 0.7, 1.4),
    ]


def test_flicker_touches_only_the_last_half_second_and_is_seeded() -> None:
    o = OracleBackend(WORDS, flicker_p=1.0, seed=7)
    h = texts(o, 0.0, 2.5)
    assert [w for w, _, _ in h[:3]] == [" And", " so,", " my"]  # older than 0.5 s: untouched
    assert h[3][0] != " fellow" or h[4][0] != " Americans."
    assert h[4][0] != " Americans."  # ends 0.1 s before the buffer end: always changed
    assert texts(o, 0.0, 2.5) == h  # same call, same answer
    assert o.transcribe(silence(1), t0=0, prompt="", language="de").language == "de"


def test_oracle_vad_marks_frames_inside_words() -> None:
    vad = OracleVad([Word(" a", 0.1, 0.2)])
    probs = np.concatenate([vad(silence(0.1)), vad(silence(0.2))])  # blocks split frames
    frames = [i for i, p in enumerate(probs) if p > 0]
    assert len(probs) == 9  # 0.3 s = 9 whole 32 ms frames
    assert frames == [3, 4, 5, 6]  # frames overlapping 0.1..0.2 s
