"""The pipeline's stream clock: seconds of running time, paused time excluded, scaled by speed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class StreamClock:
    def __init__(self, speed: float = 1.0, base: Callable[[], float] = time.monotonic) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._base = base
        self._lock = threading.Lock()
        self._t0 = base()
        self._paused_at: float | None = None
        self._paused_total = 0.0

    def __call__(self) -> float:
        with self._lock:
            now = self._paused_at if self._paused_at is not None else self._base()
            return (now - self._t0 - self._paused_total) * self.speed

    def reset(self) -> None:
        """Start counting from 0 now (when the audio starts, after the models have loaded)."""
        with self._lock:
            self._t0 = self._base()
            self._paused_total = 0.0
            self._paused_at = None

    def pause(self) -> None:
        with self._lock:
            if self._paused_at is None:
                self._paused_at = self._base()

    def resume(self) -> None:
        with self._lock:
            if self._paused_at is not None:
                self._paused_total += self._base() - self._paused_at
                self._paused_at = None
