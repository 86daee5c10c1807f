"""The installers leave PyAV (an FFmpeg with GPL parts) out and carry a stand-in for it
(packaging/stubs/av): faster-whisper still imports, and audio files (the self-test's clip, a
replayed file) are decoded with soundfile to the same samples PyAV gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from subtitler.audio.sources import AudioFileError, load_audio, pyav_available

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "packaging" / "stubs"
CLIP = ROOT / "assets" / "selftest" / "LJ001-0002.flac"

pytest.importorskip("soundfile", reason="soundfile (a dependency since the installers' FFmpeg)")


def decode_without_pyav(path: Path, tmp_path: Path) -> dict[str, object]:
    """Decode ``path`` in a process where ``import av`` finds the installers' stand-in."""
    out = tmp_path / "decoded.npy"
    code = (
        "import json, sys, numpy as np\n"
        "import av\n"
        "import faster_whisper  # imports av at its own import\n"
        "from subtitler.audio.sources import AudioStream, load_audio, pyav_available\n"
        f"path = {str(path)!r}\n"
        "whole = load_audio(path)\n"
        "streamed = np.concatenate(list(AudioStream(path, 4000)))\n"
        f"np.save({str(out)!r}, whole)\n"
        "print(json.dumps({'stand_in': av.SUBTITLER_STAND_IN, 'pyav': pyav_available(),\n"
        "  'streamed_equal': bool(np.array_equal(whole, streamed))}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STUBS), str(ROOT)]))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    got["samples"] = np.load(out)
    return got


def similar(a: np.ndarray, b: np.ndarray, max_lag: int = 0) -> float:
    """Correlation of the two signals, at the best shift of up to ``max_lag`` samples (the
    live resampler's filter delays by a fraction of a millisecond; FFmpeg's does not)."""
    n = min(len(a), len(b)) - 2 * max_lag
    best = -1.0
    for lag in range(-max_lag, max_lag + 1):
        x = a[max_lag + lag : max_lag + lag + n]
        y = b[max_lag : max_lag + n]
        best = max(best, float(np.corrcoef(x, y)[0, 1]))
    return best


def test_the_self_test_clip_decodes_without_pyav_as_with_it(tmp_path: Path) -> None:
    assert pyav_available()  # this environment has PyAV: the reference
    want = load_audio(CLIP)
    got = decode_without_pyav(CLIP, tmp_path)
    assert got["stand_in"] is True and got["pyav"] is False and got["streamed_equal"]
    samples = got["samples"]
    assert isinstance(samples, np.ndarray) and samples.dtype == np.float32
    assert abs(len(samples) - len(want)) <= 16  # 1 ms
    assert similar(samples, want) > 0.999


def test_a_44k_stereo_file_is_mixed_and_resampled_to_16k_mono(tmp_path: Path) -> None:
    import soundfile

    t = np.arange(44100 * 2) / 44100
    left = 0.3 * np.sin(2 * np.pi * 440 * t)
    right = 0.2 * np.sin(2 * np.pi * 660 * t)
    wav = tmp_path / "tone.wav"
    soundfile.write(str(wav), np.stack([left, right], axis=1), 44100, subtype="PCM_16")
    want = load_audio(wav)  # PyAV
    got = decode_without_pyav(wav, tmp_path)["samples"]
    assert isinstance(got, np.ndarray)
    assert abs(len(got) - 32000) <= 16 and abs(len(want) - 32000) <= 16
    assert similar(got[200:-200], want[200:-200], max_lag=16) > 0.99


def test_a_file_that_is_no_audio_is_one_line_without_pyav(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subtitler.audio.sources as sources

    monkeypatch.setattr(sources, "pyav_available", lambda: False)
    bad = tmp_path / "notes.wav"
    bad.write_text("not audio", encoding="utf-8")
    with pytest.raises(AudioFileError) as e:
        load_audio(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(AudioFileError, match="not found"):
        load_audio(tmp_path / "missing.wav")


def test_the_stand_in_answers_protocol_probes_as_a_module_does() -> None:
    """The bundle's self-test failed vad, whisper and the worker with "ImportError:
    av.__wrapped__": something probed the stand-in with hasattr, which lets only
    AttributeError through. A dunder probe now says "no such attribute"; anything else asked
    of it still says why PyAV is not there."""
    code = (
        "import av\n"
        "assert not hasattr(av, '__wrapped__')\n"
        "try:\n"
        "    av.open\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STUBS), str(ROOT)]))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("av.open: PyAV (FFmpeg) is not part of this build")


def test_a_wav_whose_header_says_16_hz_plays_in_bounded_memory(tmp_path: Path) -> None:
    """A WAV file whose sample-rate field is damaged to a few hertz, replayed by an
    installer (soundfile, no PyAV): each read of 65,536 frames came out as 1,000 times as
    many samples at once (at 1 Hz a billion: 9.8 GB and 26 s of the processor before the
    first block; here 16 Hz, 250 MB a block). Now the reads are sized to what comes out."""
    import struct

    import soundfile

    wav = tmp_path / "damaged-rate.wav"
    soundfile.write(wav, np.zeros(70_000, np.float32), 16000, subtype="PCM_16")
    data = bytearray(wav.read_bytes())
    data[24:32] = struct.pack("<II", 16, 32)  # the rate and the bytes a second
    wav.write_bytes(bytes(data))
    code = (
        "import sys, tracemalloc\n"
        "from subtitler.audio.sources import AudioStream, pyav_available\n"
        "assert not pyav_available()\n"
        "tracemalloc.start()\n"
        f"stream = iter(AudioStream({str(wav)!r}, 1600))\n"
        "got = sum(len(next(stream)) for _ in range(20))\n"
        "print(got, tracemalloc.get_traced_memory()[1])\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(STUBS), str(ROOT)]))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got, peak = map(int, done.stdout.split())
    assert got == 20 * 1600  # the file plays, as its header says (slowly)
    assert peak < 32 * 2**20, f"{peak / 2**20:.0f} MB held"
