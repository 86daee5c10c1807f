"""Runs RT, SSBD(beta), CD and the mask-k variants over the same streams on one model."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel, GuessGate
from subtitler.mt.lm import LanguageModel
from subtitler.mt.masking import display_text
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import Method
from subtitler.mt.translator import LengthCap, StreamTranslator, decode_options
from subtitler_research.bench.streams import prefixes
from subtitler_research.mt.metrics import RunTotals, normalized_erasure

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
    step: int = 3,
    src_lang: str = "en",
    cap: LengthCap | None = None,
    fuse_prompt: bool = False,
    max_new_tokens: int = 256,
    on_sentence: Callable[[int], None] | None = None,
    draft_lm: LanguageModel | None = None,
) -> list[RunResult]:
    """Every run over every sentence, interleaved by sentence so machine noise hits all alike."""
    translators = []
    for spec in specs:
        # The app's mapping from the translation settings (mt.translator.decode_options).
        mt = MtConfig(
            method=spec.method.value,
            beta=spec.beta if spec.beta is not None else 0.0,
            max_new_tokens=max_new_tokens,
            verify=spec.verify,
            top_b=spec.top_b,
            tau=spec.tau,
            lookahead=spec.lookahead,
            draft_tokens=spec.draft_tokens,
            resync=spec.resync,
        )
        opts = decode_options(mt, draft_model=bool(spec.draft_tokens), fuse_prompt=fuse_prompt)
        k_out = spec.k if spec.mask == "output" else 0
        dm = None
        if spec.draft_tokens:
            if draft_lm is None:
                raise ValueError(f"{spec.label} needs a draft model")
            dm = DraftModel(draft_lm)
        tr = StreamTranslator(lm, prompts, opts, output_mask_k=k_out, cap=cap, draft_model=dm)
        if spec.adaptive:
            tr.gate = GuessGate()
        translators.append(tr)
    results = [RunResult(s) for s in specs]
    # One untimed update first: the first llama_decode pays for graph allocation.
    translators[0].decode(sources[0] if sources else "Hello.", [])
    for i, sentence in enumerate(sources):
        stream = prefixes(sentence, step, src_lang)
        for spec, tr, res in zip(specs, translators, results, strict=True):
            tr.reset()
            shown: list[str] = []
            toks: list[list[int]] = []
            k_disp = spec.k if spec.mask == "display" else 0
            for j, src in enumerate(stream):
                final = j == len(stream) - 1
                t = tr.update(i, src, final)
                res.totals.add(t.stats)
                shown.append(display_text(lm.detokenize, t.tokens, k_disp, final).strip())
                toks.append(list(t.tokens))
            res.finals.append(shown[-1])
            res.shown.append(shown)
            res.tokens.append(toks)
        if on_sentence is not None:
            on_sentence(i)
    return results
