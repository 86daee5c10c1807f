"""An in-memory LM whose logits are a pure function of the context (for fast exact tests)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from subtitler.mt.lm import Logits

NextFn = Callable[[tuple[int, ...]], Logits]


def peaked(n_vocab: int, probs: dict[int, float], floor: float = 1e-6) -> Logits:
    """Logits whose softmax is ``probs`` (rest shared by ``floor`` mass per token)."""
    p = np.full(n_vocab, floor, dtype=np.float64)
    for t, v in probs.items():
        p[t] = v
    p /= p.sum()
    return np.log(p).astype(np.float32)


class ScriptedLM:
    """Implements the LanguageModel protocol; counts calls so tests can check batching."""

    def __init__(self, n_vocab: int, eos: int, next_fn: NextFn) -> None:
        self._n_vocab = n_vocab
        self._eos = frozenset({eos})
        self.next_fn = next_fn
        self._cached: list[int] = []
        self.calls: list[tuple[int, int]] = []  # (tokens evaluated, logits rows) per call

    @property
    def n_vocab(self) -> int:
        return self._n_vocab

    @property
    def eos_ids(self) -> frozenset[int]:
        return self._eos

    @property
    def cached(self) -> Sequence[int]:
        return self._cached

    @property
    def n_ctx(self) -> int | None:
        return None  # no limit

    def new_stream(self) -> ScriptedLM | None:
        return None  # one cache: the targets share it

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        return [3 + (ord(c) % (self._n_vocab - 3)) for c in text]

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return "".join(f"<{t}>" for t in tokens).encode()

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        base = list(self._cached)
        rows = [self.next_fn(tuple(base + list(tokens[: i + 1]))) for i in logits_at]
        self._cached.extend(tokens)
        self.calls.append((len(tokens), len(logits_at)))
        if not rows:
            return np.empty((0, self._n_vocab), dtype=np.float32)
        return np.stack(rows).astype(np.float32)

    def truncate(self, n: int) -> None:
        del self._cached[n:]
