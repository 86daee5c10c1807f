"""One loaded translation model and its streaming state, behind a small call: translate the
newest source text of a segment, get back text, tokens, what each mask-k shows, and stats.

The same :class:`LocalEngine` runs in the pipeline's own process (tests, fakes) and inside the
engine worker process (``subtitler.pipeline.worker``), where only these plain values cross
the process boundary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel
from subtitler.mt.glossary import Glossary
from subtitler.mt.lm import LanguageModel
from subtitler.mt.masking import MAX_K, display_text
from subtitler.mt.prompts import ChatFormatter, PromptBuilder
from subtitler.mt.translator import StreamTranslator, decode_options
from subtitler.types import UpdateStats


class EngineGone(RuntimeError):
    """The engine cannot be used any more (its process ended); the message is one line."""


class EngineUnavailable(RuntimeError):
    """The engine could not answer this time (a translation server is down, unreachable or
    stalled); the next update asks again, so it is never a reason to set the engine aside.
    The message is one line; ``announced``: the user was told of this outage already (the
    engine's load notice said the server was down)."""

    def __init__(self, message: str, *, announced: bool = False) -> None:
        super().__init__(message)
        self.announced = announced


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
    shown_by_k: tuple[str, ...]  # display-only mask-k, k = 0..MAX_K (stripped)
    stats: UpdateStats


class Engine(Protocol):
    """What the translation stage needs from a loaded model, wherever it runs."""

    @property
    def notice(self) -> str: ...

    @property
    def name(self) -> str:
        """The model's file name, for messages."""
        ...

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        src_lang: str,
        mt: MtConfig,
        should_abort: Callable[[], bool] | None = None,
    ) -> EngineResult: ...

    def set_glossary(self, glossary: Glossary) -> None:
        """Fixed translations from the next update on (no model is loaded again)."""
        ...

    def close(self) -> None: ...


def as_engine(model: LoadedModel | Engine, name: str = "") -> Engine:
    """An engine for what a model loader returned (tests' loaders return a LoadedModel)."""
    return LocalEngine(model, name) if isinstance(model, LoadedModel) else model


class LocalEngine:
    """A :class:`LoadedModel` with its :class:`StreamTranslator`, in this process."""

    def __init__(self, model: LoadedModel, name: str = "") -> None:
        self.model = model
        self.name = name
        self._tr: StreamTranslator | None = None
        self._settings: tuple[str, MtConfig] | None = None  # what the translator has
        self.glossary = Glossary()

    def set_glossary(self, glossary: Glossary) -> None:
        self.glossary = glossary

    @property
    def lm(self) -> LanguageModel:
        return self.model.lm

    @property
    def notice(self) -> str:
        return self.model.notice

    def _configure(self, src_lang: str, mt: MtConfig) -> StreamTranslator:
        """The translator, told the settings when they changed (it owns the mapping)."""
        m = self.model
        tr = self._tr
        if tr is None:
            tr = self._tr = StreamTranslator(
                m.lm,
                PromptBuilder(m.template, src_lang, mt.tgt_lang, m.formatter),
                decode_options(mt, draft_model=m.draft is not None),
                draft_model=m.draft,
            )
        if self._settings != (src_lang, mt):
            tr.reconfigure(mt, src_lang)
            self._settings = (src_lang, mt)
        terms = self.glossary.translations(src_lang, mt.tgt_lang)
        if tr.prompts.terms != terms:  # the glossary changed, or the language pair did
            tr.prompts = dataclasses.replace(tr.prompts, terms=terms)
        return tr

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        src_lang: str,
        mt: MtConfig,
        should_abort: Callable[[], bool] | None = None,
    ) -> EngineResult:
        tr = self._configure(src_lang, mt)
        t = tr.update(segment_id, source, final, should_abort=should_abort)
        if t.stats.aborted:
            return EngineResult(t.text, t.tokens, (), t.stats)
        detok = self.model.lm.detokenize
        shown = tuple(display_text(detok, t.tokens, k, final).strip() for k in range(MAX_K + 1))
        return EngineResult(t.text, t.tokens, shown, t.stats)

    def close(self) -> None:
        self._tr = None
        self.model.close()
