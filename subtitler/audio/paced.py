"""A recording played as a live input: released block by block on the pipeline's clock."""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np

from subtitler.audio.level import level_dbfs
from subtitler.audio.source import Clock
from subtitler.audio.sources import RATE, rechunk
from subtitler.types import SILENCE_DBFS, AudioBlock


class PacedFileSource:
    """A recording released block by block on the pipeline's stream clock (an AudioSource).

    Pacing by the stream clock (not the wall clock) makes pause and replay speed work: a block
    is released once the clock has passed its end. The blocks come from an iterable (a file
    decoded as it plays, see :class:`subtitler.audio.sources.AudioStream`) or an array.
    """

    def __init__(
        self,
        audio: np.ndarray | Iterable[np.ndarray],
        clock: Clock,
        *,
        realtime: bool = True,
        block_ms: int = 100,
    ) -> None:
        self.clock = clock
        self.realtime = realtime
        self.n = max(1, RATE * block_ms // 1000)
        chunks = [audio] if isinstance(audio, np.ndarray) else audio
        self._audio = audio
        self._blocks = rechunk((np.asarray(c, dtype=np.float32) for c in chunks), self.n)
        self._next: np.ndarray | None = None
        self._ended = False
        self.pos = 0
        self.running = False
        self.dropped = 0
        self.level = SILENCE_DBFS
        self._origin: float | None = None

    def _peek(self) -> np.ndarray | None:
        if self._next is None and not self._ended:
            self._next = next(self._blocks, None)
            self._ended = self._next is None
        return self._next

    @property
    def exhausted(self) -> bool:
        return self._peek() is None

    problem = ""  # a file cannot go away

    @property
    def broke_off(self) -> str:
        """Why the file ended before its end (cut short while it played), else "" (see
        :class:`subtitler.audio.sources.AudioStream`)."""
        return str(getattr(self._audio, "broke_off", ""))

    live = False

    def start(self) -> None:
        if self._origin is None:
            self._origin = self.clock()
        self.running = True

    def stop(self) -> None:
        self.running = False

    def read(self, timeout: float) -> AudioBlock | None:
        chunk = self._peek() if self.running else None
        if chunk is None:
            time.sleep(min(timeout, 0.02))
            return None
        t0 = self.pos / RATE
        if self.realtime:
            assert self._origin is not None
            due = self._origin + t0 + len(chunk) / RATE
            wait = due - self.clock()
            if wait > 0:
                # The stream clock may run faster than the wall clock (speed > 1).
                time.sleep(min(timeout, wait / self.clock.speed))
                if self.clock() < due:
                    return None
        self._next = None
        self.pos += len(chunk)
        self.level = level_dbfs(chunk)
        return AudioBlock(chunk, t0, RATE)
