"""The translator and the Whisper recogniser in engine worker processes (see worker.py).

Parent side: :class:`WorkerEngine` (the translation stage's ``Engine``: the whole streaming
translator, SSBD and its drafts live in the worker, only text, token ids and stats come back)
and :class:`WorkerWhisper` (an ``AsrBackend``: audio goes over, words come back; a crash costs
one recognition and the model is loaded again for the next). Child side: the services they
talk to. :func:`probe_model` gives a file its real test in a worker for ``models verify``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.asr.backend import AsrError, Hypothesis, Samples
from subtitler.asr.faster_whisper import WhisperSettings
from subtitler.config import MtConfig
from subtitler.models import smoke_test
from subtitler.mt.engine import EngineGone, EngineResult, LocalEngine, Progress
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.worker import (
    CallAbandoned,
    RemoteError,
    WorkerClosed,
    WorkerCrashed,
    WorkerProcess,
)
from subtitler.types import UpdateStats

log = logging.getLogger(__name__)


def _naming(name: str, message: str) -> str:
    """A load failure says which file it is about."""
    return message if name in message else f"{name}: {message}"


class ModelCrashed(EngineGone):
    """A native engine died while loading or using a model; one line naming the file."""


# -- the translator ------------------------------------------------------------------------


class WorkerEngine:
    """A translation model loaded in its own process (the translation stage's ``Engine``).

    A crash while translating costs that update: the model is loaded again in a fresh process
    for the next one, up to ``RESTARTS`` times; a model that keeps crashing is given up."""

    RESTARTS = 2

    def __init__(self, mt: MtConfig, path: Path) -> None:
        self.name = path.name
        self.crashes = 0
        # The settings the process has, per target language (a target's settings travel
        # only when they change: several targets take turns without sending them each time).
        self._sent: dict[str, MtConfig] = {}
        self._glossary = Glossary()
        self._glossary_sent: Glossary | None = None  # what the process has (None: a new one)
        self._proc = self._load(mt)

    def _load(self, mt: MtConfig) -> WorkerProcess:
        proc = WorkerProcess("translator")
        self._glossary_sent = None
        self._sent = {}
        try:
            info = proc.start(mt)
        except WorkerCrashed as e:
            proc.close()
            raise ModelCrashed(f"{self.name}: llama.cpp crashed loading it ({e.reason})") from None
        except RemoteError as e:
            proc.close()
            raise RuntimeError(_naming(self.name, str(e))) from None
        self.notice: str = info["notice"]
        self._sent = {mt.tgt_lang: mt}
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

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        src_lang: str,
        mt: MtConfig,
        should_abort: Callable[[], bool] | None = None,
        progress: Progress | None = None,
    ) -> EngineResult:
        target = mt.tgt_lang
        changed = mt if mt != self._sent.get(target) else None
        glossary = self._glossary
        new_glossary = glossary if glossary is not self._glossary_sent else None
        try:
            result: EngineResult = self._proc.call(
                "translate",
                segment_id,
                source,
                final,
                src_lang,
                changed,
                new_glossary,
                target,
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
            crashed = f"{self.name}: llama.cpp crashed translating ({e.reason})"
            if self.crashes > self.RESTARTS:
                raise ModelCrashed(f"{crashed}, {self.crashes} times") from None
            self._proc = self._load(mt)  # (a load that crashes now gives the model up)
            raise RuntimeError(f"{crashed}; loaded it again") from None
        finally:
            self._sent[target] = mt  # (after a crash: what the new process was started with)
        self._glossary_sent = glossary  # (not after a crash: the new process gets it next time)
        return result

    def close(self) -> None:
        self._proc.close()


class TranslatorService:
    """Child side: a LocalEngine over the real loader."""

    OPS = ("init", "translate")
    should_abort: Callable[[], bool] = staticmethod(lambda: False)  # set by the worker loop
    report: Callable[[Any], None] = staticmethod(lambda _value: None)  # ditto

    def __init__(self) -> None:
        self.engine: LocalEngine | None = None
        self.mts: dict[str, MtConfig] = {}  # each target language's settings

    def init(self, mt: MtConfig) -> dict[str, Any]:
        from subtitler.mt.llama_backend import route_native_log
        from subtitler.pipeline.factories import load_translator

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


# -- the recogniser ------------------------------------------------------------------------


class WorkerWhisper:
    """``AsrBackend`` over faster-whisper in its own process.

    A crash during a recognition costs that recognition (AsrError) and the model is loaded
    again at the next call; the ASR stage decides when too many failures are too many.
    """

    def __init__(self, settings: WhisperSettings) -> None:
        self.settings = settings
        self.name = Path(settings.model).name or settings.model
        self.crashes = 0
        self.notice = ""  # for the user about this load (whisper_first_load_test), not fatal
        self.hotwords = settings.hotwords
        self._proc: WorkerProcess | None = None
        self._start()

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect from the next recognition on (they go with each call: a restarted
        worker has them too)."""
        self.hotwords = hotwords

    def _start(self) -> None:
        proc = WorkerProcess("whisper")
        try:
            info = proc.start(self.settings)
        except WorkerCrashed as e:
            proc.close()
            raise AsrError(f"{self.name}: CTranslate2 crashed loading it ({e.reason})") from None
        except RemoteError as e:
            proc.close()
            raise AsrError(_naming(self.name, str(e))) from None
        self.multilingual: bool = info["multilingual"]
        self.device: str = info["device"]
        self.compute_type: str = info["compute_type"]
        self._proc = proc

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def handler_s(self) -> float:
        """Time the last recognition took inside the worker (the benchmark's reference)."""
        return float(self._proc.handler_s) if self._proc is not None else 0.0

    def transcribe(
        self, audio: Samples, *, t0: float, prompt: str, language: str | None, prefix: str = ""
    ) -> Hypothesis:
        if self._proc is None:  # crashed last time: a fresh process, the same model
            self._start()
        assert self._proc is not None
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        try:
            hyp: Hypothesis = self._proc.call(
                "transcribe", samples, t0, prompt, language, prefix, self.hotwords
            )
        except WorkerCrashed as e:
            self._proc.close()
            self._proc = None
            self.crashes += 1
            raise AsrError(
                f"CTranslate2 crashed on a {len(samples) / 16000:.1f} s window ({e.reason}); "
                "loading the speech model again"
            ) from None
        return hyp

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


class WhisperService:
    """Child side: the faster-whisper backend."""

    OPS = ("init", "transcribe")
    should_abort: Callable[[], bool] = staticmethod(lambda: False)

    def __init__(self) -> None:
        self.backend: Any = None

    def init(self, settings: WhisperSettings) -> dict[str, Any]:
        from subtitler.asr.faster_whisper import FasterWhisperBackend

        self.backend = FasterWhisperBackend(settings)
        return {
            "multilingual": bool(self.backend.multilingual),
            "device": str(self.backend.device),
            "compute_type": str(self.backend.compute_type),
        }

    def transcribe(
        self,
        audio: Samples,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        hotwords: str = "",
    ) -> Hypothesis:
        self.backend.set_hotwords(hotwords)
        hyp: Hypothesis = self.backend.transcribe(
            audio, t0=t0, prompt=prompt, language=language, prefix=prefix
        )
        return hyp

    def close(self) -> None:
        self.backend = None


# -- models verify ---------------------------------------------------------------------------


class ModelDamaged(RuntimeError):
    """A model loads and runs but its output shows damaged weights; one line naming it."""


def probe_model(path: Path, template: str = "auto") -> None:
    """Load a translation GGUF or a Whisper folder in a worker process and give it its real
    test (models/smoke_test.py: a fixed sentence, a fixed clip of speech); raises with one
    line naming the file: ModelCrashed when the engine died, ModelDamaged when it runs but
    writes nothing or loops, else what the engine said."""
    if path.is_dir():
        _probe_whisper(path)
        return
    mt = MtConfig(
        model_path=str(path),
        template=template,
        src_lang=smoke_test.SENTENCE_SRC,
        n_ctx=1024,  # a base model's prompt of examples (about 300 tokens) and the answer
        threads=1,
        max_new_tokens=smoke_test.MAX_TOKENS,
    )
    engine = WorkerEngine(mt, path)
    try:
        r = engine.translate(0, smoke_test.SENTENCE, True, mt.src_lang, mt)
    except RemoteError as e:
        raise RuntimeError(f"{path.name}: cannot translate with it ({e.kind}: {e})") from None
    finally:
        engine.close()
    if damage := smoke_test.translation_damage(r.text, r.problem, r.stats.looped):
        raise ModelDamaged(f"{path.name}: {damage}")


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
    try:
        r = engine.translate(-1, smoke_test.SENTENCE, False, smoke_test.SENTENCE_SRC, test_mt)
    except RemoteError as e:  # the first line will meet it too, and say it then
        log.info("%s: the first-load test failed: %s", engine.name, e)
        return ""
    damage = smoke_test.translation_damage(r.text, r.problem, r.stats.looped)
    if not damage:
        return ""
    return (
        f"{engine.name}: {damage}: download or copy it again (`subtitler models verify` "
        "checks a file); translating with it anyway"
    )


def whisper_first_load_test(whisper: WorkerWhisper) -> str:
    """A speech model's real test when the pipeline loads it: the self-test's clip of speech
    (1.9 s) recognised once. Costs one recognition of that clip before the first (tiny.en:
    about 0.1 s). Returns the notice for weights that look damaged ("" when they do not); a
    failed or crashed recognition is left to the first real one to report."""
    from subtitler.audio.sources import AudioFileError, load_audio

    try:
        audio = load_audio(smoke_test.clip_path())
        hyp = whisper.transcribe(audio, t0=0.0, prompt="", language=smoke_test.CLIP_LANGUAGE)
    except (AsrError, AudioFileError, OSError) as e:
        log.info("%s: the first-load test failed: %s", whisper.name, e)
        return ""
    damage = smoke_test.recognition_damage([w.text for w in hyp.words])
    if not damage:
        return ""
    return (
        f"speech model {whisper.name}: {damage}: download or copy it again "
        "(`subtitler models verify` checks a folder); recognising with it anyway"
    )


def _probe_whisper(path: Path) -> None:
    from subtitler.audio.sources import load_audio

    audio = load_audio(smoke_test.clip_path())
    settings = WhisperSettings(
        str(path), device="cpu", threads=1, max_new_tokens=smoke_test.MAX_TOKENS
    )
    whisper = WorkerWhisper(settings)
    try:
        hyp = whisper.transcribe(audio, t0=0.0, prompt="", language=smoke_test.CLIP_LANGUAGE)
    except RemoteError as e:
        raise AsrError(f"{path.name}: cannot recognise with it ({e.kind}: {e})") from None
    except AsrError as e:
        raise AsrError(f"{path.name}: {e}") from None
    finally:
        whisper.close()
    if damage := smoke_test.recognition_damage([w.text for w in hyp.words]):
        raise ModelDamaged(f"{path.name}: {damage}")
