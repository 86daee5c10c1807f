"""Drafts past the previous translation: an n-gram table from this meeting's earlier
translations, and the old draft found again after a divergence (resynchronisation).

A proposer only guesses; every guess is verified in one batched pass with the same acceptance
rule as the draft, so with beta = 0 the output is still exactly greedy decoding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol


class Proposer(Protocol):
    def propose(self, out: Sequence[int], k: int) -> list[int]:
        """Up to k tokens guessed to follow ``out`` (the output so far)."""
        ...


class NgramTable:
    """n tokens -> the tokens that followed them most recently, over earlier translations."""

    def __init__(self, n: int = 3, max_entries: int = 100_000) -> None:
        if n < 1:
            raise ValueError("n must be >= 1")
        self.n = n
        self.max_entries = max_entries
        self._next: OrderedDict[tuple[int, ...], tuple[tuple[int, ...], int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._next)

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
        self.start = d + 1
        self.min_match = min_match

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        if len(out) == self.d + 1:  # the correction token was just chosen: a substitution?
            return self.draft[self.d + 1 : self.d + 1 + k]
        for n in range(min(4, len(out)), self.min_match - 1, -1):
            tail = list(out[-n:])
            for j in range(self.start, len(self.draft) - n):
                if self.draft[j : j + n] == tail:
                    return self.draft[j + n : j + n + k]
        return []


class Chain:
    """The first proposer that has a guess wins."""

    def __init__(self, *proposers: Proposer) -> None:
        self.proposers = proposers

    def propose(self, out: Sequence[int], k: int) -> list[int]:
        for p in self.proposers:
            got = p.propose(out, k)
            if got:
                return got
        return []
