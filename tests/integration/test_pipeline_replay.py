"""The headless replay command end to end: oracle transcript -> real policy -> real llama.cpp."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subtitler_research.asr.oracle import read_words_tsv
from subtitler_research.pipeline.replay import main

DATA = Path(__file__).resolve().parents[1] / "data"


def write_words(path: Path, n_words: int) -> Path:
    words = read_words_tsv(DATA / "ljspeech_talk.words.tsv")[:n_words]
    path.write_text("".join(f"{w.start}\t{w.end}\t{w.text.strip()}\n" for w in words))
    return path


def test_replay_oracle_translates_and_reports(
    tiny_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = write_words(tmp_path / "w.tsv", 40)
    out = tmp_path / "out.json"
    rc = main(
        [
            "--oracle",
            str(words),
            "--mt-model",
            str(tiny_gguf),
            "--speed",
            "8",
            "--loop",
            "2",
            "--json",
            str(out),
            "--quiet",
            "--timeout",
            "120",
        ]
    )
    assert rc == 0
    d = json.loads(out.read_text())
    m = d["metrics"]
    src = " ".join(s["source"] for s in d["segments"])
    # Both repetitions arrive, every segment finished with a translation and its metrics.
    assert src.count("Printing") == 2
    assert d["segments"] and all(s["translation"] for s in d["segments"])
    assert m["segments_final"] == m["segments_with_metrics"] == len(d["segments"])
    assert m["dropped_blocks"] == 0
    assert m["commit_delay_median_s"] is not None and m["translation_latency_median_s"] > 0
    assert d["displayed"] and d["run"]["rss_end_mb"] > 0


def test_replay_with_the_fixture_translator_and_its_draft_model(tmp_path: Path) -> None:
    """Real models end to end: the trained translator with its draft model guessing."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "translator"
    words = write_words(tmp_path / "w.tsv", 40)
    out = tmp_path / "out.json"
    argv = ["--oracle", str(words), "--mt-model", str(fixtures / "model.gguf"), "--speed", "8"]
    argv += ["--draft-model", str(fixtures / "draft.gguf"), "--draft-tokens", "2"]
    assert main([*argv, "--json", str(out), "--quiet", "--timeout", "120"]) == 0
    d = json.loads(out.read_text())
    m = d["metrics"]
    assert d["segments"] and all(s["translation"] for s in d["segments"])
    assert d["notices"] == [] and m["guessed_tokens"] > 0 and m["guessed_kept"] > 0
    assert d["run"]["draft_model"].endswith("draft.gguf")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--oracle", "/no/such.tsv"],
        ["x.wav", "--oracle", "y.tsv"],
        ["--oracle", "{words}", "--tgt-lang", "xx"],
    ],
)
def test_replay_usage_errors(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = write_words(tmp_path / "w.tsv", 5)
    argv = [a.replace("{words}", str(words)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")


def test_memory_column_never_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import math
    import sys

    from subtitler_research.pipeline import replay

    assert replay.rss_mb() > 1  # here: /proc
    real_open = builtins.open

    def no_proc(path, *a, **kw):  # type: ignore[no-untyped-def]
        if str(path).startswith("/proc"):
            raise FileNotFoundError(path)
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", no_proc)
    monkeypatch.setattr(sys, "platform", "win32")  # no /proc, no `resource` module
    value = replay.rss_mb()
    assert math.isnan(value) or value > 1


def test_real_speech_through_the_whole_pipeline_to_translated_lines(
    tiny_en: Path, tmp_path: Path
) -> None:
    """Real speech (three LJSpeech clips with pauses) -> the real tiny.en streaming
    recogniser -> the fixture translator: every line ends translated, the source within a
    stated WER of the transcript, and display latency is reported next to commit delay."""
    import numpy as np

    from subtitler.asr.faster_whisper import decode_audio_file
    from subtitler_research.asr.talk import write_wav
    from subtitler_research.asr.wer import word_error_rate
    from tests.conftest import speech_clips

    clips = speech_clips()[2:5]  # "Printing, then, ..." "it is of the first ..." "than in ..."
    pause = np.zeros(12800, np.float32)
    audio = np.concatenate([pause, *(x for p, _ in clips for x in (decode_audio_file(p), pause))])
    wav = tmp_path / "talk.wav"
    write_wav(wav, audio)
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "translator"
    out = tmp_path / "out.json"
    argv = [str(wav), "--asr-model", str(tiny_en), "--asr-threads", "2", "--speed", "2"]
    argv += ["--mt-model", str(fixtures / "model.gguf"), "--tgt-lang", "de"]
    assert main([*argv, "--json", str(out), "--quiet", "--timeout", "180"]) == 0
    d = json.loads(out.read_text())
    segs, m = d["segments"], d["metrics"]
    assert segs and all(s["translation"].strip() for s in segs)
    assert m["segments_final"] == m["segments_with_metrics"] == len(segs)
    w = word_error_rate(" ".join(t for _, t in clips), " ".join(s["source"] for s in segs))
    assert w.wer <= 0.15, w.line()  # measured here: 7.1% (3 of 42 words)
    keys = list(m)
    assert keys.index("display_latency_median_s") == keys.index("commit_delay_p90_s") + 1
    assert 0 < m["display_latency_median_s"] <= m["commit_delay_median_s"]


def test_replay_with_a_translator_slower_than_the_speech(tmp_path: Path) -> None:
    """Issue 17: the fixture translator made slower than the speech (--mt-step-ms). Its
    interim decodes are given up for newer updates or run long: their prefixes are shown
    (before, nothing until each line was finished), and the report says how slow it was."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "translator"
    words = write_words(tmp_path / "w.tsv", 60)  # ~22 s of the talk
    out = tmp_path / "out.json"
    argv = [
        "--oracle", str(words), "--mt-model", str(fixtures / "model.gguf"), "--tgt-lang", "de",
        "--speed", "8", "--mt-step-ms", "400", "--mt-partial-every-s", "0.06",
    ]  # fmt: skip
    assert main([*argv, "--json", str(out), "--quiet", "--timeout", "120"]) == 0
    d = json.loads(out.read_text())
    m = d["metrics"]
    # Slower than the speech: an update takes longer than the time to the next one.
    assert m["mt_step_ms"] >= 400 and m["mt_update_s"] > m["asr_interval_s"] > 0
    assert m["interim_prefixes"] > 0
    # Prefixes of open lines, and (when finished lines wait behind newer ones) lines shown
    # finished as they stood until their translation comes.
    prefixes = [x for x in d["displayed"] if x.get("partial")]
    assert prefixes and any(not x["final"] for x in prefixes)
    # Every line still ends translated, once.
    ids = [s["id"] for s in d["segments"]]
    assert ids == sorted(set(ids))
    assert all(s["translation"] for s in d["segments"])
    assert m["refresh_gap_p90_s"] is not None and m["update_gap_p90_s"] is not None
