"""The pause report: Silero as the app runs it, on real speech with a quiet pause and a noisy
one between three LJSpeech sentences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from subtitler.asr.faster_whisper import decode_audio_file
from subtitler_research.asr import pause_bench
from tests.conftest import DATA

SR = 16000


def test_a_noisy_pause_is_taken_in_and_a_quiet_one_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clips = [decode_audio_file(DATA / f"LJ001-00{n}.flac") for n in ("02", "08", "13")]
    quiet = np.zeros(2 * SR, np.float32)
    noise = (np.random.default_rng(7).standard_normal(2 * SR) * 0.02).astype(np.float32)
    sf.write(
        tmp_path / "talk.wav", np.concatenate([clips[0], quiet, clips[1], noise, clips[2]]), SR
    )
    t1 = len(clips[0]) / SR
    t2 = t1 + 2 + len(clips[1]) / SR
    # One reference word in the middle of the noisy pause (as a drawled word would be).
    (tmp_path / "timing.tsv").write_text(
        f"0.1\t0.5\tin\n{t1 + 1.0:.3f}\t{t1 + 1.2:.3f}\tum\n{t2 + 0.9:.3f}\t{t2 + 1.1:.3f}\tso\n",
        encoding="utf-8",
    )
    assert pause_bench.main([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3, lines
    assert "(taken in)" not in lines[0] and lines[0].endswith("words: ")  # "um" is no word
    assert "(taken in)" in lines[1] and lines[1].endswith("words: so")
    assert lines[2].endswith("taken in: 1 of 1 with words, 0 of 1 without")
