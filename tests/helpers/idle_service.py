"""The smallest engine service a worker process can host (no model): for tests of the worker
itself."""

from __future__ import annotations

import os


class IdleService:
    OPS = ("init", "ping")

    def init(self) -> int:
        return os.getpid()

    def ping(self) -> str:
        return "pong"

    def close(self) -> None:
        pass
