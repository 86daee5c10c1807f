"""The real parts of the pipeline: sound card or file, faster-whisper, llama.cpp.

Other parts (the research oracle) plug in by building their own :class:`Factories` around
these (see ``subtitler_research.pipeline.oracle``)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from subtitler.config import AsrConfig, AudioConfig, MtConfig
from subtitler.mt.drafting import DraftModel
from subtitler.mt.engine import Engine
from subtitler.mt.lm import LanguageModel
from subtitler.pipeline.pipeline import Factories
from subtitler.pipeline.stages import AudioSource, LoadedModel, Recognizer
from subtitler.types import AudioBlock

if TYPE_CHECKING:
    from subtitler.mt.llama_backend import LlamaLM

log = logging.getLogger(__name__)
RATE = 16000


class PacedFileSource:
    """A recording released block by block on the pipeline's stream clock.

    Pacing by the stream clock (not the wall clock) makes pause and replay speed work: a block
    is released once the clock has passed its end. The blocks come from an iterable (a file
    decoded as it plays, see :class:`subtitler.audio.sources.AudioStream`) or an array.
    """

    def __init__(
        self,
        audio: np.ndarray | Iterable[np.ndarray],
        clock: Callable[[], float],
        *,
        realtime: bool = True,
        block_ms: int = 100,
    ) -> None:
        from subtitler.audio.sources import rechunk

        self.clock = clock
        self.realtime = realtime
        self.n = max(1, RATE * block_ms // 1000)
        chunks = [audio] if isinstance(audio, np.ndarray) else audio
        self._blocks = rechunk((np.asarray(c, dtype=np.float32) for c in chunks), self.n)
        self._next: np.ndarray | None = None
        self._ended = False
        self.pos = 0
        self.running = False
        self.dropped = 0
        self.level = 0.0
        self._origin: float | None = None

    def _peek(self) -> np.ndarray | None:
        if self._next is None and not self._ended:
            self._next = next(self._blocks, None)
            self._ended = self._next is None
        return self._next

    @property
    def exhausted(self) -> bool:
        return self._peek() is None

    problem = ""  # a file cannot go away
    live = False

    def start(self) -> None:
        if self._origin is None:
            self._origin = self.clock()
        self.running = True

    def stop(self) -> None:
        self.running = False

    def read(self, timeout: float) -> AudioBlock | None:
        import time

        chunk = self._peek() if self.running else None
        if chunk is None:
            time.sleep(min(timeout, 0.02))
            return None
        t0 = self.pos / RATE
        if self.realtime:
            assert self._origin is not None
            due = self._origin + t0 + len(chunk) / RATE
            wait = due - self.clock()
            if wait > 0:
                # The stream clock may run faster than the wall clock (speed > 1).
                speed = getattr(self.clock, "speed", 1.0)
                time.sleep(min(timeout, wait / speed))
                if self.clock() < due:
                    return None
        self._next = None
        self.pos += len(chunk)
        self.level = float(np.sqrt(np.mean(chunk**2))) if len(chunk) else 0.0
        return AudioBlock(chunk, t0, RATE)


class MeteredMicrophone:
    """The microphone capture with the level the UI meter wants (linear RMS, 0..1)."""

    def __init__(self, capture: Any) -> None:
        self.capture = capture
        self.exhausted = False

    @property
    def dropped(self) -> int:
        return int(self.capture.dropped)

    @property
    def level(self) -> float:
        return float(10 ** (self.capture.level / 20)) if self.capture.level > -100 else 0.0

    live = True

    @property
    def problem(self) -> str:
        return str(self.capture.error) if self.capture.state == "lost" else ""

    def start(self) -> None:
        self.capture.start()

    def stop(self) -> None:
        self.capture.stop()

    def read(self, timeout: float) -> AudioBlock | None:
        block: AudioBlock | None = self.capture.read(timeout)
        return block


@dataclass
class RealParts:
    """Options of the real factories (replay file, injected modules)."""

    sounddevice: Any = None  # injected module (tests)
    loop: int = 1  # play the file this many times (long soak runs)
    loop_gap_s: float = 1.0  # silence between repetitions
    # Native engines (llama.cpp, CTranslate2) in worker processes, where a crash on a bad
    # file or input is a message rather than the end of the app. False: in this process.
    isolate: bool = True
    # A cap on the tokens of one recognition (None: Whisper's own): the self-test's model has
    # random weights, which may never write an end.
    asr_max_new_tokens: int | None = None


def make_audio(cfg: AudioConfig, clock: Callable[[], float], parts: RealParts) -> AudioSource:
    from subtitler.audio.sources import AudioStream

    n = max(1, RATE * cfg.block_ms // 1000)
    if cfg.source == "file":
        # Decoded as it plays (memory flat in the file's length), ``loop`` times over.
        stream = AudioStream(cfg.file_path, n, loop=parts.loop, gap_s=parts.loop_gap_s)
        return PacedFileSource(stream, clock, realtime=cfg.realtime, block_ms=cfg.block_ms)
    from subtitler.audio.capture import MicrophoneCapture

    # One stream clock: the microphone times a re-opened input on the pipeline's clock.
    return MeteredMicrophone(MicrophoneCapture(cfg, sd=parts.sounddevice, clock=clock))


def make_recognizer(cfg: AsrConfig, parts: RealParts) -> Recognizer:
    from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer

    opts = StreamingOptions.from_config(cfg)
    from subtitler.asr.backend import AsrBackend, AsrError
    from subtitler.asr.faster_whisper import FasterWhisperBackend, WhisperSettings, silero_session
    from subtitler.asr.vad import SileroStream
    from subtitler.models.catalog import load_catalog
    from subtitler.models.resolve import asr_state

    st = asr_state(cfg.model, load_catalog())
    if st.state == "invalid":
        raise RuntimeError(f"speech model: {st.reason}")
    if st.state == "missing":
        # Not fetched here: downloads go through the verified downloader, when asked for.
        # Said for the app's users (what to click); the command line's is `models download`.
        how = "click Download in Models (tray menu), or " if st.entry else ""
        raise AsrError(f"speech model {st.reason}: {how}choose a model folder in Settings")
    model = str(st.path) if st.path is not None else cfg.model
    if st.state == "ready" and st.path is not None and st.path.is_dir():
        from subtitler.models import hardware

        need = hardware.whisper_memory_needed(st.path, cfg.compute_type)
        hardware.check_fits([(st.path.name, need)], hardware.detect(probe_backends=False))
    settings = dataclasses.replace(
        WhisperSettings.from_config(dataclasses.replace(cfg, model=model)),
        max_new_tokens=parts.asr_max_new_tokens,
    )
    backend: AsrBackend
    if parts.isolate:
        from subtitler.pipeline.engines import WorkerWhisper, whisper_first_load_test

        whisper = WorkerWhisper(settings)
        # Weights damaged where no check looks load and run: a clip of speech shows it.
        whisper.notice = whisper_first_load_test(whisper)
        backend = whisper
    else:
        backend = FasterWhisperBackend(settings)
    vad = SileroStream(silero_session()) if cfg.vad else None
    return StreamingRecognizer(backend, opts, vad=vad)


def resolve_translator(mt: MtConfig) -> tuple[Path, str]:
    """The file a catalog id or path names and the template asked for it, after the quick
    checks (present, complete GGUF, usable template); one-line reasons."""
    from subtitler.models.catalog import load_catalog
    from subtitler.models.resolve import mt_state

    st = mt_state(mt.model_path, mt.template, load_catalog())
    if st.state == "missing" and st.entry is not None:
        raise RuntimeError(
            f"{st.reason}: click Download in Models (tray menu), or "
            "choose a local .gguf in Settings"
        )
    if st.state != "ready" or st.path is None:
        raise RuntimeError(f"translation model: {st.reason}")
    template = mt.template
    if template == "auto" and st.entry is not None and st.entry.template:
        template = st.entry.template
    return st.path, template


def load_translator(mt: MtConfig) -> LoadedModel:
    """Resolve a catalog id or path, check the file (complete GGUF, usable template, fits in
    memory) with a one-line reason, then load it in this process."""
    from subtitler.mt.prompts import resolve_template

    path, template = resolve_translator(mt)
    lm = _load_gguf(path, mt)
    try:
        template = resolve_template(template, lm.metadata)
    except Exception:
        lm.close()
        raise
    log.info("translation model %s with the %r prompt", path.name, template)
    draft_lm, notice = None, ""
    if mt.draft_model_path.strip():
        try:
            draft_lm = load_draft_model(mt, lm)
        except DraftModelError as e:
            # Translation works without the draft model: say why it is not used and go on.
            log.warning("%s", e)
            notice = f"{e}; translating without it (Settings > Advanced > Draft model)"
    if draft_lm is None:
        return LoadedModel(lm, template, formatter=lm, close=lm.close, notice=notice)
    dlm = draft_lm

    def close_both() -> None:
        lm.close()
        dlm.close()

    return LoadedModel(lm, template, formatter=lm, close=close_both, draft=DraftModel(dlm))


def _load_gguf(path: Path, mt: MtConfig) -> LlamaLM:
    """Check the file (complete GGUF, fits in memory) with a one-line reason, then load it with
    the translation settings, its context clamped to what the model was trained for."""
    from subtitler.models import hardware
    from subtitler.models.validate import read_gguf
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    info = read_gguf(path)
    n_ctx = info.usable_context(mt.n_ctx)
    hw = hardware.detect(probe_backends=False)
    hardware.check_fits([(path.name, hardware.gguf_memory_for(info, n_ctx))], hw)
    return LlamaLM(LlamaSettings.from_config(mt, str(path), n_ctx))


class DraftModelError(RuntimeError):
    """The optional draft model cannot be used (the translator still can)."""


def load_draft_model(mt: MtConfig, target: LanguageModel) -> LlamaLM:
    """Load the optional draft model next to ``target``; a one-line reason if it cannot be
    used (missing, damaged, too big, or another vocabulary)."""
    from subtitler.models import hardware
    from subtitler.models.validate import InvalidModelError
    from subtitler.mt.drafting import VocabularyMismatchError, check_same_vocabulary
    from subtitler.mt.llama_backend import ModelLoadError

    path = Path(mt.draft_model_path.strip()).expanduser()
    try:
        lm = _load_gguf(path, mt)
    except (InvalidModelError, ModelLoadError, hardware.InsufficientMemoryError) as e:
        raise DraftModelError(f"draft model not used: {e}") from e
    try:
        check_same_vocabulary(target, lm)
    except VocabularyMismatchError as e:
        lm.close()
        raise DraftModelError(f"draft model {path.name} not used: {e}") from e
    log.info("draft model %s guesses %d tokens per pass", path.name, mt.draft_tokens)
    return lm


def load_translator_isolated(mt: MtConfig) -> Engine:
    """The translator in a worker process (quick checks here first: no process is started for
    a missing or truncated file), given its real test (engines.first_load_test); a crash of
    llama.cpp while loading is one line."""
    from subtitler.pipeline.engines import WorkerEngine, first_load_test

    path, _template = resolve_translator(mt)
    engine = WorkerEngine(mt, path)
    try:
        # Weights damaged where no check looks load and run: a fixed sentence shows it.
        damage = first_load_test(engine, mt)
    except BaseException:
        engine.close()
        raise
    if damage:
        log.warning("%s", damage)
        engine.notice = f"{engine.notice} {damage}".strip()
    return engine


def connect_translator(mt: MtConfig) -> Engine:
    """A translation server (Settings: Translate with = server): no native code runs here, so
    it needs no worker process. Connects and checks the model once; one-line reasons."""
    from subtitler.mt.remote import RemoteEngine

    if not mt.server_url.strip():
        raise RuntimeError("no translation server address: set one in Settings")
    return RemoteEngine(mt, connect_later=True)  # the app may start before the server


def load_any_translator(mt: MtConfig, isolate: bool) -> LoadedModel | Engine:
    if mt.uses_server:
        return connect_translator(mt)
    return load_translator_isolated(mt) if isolate else load_translator(mt)


def real_factories(parts: RealParts | None = None) -> Factories:
    p = parts or RealParts()
    return Factories(
        audio=lambda cfg, clock: make_audio(cfg, clock, p),
        recognizer=lambda cfg: make_recognizer(cfg, p),
        model=lambda mt: load_any_translator(mt, p.isolate),
    )
