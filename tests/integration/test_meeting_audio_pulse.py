"""Meeting audio for real: a private PulseAudio server with a null sink plays a real speech clip
(paplay), and the app's capture path (real sounddevice + real soundcard behind
subtitler.audio.loopback) records it from the sink's monitor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.faster_whisper import decode_audio_file
from tests.helpers.pulse import pulse_server
from tests.helpers.subproc import run_json
from tests.helpers.system import needs_programs

ROOT = Path(__file__).resolve().parents[2]
CLIP = ROOT / "tests" / "data" / "LJ001-0008.flac"

pytestmark = needs_programs("pulseaudio", "paplay", why="PulseAudio meeting audio")

# Runs in its own process: soundcard connects to the server when it is imported.
RECORD = """
import json, subprocess, sys, time
import numpy as np
import sounddevice
from subtitler.audio.capture import MicrophoneCapture, list_input_devices
from subtitler.audio.loopback import with_loopback
from subtitler.config import AudioConfig

clip, out = sys.argv[1], sys.argv[2]
audio = with_loopback(sounddevice)
names = [(d.name, d.loopback) for d in list_input_devices(audio)]
cap = MicrophoneCapture(AudioConfig(device="Monitor of Meeting", block_ms=100), sd=audio)
cap.start()
player = subprocess.Popen(["paplay", "--device=meeting", clip])
blocks, quiet_since = [], None
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    b = cap.read(timeout=0.2)
    if b is not None:
        blocks.append(b)
    if player.poll() is not None:
        quiet_since = quiet_since or time.monotonic()
        if time.monotonic() - quiet_since > 1.0:
            break
cap.stop()
np.save(out, np.concatenate([b.samples for b in blocks]))
t0s = [b.t0 for b in blocks]
steps = sorted({round(b - a, 3) for a, b in zip(t0s, t0s[1:])})
print(json.dumps({"names": names, "device": cap.device.name, "paplay": player.returncode,
                  "dropped": cap.dropped, "steps": steps}))
"""


@pytest.fixture()
def pulse(tmp_path: Path) -> Iterator[dict[str, str]]:
    with pulse_server(tmp_path) as env:
        yield env


def test_meeting_audio_is_recorded_from_a_pulseaudio_monitor(
    pulse: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    out = tmp_path / "got.npy"
    info = run_json([str(script), str(CLIP), str(out)], pulse, timeout=90)
    assert ["Monitor of Meeting", True] in info["names"]
    assert info["device"] == "Monitor of Meeting" and info["paplay"] == 0
    assert info["dropped"] == 0 and info["steps"] == [0.1]  # gapless 100 ms blocks
    got = np.load(out)
    ref = decode_audio_file(CLIP)
    # Where the clip is in the recording (PulseAudio resampled it twice, 22.05 -> 44.1 -> 16 kHz,
    # and a stream starting on a busy sink can lose its first ~100 ms to the sink's rewind).
    n = len(got) + len(ref)
    corr = np.fft.irfft(np.fft.rfft(got, n) * np.conj(np.fft.rfft(ref, n)), n)
    lag = int(np.argmax(corr))
    lag = lag - n if lag > n // 2 else lag
    a, b = (got[lag:], ref) if lag >= 0 else (got, ref[-lag:])
    m = min(len(a), len(b))
    assert m >= 0.9 * len(ref), f"only {m / len(ref):.0%} of the clip was recorded (lag {lag})"
    r = float(np.corrcoef(a[:m], b[:m])[0, 1])
    assert r > 0.95, f"the recording matches the clip only with r = {r:.3f} (lag {lag})"


def test_no_sound_server_is_said_in_words(tmp_path: Path) -> None:
    """Without a PulseAudio/PipeWire server soundcard's import fails with an empty
    AssertionError: the self-test line and the log name the cause instead."""
    import os
    import subprocess
    import sys

    code = (
        "import sounddevice\n"
        "from subtitler.selftest import check_meeting_audio\n"
        "print(check_meeting_audio(sounddevice))\n"
    )
    script = tmp_path / "check.py"
    script.write_text(code)
    env = dict(os.environ, PULSE_SERVER=f"unix:{tmp_path / 'nobody-listens'}")
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "meeting audio unavailable (RuntimeError: no PulseAudio or PipeWire sound server is "
        "running)"
    )
