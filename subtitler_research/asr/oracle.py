"""``--oracle WORDS.tsv``: a word-timestamped transcript played back as if recognised.

Each hypothesis holds the words spoken by the end of the buffer; the words of its last
``flicker_s`` are changed deterministically (seeded by the buffer's end time) the way real
hypotheses flicker, and a word still being spoken appears as a cut-off prefix. The real policy
then runs on a real talk's timing with no model at all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from subtitler.asr.backend import SAMPLE_RATE, AsrError, Hypothesis, Samples
from subtitler.asr.vad import FRAME, FRAME_S
from subtitler.types import Word


def read_words_tsv(path: str | Path) -> list[Word]:
    """Lines ``start<TAB>end<TAB>word`` (seconds); blank lines and ``#`` comments skipped."""
    p = Path(path)
    if not p.is_file():
        raise AsrError(f"word file not found: {p}")
    words: list[Word] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.rstrip("\r\n").split("\t")
        try:
            if len(parts) != 3 or not parts[2].strip():
                raise ValueError
            start, end = float(parts[0]), float(parts[1])
            if not 0 <= start <= end:
                raise ValueError
        except ValueError:
            raise AsrError(
                f"{p}:{n}: expected start<TAB>end<TAB>word with 0 <= start <= end, got {line!r}"
            ) from None
        words.append(Word(" " + parts[2].strip(), start, end))
    if not words:
        raise AsrError(f"{p}: no words")
    return words


def _variant(word: str, rng: random.Random) -> str:
    """A plausible mis-hearing: punctuation, a dropped ending, or a different word."""
    w = word.strip()
    core = w.rstrip(".,!?;:")
    choice = rng.randrange(3)
    if choice == 0:
        out = core if core != w else core + ","  # punctuation not yet decided
    elif choice == 1 and len(core) > 3:
        out = core[:-2]  # the ending misheard
    else:
        out = core[::-1].lower()  # another word altogether
    return " " + (out if out != w else out + "-")


@dataclass
class OracleBackend:
    """``AsrBackend`` that replays known words with seeded end-of-buffer flicker."""

    words: list[Word]
    flicker_s: float = 0.5  # words ending within this much of the buffer end may change
    flicker_p: float = 0.5  # chance that such a word is changed in one hypothesis
    seed: int = 0
    language: str = "en"

    def transcribe(
        self,
        audio: Samples,
        *,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        rank_languages: bool = False,
    ) -> Hypothesis:
        t1 = t0 + len(audio) / SAMPLE_RATE
        rng = random.Random(f"{self.seed}:{round(t1 * 1000)}")
        out: list[Word] = []
        for w in self.words:
            if w.end <= t0 or w.start >= t1 - 0.1:
                continue
            text, end = w.text, w.end
            if w.end > t1:  # still being spoken: only the part heard so far
                core = w.text.strip()
                frac = (t1 - w.start) / max(w.end - w.start, 1e-3)
                text, end = " " + core[: max(1, int(len(core) * frac))], t1
            if end > t1 - self.flicker_s and rng.random() < self.flicker_p:
                text = _variant(text, rng)
            out.append(Word(text, max(0.0, w.start - t0), end - t0))
        return Hypothesis(tuple(out), language or self.language)

    def set_hotwords(self, hotwords: str) -> None:
        """The oracle knows every word already: expected words change nothing it hears."""

    def close(self) -> None:
        """Nothing to release: the words are in this object."""


class OracleVad:
    """Speech probabilities from the word times: 1 inside a word, 0 between words."""

    def __init__(self, words: list[Word]) -> None:
        self._spans = np.array([(w.start, w.end) for w in words], dtype=np.float64)
        self._frames = 0  # frames seen since the stream started at t = 0
        self._rest = 0

    def reset(self) -> None:
        self._rest = 0  # the oracle's clock is the sample count, which a reset keeps

    def __call__(self, samples: Samples) -> npt.NDArray[np.float32]:
        total = self._rest + len(samples)
        n, self._rest = divmod(total, FRAME)
        t = (self._frames + np.arange(n)) * FRAME_S
        self._frames += n
        inside = (self._spans[None, :, 0] < t[:, None] + FRAME_S) & (
            self._spans[None, :, 1] > t[:, None]
        )
        return np.asarray(inside.any(axis=1), dtype=np.float32)
