"""Replay an audio file as a stream of blocks, at 1x or as fast as possible."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from subtitler.audio.resample import Samples
from subtitler.types import AudioBlock

RATE = 16000


class AudioFileError(RuntimeError):
    """A file that is missing or cannot be decoded; the message is meant for the user."""


def load_audio(path: str | Path) -> Samples:
    """Decode any file faster-whisper can (via PyAV) to 16 kHz mono float32."""
    # Decoding lives with the other faster_whisper use, imported only when a file is played.
    from subtitler.asr.backend import AsrError
    from subtitler.asr.faster_whisper import decode_audio_file

    try:
        return decode_audio_file(path)
    except AsrError as e:
        raise AudioFileError(str(e)) from None


@dataclass
class FileSource:
    """Blocks of a decoded recording; with ``realtime`` each is released when it has 'played'.

    ``clock`` and ``sleep`` are injectable so tests run paced replays without waiting.
    """

    audio: Samples
    realtime: bool = True
    block_ms: int = 100
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    started_at: float = field(default=0.0, init=False)  # clock() when iteration began

    @classmethod
    def open(cls, path: str | Path, realtime: bool = True, block_ms: int = 100) -> FileSource:
        return cls(load_audio(path), realtime=realtime, block_ms=block_ms)

    @property
    def duration(self) -> float:
        return len(self.audio) / RATE

    def blocks(self) -> Iterator[AudioBlock]:
        n = max(1, RATE * self.block_ms // 1000)
        self.started_at = self.clock()
        for i in range(0, len(self.audio), n):
            chunk = np.asarray(self.audio[i : i + n], dtype=np.float32)
            t0 = i / RATE
            if self.realtime:
                # A block exists only once its last sample has been spoken; if the consumer
                # was slow we are late already and release it at once (catching up).
                wait = self.started_at + t0 + len(chunk) / RATE - self.clock()
                if wait > 0:
                    self.sleep(wait)
            yield AudioBlock(chunk, t0, RATE)

    def __iter__(self) -> Iterator[AudioBlock]:
        return self.blocks()
