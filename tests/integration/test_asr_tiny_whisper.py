"""The real faster-whisper backend on real speech, fully offline, with a tiny random Whisper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.backend import AsrError
from subtitler.asr.faster_whisper import (
    FasterWhisperBackend,
    WhisperSettings,
    decode_audio_file,
    silero_session,
)
from subtitler.asr.replay import blocks_of, main, simulate
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.tiny_model import build_tiny_whisper
from subtitler.asr.vad import SileroStream

DATA = Path(__file__).resolve().parents[1] / "data"
CLIPS = [DATA / f"{n}.flac" for n in ("LJ001-0002", "LJ001-0008", "LJ001-0013")]


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_whisper(tmp_path_factory.mktemp("models") / "tiny-whisper")


@pytest.fixture(scope="module")
def backend(tiny_whisper: Path) -> FasterWhisperBackend:
    # Random weights never emit end-of-text on their own: cap the tokens per call.
    return FasterWhisperBackend(WhisperSettings(str(tiny_whisper), max_new_tokens=6))


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    gap = np.zeros(16000, np.float32)
    return np.concatenate([gap, *(x for c in CLIPS for x in (decode_audio_file(c), gap))])


def test_model_files_and_loading(tiny_whisper: Path, backend: FasterWhisperBackend) -> None:
    names = sorted(p.name for p in tiny_whisper.iterdir())
    assert names == ["config.json", "model.bin", "tokenizer.json", "vocabulary.json"]
    assert backend.multilingual
    assert (backend.device, backend.compute_type) == ("cpu", "int8")


def test_transcribe_gives_timed_words_and_a_language(backend: FasterWhisperBackend) -> None:
    audio = decode_audio_file(CLIPS[1])
    h = backend.transcribe(audio, t0=0.0, prompt="", language=None)
    assert h.language is not None and len(h.language) in (2, 3)  # detected (randomly: zh)
    assert 1 <= len(h.words) <= 6  # real tokenizer, random weights: " internet" x 3
    for w in h.words:
        assert w.text.startswith(" ") and 0.0 <= w.start <= w.end <= len(audio) / 16000 + 0.05
    fixed = backend.transcribe(audio, t0=5.0, prompt="has never been", language="en")
    assert fixed.language == "en" and fixed.words != h.words


def test_streaming_on_real_speech_keeps_up_with_real_time(backend: FasterWhisperBackend) -> None:
    audio = np.concatenate([np.zeros(16000, np.float32), *map(decode_audio_file, CLIPS)])
    rec = StreamingRecognizer(backend, StreamingOptions(), SileroStream(silero_session()))
    result = simulate(blocks_of(audio, 100), rec)
    assert result.updates and result.updates[-1].final
    # The three clips follow each other with no pause: one utterance, several runs.
    assert len(rec.runs) >= 3 and rec.runs[-1].final
    assert result.report.rtf < 1.0
    assert result.report.lag_max_s < 1.5  # each update came well within a chunk of its audio
    ids = [u.segment_id for u in result.updates]
    assert ids == sorted(ids)


def test_replay_cli_bench_json(tiny_whisper: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.json"
    args = [str(CLIPS[2]), "--model", str(tiny_whisper), "--max-new-tokens", "4", "--bench"]
    assert main([*args, "--json", str(out), "--language", "en"]) == 0
    text = capsys.readouterr().out
    assert "commit delay median" in text and "real-time factor" in text
    import json

    payload = json.loads(out.read_text())
    assert payload["summary"]["audio_s"] == pytest.approx(2.5845625)
    assert payload["summary"]["dropped_blocks"] == 0
    assert all(u["language"] == "en" for u in payload["updates"])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing.wav", "error: audio file not found: "),
        (
            lambda p: (p / "text.wav").write_text("not audio") and p / "text.wav",
            "error: cannot decode audio file ",
        ),
    ],
)
def test_replay_cli_bad_audio_is_one_line_exit_2(tmp_path: Path, capsys, make, message) -> None:  # type: ignore[no-untyped-def]
    assert main([str(make(tmp_path)), "--model", "tiny"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_replay_cli_bad_model_dir_is_one_line_exit_2(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.bin").write_bytes(b"x")
    assert main([str(CLIPS[0]), "--model", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "is not a CTranslate2 Whisper model (missing config.json" in err
    assert err.count("\n") == 1


def test_corrupt_model_dir_is_a_clear_error(tiny_whisper: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in tiny_whisper.iterdir():
        (bad / f.name).write_bytes(f.read_bytes() if f.name != "model.bin" else b"garbage")
    with pytest.raises(AsrError, match="cannot load Whisper model"):
        FasterWhisperBackend(WhisperSettings(str(bad)))
