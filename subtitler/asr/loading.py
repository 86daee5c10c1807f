"""Recognisers made from the settings: the one place a speech model is found and loaded."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from subtitler.asr.backend import AsrBackend, AsrError
from subtitler.asr.engine import Recognizer
from subtitler.asr.faster_whisper import FasterWhisperBackend, WhisperSettings, silero_session
from subtitler.asr.isolated import WorkerWhisper, whisper_first_load_test
from subtitler.asr.shared import SharedBackends
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import SileroStream
from subtitler.config import AsrConfig
from subtitler.models import hardware
from subtitler.models.catalog import load_catalog
from subtitler.models.resolve import asr_state, said_of


def load_recognizer(
    cfg: AsrConfig,
    *,
    isolate: bool = True,
    max_new_tokens: int | None = None,
    shared: SharedBackends | None = None,
) -> Recognizer:
    """The streaming recogniser the settings ask for, its model found (a catalog id, a size
    name or a folder) and checked (present, fits in memory) with one-line reasons.

    ``isolate``: faster-whisper runs in a worker process, where a crash of CTranslate2 is a
    message rather than the end of the app, and the loaded weights get their real test.
    ``max_new_tokens``: a cap on the tokens of one recognition (None: Whisper's own; the
    self-test's model has random weights, which may never write an end). ``shared``: the
    models loaded for other recognisers, one of which this one uses if it has the same
    settings (the two inputs of a meeting) rather than loading a second copy.
    """
    opts = StreamingOptions.from_config(cfg)
    st = asr_state(cfg.model, load_catalog())
    if st.state == "invalid":
        raise RuntimeError(said_of("speech model", st.reason))
    if st.state == "missing":
        # Not fetched here: downloads go through the verified downloader, when asked for.
        # Said for the app's users (what to click); the command line's is `models download`.
        how = "click Download in Models (tray menu), or " if st.entry else ""
        raise AsrError(f"speech model {st.reason}: {how}choose a model folder in Settings")
    model = str(st.path) if st.path is not None else cfg.model
    if st.state == "ready" and st.path is not None and st.path.is_dir():
        need = hardware.whisper_memory_needed(st.path, cfg.compute_type)
        hardware.check_fits([(st.path.name, need)], hardware.detect(probe_backends=False))
    settings = dataclasses.replace(
        WhisperSettings.from_config(dataclasses.replace(cfg, model=model)),
        max_new_tokens=max_new_tokens,
    )

    def load() -> tuple[AsrBackend, str]:
        if isolate:
            whisper = WorkerWhisper(settings)
            # Weights damaged where no check looks load and run: a clip of speech shows it.
            return whisper, whisper_first_load_test(whisper)
        return FasterWhisperBackend(settings), ""

    backend: AsrBackend
    if shared is not None:
        backend, notice = shared.get((settings, isolate), load)
    else:
        backend, notice = load()
    if cfg.language not in (None, "en") and not getattr(backend, "multilingual", True):
        # An English-only model (tiny.en) writes any speech as English words: say so rather
        # than show them (with meeting audio, the microphone's language may differ).
        only = (
            f"speech model {Path(model).name} recognises English only, not {cfg.language!r}: "
            "choose a multilingual speech model in Settings → Speech"
        )
        notice = f"{notice}; {only}" if notice else only
    vad = SileroStream(silero_session()) if cfg.vad else None
    # (a meeting's recognitions are not kept one by one: hours of them added up)
    return StreamingRecognizer(backend, opts, vad=vad, notice=notice, keep_runs=False)
