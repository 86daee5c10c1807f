"""The oracle talk through the real pipeline: the product's factories with the recogniser and
the audio replaced by a word-timestamped transcript (the factories' seam, no knob in them)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from subtitler.asr.engine import Recognizer
from subtitler.audio.paced import PacedFileSource
from subtitler.audio.source import AudioSource, Clock
from subtitler.audio.sources import RATE
from subtitler.config import AsrConfig, AudioConfig
from subtitler.pipeline.factories import RealParts, real_factories
from subtitler.pipeline.pipeline import Factories
from subtitler.types import Word
from subtitler_research.asr.oracle import OracleBackend, OracleVad, read_words_tsv


def looped_words(path: Path, loop: int = 1, gap_s: float = 1.0) -> list[Word]:
    """The oracle transcript, repeated ``loop`` times on one timeline."""
    words = read_words_tsv(path)
    if not words or loop <= 1:
        return words
    period = words[-1].end + gap_s
    return [
        dataclasses.replace(w, start=w.start + i * period, end=w.end + i * period)
        for i in range(loop)
        for w in words
    ]


def oracle_factories(words: list[Word], parts: RealParts | None = None) -> Factories:
    """The real factories (translation model, and a file when the config plays one) with the
    oracle as recogniser; without a file the audio is silence as long as the talk."""
    real = real_factories(parts)

    def audio(cfg: AudioConfig, clock: Clock) -> AudioSource:
        if cfg.source == "file":
            return real.audio(cfg, clock)
        from subtitler.audio.sources import silence

        n = max(1, RATE * cfg.block_ms // 1000)
        seconds = (words[-1].end if words else 0.0) + 1.5
        # The oracle needs a timeline, not sound: silence as long as the talk.
        return PacedFileSource(
            silence(int(seconds * RATE), n), clock, realtime=cfg.realtime, block_ms=cfg.block_ms
        )

    def recognizer(cfg: AsrConfig) -> Recognizer:
        from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer

        opts = StreamingOptions.from_config(cfg)
        return StreamingRecognizer(OracleBackend(words), opts, vad=OracleVad(words))

    return dataclasses.replace(real, audio=audio, recognizer=recognizer)
