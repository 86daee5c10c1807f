"""A streaming run of real speech on a steady clock: every recogniser call costs 50 ms, so the
cadence, what audio each call hears and so the words do not depend on how busy the test
machine is (on the wall clock's compute time a busy machine once moved a word out of its clip).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from subtitler.asr.backend import AsrBackend
from subtitler.asr.faster_whisper import silero_session
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import SileroStream
from subtitler.types import AsrUpdate, Word
from subtitler_research.asr.replay import SteadyClock, blocks_of, simulate


@dataclass
class SteadyReplay:
    updates: list[AsrUpdate]
    rec: StreamingRecognizer

    @property
    def committed_words(self) -> list[Word]:
        """The words of the finished segments, in order."""
        return [w for u in self.updates if u.final for w in u.committed_words]


def steady_replay(backend: AsrBackend, audio: npt.NDArray[np.float32]) -> SteadyReplay:
    """``audio`` played at 1x in English through the streaming recogniser with Silero."""
    clock = SteadyClock(0.05)
    rec = StreamingRecognizer(
        clock.wrap(backend), StreamingOptions(language="en"), SileroStream(silero_session()), clock
    )
    return SteadyReplay(simulate(blocks_of(audio, 100), rec, clock).updates, rec)
