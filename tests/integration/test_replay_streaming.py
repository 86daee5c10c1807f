"""File replay decodes as it plays: the same samples as a whole-file decode, memory flat in the
file's length, and ``--loop`` plays an audio file N times (it played it once)."""

from __future__ import annotations

import re
import tracemalloc
import wave
from pathlib import Path

import numpy as np
import pytest

from subtitler.audio import sources
from subtitler.audio.inputs import open_audio
from subtitler.audio.paced import PacedFileSource
from subtitler.audio.sources import AudioFileError, AudioStream, load_audio
from subtitler.config import AudioConfig
from subtitler.pipeline.clock import StreamClock
from subtitler.types import SILENCE_DBFS

DATA = Path(__file__).resolve().parents[1] / "data"
CLIP = DATA / "LJ001-0002.flac"  # 22.05 kHz FLAC: decoded and resampled to 16 kHz


def play(
    cfg: AudioConfig, loop: int = 1, loop_gap_s: float = 1.0
) -> tuple[np.ndarray, list[float]]:
    """Every block a file source releases (as fast as it can), and their start times."""
    src = open_audio(cfg, StreamClock(base=lambda: 0.0), loop=loop, loop_gap_s=loop_gap_s)
    src.start()
    out, t0s = [], []
    while not src.exhausted:
        block = src.read(0.0)
        assert block is not None
        out.append(block.samples)
        t0s.append(block.t0)
    return np.concatenate(out), t0s


def file_cfg(path: Path) -> AudioConfig:
    return AudioConfig(source="file", file_path=str(path), realtime=False, block_ms=100)


def test_streamed_samples_are_the_decoded_file() -> None:
    whole = load_audio(CLIP)
    blocks = list(AudioStream(CLIP, 1600))
    assert [len(b) for b in blocks[:-1]] == [1600] * (len(blocks) - 1)
    np.testing.assert_array_equal(np.concatenate(blocks), whole)


def test_loop_plays_an_audio_file_n_times() -> None:
    whole = load_audio(CLIP)
    gap = np.zeros(16000, np.float32)
    samples, t0s = play(file_cfg(CLIP), loop=3, loop_gap_s=1.0)
    np.testing.assert_array_equal(samples, np.concatenate([whole, gap, whole, gap, whole]))
    assert t0s == pytest.approx([i * 0.1 for i in range(len(t0s))])  # one timeline


def write_wav(path: Path, seconds: int) -> None:
    """A long 16-bit mono 16 kHz WAV of a tone, written a second at a time."""
    tone = (np.sin(np.arange(16000) * 2 * np.pi * 440 / 16000) * 8000).astype("<i2").tobytes()
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        for _ in range(seconds):
            w.writeframes(tone)


def played_peak(cfg: AudioConfig, loop: int = 1) -> tuple[int, int]:
    """(samples played, peak bytes Python allocated while the source played them)."""
    tracemalloc.start()
    try:
        src = open_audio(cfg, StreamClock(base=lambda: 0.0), loop=loop)
        src.start()
        n = 0
        while (block := src.read(0.0)) is not None:
            n += len(block.samples)
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_in_the_file_length(tmp_path: Path) -> None:
    """A 10-minute file (19 MB of 16-bit samples, 38 MB as float32), played once and twice:
    a few blocks and PyAV's frames are held, never the file (decoding it whole did)."""
    long = tmp_path / "long.wav"
    write_wav(long, 600)
    n, peak = played_peak(file_cfg(long))
    assert n == 600 * 16000 and peak < 4_000_000, peak
    n, peak = played_peak(file_cfg(long), loop=2)
    assert n == 2 * 600 * 16000 + 16000 and peak < 4_000_000, peak


def test_files_that_cannot_be_played_fail_at_open(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match=r"^audio file not found: .*nope\.wav$"):
        open_audio(file_cfg(tmp_path / "nope.wav"), StreamClock(base=lambda: 0.0))
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF not really a wave file")
    with pytest.raises(AudioFileError, match=r"^cannot decode audio file .*junk\.wav: "):
        open_audio(file_cfg(junk), StreamClock(base=lambda: 0.0))


def test_a_file_cut_short_plays_what_it_has(tmp_path: Path) -> None:
    cut = tmp_path / "cut.wav"
    write_wav(cut, 3)
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2])  # the header still promises 3 s
    samples, _ = play(file_cfg(cut))
    assert 0 < len(samples) <= 3 * 16000


@pytest.mark.parametrize("decoder", ["pyav", "soundfile"])
def test_a_file_cut_short_before_it_plays_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoder: str
) -> None:
    """A WAV file cut short before the replay (a copy broken off, a recording whose writer
    was killed after its header was written) played what it holds and ended as if the
    recording had, without a word: its header promises more than it holds."""
    if decoder == "soundfile":
        monkeypatch.setattr(sources, "pyav_available", lambda: False)
    cut = tmp_path / "cut.wav"
    write_wav(cut, 4)
    data = cut.read_bytes()
    cut.write_bytes(data[: 44 + 2 * 16000 * 3 // 2])  # its header promises 4 s; 1.5 s left
    src = open_audio(file_cfg(cut), StreamClock(base=lambda: 0.0))
    src.start()
    while src.read(0.0) is not None:
        pass
    assert src.exhausted and src.broke_off == (
        "the replay of cut.wav ended at 1.5 s: the file was cut short before it played "
        "(its header promises 4.0 s, it holds 1.5 s)"
    )
    # Its header mended (what a player's "repair" does): nothing to say.
    with wave.open(str(cut), "rb") as r:
        frames = r.readframes(r.getnframes())
    with wave.open(str(cut), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(frames)
    src = open_audio(file_cfg(cut), StreamClock(base=lambda: 0.0))
    src.start()
    while src.read(0.0) is not None:
        pass
    assert src.exhausted and src.broke_off == ""


@pytest.mark.parametrize("decoder", ["pyav", "soundfile"])
def test_a_file_cut_short_decoded_whole_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, decoder: str
) -> None:
    """The same WAV file cut short, decoded whole (load_audio, FileSource.open): its audio
    came back without a word that the recording was longer. It keeps the audio it has and
    says so in one line, as the replay does: to the caller, in the log and in the source."""
    if decoder == "soundfile":
        monkeypatch.setattr(sources, "pyav_available", lambda: False)
    cut = tmp_path / "cut.wav"
    write_wav(cut, 4)
    data = cut.read_bytes()
    cut.write_bytes(data[: 44 + 2 * 16000 * 3 // 2])  # its header promises 4 s; 1.5 s left
    why = (
        f"audio file {cut} ends at 1.5 s: the file was cut short before it was read "
        "(its header promises 4.0 s, it holds 1.5 s)"
    )
    with caplog.at_level("WARNING", logger=sources.__name__):
        audio = load_audio(cut)
    assert len(audio) == 16000 * 3 // 2
    assert [r.getMessage() for r in caplog.records] == [why]
    said: list[str] = []
    load_audio(cut, broke=said.append)
    assert said == [why]
    src = sources.FileSource.open(cut, realtime=False)
    assert src.broke_off == why and src.duration == 1.5
    # Whole: nothing to say.
    whole = tmp_path / "whole.wav"
    write_wav(whole, 2)
    said.clear()
    assert len(load_audio(whole, broke=said.append)) == 2 * 16000 and said == []
    assert sources.FileSource.open(whole).broke_off == ""


def test_a_played_files_level_is_its_last_blocks_dbfs() -> None:
    """The level goes in dBFS from the input to the meters, a file's as a device's."""
    tone = 0.5 * np.sin(np.arange(1600) * 2 * np.pi * 440 / 16000).astype(np.float32)
    src = PacedFileSource(
        [tone, np.zeros(1600, np.float32)], StreamClock(base=lambda: 0.0), realtime=False
    )
    assert src.level == SILENCE_DBFS  # nothing played yet
    src.start()
    assert src.read(0.0) is not None
    assert src.level == pytest.approx(-9.03, abs=0.01)  # a sine at half scale
    assert src.read(0.0) is not None
    assert src.level == SILENCE_DBFS


CUT_SAID = (
    r"^the replay of long\.wav ended at \d+\.\d s: the file was cut short while it played "
    r"\(\d+ KB, then \d+ KB\)$"
)


@pytest.mark.parametrize("decoder", ["pyav", "soundfile"])
def test_a_file_cut_short_while_it_plays_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoder: str
) -> None:
    """A replay whose file was cut short while it played ended as if the recording had
    ended there: nothing said why."""
    if decoder == "soundfile":
        monkeypatch.setattr(sources, "pyav_available", lambda: False)
    long = tmp_path / "long.wav"
    write_wav(long, 20)
    src = open_audio(file_cfg(long), StreamClock(base=lambda: 0.0))
    src.start()
    assert src.read(0.0) is not None
    with long.open("r+b") as f:
        f.truncate(long.stat().st_size // 4)
    while src.read(0.0) is not None:
        pass
    assert src.exhausted and re.match(CUT_SAID, src.broke_off), src.broke_off
    whole = tmp_path / "whole.wav"  # a file left as it is says nothing
    write_wav(whole, 2)
    src = open_audio(file_cfg(whole), StreamClock(base=lambda: 0.0))
    src.start()
    while src.read(0.0) is not None:
        pass
    assert src.exhausted and src.broke_off == ""


def test_a_replay_cut_short_says_so_once_and_keeps_its_lines(tmp_path: Path) -> None:
    from subtitler.config import AppConfig, MtConfig
    from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
    from subtitler.pipeline.pipeline import Factories, Pipeline
    from subtitler.pipeline.transcript import read_transcript
    from tests.helpers.fake_pipeline import ScriptedRecognizer, Step, echo_lm, loader_for

    long = tmp_path / "long.wav"
    write_wav(long, 20)
    events: list[object] = []
    script = [
        Step(0.5, 0, ["good"]),
        Step(1.5, 0, ["good", "morning."], final=True),
        Step(2.0, 1, ["the", "budget"]),
    ]

    def audio(cfg: AudioConfig, clock: StreamClock) -> PacedFileSource:
        src = open_audio(file_cfg(long), clock)
        with long.open("r+b") as f:  # cut while it plays: its first block is decoded
            f.truncate(long.stat().st_size // 4)
        assert isinstance(src, PacedFileSource)
        return src

    p = Pipeline(
        AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16)),
        events.append,
        Factories(
            audio=audio,
            recognizer=lambda a: ScriptedRecognizer(script),
            model=loader_for(echo_lm()),
        ),
        transcript_path=tmp_path / "transcript.jsonl",
    )
    p.start()
    assert p.finished.wait(30)
    assert p.stop()
    said = [e.message for e in events if isinstance(e, ErrorEvent)]
    assert len(said) == 1 and re.match(CUT_SAID, said[0]), said
    finals = [e for e in events if isinstance(e, SubtitleEvent) and e.final]
    assert [e.source for e in finals] == ["good morning.", "the budget"]
    records = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in records] == ["good morning.", "the budget"]
