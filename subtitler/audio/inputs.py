"""The audio input the settings name: a file played as if live, or a device."""

from __future__ import annotations

from typing import Any

from subtitler.audio.source import AudioSource, Clock
from subtitler.config import AudioConfig


def open_audio(
    cfg: AudioConfig,
    clock: Clock,
    *,
    sounddevice: Any = None,
    loop: int = 1,
    loop_gap_s: float = 1.0,
) -> AudioSource:
    """The input the settings name: a file paced on the stream ``clock`` (played ``loop``
    times, ``loop_gap_s`` of silence between), or a device (``sounddevice``: an injected
    module, for tests)."""
    if cfg.source == "file":
        from subtitler.audio.paced import PacedFileSource
        from subtitler.audio.sources import RATE, AudioStream

        # Decoded as it plays (memory flat in the file's length), ``loop`` times over.
        n = max(1, RATE * cfg.block_ms // 1000)
        stream = AudioStream(cfg.file_path, n, loop=loop, gap_s=loop_gap_s)
        return PacedFileSource(stream, clock, realtime=cfg.realtime, block_ms=cfg.block_ms)
    from subtitler.audio.capture import MicrophoneCapture

    # One stream clock: the microphone times a re-opened input on the pipeline's clock.
    return MicrophoneCapture(cfg, sd=sounddevice, clock=clock)
