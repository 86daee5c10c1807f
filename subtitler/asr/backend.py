"""The Whisper backend protocol the streaming policy is written against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from subtitler.types import Word

Samples = npt.NDArray[np.float32]
SAMPLE_RATE = 16000
# The shortest window sent to a recogniser: shorter ones hold no word Whisper can recognise,
# and they are where CTranslate2's aligner divides by zero (OpenNMT/CTranslate2#2065) and
# faster-whisper's raises IndexError (SYSTRAN/faster-whisper#1460).
MIN_WINDOW_S = 0.3


class AsrError(RuntimeError):
    """A user-facing recogniser failure (bad model dir, bad transcript file, ...)."""


@dataclass(frozen=True)
class Hypothesis:
    """One recognition of a whole buffer; word times are relative to the buffer start (s)."""

    words: tuple[Word, ...]
    language: str | None = None  # detected or forced language code
    after_prefix: bool = False  # the words are those after the prefix it was given
    # The languages the audio sounds like, most likely first, with their probabilities
    # (asked for with ``rank_languages``; empty from an English-only model).
    language_probs: tuple[tuple[str, float], ...] = ()


@runtime_checkable
class AsrBackend(Protocol):
    """Recognise a buffer of 16 kHz mono audio.

    ``t0`` is where the buffer starts on the stream clock: real recognisers ignore it, the
    oracle needs it to know which words have been spoken by the end of the buffer.
    ``prompt`` is text said before the buffer; ``prefix`` is text already settled at the start
    of the buffer: a recogniser may continue after it instead of recognising it again, and then
    returns only the words after it (``Hypothesis.after_prefix``); one that ignores it returns
    all words, and the policy drops those already committed by their times.
    ``rank_languages`` asks for ``Hypothesis.language_probs`` too (a multilingual model
    tells them from the same audio, whatever language it recognises it in).
    """

    def transcribe(
        self,
        audio: Samples,
        *,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        rank_languages: bool = False,
    ) -> Hypothesis: ...

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect (the glossary's terms) from the next recognition on; a backend
        that cannot use them recognises as before."""
        ...

    def close(self) -> None:
        """Release what it holds (a worker process); safe to call more than once."""
        ...


@runtime_checkable
class LanguageRanker(Protocol):
    """A backend that can tell the languages of audio other than the window it recognises
    (the streaming policy asks it about the seconds before an utterance too)."""

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        """The languages ``audio`` sounds like, most likely first, with their probabilities;
        () where it cannot tell (an English-only model, too little audio)."""
        ...
