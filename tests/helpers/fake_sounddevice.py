"""A fake sounddevice module that plays a real clip through the capture's real callback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from subtitler.audio.capture import MicrophoneCapture

WAIT = 10.0  # seconds an event may take before the test fails (never a sleep)


class PortAudioError(Exception):
    """sounddevice.PortAudioError."""


class CallbackFlags:
    """sounddevice.CallbackFlags: true when a flag is set."""

    def __init__(self, input_overflow: bool = False) -> None:
        self.input_overflow = input_overflow

    def __bool__(self) -> bool:
        return self.input_overflow


class FakeStream:
    """Plays its device's signal through the callback from a thread, block by block."""

    def __init__(
        self,
        sd: FakeSoundDevice,
        device: int,
        samplerate: float,
        blocksize: int,
        callback: Callable[..., None],
        finished_callback: Callable[[], None],
        channels: int,
        dtype: str,
    ) -> None:
        assert dtype == "float32"
        self.sd, self.device, self.rate, self.n = sd, device, int(samplerate), blocksize
        self.callback, self.finished = callback, finished_callback
        self.channels = channels
        self.done = threading.Event()
        self.stalled = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, daemon=True)

    def start(self) -> None:
        self.sd.streams.append(self)
        self._thread.start()

    def _play(self) -> None:
        sig = self.sd.signal[self.rate]
        while not self._stop.is_set():
            with self.sd.lock:
                pos = self.sd.position[self.rate]
                if pos >= len(sig) or self.sd.vanish_at_block == self.sd.blocks_played:
                    break
                if self.sd.stall_at_block == self.sd.blocks_played:
                    self.sd.stall_at_block = -1
                    self.stalled.set()
                    break  # it stops calling back without a word, and without ending
                self.sd.position[self.rate] = pos + self.n
                self.sd.blocks_played += 1
            block = sig[pos : pos + self.n]
            if len(block) < self.n:
                block = np.pad(block, (0, self.n - len(block)))
            frame = np.repeat(block[:, None], self.channels, axis=1)
            played = self.sd.blocks_played - 1
            status = CallbackFlags(input_overflow=played in self.sd.overflow_at_blocks)
            self.callback(frame, self.n, None, status)
        if self.sd.vanish_at_block == self.sd.blocks_played:
            self.sd.unplug()  # the device disappears: PortAudio ends the stream
            self.finished()
        # At the end of the clip the microphone just goes quiet; the stream stays open.
        self.done.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(WAIT)

    def close(self) -> None:
        pass


class FakeSoundDevice:
    """Just the parts of the sounddevice module the capture uses."""

    def __init__(self, clip: np.ndarray, rates: tuple[int, ...] = (16000,)) -> None:
        self.devices: list[dict[str, Any]] = [
            {
                "name": "Speakers",
                "hostapi": 0,
                "max_input_channels": 0,
                "max_output_channels": 2,
                "default_samplerate": 48000.0,
            },
            {
                "name": "USB Mic",
                "hostapi": 0,
                "max_input_channels": 1,
                "max_output_channels": 0,
                "default_samplerate": float(rates[-1]),
            },
            {
                "name": "Monitor of Speakers",
                "hostapi": 0,
                "max_input_channels": 2,
                "max_output_channels": 0,
                "default_samplerate": 48000.0,
            },
        ]
        self._saved = list(self.devices)
        self.rates = rates
        self.default = type("Default", (), {"device": [1, 0]})()
        # The clip as the device delivers it at each rate it supports.
        self.signal = {r: _at_rate(clip, r) for r in rates}
        self.position = dict.fromkeys(rates, 0)
        self.lock = threading.Lock()
        self.streams: list[FakeStream] = []
        self.blocks_played = 0
        self.vanish_at_block = -1
        self.overflow_at_blocks: set[int] = set()  # blocks whose callback says input overflow
        self.stall_at_block = -1  # the stream stops calling back here (once)

    def query_hostapis(self) -> list[dict[str, Any]]:
        return [{"name": "ALSA"}]

    query_fails = 0  # the next this many device listings fail as PortAudio's can

    def query_devices(self) -> list[dict[str, Any]]:
        if self.query_fails > 0:
            self.query_fails -= 1
            raise PortAudioError("PortAudio not initialized [PaErrorCode -10000]")
        return list(self.devices)

    def check_input_settings(
        self, device: int, channels: int, dtype: str, samplerate: float
    ) -> None:
        if int(samplerate) not in self.rates:
            raise ValueError("Invalid sample rate")

    def InputStream(self, **kw: Any) -> FakeStream:  # sounddevice's name
        if (
            kw["device"] >= len(self.devices)
            or self.devices[kw["device"]]["max_input_channels"] == 0
        ):
            raise RuntimeError("Error querying device")
        return FakeStream(self, **kw)

    rescan_delay = 0.0  # how long PortAudio's re-initialisation takes (a test sets it)

    def _terminate(self) -> None:
        pass

    def _initialize(self) -> None:
        time.sleep(self.rescan_delay)

    def unplug(self) -> None:
        """The USB mic goes; PortAudio renumbers the rest."""
        self.devices = [d for d in self._saved if d["name"] != "USB Mic"]
        self.default.device = [-1, 0]

    def plug_back(self) -> None:
        self.devices = list(self._saved)
        self.default.device = [1, 0]


def _at_rate(clip: np.ndarray, rate: int) -> np.ndarray:
    if rate == 16000:
        return clip
    t_out = np.arange(round(len(clip) * rate / 16000)) / rate
    return np.interp(t_out, np.arange(len(clip)) / 16000, clip).astype(np.float32)


def read_all(cap: MicrophoneCapture, until: Callable[[], bool]) -> list[Any]:
    blocks = []
    while True:
        b = cap.read(timeout=0.05)
        if b is not None:
            blocks.append(b)
        elif until():
            return blocks
