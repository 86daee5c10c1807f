"""File replay: real decoding, block times, 1x pacing on an injected clock, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.audio.sources import AudioFileError, FileSource, load_audio

DATA = Path(__file__).resolve().parents[1] / "data"


class FakeClock:
    """A clock that only moves when someone sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.t = 50.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 6))
        self.t += s


def test_file_decodes_to_16k_mono_and_blocks_cover_it_exactly() -> None:
    audio = load_audio(DATA / "LJ001-0002.flac")
    assert audio.dtype == np.float32 and len(audio) == 30393  # 1.8996 s
    blocks = list(FileSource(audio, realtime=False, block_ms=100))
    assert len(blocks) == 19 and [b.t0 for b in blocks[:3]] == [0.0, 0.1, 0.2]
    np.testing.assert_array_equal(np.concatenate([b.samples for b in blocks]), audio)
    assert blocks[-1].duration == pytest.approx(0.0996, abs=1e-4)


def test_realtime_releases_each_block_when_it_has_played() -> None:
    clock = FakeClock()
    src = FileSource(
        np.zeros(8000, np.float32), realtime=True, block_ms=100, clock=clock, sleep=clock.sleep
    )
    it = iter(src)
    first = next(it)
    assert clock.sleeps == [0.1] and first.t0 == 0.0
    clock.t += 0.35  # the consumer was busy for 3.5 blocks
    rest = list(it)
    # Three blocks were due already (no waiting); the last one keeps the original schedule.
    assert [b.t0 for b in rest] == [0.1, 0.2, 0.3, 0.4]
    assert clock.sleeps == [0.1, 0.05]
    assert clock.t == pytest.approx(50.5)


def test_as_fast_as_possible_never_sleeps() -> None:
    clock = FakeClock()
    src = FileSource(np.zeros(16000, np.float32), realtime=False, clock=clock, sleep=clock.sleep)
    assert len(list(src)) == 10 and clock.sleeps == []


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match=r"^audio file not found: .*nope.mp3$"):
        FileSource.open(tmp_path / "nope.mp3")
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF not really a wave file")
    # What the decoder said, in words (it once said only "InvalidDataError").
    with pytest.raises(
        AudioFileError,
        match=r"^cannot decode audio file .*junk.wav: Invalid data found when processing input$",
    ):
        load_audio(junk)


def test_a_video_without_sound_is_said_so(tmp_path: Path) -> None:
    """A video with no sound track given to --replay: one line saying so (it was "cannot
    decode audio file …: tuple index out of range", PyAV's IndexError for audio stream 0)."""
    av = pytest.importorskip("av")
    from subtitler.audio import sources
    from subtitler.audio.inputs import open_audio
    from subtitler.config import AudioConfig

    if not sources.pyav_available():
        pytest.skip("decoded by soundfile here, which reads no video container")
    video = tmp_path / "screen.mp4"
    with av.open(str(video), "w") as out:
        stream = out.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(5):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 40 * i, np.uint8), "rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    said = r"^cannot decode audio file .*screen\.mp4: it has no sound track \(a video without"
    with pytest.raises(AudioFileError, match=said):
        open_audio(AudioConfig(source="file", file_path=str(video)), lambda: 0.0)
    with pytest.raises(AudioFileError, match=said):
        load_audio(video)
