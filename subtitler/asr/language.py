"""Which language is spoken: the evidence of every utterance pooled, not one guess per line."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def likeliest(scores: Mapping[str, float]) -> str | None:
    """The language with the highest score (ties: the first by name); None if none."""
    return max(sorted(scores), key=scores.__getitem__) if scores else None


def combined(
    rankings: Sequence[Mapping[str, float]], weights: Sequence[float], floor: float = 0.01
) -> str | None:
    """The language with the highest weighted sum of log-probabilities over ``rankings``
    (a language a ranking did not list counts at ``floor``); None if none lists any."""
    langs = set().union(*rankings)
    score = {
        lang: sum(
            w * math.log(max(r.get(lang, 0.0), floor))
            for r, w in zip(rankings, weights, strict=True)
        )
        for lang in langs
    }
    return likeliest(score)


@dataclass
class LanguageBelief:
    """Whisper's language probabilities of the utterances heard so far, pooled.

    Whisper names a language from one window; on a line of two seconds it is often wrong
    (each of the 36 Dutch lines of the development set's tune split heard alone, Whisper
    base put another language first on 17: English five times, German twice, ten others
    once each). The belief adds each utterance's log-probabilities to a running score in which
    earlier evidence counts ``keep`` times less per utterance: one odd line does not switch
    the language, a few lines of another one do.
    """

    keep: float = 0.8  # weight of the earlier evidence, per utterance
    floor: float = 0.01  # probability of a language a detection did not list
    _score: dict[str, float] = field(default_factory=dict)
    _unlisted: float = 0.0  # the score of every language never listed

    def _pooled(self, probs: Mapping[str, float]) -> dict[str, float]:
        out = {}
        for lang in set(self._score) | set(probs):
            earlier = self.keep * self._score.get(lang, self._unlisted)
            now = math.log(max(probs.get(lang, 0.0), self.floor)) if probs else 0.0
            out[lang] = earlier + now
        return out

    def best(self, probs: Mapping[str, float] | None = None) -> str | None:
        """The most likely language, with one more utterance's ``probs`` if given; None
        before any evidence."""
        return likeliest(self._pooled(probs or {}))

    def add(self, probs: Mapping[str, float]) -> None:
        """One utterance's language probabilities."""
        if not probs:
            return
        self._score = self._pooled(probs)
        self._unlisted = self.keep * self._unlisted + math.log(self.floor)


# The speech language set in Settings is not what is spoken when Whisper ranks another
# language at least this likely on this many utterances in a row (each with at least
# WRONG_SPEECH_S of speech), the same language each time. Whisper base ranked the test clips'
# own language 0.96-0.97 (Spanish, Swedish) and English 0.80-1.00 on every English clip
# (tests/data): one odd utterance, or a short one, is not enough.
WRONG_P = 0.8
WRONG_RUN = 3
WRONG_SPEECH_S = 2.0


@dataclass
class SetLanguageCheck:
    """Is the language set for the speech (not "auto") the one spoken? Fed each utterance's
    ranking, it answers once, with the language heard instead (then nothing again)."""

    language: str
    _run: tuple[str, int] = ("", 0)  # the other language heard, utterances in a row
    said: bool = False

    def heard(self, ranked: Sequence[tuple[str, float]], speech_s: float) -> str | None:
        """One utterance's languages (most likely first) from ``speech_s`` of its speech:
        the language spoken instead of the one set, the first time the rule holds."""
        if self.said or speech_s < WRONG_SPEECH_S:
            return None  # (too short to tell: neither for nor against)
        top, p = ranked[0] if ranked else ("", 0.0)
        if top == self.language or p < WRONG_P:
            self._run = ("", 0)
            return None
        n = self._run[1] + 1 if self._run[0] == top else 1
        self._run = (top, n)
        if n < WRONG_RUN:
            return None
        self.said = True
        return top
