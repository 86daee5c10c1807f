"""The real parts of the pipeline: sound card or file, faster-whisper, llama.cpp.

Other parts (the research oracle) plug in by building their own :class:`Factories` around
these (see ``subtitler_research.pipeline.oracle``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from subtitler.asr.loading import load_recognizer
from subtitler.audio.inputs import open_audio
from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel
from subtitler.mt.engine import Engine
from subtitler.mt.lm import LanguageModel
from subtitler.pipeline.pipeline import Factories
from subtitler.pipeline.stages import LoadedModel

if TYPE_CHECKING:
    from subtitler.mt.llama_backend import LlamaLM

log = logging.getLogger(__name__)


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
        audio=lambda cfg, clock: open_audio(
            cfg, clock, sounddevice=p.sounddevice, loop=p.loop, loop_gap_s=p.loop_gap_s
        ),
        recognizer=lambda cfg: load_recognizer(
            cfg, isolate=p.isolate, max_new_tokens=p.asr_max_new_tokens
        ),
        model=lambda mt: load_any_translator(mt, p.isolate),
    )
