"""The translator in an engine worker process (subtitler.isolation): a crash of llama.cpp is
a message here.

Parent side: :class:`WorkerEngine` (the translation stage's ``Engine``: the whole streaming
translator, SSBD and its drafts live in the worker, only text, token pieces and stats come
back); the child runs mt/service.py.
:func:`probe_translator` gives a file its real test for ``models verify``;
:func:`first_load_test` gives it when the pipeline loads it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

from subtitler.config import MtConfig
from subtitler.isolation.worker import (
    CallAbandoned,
    RemoteError,
    WorkerClosed,
    WorkerCrashed,
    WorkerProcess,
)
from subtitler.models import smoke_test
from subtitler.models.smoke_test import ModelCrashed, ModelDamaged, naming
from subtitler.mt.engine import EngineResult, Progress
from subtitler.mt.glossary import Glossary
from subtitler.types import EngineGone, UpdateStats

log = logging.getLogger(__name__)
SERVICE = "subtitler.mt.service:TranslatorService"  # (imported in the child only)


class Reloaded(RuntimeError):
    """A crash cost this update; the model is loaded again in a fresh process."""


class WorkerEngine:
    """A translation model loaded in its own process (the translation stage's ``Engine``).

    A crash while translating costs that update: the model is loaded again in a fresh process
    for the next one, up to ``restarts`` times in a row (a translation between starts the
    count again: a model that crashes once an hour is no model that keeps crashing); a model
    that keeps crashing, or that cannot be loaded again (its file replaced or gone meanwhile),
    is given up (EngineGone)."""

    RESTARTS = 2

    def __init__(self, mt: MtConfig, path: Path, restarts: int = RESTARTS) -> None:
        self.name = path.name
        self.crashes = 0  # in a row: since the last translation
        self._crashed: list[str] = []  # why, each of them
        self.restarts = restarts
        self.mt = mt
        self._mt_sent = False  # whether the process has self.mt (it gets new ones with an update)
        self._glossary = Glossary()
        self._glossary_sent: Glossary | None = None  # what the process has (None: a new one)
        self._proc = self._load()

    def _load(self) -> WorkerProcess:
        proc = WorkerProcess(SERVICE)
        self._glossary_sent = None
        try:
            info = proc.start(self.mt)
        except WorkerCrashed as e:
            proc.close()
            raise ModelCrashed(f"{self.name}: llama.cpp crashed loading it ({e.reason})") from None
        except RemoteError as e:
            proc.close()
            raise RuntimeError(naming(self.name, str(e))) from None
        self.notice: str = info["notice"]
        # The prompt template the model is asked with ("auto" as the load decided it).
        self.template: str = info["template"]
        self._mt_sent = True
        return proc

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    @property
    def handler_s(self) -> float:
        """Time the last translation took inside the worker (the benchmark's reference)."""
        return float(self._proc.handler_s)

    def set_glossary(self, glossary: Glossary) -> None:
        self._glossary = glossary  # sent with the next translation

    def configure(self, mt: MtConfig) -> None:
        if mt != self.mt:  # sent with the next translation
            self.mt, self._mt_sent = mt, False

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
        new_mt = None if self._mt_sent else self.mt
        glossary = self._glossary
        new_glossary = glossary if glossary is not self._glossary_sent else None
        try:
            result: EngineResult = self._proc.call(
                "translate",
                segment_id,
                source,
                final,
                target,
                src_lang,
                new_mt,
                new_glossary,
                progress is not None,
                abort=should_abort,
                progress=progress,
            )
        except (CallAbandoned, WorkerClosed):
            # Stopped, or superseded and the engine is still busy: no translation this time.
            return EngineResult("", (), (), UpdateStats(aborted=True))
        except WorkerCrashed as e:
            self._proc.close()
            self.crashes += 1
            self._crashed.append(e.reason)
            crashed = f"{self.name}: llama.cpp crashed translating ({e.reason})"
            if self.crashes > self.restarts:
                raise ModelCrashed(self._given_up()) from None
            try:
                self._proc = self._load()  # (a load that crashes now gives the model up)
            except ModelCrashed:
                raise
            except RuntimeError as gone:
                # The file was replaced or removed since it was loaded (a copy over the one in
                # use, which is also what crashed it): the old process is closed, so going on
                # would answer every later line with nothing, said nowhere.
                raise EngineGone(f"{crashed}; cannot load it again: {gone}") from None
            raise Reloaded(f"{crashed}; loaded it again") from None
        self._mt_sent = True
        self._glossary_sent = glossary  # (not after a crash: the new process gets it next time)
        self.crashes, self._crashed = 0, []
        return result

    def _given_up(self) -> str:
        """Why the model is given up: each crash in a row (the last signal alone hid an abort
        that came first, or a hang)."""
        if self.crashes == 1:
            return f"{self.name}: llama.cpp crashed translating ({self._crashed[0]})"
        return (
            f"{self.name}: llama.cpp crashed translating {self.crashes} times in a row "
            f"({'; '.join(self._crashed)})"
        )

    def close(self) -> None:
        self._proc.close()


def probe_translator(path: Path, template: str = "auto") -> str:
    """Load a translation GGUF in a worker process and give it its real test
    (models/smoke_test.py: a fixed sentence); raises with one line naming the file:
    ModelCrashed when llama.cpp died, ModelDamaged when it runs but writes nothing or loops,
    else what the engine said. Returns the prompt template the load asks it with (for "auto":
    the one it chose, which the file's header alone does not always tell)."""
    mt = MtConfig(
        model_path=str(path),
        template=template,
        src_lang=smoke_test.SENTENCE_SRC,
        n_ctx=1024,  # a base model's prompt of examples (about 300 tokens) and the answer
        threads=1,
        max_new_tokens=smoke_test.MAX_TOKENS,
    )
    engine = WorkerEngine(mt, path, restarts=0)  # a crash on the test sentence fails it
    try:
        r = engine.translate(0, smoke_test.SENTENCE, True, mt.tgt_lang, mt.src_lang)
    except RemoteError as e:
        raise RuntimeError(f"{path.name}: cannot translate with it ({e.kind}: {e})") from None
    finally:
        engine.close()
    if damage := smoke_test.translation_damage(r.text, r.problem, r.stats.looped):
        raise ModelDamaged(f"{path.name}: {damage}")
    return engine.template


def first_load_test(engine: WorkerEngine, mt: MtConfig) -> str:
    """A translator's real test when the pipeline loads it: the fixed sentence into the
    main target language, not final (it joins no line's context), capped at
    smoke_test.MAX_TOKENS tokens. Costs one prompt pass and at most that many decoding steps
    before the first line. Measured on a shared 2-core machine (load 6), one thread: the
    fixture 0.02 s; Gemma 3 270M 1.9 s, most of it the examples prompt every line shares
    (then cached): its first line came 0.4 s later than without the test (2.3 vs 1.9 s).
    Returns the notice for weights that look damaged ("" when they do not); a crash
    propagates as on any update."""
    test_mt = dataclasses.replace(
        mt, src_lang=smoke_test.SENTENCE_SRC, max_new_tokens=smoke_test.MAX_TOKENS
    )
    engine.configure(test_mt)
    try:
        r = engine.translate(
            -1, smoke_test.SENTENCE, False, test_mt.tgt_lang, smoke_test.SENTENCE_SRC
        )
    except RemoteError as e:  # the first line will meet it too, and say it then
        log.info("%s: the first-load test failed: %s", engine.name, e)
        return ""
    except Reloaded as e:
        # One crash, the model loaded again: kept, as a crash on any line is (one that
        # crashes on every line is given up there); the reader is told.
        log.warning("the first-load test: %s", e)
        return f"{e} (on its test sentence)"
    finally:
        engine.configure(mt)  # the lines' settings from the first line on
    damage = smoke_test.translation_damage(r.text, r.problem, r.stats.looped)
    if not damage:
        return ""
    return (
        f"{engine.name}: {damage}: download or copy it again (`subtitler models verify` "
        "checks a file); translating with it anyway"
    )
