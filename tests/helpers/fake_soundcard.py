"""A fake soundcard module: speakers whose loopback recorders play a real clip.

It has the parts of soundcard's API that subtitler/audio/loopback.py uses, with the real
module's shapes: ``all_microphones(include_loopback=True)`` lists one loopback microphone per
speaker (``isloopback``), ``get_microphone(id, include_loopback=True)``, and
``mic.recorder(samplerate=, channels=, blocksize=)`` as a context manager whose
``record(numframes)`` blocks for that many frames and returns a frames x channels float32 array
(zeros once the speaker plays nothing, as soundcard does for a silent WASAPI loopback).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from types import TracebackType

import numpy as np


@dataclass
class FakeMic:
    sc: FakeSoundCard
    id: str
    name: str
    isloopback: bool
    channels: int

    def recorder(self, samplerate: int, channels: int, blocksize: int) -> FakeRecorder:
        if self.sc.refuse_open:
            raise RuntimeError("Error 0x88890008: AUDCLNT_E_UNSUPPORTED_FORMAT")
        return FakeRecorder(self, int(samplerate), channels, blocksize)


class FakeRecorder:
    def __init__(self, mic: FakeMic, rate: int, channels: int, blocksize: int) -> None:
        assert rate == 16000, "the fake speaker plays at 16 kHz"
        self.mic, self.channels, self.blocksize = mic, channels, blocksize
        self.opened_in = threading.current_thread().name

    def __enter__(self) -> FakeRecorder:
        self.mic.sc.recorders.append(self)
        return self

    def __exit__(
        self,
        t: type[BaseException] | None,
        e: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.mic.sc.closed += 1

    def record(self, numframes: int) -> np.ndarray:
        sc = self.mic.sc
        with sc.lock:
            if sc.vanish_at_block == sc.blocks_played:
                sc.unplug()
                raise RuntimeError("Error 0x88890004: AUDCLNT_E_DEVICE_INVALIDATED")
            if sc.moved_at_block == sc.blocks_played:
                sc.unplug()  # PulseAudio: the recording goes on, from another source
            pos = sc.position
            sc.position = pos + numframes
            sc.blocks_played += 1
        block = sc.signal[pos : pos + numframes]
        if len(block) < numframes:
            time.sleep(0.005)  # the speaker went quiet: zeros come at (about) their pace
            block = np.pad(block, (0, numframes - len(block)))
        return np.repeat(block[:, None], self.channels, axis=1).astype(np.float32)


class FakeSoundCard:
    def __init__(self, clip: np.ndarray) -> None:
        self.signal = clip
        self.position = 0
        self.blocks_played = 0
        self.vanish_at_block = -1
        # (at this block the speaker goes away and its recording goes on, as PulseAudio moves
        # a recording whose source is removed to another source, saying nothing)
        self.moved_at_block = -1
        self.refuse_open = False
        self.broken_listing = False
        self.lock = threading.Lock()
        self.recorders: list[FakeRecorder] = []
        self.closed = 0
        self._speakers = [("{0.0.0.1}", "Speakers (Realtek(R) Audio)", 2)]
        self._mics = [("{0.0.1.1}", "Microphone Array (Intel)", 2)]
        self.speakers = list(self._speakers)

    def all_microphones(self, include_loopback: bool = False) -> list[FakeMic]:
        if self.broken_listing:
            raise RuntimeError("Error 0x80070490: element not found")
        loop = [FakeMic(self, i, n, True, c) for i, n, c in self.speakers]
        mics = [FakeMic(self, i, n, False, c) for i, n, c in self._mics]
        return (loop if include_loopback else []) + mics

    def get_microphone(self, id: str, include_loopback: bool = False) -> FakeMic:
        for m in self.all_microphones(include_loopback):
            if m.id == id:
                return m
        raise IndexError(f"no device with id {id}")

    def unplug(self) -> None:
        self.speakers = []

    def plug_back(self) -> None:
        self.speakers = list(self._speakers)
