"""The audio a stop could not wait for, written as a WAV file any player (and --replay) reads."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from subtitler.audio.wav_file import write_wav
from subtitler.types import AudioBlock


def test_blocks_are_written_one_after_the_other_as_16_bit_pcm(tmp_path: Path) -> None:
    a = AudioBlock(np.array([0.0, 0.5, -0.5, 1.5], np.float32), 10.0)
    b = AudioBlock(np.array([-2.0, 0.25], np.float32), 12.0)  # (a gap: blocks are joined)
    path = tmp_path / "t.unheard.wav"
    assert write_wav(path, [a, b]) == pytest.approx(6 / 16000)
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 16000)
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    # Out of range samples are clipped, not wrapped around.
    assert pcm.tolist() == [0, 16384, -16384, 32767, -32767, 8192]
    assert [p.name for p in tmp_path.iterdir()] == ["t.unheard.wav"]


def test_a_file_that_cannot_be_written_raises_and_leaves_nothing(tmp_path: Path) -> None:
    block = AudioBlock(np.zeros(1600, np.float32), 0.0)
    (tmp_path / "taken").mkdir()  # the name is a folder's
    with pytest.raises(OSError):
        write_wav(tmp_path / "taken", [block])
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]
