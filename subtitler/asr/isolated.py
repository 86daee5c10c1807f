"""The Whisper recogniser in an engine worker process (subtitler.isolation): a crash of
CTranslate2 costs one recognition.

Parent side: :class:`WorkerWhisper` (an ``AsrBackend``: audio goes over, words come back; a
crash costs one recognition and the model is loaded again for the next). Child side:
:class:`WhisperService`. :func:`probe_whisper` gives a folder its real test for ``models
verify``; :func:`whisper_first_load_test` gives it when the pipeline loads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.asr.backend import AsrError, Hypothesis, Samples
from subtitler.asr.faster_whisper import WhisperSettings
from subtitler.audio.sources import AudioFileError, load_audio
from subtitler.isolation.worker import HUNG_S, RemoteError, WorkerCrashed, WorkerProcess
from subtitler.models import smoke_test
from subtitler.models.smoke_test import ModelDamaged, naming
from subtitler.types import EngineLost

log = logging.getLogger(__name__)
SERVICE = "subtitler.asr.isolated:WhisperService"


class WorkerWhisper:
    """``AsrBackend`` over faster-whisper in its own process.

    A crash during a recognition costs that recognition (AsrError) and the model is loaded
    again at the next call; the ASR stage decides when too many failures are too many.
    """

    def __init__(self, settings: WhisperSettings) -> None:
        self.settings = settings
        self.name = Path(settings.model).name or settings.model
        self.crashes = 0
        self.hotwords = settings.hotwords
        self._proc: WorkerProcess | None = None
        self._start()

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect from the next recognition on (they go with each call: a restarted
        worker has them too)."""
        self.hotwords = hotwords

    def _start(self) -> None:
        proc = WorkerProcess(SERVICE)
        try:
            info = proc.start(self.settings)
        except WorkerCrashed as e:
            proc.close()
            raise AsrError(f"{self.name}: CTranslate2 crashed loading it ({e.reason})") from None
        except RemoteError as e:
            proc.close()
            raise AsrError(naming(self.name, str(e))) from None
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
        self,
        audio: Samples,
        *,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        rank_languages: bool = False,
    ) -> Hypothesis:
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        hyp: Hypothesis = self._call(
            "transcribe", samples, t0, prompt, language, prefix, self.hotwords, rank_languages
        )
        return hyp

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        ranked: tuple[tuple[str, float], ...] = self._call("rank_languages", samples)
        return ranked

    def _call(self, op: str, samples: Samples, *args: Any) -> Any:
        """``op`` on ``samples`` in the worker; a crash (or no answer by HUNG_S: a hung
        engine, ended) costs this call (AsrError). A model that cannot be loaded again after
        one is lost for the meeting (EngineLost): the recognitions after it would each load
        it and fail."""
        if self._proc is None:  # crashed last time: a fresh process, the same model
            try:
                self._start()
            except AsrError as e:
                raise EngineLost(
                    f"the speech model cannot be loaded again after CTranslate2 crashed: {e}"
                ) from None
        assert self._proc is not None
        try:
            return self._proc.call(op, samples, *args, deadline_s=HUNG_S)
        except WorkerCrashed as e:
            self._proc.close()
            self._proc = None
            self.crashes += 1
            raise AsrError(
                f"CTranslate2 crashed on a {len(samples) / 16000:.1f} s window ({e.reason}); "
                "loading the speech model again"
            ) from None

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


class WhisperService:
    """Child side: the faster-whisper backend."""

    OPS = ("init", "transcribe", "rank_languages")
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
        rank_languages: bool = False,
    ) -> Hypothesis:
        self.backend.set_hotwords(hotwords)
        hyp: Hypothesis = self.backend.transcribe(
            audio,
            t0=t0,
            prompt=prompt,
            language=language,
            prefix=prefix,
            rank_languages=rank_languages,
        )
        return hyp

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        ranked: tuple[tuple[str, float], ...] = self.backend.rank_languages(audio)
        return ranked

    def close(self) -> None:
        self.backend = None


def whisper_first_load_test(whisper: WorkerWhisper) -> str:
    """A speech model's real test when the pipeline loads it: the self-test's clip of speech
    (1.9 s) recognised once. Costs one recognition of that clip before the first (tiny.en:
    about 0.1 s). Returns the notice for weights that look damaged ("" when they do not); a
    failed or crashed recognition is left to the first real one to report."""
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


def probe_whisper(path: Path) -> None:
    """A Whisper folder's real test in a worker process (the fixed clip of speech); raises
    with one line naming it: ModelCrashed when CTranslate2 died, ModelDamaged when it
    recognises nothing of the clip, else what the engine said."""
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
