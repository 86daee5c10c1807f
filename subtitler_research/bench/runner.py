"""Runs RT, SSBD(beta), CD and the mask-k variants over the same streams on one model."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from subtitler.config import MtConfig
from subtitler.display.masking import display_text
from subtitler.mt.completions import CompletionsClient
from subtitler.mt.drafting import DraftModel
from subtitler.mt.engine import token_pieces
from subtitler.mt.lm import LanguageModel
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.remote import RemoteTranslation, RemoteTranslator
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.translator import StreamTranslator, apply_settings
from subtitler.types import Translation, UpdateStats
from subtitler_research.bench.streams import prefixes
from subtitler_research.mt.metrics import RunTotals, normalized_erasure


class _HasStats(Protocol):
    @property
    def stats(self) -> UpdateStats: ...


T = TypeVar("T", bound=_HasStats)
T_co = TypeVar("T_co", bound=_HasStats, covariant=True)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    method: Method
    beta: float | None = None
    mask: str = "none"  # "none" | "output" | "display"
    k: int = 0
    lookahead: int = 0  # n-gram tokens guessed past the draft (issue 8)
    resync: bool = False  # retry the old draft after a divergence
    verify: str = "biased"  # or "specdec" (top-b within tau)
    top_b: int = 3
    tau: float = 1.0
    draft_tokens: int = 0  # tokens the draft model guesses per pass (0: no draft model)
    adaptive: bool = False  # guess only while it measurably pays (GuessGate)

    def settings(self, base: MtConfig) -> MtConfig:
        """The translation settings of this run: ``base`` (the bench's settings, from the
        schema's flags) with the decoding this run sweeps."""
        return dataclasses.replace(
            base,
            method=self.method.value,
            beta=self.beta if self.beta is not None else 0.0,
            verify=self.verify,
            top_b=self.top_b,
            tau=self.tau,
            lookahead=self.lookahead,
            draft_tokens=self.draft_tokens,
            resync=self.resync,
            adaptive_guessing=self.adaptive,
        )

    @property
    def label(self) -> str:
        if self.method is not Method.SSBD:
            s = str(self.method)
            if self.draft_tokens:
                s += f" +draftmodel{self.draft_tokens}"
            return s + " adaptive" if self.adaptive else s
        s = f"SSBD b={self.beta:g}"
        if self.verify == "specdec":
            s = f"SpecDec b={self.top_b} tau={self.tau:g}"
        if self.lookahead:
            s += f" +ngram{self.lookahead}"
        if self.draft_tokens:
            s += f" +draftmodel{self.draft_tokens}"
        if self.resync:
            s += " +resync"
        if self.adaptive:
            s += " adaptive"
        return s if self.mask == "none" else f"{s} {self.mask} mask-{self.k}"


@dataclass
class RunResult:
    spec: RunSpec
    totals: RunTotals = field(default_factory=RunTotals)
    finals: list[str] = field(default_factory=list)
    shown: list[list[str]] = field(default_factory=list)  # displayed text per update, per sentence
    tokens: list[list[list[int]]] = field(default_factory=list)  # output tokens per update

    def ne(self, tgt_lang: str) -> float:
        return normalized_erasure(self.shown, tgt_lang)


def standard_specs(
    betas: Sequence[float], ks: Sequence[int], mask_beta: float = 0.2, beyond: bool = False
) -> list[RunSpec]:
    specs = [RunSpec(Method.RT)]
    specs += [RunSpec(Method.SSBD, b) for b in betas]
    specs.append(RunSpec(Method.CD))
    specs += [RunSpec(Method.SSBD, mask_beta, "output", k) for k in ks]
    specs += [RunSpec(Method.SSBD, mask_beta, "display", k) for k in ks]
    if beyond:
        specs += beyond_specs(mask_beta)
    return specs


def beyond_specs(beta: float = 0.2) -> list[RunSpec]:
    """Issue 8's modes next to plain SSBD: exact (beta 0) and at the default beta."""
    out = []
    for b in (0.0, beta):
        out += [
            RunSpec(Method.SSBD, b, lookahead=8),
            RunSpec(Method.SSBD, b, resync=True),
            RunSpec(Method.SSBD, b, lookahead=8, resync=True),
        ]
    out += [
        RunSpec(Method.SSBD, 0.0, verify="specdec"),
        RunSpec(Method.SSBD, 0.0, verify="specdec", lookahead=8, resync=True),
        RunSpec(Method.SSBD, beta, lookahead=8, resync=True, adaptive=True),
    ]
    return out


def draft_model_specs(tokens: int, beta: float = 0.2) -> list[RunSpec]:
    """The draft model guessing past the draft: exact (RT, i.e. plain speculative decoding)
    and with SSBD at the default beta."""
    return [
        RunSpec(Method.RT, draft_tokens=tokens),
        RunSpec(Method.SSBD, 0.0, draft_tokens=tokens),
        RunSpec(Method.SSBD, beta, draft_tokens=tokens),
        RunSpec(Method.SSBD, beta, draft_tokens=tokens, adaptive=True),
    ]


def run_all(
    lm: LanguageModel,
    prompts: PromptBuilder,
    sources: Sequence[str],
    specs: Sequence[RunSpec],
    *,
    mt: MtConfig | None = None,
    step: int = 3,
    fuse_prompt: bool = False,
    on_sentence: Callable[[int], None] | None = None,
    draft_lm: LanguageModel | None = None,
) -> list[RunResult]:
    """Every run over every sentence, interleaved by sentence so machine noise hits all alike.
    Each translator takes ``mt`` (default: the app's) with its run's decoding the way the app's
    does (StreamTranslator.reconfigure: language pair, decoding, length cap, guessing and
    context); ``fuse_prompt`` is the bench's own (off: TPS without the prompt, as the paper)."""
    base = mt or MtConfig()
    translators = []
    for spec in specs:
        k_out = spec.k if spec.mask == "output" else 0
        dm = None
        if spec.draft_tokens:
            if draft_lm is None:
                raise ValueError(f"{spec.label} needs a draft model")
            dm = DraftModel(draft_lm)
        tr = StreamTranslator(lm, prompts, DecodeOptions(), output_mask_k=k_out, draft_model=dm)
        tr.reconfigure(spec.settings(base), base.src_lang)
        tr.options = dataclasses.replace(tr.options, fuse_prompt=fuse_prompt)
        translators.append(tr)

    def shown(spec: RunSpec, t: Translation, final: bool) -> tuple[str, list[int]]:
        k_disp = spec.k if spec.mask == "display" else 0
        pieces = token_pieces(lm.detokenize, t.tokens)
        return display_text(pieces, k_disp, final).strip(), list(t.tokens)

    # One untimed update first: the first llama_decode pays for graph allocation.
    translators[0].decode(sources[0] if sources else "Hello.", [])
    return _interleaved(translators, specs, sources, step, base.src_lang, shown, on_sentence)


def run_remote_all(
    client: CompletionsClient,
    prompts: PromptBuilder,
    sources: Sequence[str],
    specs: Sequence[RunSpec],
    *,
    mt: MtConfig | None = None,
    step: int = 3,
    on_sentence: Callable[[int], None] | None = None,
) -> list[RunResult]:
    """:func:`run_all` on a completions server (RT, SSBD and CD with their mask-k variants),
    each translator set up as the app's server translator is (translator.apply_settings)."""
    base = mt or MtConfig()
    translators = []
    for spec in specs:
        if spec.lookahead or spec.resync or spec.draft_tokens or spec.verify != "biased":
            raise ValueError(f"{spec.label} does not run on a server")
        k_out = spec.k if spec.mask == "output" else 0
        tr = RemoteTranslator(client, prompts, DecodeOptions(), output_mask_k=k_out)
        apply_settings(tr, spec.settings(base), draft_model=False)
        translators.append(tr)

    def shown(spec: RunSpec, t: RemoteTranslation, final: bool) -> tuple[str, list[int]]:
        return display_text(t.utf8_pieces, spec.k if spec.mask == "display" else 0, t.final), []

    # One untimed update first: the connection, the server's first evaluation.
    translators[0].update(-1, sources[0] if sources else "Hello.", True)
    return _interleaved(translators, specs, sources, step, base.src_lang, shown, on_sentence)


class _Translator(Protocol[T_co]):
    def reset(self) -> None: ...

    def update(self, segment_id: int, source: str, final: bool) -> T_co: ...


def _interleaved(
    translators: Sequence[_Translator[T]],
    specs: Sequence[RunSpec],
    sources: Sequence[str],
    step: int,
    src_lang: str,
    shown_of: Callable[[RunSpec, T, bool], tuple[str, list[int]]],
    on_sentence: Callable[[int], None] | None,
) -> list[RunResult]:
    """Every run over every sentence, interleaved by sentence so machine noise hits all alike."""
    results = [RunResult(s) for s in specs]
    for i, sentence in enumerate(sources):
        stream = prefixes(sentence, step, src_lang)
        for spec, tr, res in zip(specs, translators, results, strict=True):
            tr.reset()
            shown: list[str] = []
            toks: list[list[int]] = []
            for j, src in enumerate(stream):
                final = j == len(stream) - 1
                t = tr.update(i, src, final)
                res.totals.add(t.stats)
                text, tokens = shown_of(spec, t, final)
                shown.append(text)
                toks.append(tokens)
            res.finals.append(shown[-1])
            res.shown.append(shown)
            res.tokens.append(toks)
        if on_sentence is not None:
            on_sentence(i)
    return results
