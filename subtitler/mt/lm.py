"""The small language-model protocol the decoders are written against."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Logits = npt.NDArray[np.float32]


@runtime_checkable
class LanguageModel(Protocol):
    """A causal LM with one KV-cached sequence.

    The cache holds ``cached`` tokens, positions 0..len(cached)-1. ``evaluate`` appends tokens
    after them and returns logits only for the requested positions, so a verify pass over a
    prompt tail and a draft asks for exactly the rows it needs.
    """

    @property
    def n_vocab(self) -> int: ...

    @property
    def eos_ids(self) -> frozenset[int]:
        """Every end-of-generation token (EOS, EOT, end_of_turn, ...)."""
        ...

    @property
    def cached(self) -> Sequence[int]:
        """Tokens whose keys and values are in the cache, in order."""
        ...

    @property
    def n_ctx(self) -> int | None:
        """Tokens the cache can hold (None: no limit, as for the tests' scripted models)."""
        ...

    def new_stream(self) -> LanguageModel | None:
        """Another sequence with a cache of its own on the same weights (one more target
        language); None where the model has one only: callers then share it, which is
        correct but evaluates more again."""
        ...

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]: ...

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        """Raw UTF-8 bytes; a piece may end inside a multi-byte character."""
        ...

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        """Append ``tokens`` to the cache; return logits rows for indices ``logits_at`` into it.

        The result has shape (len(logits_at), n_vocab); row j is the next-token distribution
        after ``tokens[logits_at[j]]``.
        """
        ...

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` cached tokens and drop the rest."""
        ...


@runtime_checkable
class PromptTokenizer(Protocol):
    """A model that tokenizes a prompt with the user's words in it read as text
    (llama_backend.LlamaLM; models without special tokens need not)."""

    def tokenize_prompt(self, prompt: str, plain: tuple[int, int]) -> list[int]: ...


def common_prefix_len(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
