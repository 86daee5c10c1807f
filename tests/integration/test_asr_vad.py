"""Real Silero VAD (bundled with faster-whisper) on real LJSpeech speech."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.backend import Hypothesis, Samples
from subtitler.asr.faster_whisper import decode_audio_file, silero_session
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import STATE_S, SileroStream, find_utterances
from subtitler_research.asr.replay import blocks_of

DATA = Path(__file__).resolve().parents[1] / "data"
CLIPS = [DATA / f"{n}.flac" for n in ("LJ001-0002", "LJ001-0008", "LJ001-0013")]
GAPS = [1.0, 1.5, 1.2, 1.0]  # silence before, between and after the clips


@pytest.fixture(scope="module")
def talk() -> tuple[Samples, list[tuple[float, float]]]:
    """The clips joined with silences, and where each clip lies (s)."""
    parts, truth, t = [], [], 0.0
    for gap, clip in zip(GAPS, [*CLIPS, None], strict=True):
        parts.append(np.zeros(round(gap * 16000), np.float32))
        t += gap
        if clip is not None:
            audio = decode_audio_file(clip)
            parts.append(audio)
            truth.append((t, t + len(audio) / 16000))
            t += len(audio) / 16000
    return np.concatenate(parts), truth


def test_utterances_found_within_300_ms(talk: tuple[Samples, list[tuple[float, float]]]) -> None:
    audio, truth = talk
    found = find_utterances(SileroStream(silero_session()), audio)
    assert len(found) == 3
    for (s, e), (ts, te) in zip(found, truth, strict=True):
        assert abs(s - ts) <= 0.3 and abs(e - te) <= 0.3


@pytest.mark.parametrize("block", [1600, 999, 512 * 7 + 5])
def test_streaming_probabilities_do_not_depend_on_block_size(
    talk: tuple[Samples, list[tuple[float, float]]], block: int
) -> None:
    """Across the state's restarts too (every STATE_S / STATES seconds one copy restarts)."""
    audio = talk[0]
    assert len(audio) > 2 * STATE_S * 16000
    whole = SileroStream(silero_session())(audio)
    s = SileroStream(silero_session())
    pieces = np.concatenate([s(audio[i : i + block]) for i in range(0, len(audio), block)])
    assert len(whole) == len(audio) // 512
    np.testing.assert_array_equal(whole, pieces)


class Recorder:
    """A backend that records the windows it is given and hears nothing."""

    def __init__(self) -> None:
        self.windows: list[tuple[float, float]] = []

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
        self.windows.append((t0, t0 + len(audio) / 16000))
        return Hypothesis((), "en")

    def set_hotwords(self, hotwords: str) -> None:
        """It hears nothing, expected or not."""

    def close(self) -> None:
        """Nothing to release."""


def test_policy_recognises_only_speech(talk: tuple[Samples, list[tuple[float, float]]]) -> None:
    audio, truth = talk
    be = Recorder()
    opt = StreamingOptions(silence_end_s=0.8, speech_pad_s=0.2)
    rec = StreamingRecognizer(be, opt, SileroStream(silero_session()))
    for b in blocks_of(audio, 100):
        rec.insert_audio(b)
        rec.process(b.t0 + b.duration)
    rec.finish(len(audio) / 16000)
    finals = [r for r in rec.runs if r.final]
    assert len(finals) == 3  # one closing pass per utterance
    for (t0, t1), (ts, te) in zip(
        [w for w, r in zip(be.windows, rec.runs, strict=True) if r.final], truth, strict=True
    ):
        # Each closing pass covers its clip (plus padding) and none of the other clips.
        assert ts - 0.5 <= t0 <= ts and te - 0.3 <= t1 <= te + 0.5
    speech = sum(e - s for s, e in truth)
    assert sum(r.window_s for r in finals) < speech + 3 * 0.8  # silence was skipped
