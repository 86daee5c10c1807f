"""Meeting audio on macOS 13+: the system's output through ScreenCaptureKit behind the capture
path, driven by fake ScreenCaptureKit / CoreMedia / sounddevice modules that play a real clip
through the real capture code (the API seam; no Mac here)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.faster_whisper import decode_audio_file
from subtitler.audio import loopback, macos_capture
from subtitler.audio.capture import (
    AudioDeviceError,
    MicrophoneCapture,
    find_input_device,
    list_input_devices,
)
from subtitler.audio.macos_capture import (
    NAME,
    NO_PERMISSION,
    SystemAudio,
    SystemAudioStream,
    samples_of,
    system_audio,
)
from subtitler.config import AudioConfig
from tests.helpers import fake_screencapturekit as fake
from tests.helpers.fake_sounddevice import FakeSoundDevice
from tests.integration.test_audio_loopback import read_samples

CLIP = Path(__file__).resolve().parents[1] / "data" / "LJ001-0008.flac"
SONOMA = (14, 5)


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return decode_audio_file(CLIP)


def backend(
    clip: np.ndarray, macos: tuple[int, ...] = SONOMA
) -> tuple[SystemAudio, FakeSoundDevice, fake.ScreenCaptureKit, fake.CoreMedia]:
    fw, sck, cm = fake.frameworks(clip)
    sd = FakeSoundDevice(clip)
    audio = system_audio(sd, fw, macos)
    assert audio is not None
    return audio, sd, sck, cm


def test_system_audio_is_listed_after_portaudios_inputs(clip: np.ndarray) -> None:
    audio, _sd, _sck, _cm = backend(clip)
    devs = list_input_devices(audio)
    assert [(d.index, d.name, d.loopback, d.hostapi, d.is_default) for d in devs] == [
        (1, "USB Mic", False, "ALSA", True),
        (2, "Monitor of Speakers", True, "ALSA", False),
        (3, "System audio (all apps)", True, "ScreenCaptureKit", False),
    ]
    assert find_input_device(audio, "system audio").index == 3  # by (part of) its name
    assert find_input_device(audio, None).name == "USB Mic"  # the default stays the microphone


def test_system_audio_arrives_exactly_through_the_capture_path(clip: np.ndarray) -> None:
    audio, sd, sck, _cm = backend(clip)
    sck.channels_sent = 2  # stereo though mono was asked: down-mixed to mono
    cap = MicrophoneCapture(AudioConfig(device=NAME, block_ms=100), sd=audio)
    cap.start()
    assert cap.device is not None and cap.device.name == NAME and cap.state == "running"
    assert sd.streams == []  # not a PortAudio stream
    blocks = read_samples(cap, len(clip))
    (stream,) = sck.streams
    assert stream.config == {
        "capturesAudio": True,
        "excludesCurrentProcessAudio": True,
        "sampleRate": 16000,  # ScreenCaptureKit resamples: 16 kHz passes check_input_settings
        "channelCount": 1,
        "width": 2,
        "height": 2,
        "minimumFrameInterval": (1, 1),
    }
    assert stream.filter.display == "Built-in Retina Display" and stream.filter.windows == []
    assert [kind for _out, kind, _queue in stream.outputs] == [fake.AUDIO]
    cap.stop()
    assert stream.stopped and cap.state == "stopped"
    got = np.concatenate([b.samples for b in blocks])
    np.testing.assert_array_equal(got[: len(clip)], clip)
    # 1024-frame buffers re-cut into the 100 ms blocks that were asked for.
    assert {len(b.samples) for b in blocks} == {1600}
    assert [b.t0 for b in blocks] == [pytest.approx(k * 0.1) for k in range(len(blocks))]
    assert cap.dropped == 0 and cap.level > -100


def test_refused_permission_is_one_line_saying_where_to_allow_it(clip: np.ndarray) -> None:
    audio, _sd, sck, _cm = backend(clip)
    sck.declined = True
    cap = MicrophoneCapture(AudioConfig(device=NAME), sd=audio)
    with pytest.raises(AudioDeviceError) as err:
        cap.start()
    message = str(err.value)
    assert message == f"cannot open audio input {NAME!r}: {NO_PERMISSION}"
    assert "\n" not in message and "System Settings" in message and "Screen" in message
    assert sck.streams == []


def test_a_refused_start_leaves_nothing_recording(clip: np.ndarray) -> None:
    audio, _sd, sck, _cm = backend(clip)
    sck.start_error = fake.NSError(
        -3802, "Failed to start the stream"
    )  # SCStreamErrorFailedToStart
    cap = MicrophoneCapture(AudioConfig(device=NAME), sd=audio)
    with pytest.raises(AudioDeviceError) as err:
        cap.start()
    assert str(err.value) == (
        f"cannot open audio input {NAME!r}: Failed to start the stream (error -3802)"
    )
    assert sck.streams[0].stopped and cap.state == "stopped"


def test_before_macos_13_blackhole_is_the_way(clip: np.ndarray) -> None:
    fw, _sck, _cm = fake.frameworks(clip)
    sd = FakeSoundDevice(clip)
    assert system_audio(sd, fw, (12, 7, 4)) is None  # not listed: nothing to choose
    # Opened all the same (a settings file from a newer Mac), it says what to do instead.
    cap = MicrophoneCapture(AudioConfig(device=NAME), sd=SystemAudio(sd, fw, (12, 7, 4)))
    with pytest.raises(AudioDeviceError) as err:
        cap.start()
    assert "needs macOS 13 or later (this is 12.7.4): install BlackHole" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_stream_that_ends_is_reopened(clip: np.ndarray, caplog: pytest.LogCaptureFixture) -> None:
    audio, _sd, sck, _cm = backend(clip)
    sck.end_at_buffer = 10  # after 10 x 1024 frames: 6 whole blocks of 1600
    sck.on_end = sck.displays.clear  # the display went away with it
    now = [20.0]
    cap = MicrophoneCapture(
        AudioConfig(device=NAME, block_ms=100), sd=audio, clock=lambda: now[0], reopen_s=1.0
    )
    cap.start()
    first = read_samples(cap, 6 * 1600)
    for _ in range(200):  # bounded: each read waits at most 10 ms
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    assert cap.state == "lost" and len(first) == 6
    assert "system audio capture ended: The stream was stopped by the system (error -3821)" in (
        caplog.text
    )
    assert f"audio input {NAME!r} disappeared; retrying" in caplog.text
    assert cap.problem == (
        f"cannot open audio input {NAME!r}: ScreenCaptureKit lists no display to capture the "
        "audio of; retrying"
    )
    sck.end_at_buffer = -1
    sck.displays.append("DELL U2720Q")
    now[0] += 3.0
    rest = read_samples(cap, 1600)
    assert cap.state == "running" and len(sck.streams) == 2
    assert rest[0].t0 == pytest.approx(3.0)  # the gap is visible to the recogniser
    np.testing.assert_array_equal(rest[0].samples, clip[:1600])  # the new stream's audio
    cap.stop()
    assert sck.streams[1].stopped


def test_stream_ends_once_and_stop_is_safe_twice(clip: np.ndarray) -> None:
    fw, sck, _cm = fake.frameworks(clip)
    ended: list[str] = []
    stream = SystemAudioStream(
        fw,
        SONOMA,
        samplerate=16000,
        blocksize=1600,
        callback=lambda *a: None,
        finished_callback=lambda: ended.append("finished"),
    )
    stream.start()
    stream.on_stopped(fake.NSError(-3821, "The stream was stopped by the system"))
    stream.stop()
    stream.close()
    assert ended == ["finished"] and sck.streams[0].stopped
    with pytest.raises(ValueError, match="Invalid sample rate 44100"):
        SystemAudioStream(fw, SONOMA, samplerate=44100, blocksize=1, callback=lambda *a: None)


def test_planes_become_frames_by_channels(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    _fw, _sck, cm = fake.frameworks(clip)
    left = np.arange(5, dtype=np.float32)
    planes = np.stack([left, -left])
    got = samples_of(cm, fake.SampleBuffer(planes))
    np.testing.assert_array_equal(got, planes.T)
    assert samples_of(cm, fake.SampleBuffer(None)).shape == (0, 1)  # a video frame: no audio
    cm.copy_status = -12705  # kCMBlockBufferBadPointerParameterErr
    with pytest.raises(OSError, match="error -12705"):
        samples_of(cm, fake.SampleBuffer(planes))
    # In the stream, a bad buffer is a gap and one warning, not the end.
    fw, _sck, cm = fake.frameworks(clip)
    got_blocks: list[np.ndarray] = []
    stream = SystemAudioStream(
        fw, SONOMA, samplerate=16000, blocksize=4, callback=lambda d, *a: got_blocks.append(d)
    )
    cm.copy_status = -12705
    stream.on_buffer(fake.SampleBuffer(planes), fake.AUDIO)
    stream.on_buffer(fake.SampleBuffer(planes), fake.AUDIO)
    assert caplog.text.count("unreadable system audio buffer") == 1
    cm.copy_status = 0
    stream.on_buffer(fake.SampleBuffer(planes), fake.AUDIO)  # stereo, mono asked
    assert len(got_blocks) == 1 and got_blocks[0].shape == (4, 1)
    np.testing.assert_array_equal(got_blocks[0][:, 0], np.zeros(4))  # left + right cancel


def test_macos_picks_screencapturekit_where_it_can(
    clip: np.ndarray, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    fw, _sck, _cm = fake.frameworks(clip)
    sd = FakeSoundDevice(clip)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(macos_capture, "load_frameworks", lambda: fw)
    monkeypatch.setattr(macos_capture, "macos_version", lambda: SONOMA)
    audio = loopback.with_loopback(sd)
    assert isinstance(audio, SystemAudio)
    assert list_input_devices(audio)[-1].name == "System audio (all apps)"
    monkeypatch.setattr(macos_capture, "macos_version", lambda: (12, 7))
    assert loopback.with_loopback(sd) is sd  # BlackHole, an ordinary input, instead
    monkeypatch.setattr(macos_capture, "macos_version", lambda: SONOMA)

    def missing() -> macos_capture.Frameworks:
        raise ModuleNotFoundError("No module named 'ScreenCaptureKit'")

    monkeypatch.setattr(macos_capture, "load_frameworks", missing)
    with caplog.at_level(logging.WARNING):
        assert loopback.with_loopback(sd) is sd  # pyobjc not installed: microphones only
    assert "meeting audio (loopback inputs) is unavailable: No module named" in caplog.text


def test_settings_offer_it_as_meeting_audio(
    clip: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subtitler.session import input_devices

    fw, _sck, _cm = fake.frameworks(clip)
    monkeypatch.setitem(sys.modules, "sounddevice", FakeSoundDevice(clip))
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(macos_capture, "load_frameworks", lambda: fw)
    monkeypatch.setattr(macos_capture, "macos_version", lambda: SONOMA)
    devices, notice = input_devices()
    assert devices[-1] == ("System audio (all apps)  · meeting audio", "System audio (all apps)")
    assert notice == ""
