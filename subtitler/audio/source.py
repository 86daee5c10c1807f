"""What the pipeline asks of its audio input, and of the clock an input is paced by."""

from __future__ import annotations

from typing import Protocol

from subtitler.types import AudioBlock


class Clock(Protocol):
    """The pipeline's stream clock (pipeline.clock.StreamClock), as an input paces by it."""

    @property
    def speed(self) -> float:
        """Stream seconds per wall-clock second (a replay may run faster than real time)."""
        ...

    def __call__(self) -> float:
        """Stream seconds now."""
        ...


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
