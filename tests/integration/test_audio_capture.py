"""The capture path, driven by a fake sounddevice module that plays a real clip."""

from __future__ import annotations

import threading
import time
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
    list_input_devices,
)
from subtitler.audio.level import level_dbfs
from subtitler.audio.resample import StreamResampler
from subtitler.config import AudioConfig
from tests.helpers.fake_sounddevice import WAIT, FakeSoundDevice, read_all

CLIP = Path(__file__).resolve().parents[1] / "data" / "LJ001-0008.flac"


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return decode_audio_file(CLIP)


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


def test_samples_that_are_no_numbers_are_silence_and_overflows_are_counted(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    """A driver's NaN or inf samples went to the recogniser as they were: every window they
    were in lost its words (a whole sentence, nothing said) and the level meter read +inf.
    PortAudio's input overflows were not counted as audio lost."""
    bad = clip.copy()
    bad[16000:24000] = np.nan
    bad[24000:24100] = np.inf
    bad[24100:24200] = -np.inf
    sd = FakeSoundDevice(bad)
    sd.overflow_at_blocks = {3, 7}
    cap = MicrophoneCapture(AudioConfig(device="USB Mic", block_ms=100), sd=sd)
    cap.start()
    blocks = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    cap.stop()
    got = np.concatenate([b.samples for b in blocks])[: len(clip)]
    assert np.isfinite(got).all() and np.isfinite([level_dbfs(b.samples) for b in blocks]).all()
    np.testing.assert_array_equal(got[16000:24200], 0.0)
    np.testing.assert_array_equal(got[:16000], clip[:16000])  # the rest as it came
    np.testing.assert_array_equal(got[24200:], clip[24200:])
    said = [r.getMessage() for r in caplog.records if "not numbers" in r.getMessage()]
    assert said == ["audio input delivered samples that are not numbers: made silence"]
    assert cap.dropped == 2


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


def unplugged_after(
    clip: np.ndarray, blocks: int
) -> tuple[FakeSoundDevice, MicrophoneCapture, list[float], list[Any]]:
    """The USB mic gone after ``blocks`` blocks, its capture on a clock the test moves, read
    until it is found lost: (the device, the capture, the clock, the blocks before)."""
    sd = FakeSoundDevice(clip)
    sd.vanish_at_block = blocks
    now = [100.0]
    cap = MicrophoneCapture(
        AudioConfig(device="USB Mic"), sd=sd, clock=lambda: now[0], reopen_s=1.0
    )
    cap.start()
    first = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    for _ in range(100):  # bounded: each read waits at most 10 ms
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    return sd, cap, now, first


def test_device_disappears_and_is_reopened(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    sd, cap, now, first = unplugged_after(clip, 5)
    assert len(first) == 5
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


def test_portaudio_failing_while_the_device_is_looked_for_again_is_retried(
    clip: np.ndarray,
) -> None:
    """PortAudio re-initialised to see a device that came back can fail; the listing then
    raised "PortAudio not initialized" out of the capture, and speech recognition stopped
    for the rest of the meeting."""
    sd, cap, now, first = unplugged_after(clip, 5)
    assert cap.state == "lost"  # (its first try found no device)
    sd.plug_back()
    sd.vanish_at_block = -1
    sd.query_fails = 2
    now[0] += 1.5
    cap.read(timeout=0.01)
    assert cap.state == "lost" and cap.error == (
        "audio input 'USB Mic' cannot be opened again: PortAudio not initialized "
        "[PaErrorCode -10000]; retrying"
    )
    now[0] += 1.5
    cap.read(timeout=0.01)  # the second try fails too
    assert cap.state == "lost" and sd.query_fails == 0
    now[0] += 1.5
    rest = read_all(
        cap,
        lambda: len(sd.streams) == 2 and sd.streams[1].done.is_set() and cap._queue.qsize() == 0,
    )
    assert cap.state == "running"
    got = np.concatenate([b.samples for b in first + rest])
    np.testing.assert_array_equal(got[: len(clip)], clip)
    cap.stop()


def test_a_microphone_that_stops_calling_back_is_opened_again(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    """A stream that stops calling back without ending (a driver that hung) was never noticed:
    no word to the user, and the line being said stayed open until the stop."""
    sd = FakeSoundDevice(clip)
    sd.stall_at_block = 5
    now = [100.0]
    cap = MicrophoneCapture(
        AudioConfig(device="USB Mic"), sd=sd, clock=lambda: now[0], reopen_s=1.0
    )
    cap.start()
    first = read_all(cap, lambda: sd.streams[0].stalled.is_set() and cap._queue.qsize() == 0)
    assert len(first) == 5 and cap.state == "running"
    now[0] += 4.0  # a pause in the speech is no stall: the device still calls back in one
    cap.read(timeout=0.01)
    assert cap.state == "running"
    now[0] += 1.5
    again = cap.read(timeout=0.5)  # (the new stream's first block, if it came already)
    assert "audio input 'USB Mic' sent no audio for 5 s; retrying" in caplog.text
    assert len(sd.streams) == 2 and cap.state == "running"  # opened again at once: it is there
    rest = read_all(
        cap,
        lambda: len(sd.streams) == 2 and sd.streams[1].done.is_set() and cap._queue.qsize() == 0,
    )
    rest = ([again] if again is not None else []) + rest
    assert rest[0].t0 == pytest.approx(5.5)  # (the 5.5 s without audio: a gap, as it was)
    got = np.concatenate([b.samples for b in first + rest])
    np.testing.assert_array_equal(got[: len(clip)], clip)
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


def test_stream_time_goes_on_after_a_pause(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    cap = MicrophoneCapture(AudioConfig(device="USB Mic", block_ms=100), sd=sd)
    cap.start()
    before = [b for b in (cap.read(timeout=1.0) for _ in range(4)) if b is not None]
    cap.stop()  # paused: the pipeline's clock stops too
    assert len(before) == 4 and cap.stream_time == pytest.approx(0.4)
    sd.position[16000] = 0  # the fake device plays the clip again
    cap.start()
    after = cap.read(timeout=1.0)
    cap.stop()
    # Not back to 0: the recogniser's timeline and the pipeline clock stay in step.
    assert after is not None and after.t0 == pytest.approx(0.4)


def test_pause_during_a_reopen_is_not_undone(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    sd.vanish_at_block = 3
    cap = MicrophoneCapture(AudioConfig(device="USB Mic"), sd=sd, reopen_s=0.0)
    cap.start()
    for _ in range(200):
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    assert cap.state == "lost"
    sd.plug_back()
    sd.vanish_at_block = -1
    sd.rescan_delay = 0.3  # the reader's re-open is in PortAudio's re-scan...
    reader = threading.Thread(target=cap.read, kwargs={"timeout": 0.01})
    reader.start()
    time.sleep(0.1)
    cap.stop()  # ...when the user pauses (or quits)
    reader.join(5)
    assert cap.state == "stopped"
    # The re-open finished first, then the stop closed it: nothing is capturing.
    assert len(sd.streams) == 2 and all(s._stop.is_set() for s in sd.streams[1:])
    cap.read(timeout=0.01)  # and no later read re-opens it
    assert cap.state == "stopped" and len(sd.streams) == 2


def test_what_was_captured_before_a_pause_is_not_thrown_away(clip: np.ndarray) -> None:
    sd = FakeSoundDevice(clip)
    cap = MicrophoneCapture(AudioConfig(device="USB Mic", block_ms=100), sd=sd)
    cap.start()
    assert sd.streams[0].done.wait(WAIT)  # the whole clip is captured...
    first = [cap.read(timeout=1.0) for _ in range(5)]  # ...but the ASR has read 5 blocks
    cap.stop()  # pause
    sd.position[16000] = 0  # after the pause the speaker says it all again
    cap.start()  # resume at once
    blocks = [b for b in first if b is not None]
    while (b := cap.read(timeout=0.5)) is not None and len(blocks) < 200:
        blocks.append(b)
    cap.stop()
    got = np.concatenate([b.samples for b in blocks])
    n = -(-len(clip) // 1600) * 1600  # the clip as the fake's 100 ms blocks pad it
    np.testing.assert_array_equal(got[: len(clip)], clip)  # nothing lost across the pause
    np.testing.assert_array_equal(got[n : n + len(clip)], clip)  # then what came after it
    assert [b.t0 for b in blocks] == [pytest.approx(k * 0.1) for k in range(len(blocks))]


def test_the_microphone_runs_on_the_pipelines_stream_clock(clip: np.ndarray) -> None:
    """One stream clock: the input the real factories make times a re-opened device on the
    pipeline's clock, so the gap the recogniser sees is the pipeline's time away."""
    from subtitler.audio.inputs import open_audio
    from subtitler.pipeline.clock import StreamClock

    sd = FakeSoundDevice(clip)
    sd.vanish_at_block = 5
    now = [100.0]
    clock = StreamClock(base=lambda: now[0])
    source = open_audio(AudioConfig(device="USB Mic"), clock, sounddevice=sd)
    assert isinstance(source, MicrophoneCapture)
    cap = source
    cap.reopen_s = 1.0
    clock.reset()
    source.start()
    first = read_all(cap, lambda: sd.streams[0].done.is_set() and cap._queue.qsize() == 0)
    assert len(first) == 5
    for _ in range(100):
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    assert cap.state == "lost" and source.problem
    sd.plug_back()
    sd.vanish_at_block = -1
    now[0] += 3.0  # away 3 s of the pipeline's time
    rest = read_all(
        cap,
        lambda: len(sd.streams) == 2 and sd.streams[1].done.is_set() and cap._queue.qsize() == 0,
    )
    assert cap.state == "running"
    assert rest[0].t0 == pytest.approx(3.0) == pytest.approx(clock())
    source.stop()
