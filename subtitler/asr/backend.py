"""The recogniser protocol the streaming policy is written against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from subtitler.types import Word

Samples = npt.NDArray[np.float32]
SAMPLE_RATE = 16000


class AsrError(RuntimeError):
    """A user-facing recogniser failure (bad model dir, bad transcript file, ...)."""


@dataclass(frozen=True)
class Hypothesis:
    """One recognition of a whole buffer; word times are relative to the buffer start (s)."""

    words: tuple[Word, ...]
    language: str | None = None  # detected or forced language code


@runtime_checkable
class AsrBackend(Protocol):
    """Recognise a buffer of 16 kHz mono audio.

    ``t0`` is where the buffer starts on the stream clock: real recognisers ignore it, the
    oracle needs it to know which words have been spoken by the end of the buffer.
    """

    def transcribe(
        self, audio: Samples, *, t0: float, prompt: str, language: str | None
    ) -> Hypothesis: ...
