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

    def init(self, mt: MtConfig) -> dict[str, Any]:
        from subtitler.mt.llama_backend import route_native_log  # (llama.cpp: in the child)

        route_native_log()
        model = load_translator(mt)
        self.engine = LocalEngine(model, mt, Path(mt.model_path).name)
        return {"notice": model.notice, "template": model.template}

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        mt: MtConfig | None = None,
        glossary: Glossary | None = None,
        progress: bool = False,
    ) -> EngineResult:
        """One update into ``target`` (``mt``, ``glossary``: new settings or terms, sent
        when they changed); ``progress``: report a slow decode's prefix as it goes."""
        assert self.engine is not None
        if mt is not None:
            self.engine.configure(mt)
        if glossary is not None:
            self.engine.set_glossary(glossary)
        return self.engine.translate(
            segment_id,
            source,
            final,
            target,
            src_lang,
            should_abort=self.should_abort,
            progress=self.report if progress else None,
        )

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
