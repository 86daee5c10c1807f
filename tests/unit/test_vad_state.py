"""SileroStream's rule for its recurrent state, with a stand-in model that reports how many
frames its state has heard: never more than STATE_S worth, never less than STATE_S * (1 - 1/K)
once the stream is that long, whatever the blocks; and the detector that reads its output."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from subtitler.asr.vad import (
    FRAME,
    FRAME_S,
    LIFT_DB,
    LIFT_SPEECH,
    NARROW_SCALE,
    STATE_S,
    STATES,
    SileroStream,
    UtteranceDetector,
    VadOptions,
)


class CountingModel:
    """Like Silero's ONNX session, but its "probability" is the number of frames its state
    has seen (the state carries the count)."""

    def run(self, _outputs: Any, feeds: dict[str, Any]) -> list[Any]:
        heard = float(feeds["h"][0, 0, 0])
        n = len(feeds["input"])
        assert feeds["input"].shape == (n, FRAME + 64)
        out = (heard + 1 + np.arange(n, dtype=np.float32)).reshape(n, 1)
        h = np.full_like(feeds["h"], heard + n)
        return [out, h, feeds["c"]]


@pytest.mark.parametrize("block", [1600, 512, 333, 16000 * 5])
def test_the_state_is_never_older_than_state_s(block: int) -> None:
    period = round(STATE_S / FRAME_S)
    audio = np.zeros(16000 * 20, np.float32)
    vad = SileroStream(CountingModel())
    heard = np.concatenate([vad(audio[i : i + block]) for i in range(0, len(audio), block)])
    first = heard[:period]
    np.testing.assert_array_equal(first, np.arange(1, period + 1))  # one state, from frame 0
    later = heard[period:]
    assert later.max() <= period
    assert later.min() >= period - math.ceil(period / STATES)


def test_without_a_limit_the_state_runs_through_the_stream() -> None:
    vad = SileroStream(CountingModel(), state_s=None)
    heard = np.concatenate([vad(np.zeros(16000, np.float32)) for _ in range(20)])
    np.testing.assert_array_equal(heard, np.arange(1, len(heard) + 1))


def test_reset_starts_every_state_afresh() -> None:
    vad = SileroStream(CountingModel())
    vad(np.zeros(16000 * 10, np.float32))
    vad.reset()
    np.testing.assert_array_equal(vad(np.zeros(FRAME * 3, np.float32)), [1, 2, 3])


def test_the_detector_keeps_speech_and_the_frames_silero_doubts_apart() -> None:
    """Speech runs (0.5, held down to 0.35) and doubted runs (under speech, at or above 0.1:
    a drawled or soft voice), each on the stream clock; forgetting drops both."""
    det = UtteranceDetector(VadOptions(), origin=10.0)
    probs = np.array([0.05, 0.2, 0.3, 0.6, 0.4, 0.2, 0.05, 0.12, 0.0], dtype=np.float32)
    events = det.feed(probs)
    assert [(e.kind, round(e.t, 3)) for e in events] == [("start", 10.096)]
    f = FRAME_S
    assert det.spans == [pytest.approx((10 + 3 * f, 10 + 5 * f))]
    assert det.doubts == [
        pytest.approx((10 + f, 10 + 3 * f)),
        pytest.approx((10 + 5 * f, 10 + 6 * f)),
        pytest.approx((10 + 7 * f, 10 + 8 * f)),
    ]
    assert det.doubt_between(10.0, 10 + 9 * f) == pytest.approx(4 * f)
    assert det.speech_between(10.0, 10 + 9 * f) == pytest.approx(2 * f)
    det.forget_before(10 + 6.5 * f)
    assert det.spans == [] and det.doubts == [pytest.approx((10 + 7 * f, 10 + 8 * f))]


class LevelModel:
    """Like Silero's ONNX session, but a frame's "probability" is its RMS level over 0.1
    (no state)."""

    def run(self, _outputs: Any, feeds: dict[str, Any]) -> list[Any]:
        x = feeds["input"][:, 64:]
        p = np.minimum(1.0, np.sqrt(np.mean(x**2, axis=1)) / 0.1).astype(np.float32)
        return [p.reshape(-1, 1), feeds["h"], feeds["c"]]


def test_every_frame_is_also_heard_lifted_where_that_copy_hears_speech() -> None:
    """A frame scores the higher of the audio as it is and LIFT_DB louder (clipped), where
    the lifted copy reaches speech (LIFT_SPEECH); below that the audio as it is counts."""
    levels = [0.001, 0.01, 0.03, 0.2]  # RMS per frame
    audio = np.concatenate([np.full(FRAME, v, np.float32) for v in levels])
    lift = 10 ** (LIFT_DB / 20)
    raw = [v / 0.1 for v in levels[:3]] + [1.0]
    lifted = [min(1.0, v * lift / 0.1) for v in levels]
    expected = [max(r, q) if q >= LIFT_SPEECH else r for r, q in zip(raw, lifted, strict=True)]
    assert lifted[0] < LIFT_SPEECH <= lifted[1]  # (the levels straddle the bar)
    np.testing.assert_allclose(SileroStream(LevelModel())(audio), expected, rtol=1e-5)
    np.testing.assert_allclose(SileroStream(LevelModel(), lift_db=None)(audio), raw, rtol=1e-5)


def tone(hz: float, seconds: float, level: float = 0.05) -> np.ndarray:
    t = np.arange(round(seconds * 16000)) / 16000
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def scaled_to_speech(raw: np.ndarray) -> np.ndarray:
    """A narrow band's probabilities: 1 / NARROW_SCALE times higher (at most 1) where that
    reaches speech (LIFT_SPEECH), as they are elsewhere."""
    up = np.minimum(1.0, raw / NARROW_SCALE)
    return np.where(up >= LIFT_SPEECH, up, raw)


@pytest.mark.parametrize("block", [1600, 512, 333, 16000 * 5])
def test_a_narrow_band_is_scored_up_once_the_low_band_has_been_gone_for_state_s(
    block: int,
) -> None:
    """4 s with a 150 Hz fundamental, then 5 s of only its 1 kHz partial (a telephone line
    with nothing below 300 Hz), its last 2 s softer: a frame is scored up to speech once the
    last STATE_S seconds, itself included, hold no low band; before that as it is."""
    wide = tone(150, 4) + tone(1000, 4)
    audio = np.concatenate([wide, tone(1000, 3), tone(1000, 2, level=0.02)])
    raw = SileroStream(LevelModel(), lift_db=None, narrow_scale=None)(audio)
    vad = SileroStream(LevelModel(), lift_db=None)
    got = np.concatenate([vad(audio[i : i + block]) for i in range(0, len(audio), block)])
    switch = len(wide) // FRAME  # the first frame of only 1 kHz (4 s = 125 frames exactly)
    settled = switch + round(STATE_S / FRAME_S) - 1
    expected = raw.copy()
    expected[settled:] = scaled_to_speech(raw[settled:])
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert raw[settled] < LIFT_SPEECH <= got[settled]  # (a change to see)
    assert got[-1] == raw[-1] > 0  # the softer tone does not reach speech scaled


def test_a_stream_narrow_from_its_first_frame_is_scored_up_from_it() -> None:
    """Before the stream, and in digital silence, there is no low band to wait for."""
    audio = np.concatenate([np.zeros(FRAME * 4, np.float32), tone(1000, 1)])
    raw = SileroStream(LevelModel(), lift_db=None, narrow_scale=None)(audio)
    got = SileroStream(LevelModel(), lift_db=None)(audio)
    np.testing.assert_allclose(got, scaled_to_speech(raw), rtol=1e-6)
    assert raw[4] < LIFT_SPEECH <= got[4]
