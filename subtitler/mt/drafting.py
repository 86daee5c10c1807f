"""Drafts past the previous translation: an n-gram table from this meeting's earlier
translations, the old draft found again after a divergence (resynchronisation), and a smaller
draft model with the same vocabulary.

A proposer only guesses; every guess is verified in one batched pass: n-gram and resync guesses
(text this meeting produced) by the same rule as the draft, a draft model's by plain argmax. So
with beta = 0 the output is still exactly greedy decoding, and a draft model never changes the
output at any beta, only the speed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from subtitler.mt.lm import LanguageModel, common_prefix_len


class Proposer(Protocol):
    @property
    def trusted(self) -> bool:
        """Whether SSBD checks these guesses with its beta rule like the previous translation
        (text this meeting produced); else with plain argmax, so they change only speed."""
        ...

    def start(self, prompt: Sequence[int]) -> None:
        """A new update begins: ``prompt`` precedes every ``out`` until the next start."""
        ...

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        """Up to k tokens guessed to follow ``out`` (the output so far)."""
        ...


class NgramTable:
    """n tokens -> the tokens that followed them most recently, over earlier translations."""

    trusted = True  # this meeting's own translations, like the draft

    def __init__(self, n: int = 3, max_entries: int = 100_000) -> None:
        if n < 1:
            raise ValueError("n must be >= 1")
        self.n = n
        self.max_entries = max_entries
        self._next: OrderedDict[tuple[int, ...], tuple[tuple[int, ...], int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._next)

    def start(self, prompt: Sequence[int]) -> None:
        pass  # the table does not look at the source

    def add(self, tokens: Sequence[int]) -> None:
        seq = tuple(tokens)
        for i in range(len(seq) - self.n):
            key = seq[i : i + self.n]
            self._next[key] = (seq, i + self.n)
            self._next.move_to_end(key)
        while len(self._next) > self.max_entries:
            self._next.popitem(last=False)  # forget the oldest context first

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        if len(out) < self.n or k <= 0:
            return []
        hit = self._next.get(tuple(out[-self.n :]))
        if hit is None:
            return []
        seq, pos = hit
        return list(seq[pos : pos + k])


class Resync:
    """After the draft was rejected at position ``d``: first guess that only that token changed
    (propose the old draft after it); later, look for the output's last tokens further on in
    the old draft (words inserted or dropped) and propose what followed there."""

    def __init__(self, draft: Sequence[int], d: int, min_match: int = 2) -> None:
        self.draft = list(draft)
        self.d = d
        self.after = d + 1
        self.min_match = min_match
        self.trusted = True  # the previous translation itself

    def start(self, prompt: Sequence[int]) -> None:
        pass  # made for one update, after its prompt was chosen

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        if len(out) == self.d + 1:  # the correction token was just chosen: a substitution?
            return self.draft[self.d + 1 : self.d + 1 + k]
        for n in range(min(4, len(out)), self.min_match - 1, -1):
            tail = list(out[-n:])
            for j in range(self.after, len(self.draft) - n):
                if self.draft[j : j + n] == tail:
                    return self.draft[j + n : j + n + k]
        return []


class Chain:
    """The first proposer that has a guess wins."""

    def __init__(self, *proposers: Proposer) -> None:
        self.proposers = proposers
        self._last: Proposer | None = None

    @property
    def trusted(self) -> bool:
        """That of the proposer whose guess was returned last."""
        return self._last.trusted if self._last is not None else True

    def start(self, prompt: Sequence[int]) -> None:
        for p in self.proposers:
            p.start(prompt)

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        for p in self.proposers:
            got = p.propose(out, k)
            if got:
                self._last = p
                return got
        return []


class VocabularyMismatchError(ValueError):
    """The draft model does not share the translation model's tokens."""


def check_same_vocabulary(target: LanguageModel, draft: LanguageModel) -> None:
    """Raise :class:`VocabularyMismatchError` unless both models map every id to the same bytes
    and end on the same tokens: a draft model's guesses are token ids of the target."""
    if target.n_vocab != draft.n_vocab:
        raise VocabularyMismatchError(
            f"the draft model has {draft.n_vocab} tokens, the translation model {target.n_vocab}"
        )
    if target.eos_ids != draft.eos_ids:
        raise VocabularyMismatchError("the draft model ends translations on other tokens")
    for t in range(target.n_vocab):
        if target.detokenize([t]) != draft.detokenize([t]):
            raise VocabularyMismatchError(
                f"token {t} differs: {target.detokenize([t])!r} vs {draft.detokenize([t])!r}"
            )


class DraftModel:
    """A smaller model with the same vocabulary guesses the next tokens greedily.

    Its cache follows prompt + output with the same longest-common-prefix reuse as the target,
    so after a round where all guesses were kept only the last chosen token is evaluated.
    """

    trusted = False  # another model's opinion: kept only where the translator agrees

    def __init__(self, lm: LanguageModel) -> None:
        self.lm = lm
        self._prompt: list[int] = []

    def start(self, prompt: Sequence[int]) -> None:
        self._prompt = list(prompt)

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        ctx = self._prompt + list(out)
        n_ctx = self.lm.n_ctx
        if k <= 0 or not ctx or (n_ctx is not None and len(ctx) + k > n_ctx):
            return []
        keep = min(common_prefix_len(self.lm.cached, ctx), len(ctx) - 1)
        self.lm.truncate(keep)
        row = self.lm.evaluate(ctx[keep:], [len(ctx) - keep - 1])[0]
        eos = self.lm.eos_ids
        guesses: list[int] = []
        while True:
            tok = int(np.argmax(row))
            if tok in eos:
                break
            guesses.append(tok)
            if len(guesses) == k:
                break
            row = self.lm.evaluate([tok], [0])[0]
        return guesses


class GuessGate:
    """Turns guessing (lookahead, resync, draft model) on or off per update by what it
    measurably buys: tokens per second of the decode phase with and without guesses.

    At beta = 0 guesses change only speed, never the output, and whether they pay depends on
    the model, the machine and the meeting (docs/BENCHMARKS.md), so the gate keeps a moving
    average of both and uses the faster one, trying the other every ``explore_every``
    updates so a change (a new speaker, a repeated phrase) is noticed. Deterministic.
    """

    def __init__(self, explore_every: int = 8, warmup: int = 2, alpha: float = 0.25) -> None:
        self.explore_every = explore_every
        self.warmup = warmup
        self.alpha = alpha
        self.rate: dict[bool, float | None] = {True: None, False: None}
        self.seen: dict[bool, int] = {True: 0, False: 0}
        self._n = 0
        self._last: bool | None = None

    def use_guesses(self) -> bool:
        """Whether the next update should guess."""
        self._n += 1
        for arm in (True, False):  # measure each side a few times first
            if self.seen[arm] < self.warmup:
                self._last = arm
                return arm
        on, off = self.rate[True] or 0.0, self.rate[False] or 0.0
        best = on >= off
        choice = (not best) if self._n % self.explore_every == 0 else best
        self._last = choice
        return choice

    def record(self, decoded_tokens: int, decode_s: float) -> None:
        """What the decode phase of the update just run produced, and in what time."""
        if self._last is None or decoded_tokens <= 0 or decode_s <= 0:
            return
        arm, r = self._last, decoded_tokens / decode_s
        prev = self.rate[arm]
        self.rate[arm] = r if prev is None else (1 - self.alpha) * prev + self.alpha * r
        self.seen[arm] += 1
