"""Voice activity: streaming Silero probabilities and an utterance detector over them.

Silero's ONNX model ships inside faster-whisper; ``subtitler.asr.faster_whisper.silero_session``
loads it (that module is the only one importing faster_whisper). The detector is pure: it turns
per-frame speech probabilities into utterance start/end times on the stream clock.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from subtitler.asr.backend import SAMPLE_RATE, Samples

FRAME = 512  # Silero v5/v6 window at 16 kHz (32 ms)
_CONTEXT = 64  # samples of the previous window the model sees in front of each window
FRAME_S = FRAME / SAMPLE_RATE


class SpeechProbabilities(Protocol):
    """Streaming speech probability per complete 512-sample frame; partial frames are kept."""

    def __call__(self, samples: Samples) -> npt.NDArray[np.float32]: ...

    def reset(self) -> None: ...


# Silero's state is restarted by the clock (SileroStream): no probability depends on audio
# more than STATE_S before it, and each comes from a state that has heard at least
# STATE_S * (1 - 1 / STATES) of it. Chosen on real speech (docs/benchmarks/asr.md, "Speech
# detection", python -m subtitler_research.asr.vad_bench): 3 s and 3 copies marked 90% and 94%
# of a new speaker's speech frames in the first second after another recording (23% and 0%
# with the state carried) and 98.3% of the development set's (1 s states: 95.3%); longer
# states recovered later. The price: in noise the probabilities rise (highest 0.39 instead of
# 0.05 in a minute of silence and noise, still below 0.5).
STATE_S = 3.0
STATES = 3
# Silero hears soft speech late or not at all (snakers4/silero-vad#665): the MFA speaker with
# a cold, recorded at -23 dBFS, had 77% of its speech frames marked as recorded, 31% played
# 10 dB softer, 3% 20 dB softer, and 9 and 0 of its 27 words were recognised. So every frame
# is also scored LIFT_DB louder (clipped) and the higher probability counts; no level is
# carried from one frame to the next, so a soft voice after a loud one is heard from its
# first frame. On the tune split, its speech frames played 20 dB softer: 92% marked, 98%
# lifted 12 or 18 dB (docs/benchmarks/asr.md, session O); 18 dB heard more of the
# MFA speaker 20 dB softer. Lifted noise scores 0.35-0.45, where the detector's hysteresis
# would hold an utterance open: below LIFT_SPEECH the lifted copy counts for nothing. What
# lifted noise still starts is left to Whisper's no-speech probability (faster_whisper.py).
LIFT_DB = 18.0
LIFT_SPEECH = 0.5
# Silero doubts a voice without its fundamental: through a line with nothing below 300 Hz it
# scored speech 0.1-0.45 where it scored 0.9, and 27% of the tune split's English speech
# frames were not heard (docs/benchmarks/asr.md, session P). Where the last STATE_S seconds
# hold less than NARROW_RATIO as much energy at 60-250 Hz as at 300-3400 Hz, the input has no
# low band, and a frame's probability is divided by NARROW_SCALE where that reaches speech
# (LIFT_SPEECH; scaled throughout, the pauses of a read passage held utterances open). Over
# 3 s the development set's recordings never came below 0.023 (0.007 with a 150 Hz high-pass);
# through a band cut sharply at 300 Hz always below 0.0006; through a 6th-order telephone
# band-pass, which Silero hears well, below 0.01 78% of the time and below 0.001 20%: scored
# up at 0.01, it cost words there (session Q).
NARROW_RATIO = 0.001
NARROW_SCALE = 0.5
_HZ = np.fft.rfftfreq(FRAME, 1 / SAMPLE_RATE)
_LOW = (_HZ >= 60) & (_HZ < 250)
_MID = (_HZ >= 300) & (_HZ < 3400)
_HANN = np.hanning(FRAME)


class SileroStream:
    """Silero VAD run incrementally, with a recurrent state never older than ``state_s``.

    The LSTM state adapts to the voice, microphone and level it has heard: carried through a
    long stream, after a minute of one reader it scored another speaker on another microphone
    0.13 on average where the same clip alone scores 0.46, for as long as that speaker spoke.
    The official usage restarts the state per file (faster-whisper's get_speech_timestamps,
    silero-vad's reset_states()); a live stream has no files, so the state is restarted by the
    clock: ``states`` copies run side by side, each restarted every ``state_s`` seconds,
    staggered by ``state_s / states``, and a frame's probability is that of the copy that has
    run longest. In the first ``state_s`` seconds that is the first copy, never restarted:
    Silero as faster-whisper runs it on a file; ``state_s=None`` runs it so throughout (one
    recording, as the talk builder reads each clip). Every frame is also scored ``lift_db``
    louder, by copies of its own (LIFT_DB; ``None``: as recorded only), and scaled up to speech
    where the input has had no low band for STATE_S seconds (NARROW_SCALE; ``None``: never).
    Probabilities do not depend on how the audio is cut into blocks (checked bit-exact).
    """

    def __init__(
        self,
        session: Any,
        state_s: float | None = STATE_S,
        states: int = STATES,
        lift_db: float | None = LIFT_DB,
        narrow_scale: float | None = NARROW_SCALE,
    ) -> None:
        self._session = session  # onnxruntime.InferenceSession of silero_vad_v6.onnx
        # Frames between restarts of a copy (never: more frames than any stream has).
        self._period = max(1, round(state_s / FRAME_S)) if state_s is not None else 1 << 62
        self._offsets = [k * self._period // states for k in range(states if state_s else 1)]
        # The gains each frame is scored at (the audio as it is, and lifted).
        self._gains = [1.0] + ([10 ** (lift_db / 20)] if lift_db else [])
        self._narrow_scale = narrow_scale
        self._band_frames = round(STATE_S / FRAME_S)  # the span the band is judged over
        self.reset()

    @classmethod
    def on_a_file(cls, session: Any) -> SileroStream:
        """Silero as faster-whisper runs it on one recording: one state from its first frame,
        the audio as it is (no lift, no narrow band's scale)."""
        return cls(session, state_s=None, lift_db=None, narrow_scale=None)

    def reset(self) -> None:
        n = len(self._offsets) * len(self._gains)
        self._h = [np.zeros((1, 1, 128), dtype=np.float32) for _ in range(n)]
        self._c = [np.zeros((1, 1, 128), dtype=np.float32) for _ in range(n)]
        self._context = np.zeros(_CONTEXT, dtype=np.float32)
        self._rest = np.zeros(0, dtype=np.float32)
        self._frames = 0  # frames seen since the stream started
        # Energy at 60-250 Hz and 300-3400 Hz of the frames before (zeros before the stream).
        self._band = np.zeros((self._band_frames - 1, 2))

    def _ages(self, first: int, n: int) -> npt.NDArray[np.int64]:
        """Frames each copy has run at frames first..first+n-1 (copies x frames)."""
        g = first + np.arange(n)
        out = np.empty((len(self._offsets), n), dtype=np.int64)
        for k, off in enumerate(self._offsets):
            # A copy restarts at off, off + period, ...; before its first restart it has run
            # since frame 0.
            out[k] = np.where(g >= off, (g - off) % self._period, g) if off else g % self._period
        return out

    def __call__(self, samples: Samples) -> npt.NDArray[np.float32]:
        audio = np.concatenate([self._rest, np.asarray(samples, dtype=np.float32)])
        n = len(audio) // FRAME
        self._rest = audio[n * FRAME :]
        if n == 0:
            return np.zeros(0, dtype=np.float32)
        windows = audio[: n * FRAME].reshape(n, FRAME)
        contexts = np.concatenate([self._context[None, :], windows[:-1, -_CONTEXT:]], axis=0)
        batch = np.concatenate([contexts, windows], axis=1)
        ages = self._ages(self._frames, n)
        copies = len(self._offsets)
        # Where each copy runs from: the block's start and its restarts inside the block.
        runs = [
            list(itertools.pairwise([0, *(int(i) for i in np.flatnonzero(age == 0) if i > 0), n]))
            for age in ages
        ]
        probs = np.zeros_like(ages, dtype=np.float32)
        for g, gain in enumerate(self._gains):
            heard = np.clip(batch * gain, -1.0, 1.0) if g else batch  # (g 0: as recorded)
            for k in range(copies):
                s = g * copies + k  # this copy's state at this gain
                for a, b in runs[k]:
                    if ages[k, a] == 0 and self._frames + a > 0:  # restart (frame 0 is fresh)
                        self._h[s] = np.zeros_like(self._h[s])
                        self._c[s] = np.zeros_like(self._c[s])
                    out, self._h[s], self._c[s] = self._session.run(
                        None, {"input": heard[a:b], "h": self._h[s], "c": self._c[s]}
                    )
                    p = np.asarray(out, dtype=np.float32).reshape(-1)
                    if g:  # the lifted copy counts only where it hears speech
                        p = np.where(p >= LIFT_SPEECH, p, 0.0).astype(np.float32)
                    probs[k, a:b] = np.maximum(probs[k, a:b], p)
        self._context = windows[-1, -_CONTEXT:].copy()
        self._frames += n
        oldest: npt.NDArray[np.float32] = probs[np.argmax(ages, axis=0), np.arange(n)]
        if self._narrow_scale is None:
            return oldest
        narrow = self._narrow(windows)
        scaled = np.minimum(1.0, oldest / np.float32(self._narrow_scale))
        # Like the lifted copy, a scaled frame counts only where it reaches speech.
        return np.where(narrow & (scaled >= LIFT_SPEECH), scaled, oldest).astype(np.float32)

    def _narrow(self, windows: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
        """Per frame: have the last STATE_S seconds (this frame included) a narrow band?"""
        spec = np.abs(np.fft.rfft(windows.astype(np.float64) * _HANN, axis=1)) ** 2
        band = np.stack([spec[:, _LOW].sum(axis=1), spec[:, _MID].sum(axis=1)], axis=1)
        seen = np.concatenate([self._band, band])
        self._band = seen[len(seen) - len(self._band) :]
        low, mid = sliding_window_view(seen, self._band_frames, axis=0).sum(axis=-1).T
        narrow: npt.NDArray[np.bool_] = low < NARROW_RATIO * mid
        return narrow


@dataclass(frozen=True)
class VadOptions:
    """Thresholds of the utterance detector (Silero's recommended hysteresis)."""

    threshold: float = 0.5  # a frame at or above this is speech
    neg_threshold: float = 0.35  # below this it is silence; in between keeps the current state
    silence_end_s: float = 0.8  # silence after the last speech frame that ends an utterance
    min_speech_s: float = 0.25  # shorter utterances are reported as too short (clicks, coughs)
    # Below speech, at or above this: a voice Silero doubts (a drawled or soft span of
    # spontaneous speech scores 0.1-0.45); the silence between read sentences scores
    # 0.02-0.05 (docs/benchmarks/asr.md, session N).
    doubt_threshold: float = 0.1


@dataclass(frozen=True)
class VadEvent:
    kind: str  # "start" | "end"
    t: float  # speech start, or end of the last speech frame (stream clock, s)
    short: bool = False  # an "end" whose utterance was shorter than min_speech_s


@dataclass
class UtteranceDetector:
    """Frame probabilities in, utterance boundaries out. Pure: time is the frame index."""

    options: VadOptions = field(default_factory=VadOptions)
    origin: float = 0.0  # stream time of frame 0
    _frames: int = 0
    _speaking: bool = False
    _prev_speech: bool = False
    _start: float = 0.0
    _last_speech_end: float = 0.0
    # Runs of speech frames (start, end) on the stream clock, for the recogniser to check
    # that a word lies where someone spoke; the owner drops the ones it no longer needs.
    spans: list[tuple[float, float]] = field(default_factory=list)
    # Runs of frames Silero doubts (not speech, at or above doubt_threshold), likewise.
    doubts: list[tuple[float, float]] = field(default_factory=list)

    @property
    def speaking(self) -> bool:
        return self._speaking

    @property
    def time(self) -> float:
        """Stream time up to which probabilities have been seen."""
        return self.origin + self._frames * FRAME_S

    def restart(self, origin: float) -> None:
        """Forget everything; frame 0 is now at ``origin`` (after a gap in the stream)."""
        self.origin, self._frames = origin, 0
        self._speaking = self._prev_speech = False

    def feed(self, probs: npt.NDArray[np.float32]) -> list[VadEvent]:
        o = self.options
        events: list[VadEvent] = []
        for p in probs.tolist():
            t = self.origin + self._frames * FRAME_S
            self._frames += 1
            speech = p >= o.threshold or (self._prev_speech and p >= o.neg_threshold)
            self._prev_speech = speech
            if speech or p >= o.doubt_threshold:
                _extend(self.spans if speech else self.doubts, t)
            if speech:
                if not self._speaking:
                    self._speaking, self._start = True, t
                    events.append(VadEvent("start", t))
                self._last_speech_end = t + FRAME_S
            elif self._speaking and t + FRAME_S - self._last_speech_end >= o.silence_end_s:
                self._speaking = False
                short = self._last_speech_end - self._start < o.min_speech_s
                events.append(VadEvent("end", self._last_speech_end, short))
        return events

    def speech_between(self, t0: float, t1: float) -> float:
        """Seconds of speech frames between ``t0`` and ``t1``."""
        return _overlap(self.spans, t0, t1)

    def doubt_between(self, t0: float, t1: float) -> float:
        """Seconds of doubted frames (not speech, at or above doubt_threshold) between
        ``t0`` and ``t1``."""
        return _overlap(self.doubts, t0, t1)

    def forget_before(self, t: float) -> None:
        """Drop speech and doubted runs that ended before ``t``."""
        for runs in (self.spans, self.doubts):
            k = 0
            while k < len(runs) and runs[k][1] < t:
                k += 1
            del runs[:k]

    def close(self) -> list[VadEvent]:
        """End of stream: close an open utterance at its last speech frame."""
        if not self._speaking:
            return []
        self._speaking = self._prev_speech = False
        short = self._last_speech_end - self._start < self.options.min_speech_s
        return [VadEvent("end", self._last_speech_end, short)]


def _extend(runs: list[tuple[float, float]], t: float) -> None:
    """Add the frame at ``t`` to ``runs`` (joined to the last run if it touches it)."""
    if runs and runs[-1][1] >= t - 1e-6:
        runs[-1] = (runs[-1][0], t + FRAME_S)
    else:
        runs.append((t, t + FRAME_S))


def _overlap(runs: list[tuple[float, float]], t0: float, t1: float) -> float:
    return sum(max(0.0, min(e, t1) - max(s, t0)) for s, e in runs)


def find_utterances(
    probs_source: SpeechProbabilities, audio: Samples, options: VadOptions | None = None
) -> list[tuple[float, float]]:
    """Utterances (start, end) in a whole recording, skipping ones shorter than min_speech_s."""
    det = UtteranceDetector(options or VadOptions())
    events = det.feed(probs_source(audio)) + det.close()
    out: list[tuple[float, float]] = []
    start = 0.0
    for ev in events:
        if ev.kind == "start":
            start = ev.t
        elif not ev.short:
            out.append((start, ev.t))
    return out
