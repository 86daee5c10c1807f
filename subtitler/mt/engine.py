"""One loaded translation model and its streaming state, behind a small call: translate the
newest source text of a segment, get back text, tokens, their pieces of text, and stats.

The same :class:`LocalEngine` runs in the pipeline's own process (tests, fakes) and inside the
engine worker process (``subtitler.mt.service``, run by ``subtitler.isolation``), where only
these plain values cross the process boundary.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel
from subtitler.mt.glossary import Glossary
from subtitler.mt.lm import LanguageModel
from subtitler.mt.masking import complete_text
from subtitler.mt.output_rules import without_markup
from subtitler.mt.prompts import ChatFormatter, PromptBuilder
from subtitler.mt.terms import glued_tokens
from subtitler.mt.translator import StreamTranslator, decode_options
from subtitler.types import UpdateStats


class EngineUnavailable(RuntimeError):
    """The engine could not answer this time (a translation server is down, unreachable or
    stalled); the next update asks again, so it is never a reason to set the engine aside.
    The message is one line; ``announced``: the user was told of this outage already (the
    engine's load notice said the server was down); ``retry_in``: the seconds before the
    engine asks the server again (its pause after a failure; 0: at the next call);
    ``unreachable``: no server answered at all (down, unreachable, still loading), rather than
    one that failed on this update (which another may not)."""

    def __init__(
        self,
        message: str,
        *,
        announced: bool = False,
        retry_in: float = 0.0,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.announced = announced
        self.retry_in = retry_in
        self.unreachable = unreachable


@dataclasses.dataclass
class LoadedModel:
    """A translation LM and the prompt template resolved for it."""

    lm: LanguageModel
    template: str
    formatter: ChatFormatter | None = None  # needed by the "gguf" template
    close: Callable[[], None] = lambda: None
    draft: DraftModel | None = None  # guesses past the draft (same vocabulary)
    notice: str = ""  # something the user should know about this load (not fatal)


@dataclasses.dataclass(frozen=True)
class EngineResult:
    """One translated update: what the pipeline shows and records."""

    text: str  # the whole translation (complete characters)
    tokens: tuple[int, ...]
    # The bytes each output token adds, in order: the first n joined are the text of the
    # first n tokens (a piece may end inside a multi-byte character). A display masks the
    # line by them (subtitler.display.masking). Aborted, or a decode's progress: the prefix
    # decoded so far.
    pieces: tuple[bytes, ...]
    stats: UpdateStats
    # Why the output is not a translation (an echo of the source, a loop: mt/output_rules.py):
    # the update failed and ``text`` is empty. "" for a translation.
    problem: str = ""


Progress = Callable[[EngineResult], None]  # a slow decode's prefix, as it goes


class Engine(Protocol):
    """What the translation stage needs from a loaded model, wherever it runs."""

    @property
    def notice(self) -> str: ...

    @property
    def name(self) -> str:
        """The model's file name, for messages."""
        ...

    def configure(self, mt: MtConfig) -> None:
        """The translation settings from the next update on; called once when they change
        (the engine keeps them: they do not travel with each update)."""
        ...

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: Callable[[], bool] | None = None,
        progress: Progress | None = None,
    ) -> EngineResult:
        """One update into ``target`` (one of the configured targets, or the main one) from
        ``src_lang``. ``progress`` (where the engine can) gets the prefix decoded so far every
        ``partial_every_s`` while a decode goes on for longer than that."""
        ...

    def set_glossary(self, glossary: Glossary) -> None:
        """Fixed translations from the next update on (no model is loaded again)."""
        ...

    def close(self) -> None: ...


class LocalEngine:
    """A :class:`LoadedModel` with a :class:`StreamTranslator` per target language, in this
    process.

    Each target keeps its own SSBD draft and its own KV cache on the one loaded model: the
    first target uses the model's own context, each further one a stream of its own
    (``LlamaLM.views``: one more llama.cpp context on the same weights; a model without
    views, such as the tests' fakes, is shared, which is correct but re-evaluates more). A
    target no longer chosen hands its stream to the next new one, so the streams never
    outnumber the targets chosen at once."""

    def __init__(self, model: LoadedModel, mt: MtConfig, name: str = "") -> None:
        self.model = model
        self.name = name
        self.mt = mt
        self._for: dict[str, MtConfig] = {}  # target -> mt.for_target(target), made once
        self._trs: dict[str, StreamTranslator] = {}  # target language -> its translator
        # What each target's translator was told: (source language, settings).
        self._told: dict[str, tuple[str, MtConfig]] = {}
        # Streams (and the draft model's) not used by any translator.
        self._free: list[tuple[LanguageModel, DraftModel | None]] = [(model.lm, model.draft)]
        self.glossary = Glossary()
        self._glued: npt.NDArray[np.bool_] | None = None  # (mt/terms.py) for the glossary

    def set_glossary(self, glossary: Glossary) -> None:
        self.glossary = glossary
        if self._glued is None and any(glossary.translations(*p) for p in glossary.pairs()):
            # Which tokens continue a word: one pass over the vocabulary (1.1 s for Gemma's
            # 262k tokens), done when a glossary is given rather than mid-line when its first
            # term is said, and once for every target.
            self._glued = glued_tokens(self.model.lm)
            for tr in self._trs.values():
                tr._glued = self._glued

    @property
    def lm(self) -> LanguageModel:
        return self.model.lm

    @property
    def notice(self) -> str:
        return self.model.notice

    @property
    def targets(self) -> tuple[str, ...]:
        """The target languages that have a translator now."""
        return tuple(self._trs)

    def _stream(self, mt: MtConfig) -> tuple[LanguageModel, DraftModel | None]:
        """A language model stream (and a draft model's) for a new target's translator."""
        for gone in [t for t in self._trs if t not in mt.targets]:
            tr = self._trs.pop(gone)
            self._told.pop(gone, None)
            self._free.append((tr.lm, tr.draft_model))
        if self._free:
            return self._free.pop(0)
        m = self.model
        lm = m.lm.new_stream()
        if lm is None:
            return m.lm, m.draft
        draft = m.draft
        dlm = draft.lm.new_stream() if draft is not None else None
        if dlm is not None:
            draft = DraftModel(dlm)
        return lm, draft

    def _configure(self, src_lang: str, mt: MtConfig) -> StreamTranslator:
        """The target's translator, told the settings when they changed (it owns the
        mapping)."""
        m = self.model
        tgt = mt.targets[0]  # (the code as compared: "pt-BR" is "pt")
        tr = self._trs.get(tgt)
        if tr is None:
            lm, draft = self._stream(mt)
            tr = self._trs[tgt] = StreamTranslator(
                lm,
                PromptBuilder(m.template, src_lang, tgt, m.formatter),
                decode_options(mt, draft_model=draft is not None),
                draft_model=draft,
            )
            tr._glued = self._glued
        told = self._told.get(tgt)
        # (The settings are the same object until configure() gives new ones.)
        if told is None or told[0] != src_lang or told[1] is not mt:
            tr.reconfigure(mt, src_lang)
            self._told[tgt] = (src_lang, mt)
        terms = self.glossary.translations(src_lang, tgt)
        if tr.prompts.terms != terms:  # the glossary changed, or the language pair did
            tr.prompts = dataclasses.replace(tr.prompts, terms=terms)
        return tr

    def configure(self, mt: MtConfig) -> None:
        if mt != self.mt:  # each target's translator is told at its next update
            self.mt, self._for = mt, {}

    def for_target(self, target: str) -> MtConfig:
        """The settings as ``target``'s translator sees them (the same object until the
        settings change: a translator is told them once)."""
        mt = self._for.get(target)
        if mt is None:
            mt = self._for[target] = self.mt.for_target(target)
        return mt

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: Callable[[], bool] | None = None,
        progress: Progress | None = None,
    ) -> EngineResult:
        """One update into ``target``. Aborted, it returns the prefix decoded so far (an open
        line shows it)."""
        mt = self.for_target(target)
        tr = self._configure(src_lang, mt)
        detok = tr.lm.detokenize
        on_step = None
        if progress is not None and mt.partial_every_s > 0:
            on_step = _Every(mt.partial_every_s, lambda out: progress(_partial(detok, out)))
        t = tr.update(segment_id, source, final, should_abort=should_abort, on_step=on_step)
        return shown_result(t.text, t.tokens, token_pieces(detok, t.tokens), t.stats, t.problem)

    def close(self) -> None:
        self._trs.clear()
        self._free = []
        self.model.close()


def shown_result(
    text: str,
    tokens: tuple[int, ...],
    pieces: tuple[bytes, ...],
    stats: UpdateStats,
    problem: str = "",
) -> EngineResult:
    """An update's result as the screen may show it: without subtitle markup the model wrote
    around its words (mt/output_rules.py); ``tokens`` stay as written (the next draft)."""
    shown = without_markup(pieces)
    if shown != pieces:
        pieces, text = shown, complete_text(b"".join(shown)).strip()
    return EngineResult(text, tokens, pieces, stats, problem)


def token_pieces(
    detokenize: Callable[[Sequence[int]], bytes], tokens: Sequence[int]
) -> tuple[bytes, ...]:
    """Each token's bytes. They join to the text of any run of the tokens: a model's
    detokenizer writes each token's piece after the last (llama_backend.LlamaLM.detokenize)."""
    return tuple(detokenize([t]) for t in tokens)


def _partial(detokenize: Callable[[Sequence[int]], bytes], tokens: Sequence[int]) -> EngineResult:
    """A decode's prefix so far (an open line shows it as it goes)."""
    text = complete_text(detokenize(tokens)).strip()
    stats = UpdateStats(output_len=len(tokens))
    return shown_result(text, tuple(tokens), token_pieces(detokenize, tokens), stats)


class _Every:
    """Calls ``fn`` with a decode's output at most once per ``every_s`` seconds, the first
    time ``every_s`` after the decode began (a decode that is quick shows nothing early)."""

    def __init__(self, every_s: float, fn: Callable[[Sequence[int]], None]) -> None:
        self.every_s, self.fn = every_s, fn
        self._due = time.monotonic() + every_s

    def __call__(self, out: Sequence[int]) -> None:
        now = time.monotonic()
        if now >= self._due:
            self._due = now + self.every_s
            self.fn(list(out))
