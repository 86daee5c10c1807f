"""The pipeline's audio input: what it asks of a source, and the one that the settings name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from subtitler.config import AudioConfig
from subtitler.types import AudioBlock


class AudioSource(Protocol):
    """Blocks of 16 kHz mono float32 audio, from a device or a file."""

    @property
    def dropped(self) -> int:
        """Blocks thrown away because the consumer fell behind."""
        ...

    @property
    def level(self) -> float:
        """The level of the last block read, in dBFS (types.SILENCE_DBFS for silence)."""
        ...

    @property
    def exhausted(self) -> bool:
        """True once a file source has delivered its last block (never for a device)."""
        ...

    @property
    def problem(self) -> str:
        """Why no audio is coming now (a device unplugged and being retried), else ""."""
        ...

    @property
    def live(self) -> bool:
        """A device: what is said during a pause is not heard (a file just waits)."""
        ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def read(self, timeout: float) -> AudioBlock | None: ...


def open_audio(
    cfg: AudioConfig,
    clock: Callable[[], float],
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
