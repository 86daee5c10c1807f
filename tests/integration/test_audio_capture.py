"""The capture path, driven by a fake sounddevice module that plays a real clip."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from subtitler.asr.faster_whisper import decode_audio_file
from subtitler.audio.capture import (
    AudioDeviceError,
    DropOldestQueue,
    MicrophoneCapture,
    find_input_device,
    level_dbfs,
    list_input_devices,
)
from subtitler.audio.resample import StreamResampler
from subtitler.config import AudioConfig

CLIP = Path(__file__).resolve().parents[1] / "data" / "LJ001-0008.flac"
WAIT = 10.0  # seconds an event may take before the test fails (never a sleep)


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
                self.sd.position[self.rate] = pos + self.n
                self.sd.blocks_played += 1
            block = sig[pos : pos + self.n]
            if len(block) < self.n:
                block = np.pad(block, (0, self.n - len(block)))
            frame = np.repeat(block[:, None], self.channels, axis=1)
            self.callback(frame, self.n, None, None)
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

    def query_hostapis(self) -> list[dict[str, Any]]:
        return [{"name": "ALSA"}]

    def query_devices(self) -> list[dict[str, Any]]:
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


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return decode_audio_file(CLIP)


def read_all(cap: MicrophoneCapture, until: Callable[[], bool]) -> list[Any]:
    blocks = []
    while True:
        b = cap.read(timeout=0.05)
        if b is not None:
            blocks.append(b)
        elif until():
            return blocks


def test_clip_through_the_real_callback_arrives_exactly(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    cap = MicrophoneCapture(AudioConfig(device="USB Mic", block_ms=100), sd=sd)
    cap.start()
    assert cap.device is not None and cap.device.name == "USB Mic" and cap.state == "running"
    blocks = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    cap.stop()
    got = np.concatenate([b.samples for b in blocks])
    np.testing.assert_array_equal(got[: len(clip)], clip)
    assert [b.t0 for b in blocks] == [pytest.approx(k * 0.1) for k in range(len(blocks))]
    assert cap.dropped == 0 and cap.state == "stopped"
    assert (
        cap.level == level_dbfs(blocks[-1].samples)
        and -100 < max(level_dbfs(b.samples) for b in blocks) < -10
    )


def test_device_without_16k_is_resampled(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip, rates=(48000,))
    cap = MicrophoneCapture(AudioConfig(device=1), sd=sd)
    cap.start()
    blocks = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    cap.stop()
    got = np.concatenate([b.samples for b in blocks])
    assert 0 <= len(got) - len(clip) < 1600  # the same duration (the fake pads its last block)
    # The anti-alias filter delays by 15 input samples (5 at 16 kHz); otherwise the same.
    a, b = got[5 : len(clip)], clip[: len(clip) - 5]
    assert np.corrcoef(a, b)[0, 1] > 0.98
    assert blocks[1].t0 == pytest.approx(len(blocks[0].samples) / 16000)


def test_full_queue_drops_the_oldest_blocks(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    cap = MicrophoneCapture(AudioConfig(block_ms=100, queue_blocks=3), sd=sd)
    cap.start()
    assert sd.streams[0].done.wait(WAIT)  # the consumer was busy the whole clip
    blocks = read_all(cap, lambda: cap._queue.qsize() == 0)
    n = -(-len(clip) // 1600)
    assert cap.dropped == n - 3 and len(blocks) == 3
    # The newest blocks survive with their true times.
    assert [round(b.t0, 3) for b in blocks] == [round((n - 3 + k) * 0.1, 3) for k in range(3)]
    np.testing.assert_array_equal(blocks[0].samples, clip[(n - 3) * 1600 : (n - 2) * 1600])
    cap.stop()


def test_device_disappears_and_is_reopened(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    sd = FakeSoundDevice(clip)
    sd.vanish_at_block = 5
    now = [100.0]
    cap = MicrophoneCapture(
        AudioConfig(device="USB Mic"), sd=sd, clock=lambda: now[0], reopen_s=1.0
    )
    cap.start()
    first = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    assert len(first) == 5
    for _ in range(100):  # bounded: each read waits at most 10 ms
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    assert cap.state == "lost"
    assert "audio input 'USB Mic' disappeared; retrying" in caplog.text
    # The immediate retry failed: the reason is kept for the UI, the next try is in 1 s.
    assert cap.error == (
        "audio input device 'USB Mic' not found (available: Monitor of Speakers); retrying"
    )
    sd.plug_back()
    sd.vanish_at_block = -1
    cap.read(timeout=0.01)
    assert cap.state == "lost"  # the retry is not due yet
    now[0] += 2.5  # the device was away 2.5 s on the stream clock
    rest = read_all(
        cap,
        lambda: len(sd.streams) == 2 and sd.streams[1].done.is_set() and cap._queue.qsize() == 0,
    )
    assert cap.state == "running" and len(sd.streams) == 2
    assert rest[0].t0 == pytest.approx(2.5)  # the gap is visible to the recogniser
    got = np.concatenate([b.samples for b in first + rest])
    np.testing.assert_array_equal(got[: len(clip)], clip)  # the fake resumes where it was
    cap.stop()


def test_no_input_device_is_a_clear_error(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    sd.devices = sd.devices[:1]  # only an output
    with pytest.raises(AudioDeviceError, match=r"^no audio input device found"):
        MicrophoneCapture(AudioConfig(), sd=sd).start()


def test_listing_and_choosing_devices(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    sd.devices.append(
        {
            "name": "Speakers (Realtek) [Loopback]",
            "hostapi": 0,
            "max_input_channels": 2,
            "max_output_channels": 0,
            "default_samplerate": 48000.0,
        }
    )
    sd.devices.append(
        {
            "name": "alsa_output.pci.analog-stereo.monitor",
            "hostapi": 0,
            "max_input_channels": 2,
            "max_output_channels": 0,
            "default_samplerate": 44100.0,
        }
    )
    devs = list_input_devices(sd)
    assert [(d.index, d.loopback, d.is_default) for d in devs] == [
        (1, False, True),
        (2, True, False),
        (3, True, False),
        (4, True, False),
    ]
    assert devs[0].hostapi == "ALSA" and devs[1].channels == 2
    assert find_input_device(sd, None).name == "USB Mic"
    assert find_input_device(sd, "3").index == 3
    assert find_input_device(sd, "monitor of").index == 2
    with pytest.raises(AudioDeviceError, match=r"'Headset' not found \(available: USB Mic, "):
        find_input_device(sd, "Headset")
    with pytest.raises(AudioDeviceError, match="#0 not found"):
        find_input_device(sd, 0)  # an output-only device


def test_stereo_monitor_is_mixed_to_mono(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    cap = MicrophoneCapture(AudioConfig(device="Monitor of"), sd=sd)
    cap.start()
    blocks = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    cap.stop()
    assert cap.device is not None and cap.device.loopback
    np.testing.assert_allclose(np.concatenate([b.samples for b in blocks])[: len(clip)], clip)


def test_level_meter_and_queue_helpers() -> None:
    assert level_dbfs(np.zeros(100, np.float32)) == -100.0
    sine = np.sin(np.arange(16000) * 2 * np.pi * 440 / 16000).astype(np.float32)
    assert level_dbfs(sine) == pytest.approx(-3.01, abs=0.01)
    q: DropOldestQueue[int] = DropOldestQueue(2)
    for i in range(5):
        q.put(i)
    assert (q.get(0), q.get(0), q.get(0), q.dropped) == (3, 4, None, 3)


def test_resampler_is_block_size_independent() -> None:
    x = np.random.default_rng(0).standard_normal(44100).astype(np.float32)
    whole = StreamResampler(44100)(x)
    r = StreamResampler(44100)
    parts = np.concatenate([r(x[i : i + 441]) for i in range(0, len(x), 441)])
    np.testing.assert_allclose(parts, whole, atol=1e-6)
    assert len(whole) == 16000
