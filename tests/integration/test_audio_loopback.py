"""Meeting audio: loopback inputs from soundcard behind the capture path, driven by fake
sounddevice and soundcard modules that play a real clip through the real capture code."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
from subtitler.audio.loopback import LoopbackAudio, with_loopback
from subtitler.config import AudioConfig
from subtitler.types import AudioBlock
from tests.helpers.fake_soundcard import FakeSoundCard
from tests.helpers.fake_sounddevice import FakeSoundDevice

CLIP = Path(__file__).resolve().parents[1] / "data" / "LJ001-0008.flac"
SPEAKER = "Speakers (Realtek(R) Audio) [Loopback]"


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return decode_audio_file(CLIP)


def backend(clip: np.ndarray) -> tuple[LoopbackAudio, FakeSoundDevice, FakeSoundCard]:
    sd, sc = FakeSoundDevice(clip), FakeSoundCard(clip)
    return LoopbackAudio(sd, sc, "Windows WASAPI (loopback)"), sd, sc


def read_samples(cap: MicrophoneCapture, n: int, max_reads: int = 2000) -> list[AudioBlock]:
    """Blocks until ``n`` samples came (the fake speaker then plays zeros for ever)."""
    blocks: list[AudioBlock] = []
    for _ in range(max_reads):
        if sum(len(b.samples) for b in blocks) >= n:
            return blocks
        b = cap.read(timeout=0.5)
        if b is not None:
            blocks.append(b)
    raise AssertionError(f"only {sum(len(b.samples) for b in blocks)} of {n} samples came")


def test_loopback_inputs_follow_portaudios_own(clip: np.ndarray) -> None:
    lb, _sd, _sc = backend(clip)
    devs = list_input_devices(lb)
    assert [(d.index, d.name, d.loopback, d.hostapi, d.is_default) for d in devs] == [
        (1, "USB Mic", False, "ALSA", True),
        (2, "Monitor of Speakers", True, "ALSA", False),
        (3, SPEAKER, True, "Windows WASAPI (loopback)", False),
    ]
    assert devs[2].channels == 2  # the speaker's own layout; capture asks WASAPI for mono
    assert find_input_device(lb, "Loopback").index == 3
    assert find_input_device(lb, None).name == "USB Mic"  # the default stays the microphone


def test_meeting_audio_arrives_exactly_through_the_capture_path(
    clip: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered: list[str] = []

    @contextlib.contextmanager
    def apartment() -> Iterator[None]:  # COM is Windows-only: record who would enter it
        entered.append(threading.current_thread().name)
        yield

    monkeypatch.setattr(loopback, "com_apartment", apartment)
    lb, sd, sc = backend(clip)
    cap = MicrophoneCapture(AudioConfig(device="Realtek", block_ms=100), sd=lb)
    cap.start()
    assert cap.device is not None and cap.device.name == SPEAKER and cap.state == "running"
    assert sd.streams == []  # not a PortAudio stream
    blocks = read_samples(cap, len(clip))
    rec = sc.recorders[0]
    assert (rec.channels, rec.blocksize) == (1, 1600)
    # WASAPI objects live in the reader thread (its COM apartment), not in the caller's.
    assert rec.opened_in == "loopback-capture" != threading.current_thread().name
    # Listing (here in the caller's thread) and recording each enter COM first.
    assert entered == [threading.current_thread().name, "loopback-capture"]
    cap.stop()
    got = np.concatenate([b.samples for b in blocks])
    np.testing.assert_array_equal(got[: len(clip)], clip)
    assert [b.t0 for b in blocks] == [pytest.approx(k * 0.1) for k in range(len(blocks))]
    assert cap.dropped == 0 and cap.level > -100
    assert sc.closed == 1 and cap.state == "stopped"


def lost_after_five_blocks(
    lb: LoopbackAudio,
) -> tuple[MicrophoneCapture, list[AudioBlock], list[float]]:
    """The speaker's capture started on a clock of its own (``now``: moved by the test),
    read until it is lost after its five blocks: (capture, those blocks, the clock)."""
    now = [50.0]
    cap = MicrophoneCapture(
        AudioConfig(device="Realtek", block_ms=100), sd=lb, clock=lambda: now[0], reopen_s=1.0
    )
    cap.start()
    first = read_samples(cap, 5 * 1600)
    for _ in range(200):  # bounded: each read waits at most 10 ms
        if cap.state == "lost":
            break
        cap.read(timeout=0.01)
    assert cap.state == "lost" and len(first) == 5
    return cap, first, now


def test_speaker_unplugged_then_back(clip: np.ndarray, caplog: pytest.LogCaptureFixture) -> None:
    lb, _sd, sc = backend(clip)
    sc.vanish_at_block = 5
    cap, first, now = lost_after_five_blocks(lb)
    assert f"audio input '{SPEAKER}' disappeared; retrying" in caplog.text
    assert "AUDCLNT_E_DEVICE_INVALIDATED" in caplog.text  # what WASAPI said, for the log
    assert cap.error.startswith("audio input device 'Realtek' not found (available: USB Mic, ")
    sc.plug_back()
    sc.vanish_at_block = -1
    now[0] += 3.0
    rest = read_samples(cap, len(clip) - 5 * 1600)
    assert cap.state == "running" and len(sc.recorders) == 2
    assert rest[0].t0 == pytest.approx(3.0)  # the gap is visible to the recogniser
    got = np.concatenate([b.samples for b in first + rest])
    np.testing.assert_array_equal(got[: len(clip)], clip)
    cap.stop()


def test_a_speaker_whose_recording_the_sound_system_moves_is_lost_then_back(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PulseAudio moved the meeting's recording to the microphone when its sink went away:
    the user's voice was heard as the meeting's, and the meeting never again; nothing said."""
    monkeypatch.setattr(loopback, "SOURCE_CHECK_S", 0.0)
    lb, _sd, sc = backend(clip)
    sc.moved_at_block = 5
    cap, _first, now = lost_after_five_blocks(lb)
    assert f"audio input '{SPEAKER}' disappeared; retrying" in caplog.text
    assert "moved its recording to another input" in caplog.text
    sc.plug_back()
    now[0] += 3.0
    rest = read_samples(cap, 1600)
    assert cap.state == "running" and len(sc.recorders) == 2 and rest
    cap.stop()


def test_speaker_that_cannot_be_opened_is_a_clear_error(clip: np.ndarray) -> None:
    lb, _sd, sc = backend(clip)
    sc.refuse_open = True
    cap = MicrophoneCapture(AudioConfig(device="Loopback"), sd=lb)
    with pytest.raises(AudioDeviceError) as err:
        cap.start()
    assert str(err.value) == (
        f"cannot open audio input '{SPEAKER}': Error 0x88890008: AUDCLNT_E_UNSUPPORTED_FORMAT"
    )


def test_broken_loopback_listing_keeps_the_microphones(
    clip: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    lb, sd, sc = backend(clip)
    sc.broken_listing = True
    with caplog.at_level(logging.WARNING):
        assert [d.name for d in list_input_devices(lb)] == ["USB Mic", "Monitor of Speakers"]
    assert "cannot list loopback inputs (meeting audio): Error 0x80070490" in caplog.text
    # Microphones still go through PortAudio.
    cap = MicrophoneCapture(AudioConfig(device="USB Mic"), sd=lb)
    cap.start()
    assert len(sd.streams) == 1 and cap.device is not None and cap.device.name == "USB Mic"
    cap.stop()


def test_loopback_backend_per_platform(
    clip: np.ndarray, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sd, sc = FakeSoundDevice(clip), FakeSoundCard(clip)
    monkeypatch.setattr(sys, "platform", "darwin")
    # macOS 12: no way to record the system's output (a virtual device instead); 13+ is
    # ScreenCaptureKit's (tests/integration/test_audio_macos_capture.py).
    monkeypatch.setattr(macos_capture, "macos_version", lambda: (12, 7))
    assert with_loopback(sd) is sd
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(loopback, "com_apartment", contextlib.nullcontext)  # no COM here
    monkeypatch.setitem(sys.modules, "soundcard", sc)
    lb = with_loopback(sd)
    assert isinstance(lb, LoopbackAudio)
    assert [d.hostapi for d in list_input_devices(lb)][-1] == "Windows WASAPI (loopback)"
    monkeypatch.setattr(sys, "platform", "linux")
    sc.speakers = [("sink.monitor", "Monitor of Built-in Audio", 2)]
    last = list_input_devices(with_loopback(sd))[-1]
    # PulseAudio names its monitors itself; they are not renamed.
    assert (last.name, last.hostapi, last.loopback) == (
        "Monitor of Built-in Audio",
        "PulseAudio (monitor)",
        True,
    )
    monkeypatch.setitem(sys.modules, "soundcard", None)  # not installed: microphones only
    assert with_loopback(sd) is sd
    assert "meeting audio (loopback inputs) is unavailable" in caplog.text


class _NoSoundServer:
    """An import of soundcard as it fails without a PulseAudio/PipeWire server: its import
    asserts that the server answered (an empty AssertionError)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "soundcard":
            raise AssertionError
        return None


@pytest.mark.parametrize("microphones", [0, 1])
def test_meeting_audio_without_a_sound_server_says_so(
    clip: np.ndarray, monkeypatch: pytest.MonkeyPatch, microphones: int
) -> None:
    """Meeting audio chosen on Linux with no sound server running was said as "no audio input
    device found (is a microphone connected?)" (or as a name not found among the
    microphones): what is missing is the server its audio comes from."""
    sd = FakeSoundDevice(clip)
    sd.devices = sd.devices[: 1 + microphones]  # the speakers' output, the USB mic or not
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setitem(sys.modules, "sounddevice", sd)
    monkeypatch.delitem(sys.modules, "soundcard", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoSoundServer(), *sys.meta_path])
    cap = MicrophoneCapture(AudioConfig(device="Monitor of Built-in Audio"))
    with pytest.raises(AudioDeviceError) as e:
        cap.start()
    assert str(e.value) == (
        "cannot record the meeting's audio ('Monitor of Built-in Audio'): no PulseAudio or "
        "PipeWire sound server is running"
    )
    # A microphone is still looked for as a microphone.
    if not microphones:
        with pytest.raises(AudioDeviceError, match=r"^no audio input device found"):
            MicrophoneCapture(AudioConfig()).start()
    else:
        mic = MicrophoneCapture(AudioConfig(device="USB Mic"))
        mic.start()
        assert mic.device is not None and mic.device.name == "USB Mic"
        mic.stop()
