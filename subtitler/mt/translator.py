"""Streaming translation of one segment at a time: prompt, draft, decode, mask."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel, GuessGate, NgramTable, Proposer
from subtitler.mt.lm import LanguageModel
from subtitler.mt.masking import complete_text, output_mask
from subtitler.mt.output_rules import problem
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Decoder, DecodeResult, Method
from subtitler.mt.terms import TermBiasedLM, glued_tokens, present, words_before
from subtitler.types import Translation, UpdateStats

CONTEXT_WORDS = 60  # the previous sentence(s) shown as context: at most their last words


@dataclass(frozen=True)
class LengthCap:
    """Output length cap: ``ratio`` tokens per source token plus ``slack``, at most ``hard``."""

    ratio: float = 3.0
    slack: int = 8
    hard: int = 256

    def for_source(self, n_source_tokens: int) -> int:
        return min(self.hard, math.ceil(self.ratio * n_source_tokens) + self.slack)


def decode_options(mt: MtConfig, *, draft_model: bool, fuse_prompt: bool = True) -> DecodeOptions:
    """How updates are decoded under the translation settings (the one mapping from MtConfig,
    used by the app and the benchmark). With a draft model it guesses ``draft_tokens`` past
    the draft, else the n-gram table guesses ``lookahead``."""
    return DecodeOptions(
        method=Method(mt.method),
        beta=mt.beta,
        max_new_tokens=mt.max_new_tokens,
        fuse_prompt=fuse_prompt,
        verify=mt.verify,
        top_b=mt.top_b,
        tau=mt.tau,
        lookahead=mt.draft_tokens if draft_model else mt.lookahead,
        resync=mt.resync,
    )


class Configurable(Protocol):
    """What the translation settings set on a translator, local or on a server."""

    options: DecodeOptions
    cap: LengthCap
    context: str
    context_sentences: int


def apply_settings(tr: Configurable, mt: MtConfig, *, draft_model: bool) -> None:
    """Hand the translation settings to a translator, from its next update on: decoding
    (:func:`decode_options`), the length cap and the previous sentences given as context. The
    one mapping from MtConfig, for the local translator and the one on a server alike."""
    tr.options = decode_options(mt, draft_model=draft_model)
    tr.cap = LengthCap(ratio=mt.len_ratio, hard=mt.max_new_tokens)
    tr.context_sentences = mt.context_sentences
    if mt.context_sentences == 0:
        tr.context = ""


class StreamTranslator:
    """Translates growing source text; the previous output of a segment is the next draft."""

    def __init__(
        self,
        lm: LanguageModel,
        prompts: PromptBuilder,
        options: DecodeOptions,
        *,
        output_mask_k: int = 0,
        cap: LengthCap | None = None,
        draft_model: DraftModel | None = None,
    ) -> None:
        self.lm = lm
        self.prompts = prompts
        self.options = options
        self.output_mask_k = output_mask_k
        self.cap = cap or LengthCap()
        self.decoder = Decoder(lm)
        self._segment: int | None = None
        self._draft: list[int] = []
        # This meeting's finished translations, for n-gram lookahead past the draft.
        self.ngrams = NgramTable(n=3)
        # When set, a smaller model guesses past the draft instead of the n-gram table.
        self.draft_model = draft_model
        # When set, guessing is used only while it measurably speeds up decoding.
        self.gate: GuessGate | None = None
        self.context = ""  # previous sentence(s), shown to the model as context
        self.context_sentences = 0  # how many finished sources become the next context
        self._history: list[str] = []
        self._glued: npt.NDArray[np.bool_] | None = None  # (mt/terms.py), made when needed

    def reconfigure(self, mt: MtConfig, src_lang: str) -> None:
        """Take the translation settings, from the next update on: the language pair (the
        model's template stays), decoding, the length cap, guessing and context."""
        self.prompts = dataclasses.replace(self.prompts, src_lang=src_lang, tgt_lang=mt.tgt_lang)
        apply_settings(self, mt, draft_model=self.draft_model is not None)
        if not mt.adaptive_guessing:
            self.gate = None
        elif self.gate is None:
            self.gate = GuessGate()

    def prompt_tokens(self, source: str) -> list[int]:
        text = self.prompts.build(source, self.context)
        return self.lm.tokenize(text, add_bos=True, special=True)

    def decode(
        self,
        source: str,
        draft: Sequence[int],
        should_abort: Callable[[], bool] | None = None,
        on_step: Callable[[Sequence[int]], None] | None = None,
    ) -> DecodeResult:
        """Translate ``source`` once with ``draft`` (stateless but for the guess gate)."""
        n_src = len(self.lm.tokenize(" ".join(source.split()), add_bos=False, special=False))
        prompt = self.prompt_tokens(source)
        cap = min(self.options.max_new_tokens, self.cap.for_source(n_src))
        n_ctx = self.lm.n_ctx
        if n_ctx is not None:
            if self.context and len(prompt) + cap >= n_ctx:
                # The previous sentence is a courtesy: this one's translation comes first.
                prompt = self.lm.tokenize(self.prompts.build(source), add_bos=True, special=True)
            # Prompt and output share the context: never ask for more than fits.
            cap = max(0, min(cap, n_ctx - len(prompt) - 1))
        opts = dataclasses.replace(self.options, max_new_tokens=cap)
        gate = self.gate if opts.lookahead > 0 or opts.resync else None
        if gate is not None and not gate.use_guesses():
            opts = dataclasses.replace(opts, lookahead=0, resync=False)
        guesser: Proposer = self.draft_model if self.draft_model is not None else self.ngrams
        found = present(source, self.prompts.terms) if self.prompts.terms else ()
        if found:  # the glossary's translations of terms in the source are kept
            if self._glued is None:
                self._glued = glued_tokens(self.lm)
            targets = [(x, words_before(source, t)) for t, x in found]
            self.decoder.lm = TermBiasedLM(self.lm, len(prompt), targets, self._glued)
        try:
            res = self.decoder.decode(
                prompt, draft, opts, should_abort, proposer=guesser, on_step=on_step
            )
        finally:
            self.decoder.lm = self.lm
        if gate is not None and not res.stats.aborted:
            gate.record(res.stats.output_len - res.stats.accepted, res.stats.decode_s)
        return res

    def _decode_without_copying(
        self,
        source: str,
        should_abort: Callable[[], bool] | None,
        on_step: Callable[[Sequence[int]], None] | None,
        first: UpdateStats,
    ) -> DecodeResult:
        """The retry of an echo or a loop: RT under ``no_copy`` and ``no_repeat``; its stats
        add the first attempt's cost."""
        src = self.lm.tokenize(" " + " ".join(source.split()), add_bos=False, special=False)
        saved = self.options
        self.options = dataclasses.replace(
            saved, method=Method.RT, no_copy=tuple(src), no_repeat=True
        )
        try:
            res = self.decode(source, [], should_abort, on_step)
        finally:
            self.options = saved
        st = res.stats
        st.method, st.draft_len, st.accepted = first.method, first.draft_len, first.accepted
        st.retried = True
        st.looped = st.looped or first.looped  # (the first decode's loop is worth knowing)
        st.verified_tokens += first.verified_tokens
        st.prompt_tokens += first.prompt_tokens
        st.decode_steps += first.decode_steps
        st.prompt_s += first.prompt_s
        st.verify_s += first.verify_s
        st.decode_s += first.decode_s
        return res

    def update(
        self,
        segment_id: int,
        source: str,
        final: bool,
        should_abort: Callable[[], bool] | None = None,
        on_step: Callable[[Sequence[int]], None] | None = None,
    ) -> Translation:
        """Translate the newest source text of a segment, drafting from its last translation
        (``on_step``: see :meth:`Decoder.decode`)."""
        if segment_id != self._segment:
            self._segment, self._draft = segment_id, []
        res = self.decode(source, self._draft, should_abort, on_step)
        text = complete_text(self.lm.detokenize(res.tokens)).strip()
        if not res.stats.aborted:
            p = self.prompts
            why = problem(source, text, res.tokens, p.src_lang, p.tgt_lang)
            if why:
                # A base model may copy the source rather than translate it (long lines full
                # of names and quotes), or loop: once more, from scratch, without copying more
                # than a name's worth of the source's tokens in a row or repeating itself.
                res = self._decode_without_copying(source, should_abort, on_step, res.stats)
                text = complete_text(self.lm.detokenize(res.tokens)).strip()
                why = (
                    ""
                    if res.stats.aborted
                    else problem(source, text, res.tokens, p.src_lang, p.tgt_lang)
                )
            if why:
                # Not a translation: the draft stays the last good one (a draft of the echo
                # would bias the next update towards it), and nothing of it is shown or kept.
                return Translation(segment_id, source, "", (), final, res.stats, problem=why)
        tokens = (
            res.tokens if res.stats.aborted else output_mask(res.tokens, self.output_mask_k, final)
        )
        self._draft = list(tokens)
        if final:
            self.ngrams.add(tokens)
            self._history = [*self._history, source][-max(1, self.context_sentences) :]
            if self.context_sentences > 0:
                words = " ".join(self._history[-self.context_sentences :]).split()
                self.context = " ".join(words[-CONTEXT_WORDS:])
        if tokens != res.tokens:
            text = complete_text(self.lm.detokenize(tokens)).strip()
        return Translation(segment_id, source, text, tuple(tokens), final, res.stats)

    def reset(self) -> None:
        self._segment, self._draft = None, []
