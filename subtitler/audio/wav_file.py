"""Audio written to a 16-bit PCM WAV file (the stdlib's ``wave``: what any player and
``subtitler --replay`` read)."""

from __future__ import annotations

import wave
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from subtitler.types import AudioBlock


def write_wav(path: Path, blocks: Sequence[AudioBlock]) -> float:
    """Write the blocks one after the other (mono, their sample rate); returns the seconds
    written. The file is written beside and then moved into place, so a failure (a full disk)
    leaves no half file."""
    rate = blocks[0].sample_rate if blocks else 16000
    samples = np.concatenate(
        [np.asarray(b.samples, np.float32) for b in blocks] or [np.zeros(0, np.float32)]
    )
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).round().astype("<i2")
    part = path.with_name(path.name + ".part")
    try:
        with wave.open(str(part), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(pcm.tobytes())
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)
    return len(pcm) / rate
