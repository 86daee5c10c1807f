"""Native engines in worker processes: a llama.cpp or CTranslate2 abort is one line naming the
file, the app goes on without that model, and a later model works again."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.backend import AsrError
from subtitler.asr.faster_whisper import WhisperSettings
from subtitler.asr.isolated import WorkerWhisper
from subtitler.config import AppConfig, AsrConfig, MtConfig
from subtitler.display.masking import shown_by_k
from subtitler.isolation.worker import WorkerProcess
from subtitler.models.smoke_test import ModelCrashed
from subtitler.mt.engine import EngineResult
from subtitler.mt.isolated import Reloaded, WorkerEngine
from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
from subtitler.pipeline.pipeline import Pipeline, replace_mt
from subtitler.pipeline.transcript import read_transcript
from subtitler_research.pipeline.oracle import looped_words, oracle_factories
from tests.helpers import gguf_edit
from tests.helpers.damage import flip_gguf_weights, flip_whisper_weights
from tests.unit.test_pipeline import Events, wait_for

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
DATA = ROOT / "tests" / "data"
ASSERTS = {
    "duplicate-token": "llama-vocab.cpp",
    "block-count-1000": "llama-model.cpp",
}


def corrupt(kind: str, out: Path) -> Path:
    """The fixture translator with one header field broken the way issue 15 found."""
    lay = gguf_edit.parse(FIXTURE.read_bytes())
    if kind == "duplicate-token":
        data = gguf_edit.duplicate_token(lay)
    else:
        at, fmt = lay.scalar("llama.block_count")
        data = gguf_edit.put(lay.data, at, fmt, 1000)
    out.write_bytes(data)
    return out


@pytest.fixture(scope="module")
def bad_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    return {k: corrupt(k, d / f"{k}.gguf") for k in ASSERTS}


@pytest.mark.parametrize("kind", sorted(ASSERTS))
def test_a_model_that_aborts_llama_cpp_is_one_line_naming_it(
    kind: str, bad_models: dict[str, Path]
) -> None:
    path = bad_models[kind]
    # In the app's own process this file ends it (SIGABRT): what the worker is for.
    load_here = (
        "from subtitler.mt.llama_backend import LlamaLM, LlamaSettings;"
        f"LlamaLM(LlamaSettings({str(path)!r}))"
    )
    env = dict(os.environ, GGML_NO_BACKTRACE="1")
    died = subprocess.run([sys.executable, "-c", load_here], capture_output=True, env=env)
    assert died.returncode in (-signal.SIGABRT, 134, 3), died.returncode
    with pytest.raises(ModelCrashed) as e:
        WorkerEngine(MtConfig(model_path=str(path)), path)
    msg = str(e.value)
    assert msg.startswith(f"{path.name}: llama.cpp crashed loading it (")
    assert "GGML_ASSERT" in msg and ASSERTS[kind] in msg and "\n" not in msg


def test_models_verify_loads_the_file_and_fails_it(bad_models: dict[str, Path]) -> None:
    files = [str(FIXTURE), *(str(p) for p in bad_models.values())]
    out = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "models", "verify", *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("ok   ") and out.stderr == ""
    for line, p in zip(lines[1:], bad_models.values(), strict=True):
        assert line.startswith(f"FAIL {p.name}: llama.cpp crashed loading it (GGML_ASSERT") or (
            line.startswith(f"FAIL {p.name}: llama.cpp crashed loading it (") and "GGML" in line
        )


def test_models_verify_runs_the_real_test_and_names_damaged_weights(
    tmp_path: Path, tiny_en: Path
) -> None:
    """Flipped bytes in the weights pass every check of the header and size, and the file
    loads: a fixed sentence translated as nothing or a loop, a fixed clip recognised as no
    word, is "damaged" in one line (both were "ok")."""
    gguf = flip_gguf_weights(FIXTURE, tmp_path / "flipped.gguf", 2000)
    whisper = flip_whisper_weights(tiny_en, tmp_path / "flipped-whisper", 2000)
    files = [FIXTURE, gguf, tiny_en, whisper]
    out = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "models", "verify", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 1 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 4 and lines[0].startswith("ok   ") and lines[2].startswith("ok   ")
    assert lines[1].startswith("FAIL flipped.gguf: damaged: it translates a test sentence as ")
    assert lines[3].startswith("FAIL flipped-whisper: damaged: it recognises "), lines[3]


def test_replay_with_a_model_that_aborts_llama_cpp_runs_to_the_end(
    bad_models: dict[str, Path], tmp_path: Path
) -> None:
    words = tmp_path / "w.tsv"
    lines = (DATA / "ljspeech_talk.words.tsv").read_text().splitlines()[:12]
    words.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.json"
    bad = bad_models["duplicate-token"]
    argv = ["--oracle", str(words), "--mt-model", str(bad), "--speed", "10", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "subtitler_research.pipeline.replay", *argv, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    complaint = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(complaint) == 1 and bad.name in complaint[0] and "crashed" in complaint[0]
    assert "Traceback" not in done.stderr
    d = json.loads(out.read_text())
    assert d["segments"] and all(s["source"] and not s["translation"] for s in d["segments"])


def _pipeline(tmp_path: Path, model: Path) -> tuple[Pipeline, Events]:
    words = tmp_path / "w.tsv"
    words.write_text((DATA / "ljspeech_talk.words.tsv").read_text())
    cfg = AppConfig(
        mt=MtConfig(model_path=str(model), max_new_tokens=24), asr=AsrConfig(language="en")
    )
    ev = Events()
    factories = oracle_factories(looped_words(words))
    p = Pipeline(cfg, ev, factories, speed=6.0, transcript_path=tmp_path / "t.jsonl")
    return p, ev


def _translated_after(ev: Events, n: int) -> bool:
    return any(e.translation for e in ev.of(SubtitleEvent)[n:])


def _translating_worker(p: Pipeline, ev: Events) -> WorkerEngine:
    """The started pipeline's translator worker, once it has translated a line."""
    assert wait_for(lambda: _translated_after(ev, 0), timeout=60)
    engine = p._mt._model
    assert isinstance(engine, WorkerEngine) and engine.pid is not None
    return engine


def test_a_model_with_damaged_weights_is_said_when_it_loads(tmp_path: Path) -> None:
    """The pipeline's first load gives the translator its real test: damaged weights are
    said at once (issue 28: a replay showed 9 empty translations and no word)."""
    flipped = flip_gguf_weights(FIXTURE, tmp_path / "flipped.gguf", 2000)
    p, ev = _pipeline(tmp_path, flipped)
    p.start()
    try:
        assert wait_for(lambda: any("damaged" in e.message for e in ev.of(ErrorEvent)), 60)
        told = [e.message for e in ev.of(ErrorEvent) if "damaged" in e.message]
        assert told[0].startswith("flipped.gguf: damaged: it translates a test sentence as ")
        assert "\n" not in told[0] and not any(e.fatal for e in ev.of(ErrorEvent))
    finally:
        assert p.stop()
    (tmp_path / "good").mkdir()
    good, ev = _pipeline(tmp_path / "good", FIXTURE)
    good.start()
    try:
        assert wait_for(lambda: _translated_after(ev, 0), timeout=60)
        assert not [e for e in ev.of(ErrorEvent) if "damaged" in e.message]
    finally:
        assert good.stop()


def test_a_speech_model_with_damaged_weights_is_said_when_it_loads(
    tmp_path: Path, tiny_en: Path
) -> None:
    """The recogniser's first load recognises the self-test's clip once: weights that
    recognise no word of it are said at once (they recognised nothing, silently)."""
    from subtitler.pipeline.factories import real_factories

    flipped = flip_whisper_weights(tiny_en, tmp_path / "flipped-whisper", 2000)
    for model, damaged in ((flipped, True), (tiny_en, False)):
        cfg = AppConfig(
            asr=AsrConfig(model=str(model), language="en", device="cpu", threads=1),
        )
        cfg = dataclasses.replace(
            cfg,
            audio=dataclasses.replace(
                cfg.audio, source="file", file_path=str(DATA / "LJ001-0002.flac"), realtime=False
            ),
        )
        ev = Events()
        p = Pipeline(cfg, ev, real_factories(), transcript_path=tmp_path / f"{model.name}.jsonl")
        p.start()
        try:
            assert p.finished.wait(120)
        finally:
            assert p.stop()
        told = [e for e in ev.of(ErrorEvent) if e.where == "asr"]
        if damaged:
            assert [e.message for e in told] == [
                "speech model flipped-whisper: damaged: it recognises no word of a clip of "
                "speech: download or copy it again (`subtitler models verify` checks a "
                "folder); recognising with it anyway"
            ]
            assert not told[0].fatal
        else:
            assert told == []


def test_choosing_a_crashing_model_keeps_the_running_one(
    bad_models: dict[str, Path], tmp_path: Path
) -> None:
    p, ev = _pipeline(tmp_path, FIXTURE)
    p.start()
    try:
        assert wait_for(lambda: _translated_after(ev, 0), timeout=60)
        bad = bad_models["block-count-1000"]
        p.apply_config(replace_mt(p.config, model_path=str(bad)))
        assert wait_for(lambda: any(bad.name in e.message for e in ev.of(ErrorEvent)), 60)
        (err,) = [e for e in ev.of(ErrorEvent) if bad.name in e.message]
        assert "crashed" in err.message and not err.fatal and "\n" not in err.message
        n = len(ev.of(SubtitleEvent))
        assert wait_for(lambda: _translated_after(ev, n), timeout=60)  # the old model goes on
    finally:
        assert p.stop()


def test_a_translator_killed_mid_meeting_is_loaded_again_then_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash costs the update it happened in: the model is loaded again and translates the
    next lines; one that keeps crashing is given up and the meeting goes on untranslated."""
    from subtitler.isolation.worker import WorkerProcess

    p, ev = _pipeline(tmp_path, FIXTURE)
    p.start()
    try:
        engine = _translating_worker(p, ev)
        for _ in range(WorkerEngine.RESTARTS + 1):  # now and then: loaded again each time
            pid = engine.pid
            os.kill(pid, signal.SIGKILL)  # as a native abort during a decode would
            assert wait_for(lambda pid=pid: engine.pid not in (None, pid), 60)  # type: ignore[misc]
            n = len(ev.of(SubtitleEvent))
            assert wait_for(lambda n=n: _translated_after(ev, n), timeout=60)  # type: ignore[misc]
            assert p._mt._model is engine
        said = [e for e in ev.of(ErrorEvent) if "crashed" in e.message]
        assert said and all(
            e.message.startswith(f"translation failed: {FIXTURE.name}: llama.cpp crashed ")
            and e.message.endswith("; loaded it again")
            and not e.fatal
            for e in said
        ), [e.message for e in said]
        real = WorkerProcess.call

        def call(self: WorkerProcess, op: str, *args: object, **kw: object) -> object:
            if op == "translate" and self.pid is not None:  # every line, from now on
                os.kill(self.pid, signal.SIGKILL)
                assert wait_for(lambda: not self._proc.is_alive(), 10)
            return real(self, op, *args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(WorkerProcess, "call", call)
        assert wait_for(lambda: p._mt._model is None, 60)
        (gone,) = [e for e in ev.of(ErrorEvent) if "in a row" in e.message]
        assert gone.message == (
            f"{FIXTURE.name}: llama.cpp crashed translating 3 times in a row (signal SIGKILL; "
            "signal SIGKILL; signal SIGKILL); showing the transcript only (choose a model in "
            "Settings)"
        )
        assert not gone.fatal
        monkeypatch.setattr(WorkerProcess, "call", real)
        n = len(ev.of(SubtitleEvent))
        # Lines go on, as said; the finished ones reach the transcript.
        assert wait_for(lambda: any(e.final for e in ev.of(SubtitleEvent)[n:]), timeout=60)
        assert not any(e.translation for e in ev.of(SubtitleEvent)[n:])
        # Applying settings again loads it again (a new process).
        p.apply_config(replace_mt(p.config, max_new_tokens=20))
        m = len(ev.of(SubtitleEvent))
        assert wait_for(lambda: _translated_after(ev, m), timeout=60)
    finally:
        assert p.stop()
    finals = [e.source for e in ev.of(SubtitleEvent) if e.final]
    assert [r.source for r in read_transcript(tmp_path / "t.jsonl")] == finals


def _crash(engine: WorkerEngine, sig: signal.Signals = signal.SIGKILL) -> None:
    """The worker dies between two lines (as a native abort would), its death seen."""
    proc = engine._proc._proc
    assert proc is not None and engine.pid is not None
    os.kill(engine.pid, sig)
    assert wait_for(lambda: not proc.is_alive(), 10)


def _translate(engine: WorkerEngine, segment_id: int) -> EngineResult:
    return engine.translate(segment_id, "Good morning.", True, engine.mt.tgt_lang, "en")


def test_a_translator_that_crashes_now_and_then_is_not_given_up() -> None:
    """Crashes are counted in a row: a model that crashed once an hour was given up on its
    third crash of the meeting, however many lines it translated between."""
    engine = WorkerEngine(MtConfig(model_path=str(FIXTURE), max_new_tokens=8), FIXTURE)
    try:
        for k in range(WorkerEngine.RESTARTS + 2):
            _crash(engine)
            with pytest.raises(Reloaded):
                _translate(engine, 2 * k)
            assert _translate(engine, 2 * k + 1).text
    finally:
        engine.close()


def test_a_translator_that_crashes_on_every_line_is_given_up_saying_each_crash() -> None:
    engine = WorkerEngine(MtConfig(model_path=str(FIXTURE), max_new_tokens=8), FIXTURE)
    try:
        assert _translate(engine, 0).text
        signals = [signal.SIGKILL, signal.SIGABRT, signal.SIGKILL]
        for k, sig in enumerate(signals[:-1], start=1):
            _crash(engine, sig)
            with pytest.raises(Reloaded):
                _translate(engine, k)
        _crash(engine, signals[-1])
        with pytest.raises(ModelCrashed) as e:
            _translate(engine, len(signals))
        assert str(e.value) == (
            f"{FIXTURE.name}: llama.cpp crashed translating 3 times in a row (signal SIGKILL; "
            "signal SIGABRT; signal SIGKILL)"
        )
    finally:
        engine.close()


def test_a_crash_after_the_model_file_went_away_turns_translation_off_until_applied(
    tmp_path: Path,
) -> None:
    """A copy over the model in use (or its removal) crashes the worker at its next decode;
    loading it again then failed, the closed process stayed, and every later line came back
    empty, said nowhere, until the app was restarted."""
    model = tmp_path / "model.gguf"
    data = FIXTURE.read_bytes()
    model.write_bytes(data)
    p, ev = _pipeline(tmp_path, model)
    p.start()
    try:
        engine = _translating_worker(p, ev)
        model.unlink()
        os.kill(engine.pid, signal.SIGKILL)
        assert wait_for(lambda: p._mt.model_lost, 60)
        (off,) = [e for e in ev.of(ErrorEvent) if "cannot load it again" in e.message]
        assert (
            off.message.startswith(
                "model.gguf: llama.cpp crashed translating (signal SIGKILL); cannot load it "
                "again: translation model not found: "
            )
            and "; showing the transcript only (" in off.message
        ), off.message
        assert not off.fatal and p._mt._model is None
        model.write_bytes(data)  # put back: applying the settings loads it again
        p.apply_config(p.config)
        n = len(ev.of(SubtitleEvent))
        assert wait_for(lambda: _translated_after(ev, n), timeout=60)
    finally:
        assert p.stop()


def test_a_translator_that_stops_answering_is_ended_and_loaded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung engine (here a stopped process: as a native deadlock looks from outside) held
    every later line off the screen, the lines as said too, with no word; now it is ended
    once it has not answered for HUNG_S after it was asked to stop, and loaded again."""
    from subtitler.isolation import worker
    from subtitler.pipeline import stages

    monkeypatch.setattr(worker, "HUNG_S", 1.0)
    monkeypatch.setattr(stages, "STUCK_S", 1.0)
    p, ev = _pipeline(tmp_path, FIXTURE)
    p.start()
    try:
        engine = _translating_worker(p, ev)
        hung = engine.pid
        os.kill(hung, signal.SIGSTOP)
        assert wait_for(lambda: engine.pid != hung, 60)
        (said,) = [e.message for e in ev.of(ErrorEvent) if "hung" in e.message]
        assert said == (
            f"translation failed: {FIXTURE.name}: llama.cpp crashed translating (hung: no "
            "answer 1 s after it was asked to stop); loaded it again"
        )
        with pytest.raises(ProcessLookupError):
            os.kill(hung, 0)  # ended, not left stopped
        n = len(ev.of(SubtitleEvent))
        assert wait_for(lambda: _translated_after(ev, n), timeout=60)
    finally:
        assert p.stop()
    # Each line shown finished is in the transcript once (a line finished while the worker
    # was loaded again may be written as said at the stop, not shown translated).
    finals = [e.source for e in ev.of(SubtitleEvent) if e.final]
    written = [r.source for r in read_transcript(tmp_path / "t.jsonl")]
    assert set(finals) <= set(written) and len(set(written)) == len(written)


@pytest.fixture()
def first_decode_aborts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """llama.cpp aborts in the first worker's first decode (as a driver's fault would): that
    worker is sent SIGABRT when its first translation is asked. Returns its pid, once it is
    so crashed."""
    from subtitler.isolation.worker import WorkerProcess

    real = WorkerProcess.call
    crashed: list[int] = []

    def call(self: WorkerProcess, op: str, *args: object, **kw: object) -> object:
        if op == "translate" and self.pid is not None and not crashed:
            crashed.append(self.pid)
            os.kill(self.pid, signal.SIGABRT)
            assert wait_for(lambda: not self._proc.is_alive(), 10)
        return real(self, op, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(WorkerProcess, "call", call)
    return crashed


def test_a_crash_on_the_first_load_test_keeps_the_model_loaded_again(
    tmp_path: Path, first_decode_aborts: list[int]
) -> None:
    """The load's test sentence crashed it once: it was loaded again, then closed, and the
    meeting said "Translation off: ...; loaded it again" with no translator."""
    p, ev = _pipeline(tmp_path, FIXTURE)
    p.start()
    try:
        assert wait_for(lambda: _translated_after(ev, 0), timeout=60)
        said = [e.message for e in ev.of(ErrorEvent) if "crashed" in e.message]
        assert said[0] == (
            f"{FIXTURE.name}: llama.cpp crashed translating (signal SIGABRT); loaded it again "
            "(on its test sentence)"
        ), said
        assert not p._mt.model_lost
    finally:
        assert p.stop()


def test_a_crash_on_the_test_sentence_fails_a_files_test(first_decode_aborts: list[int]) -> None:
    """`models verify` and the first run's test of a file: a crash fails it as a crash (it
    said "...; loaded it again" of a model it had closed)."""
    from subtitler.mt.isolated import probe_translator

    with pytest.raises(ModelCrashed) as e:
        probe_translator(FIXTURE)
    assert str(e.value) == f"{FIXTURE.name}: llama.cpp crashed translating (signal SIGABRT)"
    assert len(first_decode_aborts) == 1  # not loaded a second time


def test_a_newer_update_aborts_a_decode_running_in_the_worker(tiny_gguf: Path) -> None:
    # A random model rarely says EOS: without the abort it would decode 200 tokens.
    mt = MtConfig(model_path=str(tiny_gguf), max_new_tokens=200, len_ratio=100.0, n_ctx=512)
    engine = WorkerEngine(mt, tiny_gguf)
    try:
        engine.translate(0, "warm up", False, mt.tgt_lang, "en")
        t0 = time.monotonic()
        out = engine.translate(
            0,
            "a long source sentence",
            False,
            mt.tgt_lang,
            "en",
            lambda: time.monotonic() - t0 > 0.03,
        )
        assert out.stats.aborted and 0 < out.stats.output_len < 200
        again = engine.translate(0, "a long source sentence", False, mt.tgt_lang, "en")
        assert not again.stats.aborted  # the engine took the next call normally
    finally:
        engine.close()


def test_a_slow_decode_in_the_worker_reports_its_prefix_as_it_goes(tiny_gguf: Path) -> None:
    """Issue 17: the prefix decoded so far crosses the process boundary while the decode goes
    on; the answer comes after every report, and each report starts the translation."""
    mt = MtConfig(
        model_path=str(tiny_gguf), max_new_tokens=60, len_ratio=100.0, n_ctx=512,
        partial_every_s=1e-6,
    )  # fmt: skip
    engine = WorkerEngine(mt, tiny_gguf)
    try:
        seen: list[EngineResult] = []
        out = engine.translate(
            0, "a long source sentence", False, mt.tgt_lang, "en", progress=seen.append
        )
        assert len(seen) >= 10 and not out.stats.aborted
        sizes = [len(r.tokens) for r in seen]
        assert sizes == sorted(sizes) and sizes[-1] <= len(out.tokens)
        for r in seen:
            assert out.tokens[: len(r.tokens)] == r.tokens
            assert out.text.startswith(r.text) and len(r.pieces) == len(r.tokens)
            assert shown_by_k(r.pieces, final=False)[0] == r.text  # as a display masks it
        quiet = engine.translate(
            1, "another sentence", False, mt.tgt_lang, "en"
        )  # no progress asked
        assert quiet.tokens
        off = dataclasses.replace(mt, partial_every_s=0.0)
        seen.clear()
        engine.configure(off)
        engine.translate(2, "a third one", False, off.tgt_lang, "en", progress=seen.append)
        assert seen == []
    finally:
        engine.close()


def test_the_engines_own_log_reaches_logging(
    bad_models: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        WorkerEngine(MtConfig(model_path=str(FIXTURE)), FIXTURE).close()
        with pytest.raises(ModelCrashed):
            WorkerEngine(MtConfig(model_path=str(bad_models["duplicate-token"])), FIXTURE)
    native = [r.getMessage() for r in caplog.records if r.name in ("llama.cpp", "subtitler.engine")]
    assert any("llama_model_loader: loaded meta data" in m for m in native)
    assert any("GGML_ASSERT(id_to_token.size() == token_to_id.size())" in m for m in native)


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from subtitler_research.asr.tiny_model import build_tiny_whisper

    return build_tiny_whisper(tmp_path_factory.mktemp("whisper") / "tiny")


def whisper_worker(folder: Path) -> WorkerWhisper:
    return WorkerWhisper(WhisperSettings(str(folder), device="cpu", threads=1, max_new_tokens=4))


def hear_a_second(w: WorkerWhisper) -> None:
    """One recognition of a second of silence."""
    w.transcribe(np.zeros(16000, np.float32), t0=0.0, prompt="", language="en")


def test_a_whisper_worker_that_dies_costs_one_recognition(tiny_whisper: Path) -> None:
    w = whisper_worker(tiny_whisper)
    try:
        hear_a_second(w)
        first = w.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with pytest.raises(AsrError) as e:
            hear_a_second(w)
        assert str(e.value).startswith("CTranslate2 crashed on a 1.0 s window (")
        assert "SIGKILL" in str(e.value)
        hear_a_second(w)  # loaded again, goes on
        assert w.pid not in (None, first) and w.crashes == 1
    finally:
        w.close()
    assert w.pid is not None
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(w.pid):
        time.sleep(0.05)
    assert not _alive(w.pid)  # close() ended the process


def test_a_whisper_worker_that_stops_answering_is_ended_and_loaded_again(
    tiny_whisper: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung recogniser (a stopped process here) was never noticed: no line, no word, the
    state "Listening…" for as long as it lasted."""
    from subtitler.asr import isolated

    w = whisper_worker(tiny_whisper)
    try:
        hear_a_second(w)
        hung = w.pid
        assert hung is not None
        os.kill(hung, signal.SIGSTOP)
        with monkeypatch.context() as m, pytest.raises(AsrError) as e:
            m.setattr(isolated, "HUNG_S", 1.0)  # (for this call only: a busy machine)
            hear_a_second(w)
        assert str(e.value) == (
            "CTranslate2 crashed on a 1.0 s window (hung: no answer by its deadline); "
            "loading the speech model again"
        )
        assert not _alive(hung)  # ended, not left stopped
        hear_a_second(w)  # loaded again, goes on
        assert w.pid not in (None, hung)
    finally:
        w.close()


def test_a_whisper_model_gone_after_a_crash_is_lost_at_once(
    tiny_whisper: Path, tmp_path: Path
) -> None:
    """Its folder removed (or damaged) and then a crash: every later recognition loaded it
    again and failed, ten in about 6 s, then a stop in CTranslate2's words."""
    import shutil

    from subtitler.types import EngineLost

    folder = tmp_path / "whisper"
    shutil.copytree(tiny_whisper, folder)
    w = whisper_worker(folder)
    try:
        hear_a_second(w)
        shutil.rmtree(folder)
        assert w.pid is not None
        os.kill(w.pid, signal.SIGKILL)
        with pytest.raises(AsrError):  # the crash costs this recognition
            hear_a_second(w)
        with pytest.raises(EngineLost) as e:
            hear_a_second(w)
        assert str(e.value).startswith(
            "the speech model cannot be loaded again after CTranslate2 crashed: "
        ) and "\n" not in str(e.value)
    finally:
        w.close()


def test_a_whisper_worker_ranks_languages_and_a_crash_there_costs_one_ranking(
    tiny_whisper: Path,
) -> None:
    w = whisper_worker(tiny_whisper)
    try:
        audio = np.zeros(16000, np.float32)
        ranked = w.rank_languages(audio)
        assert w.multilingual and len(ranked) == 5  # the five likeliest, over the pipe
        assert all(isinstance(lang, str) and 0.0 <= p <= 1.0 for lang, p in ranked)
        assert [p for _, p in ranked] == sorted((p for _, p in ranked), reverse=True)
        first = w.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with pytest.raises(AsrError, match=r"^CTranslate2 crashed on a 1\.0 s window \("):
            w.rank_languages(audio)
        assert w.rank_languages(audio) == ranked  # loaded again, the same model
        assert w.crashes == 1
    finally:
        w.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie that its parent (this process) has not reaped yet is gone too.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_an_engine_log_goes_with_the_engine_when_the_app_was_killed(tmp_path: Path) -> None:
    # The parent removes a worker's log when it closes the engine; an app that was killed
    # never does, and each of its workers left a log in the temporary folder (hundreds here).
    killed_app = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from subtitler.config import MtConfig\n"
        "from subtitler.mt.isolated import Reloaded, WorkerEngine\n"
        "e = WorkerEngine(MtConfig(model_path=sys.argv[1]), Path(sys.argv[1]))\n"
        "print(e.pid, flush=True)\n"
        "os._exit(9)  # no finalizer, no atexit: as a killed process ends\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", killed_app, str(FIXTURE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 9, out.stderr[-2000:]
    child = int(out.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (_alive(child) or list(tmp_path.glob("*.log"))):
        time.sleep(0.1)
    assert not _alive(child), "the engine outlived the app"
    assert list(tmp_path.glob("subtitler-engine-*.log")) == []


def test_the_logs_of_engines_killed_with_their_app_are_removed_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An engine killed with its app (a kill of the whole process group, the OOM killer) removes
    # its log neither way: each such pair left an empty subtitler-engine-*.log in the
    # temporary folder, for good. The next engine started removes those of processes gone,
    # and only those: a running app's, another file and a link stay.
    killed_both = (
        "import os, signal\n"
        "from subtitler.isolation.worker import WorkerProcess\n"
        "w = WorkerProcess('tests.helpers.idle_service:IdleService')\n"
        "print(w.start(), flush=True)\n"
        "os.kill(w.pid, signal.SIGKILL)\n"
        "os._exit(9)  # no finalizer, no atexit: as a killed process ends\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", killed_both],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 9, out.stderr[-2000:]
    child = int(out.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    left = list(tmp_path.glob("subtitler-engine-*.log"))
    assert len(left) == 1 and left[0].stat().st_size == 0, left  # what the pair left
    running = tmp_path / f"subtitler-engine-{os.getppid()}-abcd1234.log"  # a running app's
    running.touch()
    other = tmp_path / "subtitler-engine-notes.log"
    other.touch()
    target = tmp_path / "kept.txt"
    target.write_text("kept")
    link = tmp_path / f"subtitler-engine-{child}-link.log"
    link.symlink_to(target)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    w = WorkerProcess("tests.helpers.idle_service:IdleService")
    try:
        assert w.start() == w.pid
        assert w.call("ping") == "pong"
        assert not left[0].exists()
        mine = [p for p in tmp_path.glob("subtitler-engine-*.log") if str(os.getpid()) in p.name]
        assert len(mine) == 1  # this worker's own log, while it runs
        assert running.exists() and other.exists() and link.is_symlink()
        assert target.read_text() == "kept"
    finally:
        w.close()
