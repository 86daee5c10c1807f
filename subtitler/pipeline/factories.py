"""The real parts of the pipeline: sound card or file, faster-whisper, llama.cpp.

Other parts (the research oracle) plug in by building their own :class:`Factories` around
these (see ``subtitler_research.pipeline.oracle``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from subtitler.asr.loading import load_recognizer
from subtitler.asr.shared import SharedBackends
from subtitler.audio.inputs import open_audio
from subtitler.mt.loading import load_any_translator
from subtitler.pipeline.pipeline import Factories

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
    # The speech models loaded now: recognisers with the same settings (the two inputs of a
    # meeting, a recogniser swapped in) share one copy.
    shared: SharedBackends = field(default_factory=SharedBackends)


def real_factories(parts: RealParts | None = None) -> Factories:
    p = parts or RealParts()
    return Factories(
        audio=lambda cfg, clock: open_audio(
            cfg, clock, sounddevice=p.sounddevice, loop=p.loop, loop_gap_s=p.loop_gap_s
        ),
        recognizer=lambda cfg: load_recognizer(
            cfg, isolate=p.isolate, max_new_tokens=p.asr_max_new_tokens, shared=p.shared
        ),
        model=lambda mt: load_any_translator(mt, p.isolate),
    )
