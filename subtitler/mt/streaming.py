"""Streaming re-translation, as the local and the server translator share it.

A segment's source text grows update by update and is translated again each time; the
previous translation of the segment is the next update's draft (SSBD verifies it, CD keeps
it). What a backend decodes is kept as that draft, an aborted decode's prefix too (it is the
newest text the model wrote for this source); a non-final output loses its last k tokens
first (the paper's output mask-k). The finished sentences before it are given as context,
and give way first when the prompt and the output would not fit the model's context.

A backend (mt/translator.py: llama.cpp in this process; mt/remote.py: a server) says how it
verifies a draft and decodes after it; what it calls a token (an id locally, its text on a
server) is the type parameter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from subtitler.mt.masking import output_mask
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions
from subtitler.types import UpdateStats

T = TypeVar("T")  # an output token: its id (this process) or its text (a server)
P = TypeVar("P")  # a prompt as a backend sends it: token ids, or text

CONTEXT_WORDS = 60  # the previous sentence(s) shown as context: at most their last words


@dataclass(frozen=True)
class LengthCap:
    """Output length cap: ``ratio`` tokens per source token plus ``slack``, at most ``hard``."""

    ratio: float = 3.0
    slack: int = 8
    hard: int = 256

    def for_source(self, n_source_tokens: int) -> int:
        return min(self.hard, math.ceil(self.ratio * n_source_tokens) + self.slack)


@dataclass(frozen=True)
class Decoded(Generic[T]):
    """One decode of an update, as a backend made it."""

    out: list[T]
    stats: UpdateStats
    problem: str = ""  # why the output is no translation (mt/output_rules.py); "" if it is one


class Retranslator(Generic[T]):
    """The state of streaming re-translation: the open segment, its draft, the context; the
    settings every backend takes (:func:`subtitler.mt.translator.apply_settings`)."""

    def __init__(
        self,
        prompts: PromptBuilder,
        options: DecodeOptions,
        *,
        output_mask_k: int = 0,
        cap: LengthCap | None = None,
    ) -> None:
        self.prompts = prompts
        self.options = options
        self.output_mask_k = output_mask_k
        self.cap = cap or LengthCap()
        self.context = ""  # previous sentence(s), shown to the model as context
        self.context_sentences = 0  # how many finished sources become the next context
        self._segment: int | None = None
        self._draft: list[T] = []
        self._history: list[str] = []

    @property
    def draft(self) -> list[T]:
        """What the next update of the open segment starts from."""
        return list(self._draft)

    def reset(self) -> None:
        self._segment, self._draft = None, []

    def output_cap(self, n_source_tokens: int) -> int:
        """The most tokens an update of a source this long may write."""
        return min(self.options.max_new_tokens, self.cap.for_source(n_source_tokens))

    def prompt_within(
        self,
        source: str,
        cap: int,
        n_ctx: int | None,
        encode: Callable[[str], P],
        length: Callable[[P], int],
    ) -> tuple[P, int | None]:
        """The prompt for ``source`` (``encode``d) and the room a context of ``n_ctx`` tokens
        leaves for the output (None: no limit; 0 or less: the prompt alone fills it). The
        previous sentences are a courtesy: when the prompt and ``cap`` tokens of output would
        not fit, they give way, as this sentence's translation comes first."""
        prompt = encode(self.prompts.build(source, self.context))
        if n_ctx is None:
            return prompt, None
        n = length(prompt)
        if self.context and n + cap >= n_ctx:
            prompt = encode(self.prompts.build(source))
            n = length(prompt)
        return prompt, n_ctx - n - 1

    def _finished(self, out: Sequence[T]) -> None:
        """A final output, kept (the local translator's n-grams guess later lines from it)."""

    def _next(
        self, segment_id: int, source: str, final: bool, decode: Callable[[list[T]], Decoded[T]]
    ) -> Decoded[T]:
        """One update of a segment: the backend's ``decode`` from the segment's draft; what is
        kept of its output becomes the next draft, and a final one the context."""
        if segment_id != self._segment:
            self._segment, self._draft = segment_id, []
        got = decode(list(self._draft))
        if got.problem:
            # Not a translation: the draft stays the last good one (a draft of an echo would
            # bias the next update towards it), and nothing of it is shown or kept.
            return Decoded([], got.stats, got.problem)
        aborted = got.stats.aborted
        out = got.out if aborted else output_mask(got.out, self.output_mask_k, final)
        if out or not aborted:  # (a decode given up before it wrote anything changes nothing)
            self._draft = list(out)
        if final:
            self._finished(out)
            self._history = [*self._history, source][-max(1, self.context_sentences) :]
            if self.context_sentences > 0:
                words = " ".join(self._history[-self.context_sentences :]).split()
                self.context = " ".join(words[-CONTEXT_WORDS:])
        return Decoded(out, got.stats)
