"""The child side of an isolated translator (mt/isolated.py starts it in a worker process):
a LocalEngine over the real loader."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from subtitler.config import MtConfig
from subtitler.mt.engine import EngineResult, LocalEngine
from subtitler.mt.glossary import Glossary
from subtitler.mt.loading import load_translator


class TranslatorService:
    """Child side: a LocalEngine over the real loader."""

    OPS = ("init", "translate")
    should_abort: Callable[[], bool] = staticmethod(lambda: False)  # set by the worker loop
    report: Callable[[Any], None] = staticmethod(lambda _value: None)  # ditto

    def __init__(self) -> None:
        self.engine: LocalEngine | None = None
        self.mts: dict[str, MtConfig] = {}  # each target language's settings

    def init(self, mt: MtConfig) -> dict[str, Any]:
        from subtitler.mt.llama_backend import route_native_log  # (llama.cpp: in the child)

        route_native_log()
        model = load_translator(mt)
        self.engine, self.mts = LocalEngine(model, Path(mt.model_path).name), {mt.tgt_lang: mt}
        return {"notice": model.notice}

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        src_lang: str,
        mt: MtConfig | None,
        glossary: Glossary | None = None,
        target: str = "",
        progress: bool = False,
    ) -> EngineResult:
        """One update into ``target`` with its settings (None: those it had last time);
        ``progress``: report a slow decode's prefix as it goes."""
        assert self.engine is not None and self.mts
        key = target or (mt.tgt_lang if mt is not None else next(iter(self.mts)))
        if mt is not None:
            self.mts[key] = mt
        if glossary is not None:
            self.engine.set_glossary(glossary)
        return self.engine.translate(
            segment_id,
            source,
            final,
            src_lang,
            self.mts[key],
            should_abort=self.should_abort,
            progress=self.report if progress else None,
        )

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
