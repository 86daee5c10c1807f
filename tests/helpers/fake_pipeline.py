"""Fakes for pipeline tests: an audio source, a scripted recogniser, a scripted translator LM."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from subtitler.config import MtConfig
from subtitler.mt.engine import LoadedModel, LocalEngine
from subtitler.types import SILENCE_DBFS, AsrUpdate, AudioBlock, Word
from tests.helpers.fake_lm import ScriptedLM, peaked


class FakeSource:
    """Silence in 100 ms blocks, ``seconds`` long, paced by ``speed`` (0 = as fast as read)."""

    def __init__(
        self,
        seconds: float,
        speed: float = 0.0,
        block_s: float = 0.1,
        live: bool = False,
        backlog: int = 0,
    ) -> None:
        self.live = live  # a microphone rather than a file
        # Blocks a live input has captured ahead of those read: after stop() read() still
        # hands them out, as the real capture's queue does.
        self.backlog = backlog
        self.held = 0  # read() hands out blocks up to this one while stopped
        self.n_blocks = round(seconds / block_s)
        self.block_s, self.speed = block_s, speed
        self.i = 0
        self.running = False
        self.dropped, self.level = 0, SILENCE_DBFS
        self.starts = 0
        self.problem = ""  # set by a test: the input is away (being retried)
        self.refuse_start = ""  # set by a test: start() fails with this message

    @property
    def exhausted(self) -> bool:
        return self.i >= self.n_blocks

    def start(self) -> None:
        if self.refuse_start:
            raise RuntimeError(self.refuse_start)
        self.running = True
        self.starts += 1

    def stop(self) -> None:
        if self.running and self.live:
            self.held = min(self.n_blocks, self.i + self.backlog)
        self.running = False

    def read(self, timeout: float) -> AudioBlock | None:
        if self.exhausted or not (self.running or self.i < self.held):
            time.sleep(min(timeout, 0.01))
            return None
        if self.speed and self.running:  # (what was captured before a stop is there at once)
            time.sleep(self.block_s / self.speed)
        b = AudioBlock(np.zeros(int(16000 * self.block_s), np.float32), self.i * self.block_s)
        self.i += 1
        return b


@dataclass
class Step:
    """After audio reaches ``at`` seconds, emit this segment state."""

    at: float
    segment_id: int
    words: Sequence[str]
    final: bool = False
    language: str | None = None  # what the recogniser says it heard


class ScriptedRecognizer:
    """Emits the scripted updates as audio time passes; words end 0.3 s apart (a
    ``subtitler.asr.engine.Recognizer``: every call that returns is a recognition)."""

    def __init__(self, steps: Sequence[Step], notice: str = "") -> None:
        self.steps = list(steps)
        self.t = 0.0
        self.finished = 0
        self.last: Step | None = None  # the newest emitted step
        self.notice = notice
        self.recognitions = 0
        self.hotwords: list[str] = []  # every set_hotwords, in order
        self.closed = False

    def set_hotwords(self, hotwords: str) -> None:
        self.hotwords.append(hotwords)

    def close(self) -> None:
        self.closed = True

    def _update(self, s: Step) -> AsrUpdate:
        words = tuple(
            Word(w, s.at - 0.3 * (len(s.words) - i), s.at - 0.3 * (len(s.words) - i - 1))
            for i, w in enumerate(s.words)
        )
        return AsrUpdate(
            s.segment_id,
            " ".join(s.words),
            "",
            s.final,
            0.0,
            s.at,
            s.at,
            committed_words=words,
            language=s.language,
        )

    def insert_audio(self, block: AudioBlock) -> None:
        self.t = block.t0 + block.duration

    def process(self, now: float = 0.0) -> list[AsrUpdate]:
        out = []
        while self.steps and self.steps[0].at <= self.t + 1e-9:
            self.last = self.steps.pop(0)
            out.append(self._update(self.last))
        self.recognitions += 1
        return out

    def finish(self, now: float = 0.0) -> list[AsrUpdate]:
        self.finished += 1
        out = [self._update(s) for s in self.steps]
        if self.steps:
            self.last = self.steps[-1]
        self.steps = []
        if self.last is not None and not self.last.final:
            # End of input closes the open segment.
            self.last = dataclasses.replace(self.last, at=self.t, final=True)
            out.append(self._update(self.last))
        self.recognitions += 1
        return out


V, EOS = 40, 0


class SlowLM(ScriptedLM):
    """A ScriptedLM whose every evaluate takes ``delay`` seconds (to test abort and stop)."""

    def __init__(self, delay: float, length: int = 12) -> None:
        def fn(ctx: tuple[int, ...]) -> np.ndarray:
            # Translation: one token per source character seen, then EOS, capped at ``length``.
            return peaked(V, {5 + (len(ctx) % 7): 1.0})

        super().__init__(V, EOS, fn)
        self.delay = delay
        self.busy = threading.Event()

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> np.ndarray:
        self.busy.set()
        time.sleep(self.delay)
        return super().evaluate(tokens, logits_at)


def echo_lm() -> ScriptedLM:
    """Translates by copying the source characters after the prompt's last 'user\\n' marker."""

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        return peaked(V, {5 + (ctx[-1] % 30): 1.0} if len(ctx) % 9 else {EOS: 1.0})

    return ScriptedLM(V, EOS, fn)


def loader_for(lm: ScriptedLM, calls: list[MtConfig] | None = None):  # type: ignore[no-untyped-def]
    def load(mt: MtConfig) -> LocalEngine:
        if calls is not None:
            calls.append(mt)
        return LocalEngine(LoadedModel(lm, "chatml"), mt)

    return load
