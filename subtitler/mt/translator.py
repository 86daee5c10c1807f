"""Streaming translation of one segment at a time: prompt, draft, decode, mask."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel, GuessGate, NgramTable, Proposer
from subtitler.mt.lm import LanguageModel, PromptTokenizer
from subtitler.mt.masking import complete_text
from subtitler.mt.output_rules import problem
from subtitler.mt.prompts import Prompt, PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Decoder, DecodeResult, Method
from subtitler.mt.streaming import Decoded, LengthCap, Retranslator
from subtitler.mt.terms import TermBiasedLM, glued_tokens, present, words_before
from subtitler.types import Translation, UpdateStats


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


def apply_settings(tr: Retranslator[Any], mt: MtConfig, *, draft_model: bool) -> None:
    """Hand the translation settings to a translator, from its next update on: decoding
    (:func:`decode_options`), the length cap and the previous sentences given as context. The
    one mapping from MtConfig, for the local translator and the one on a server alike."""
    tr.options = decode_options(mt, draft_model=draft_model)
    tr.cap = LengthCap(ratio=mt.len_ratio, hard=mt.max_new_tokens)
    tr.context_sentences = mt.context_sentences
    if mt.context_sentences == 0:
        tr.context = ""


class StreamTranslator(Retranslator[int]):
    """Translates growing source text with a model in this process (the shared part:
    :class:`~subtitler.mt.streaming.Retranslator`); its decoder verifies the draft and decodes
    after it in one pass over the logits."""

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
        super().__init__(prompts, options, output_mask_k=output_mask_k, cap=cap)
        self.lm = lm
        self.decoder = Decoder(lm)
        # This meeting's finished translations, for n-gram lookahead past the draft.
        self.ngrams = NgramTable(n=3)
        # When set, a smaller model guesses past the draft instead of the n-gram table.
        self.draft_model = draft_model
        # When set, guessing is used only while it measurably speeds up decoding.
        self.gate: GuessGate | None = None
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
        """The prompt for ``source`` with the context, as tokens."""
        return self.tokenize_prompt(self.prompts.build(source, self.context))

    def tokenize_prompt(self, prompt: str) -> list[int]:
        # The template's markers are control tokens; the user's words (the line, the context,
        # the glossary) are text: a line reading "<end_of_turn>" ended the model's turn.
        plain = prompt.plain if isinstance(prompt, Prompt) else None
        if plain is not None and isinstance(self.lm, PromptTokenizer):
            return self.lm.tokenize_prompt(prompt, plain)
        return self.lm.tokenize(prompt, add_bos=True, special=True)

    def decode(
        self,
        source: str,
        draft: Sequence[int],
        should_abort: Callable[[], bool] | None = None,
        on_step: Callable[[Sequence[int]], None] | None = None,
    ) -> DecodeResult:
        """Translate ``source`` once with ``draft`` (stateless but for the guess gate)."""
        n_src = len(self.lm.tokenize(" ".join(source.split()), add_bos=False, special=False))
        cap = self.output_cap(n_src)
        prompt, room = self.prompt_within(source, cap, self.lm.n_ctx, self.tokenize_prompt, len)
        if room is not None:
            cap = max(0, min(cap, room))  # prompt and output share the context
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

        def decode(draft: list[int]) -> Decoded[int]:
            res = self.decode(source, draft, should_abort, on_step)
            if res.stats.aborted:
                return Decoded(res.tokens, res.stats)
            why = self._problem(source, res.tokens, res.stats.hit_cap)
            if why:
                # A base model may copy the source rather than translate it (long lines full
                # of names and quotes), or loop: once more, from scratch, without copying more
                # than a name's worth of the source's tokens in a row or repeating itself.
                res = self._decode_without_copying(source, should_abort, on_step, res.stats)
                st = res.stats
                why = "" if st.aborted else self._problem(source, res.tokens, st.hit_cap)
            return Decoded(res.tokens, res.stats, why)

        got = self._next(segment_id, source, final, decode)
        if got.problem:
            return Translation(segment_id, source, "", (), final, got.stats, problem=got.problem)
        text = complete_text(self.lm.detokenize(got.out)).strip()
        return Translation(segment_id, source, text, tuple(got.out), final, got.stats)

    def _problem(self, source: str, tokens: Sequence[int], hit_cap: bool = False) -> str:
        """Why ``tokens`` are no translation of ``source`` ("" when they are one)."""
        text = complete_text(self.lm.detokenize(tokens)).strip()
        p = self.prompts
        kept = present(source, p.terms) if p.terms else ()
        return problem(source, text, tokens, p.src_lang, p.tgt_lang, hit_cap, kept)

    def _finished(self, out: Sequence[int]) -> None:
        self.ngrams.add(out)
