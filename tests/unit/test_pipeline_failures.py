"""One failed call costs one update; a slow decode at quit loses no finished line."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from subtitler.asr.backend import Hypothesis
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.config import AppConfig, MtConfig
from subtitler.mt.completions import ServerError
from subtitler.mt.engine import EngineResult
from subtitler.mt.output_rules import ECHO
from subtitler.mt.remote import RemoteEngine
from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
from subtitler.pipeline.pipeline import Factories, Pipeline
from subtitler.pipeline.stages import ModelLoader
from subtitler.pipeline.transcript import read_transcript
from subtitler.repeats import LOOP
from subtitler.types import AudioBlock, EngineLost, UpdateStats, Word
from tests.helpers.fake_pipeline import (
    FakeSource,
    ScriptedRecognizer,
    SlowLM,
    Step,
    echo_lm,
    loader_for,
)
from tests.unit.test_pipeline import Events, make, wait_for


class StuckLM(SlowLM):
    """Every evaluate blocks for ``delay`` s, like one long native llama_decode that no abort
    flag can interrupt (a CPU-class translator on a long prompt)."""


def test_quit_during_a_slow_decode_keeps_every_finished_line(tmp_path: Path) -> None:
    lm = StuckLM(delay=3.0)
    script = [Step(0.1 * (i + 1), i, [f"line{i}", "done."], final=True) for i in range(8)]
    p, ev, _, _ = make(tmp_path, lm=lm, script=script, source=FakeSource(2.0, speed=20.0))
    p.start()
    assert lm.busy.wait(5)  # the first line's decode is running...
    assert wait_for(lambda: len(p.mailbox) >= 7)  # ...and the other seven wait behind it
    t0 = time.monotonic()
    p.stop(timeout=0.5)  # the user quits
    assert time.monotonic() - t0 < 2.0
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == [f"line{i} done." for i in range(8)]
    # The decode ends after the transcript was closed: nothing is written twice, nothing raises.
    errors: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda a: errors.append(a.exc_value)  # type: ignore[assignment,return-value]
    try:
        assert wait_for(lambda: not p._mt.is_alive(), timeout=10)
    finally:
        threading.excepthook = old_hook
    assert errors == []
    assert [r.source for r in read_transcript(tmp_path / "transcript.jsonl")] == [
        f"line{i} done." for i in range(8)
    ]
    assert not any("closed file" in e.message for e in ev.of(ErrorEvent))


class FlakyRecognizer(ScriptedRecognizer):
    """Raises at the calls whose number is in ``fail_at`` (1-based), else follows the script."""

    def __init__(self, steps: Sequence[Step], fail_at: set[int]) -> None:
        super().__init__(steps)
        self.fail_at, self.calls = fail_at, 0

    def process(self, now: float = 0.0):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls in self.fail_at:
            raise IndexError("index 0 is out of bounds for axis 0 with size 0")
        return super().process(now)


def _run_with(
    rec: ScriptedRecognizer, tmp_path: Path, seconds: float = 3.0
) -> tuple[Pipeline, Events]:
    cfg = AppConfig(mt=MtConfig(model_path=""))
    ev = Events()
    f = Factories(
        lambda a, c: FakeSource(seconds, speed=20.0), lambda a: rec, loader_for(SlowLM(0))
    )
    p = Pipeline(cfg, ev, f, transcript_path=tmp_path / "t.jsonl")
    p.start()
    assert p.finished.wait(15)
    p.stop()
    return p, ev


def test_one_failed_recogniser_call_costs_one_update_not_the_meeting(tmp_path: Path) -> None:
    script = [
        Step(0.5, 0, ["hello", "there."], final=True),
        Step(2.0, 1, ["still", "here."], final=True),
    ]
    rec = FlakyRecognizer(script, fail_at={3, 4})
    _, ev = _run_with(rec, tmp_path)
    finals = [e.source for e in ev.of(SubtitleEvent) if e.final]
    assert finals == ["hello there.", "still here."]
    asr_errors = [e for e in ev.of(ErrorEvent) if e.where == "asr"]
    assert len(asr_errors) == 1 and not asr_errors[0].fatal  # one line for the streak
    assert "IndexError" in asr_errors[0].message
    assert [r.source for r in read_transcript(tmp_path / "t.jsonl")] == finals


def test_a_recogniser_that_always_fails_stops_with_a_clear_line(tmp_path: Path) -> None:
    rec = FlakyRecognizer([Step(0.5, 0, ["hi."], final=True)], fail_at=set(range(1, 10_000)))
    _, ev = _run_with(rec, tmp_path, seconds=30.0)
    errors = [e for e in ev.of(ErrorEvent) if e.where == "asr"]
    assert errors[-1].fatal
    assert errors[-1].message.startswith("speech recognition stopped: the last ")
    assert "failed" in errors[-1].message and "IndexError" in errors[-1].message


class LosingRecognizer(ScriptedRecognizer):
    """Its model cannot be loaded again after a crash from the ``lost_at``-th call on."""

    def __init__(self, steps: Sequence[Step], lost_at: int) -> None:
        super().__init__(steps)
        self.lost_at, self.calls = lost_at, 0

    def process(self, now: float = 0.0):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls >= self.lost_at:
            raise EngineLost("the speech model cannot be loaded again after CTranslate2 "
                             "crashed: tiny: model directory not found")  # fmt: skip
        return super().process(now)


def test_a_speech_model_lost_stops_recognition_at_once_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """Each later recognition loaded it again and failed: ten in a row, then a stop in
    CTranslate2's words, the line being said cut off."""
    rec = LosingRecognizer([Step(0.3, 0, ["hello", "there."], final=True)], lost_at=12)
    _, ev = _run_with(rec, tmp_path, seconds=30.0)
    errors = [e for e in ev.of(ErrorEvent) if e.where == "asr"]
    assert [(e.message, e.fatal) for e in errors] == [
        (
            "speech recognition stopped: the speech model cannot be loaded again after "
            "CTranslate2 crashed: tiny: model directory not found; put it back (or choose "
            "another speech model in Settings) and press Start",
            True,
        )
    ]
    assert rec.calls == 12  # not retried
    assert [r.source for r in read_transcript(tmp_path / "t.jsonl")] == ["hello there."]


class Backend:
    """A recogniser backend that hears the scripted words and fails on chosen calls."""

    def __init__(self, fail_at: set[int]) -> None:
        self.fail_at, self.calls = fail_at, 0

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        rank_languages: bool = False,
    ) -> Hypothesis:
        self.calls += 1
        if self.calls in self.fail_at:
            raise IndexError("time_indices[jumps]")
        n = len(audio) / 16000
        words = [
            Word(w, 0.3 * i, 0.3 * i + 0.25)
            for i, w in enumerate(["one", "two", "three", "four"])
            if 0.3 * i + 0.25 <= n
        ]
        return Hypothesis(tuple(words), "en")

    def set_hotwords(self, hotwords: str) -> None:
        """It hears the scripted words whatever is expected."""

    def close(self) -> None:
        """Nothing to release."""


def test_a_failed_final_run_closes_the_segment_with_what_was_committed() -> None:
    be = Backend(fail_at=set())
    rec = StreamingRecognizer(be, StreamingOptions(vad=False, min_chunk_s=0.5, language="en"))
    out = []
    for i in range(12):  # 1.2 s: two runs agree on the first words
        rec.insert_audio(AudioBlock(np.zeros(1600, np.float32), 0.1 * i))
        out += rec.process(0.1 * (i + 1))
    committed = out[-1].committed_text
    assert committed and not out[-1].final
    be.fail_at = {be.calls + 1}  # the final pass fails
    try:
        out2 = rec.finish(1.2)
    except IndexError:
        out2 = rec.process(1.3)  # the failure is reported; the closed segment follows
    finals = [u for u in out2 if u.final]
    assert [u.committed_text for u in finals] == [committed]


def test_a_backend_that_always_fails_ends_recognition_after_the_limit(tmp_path: Path) -> None:
    """Most recogniser calls only buffer audio: they must not hide that every recognition
    fails (the run of failures is counted in recognitions, not calls)."""
    rec = StreamingRecognizer(Backend(fail_at=set(range(1, 10_000))), StreamingOptions(vad=False))
    _, ev = _run_with(rec, tmp_path, seconds=30.0)
    errors = [e for e in ev.of(ErrorEvent) if e.where == "asr"]
    assert [e.fatal for e in errors] == [False, True]
    assert (
        errors[0].message
        == "speech recognition skipped an update (IndexError: time_indices[jumps])"
    )
    assert errors[1].message == (
        "speech recognition stopped: the last 10 recognitions failed "
        "(IndexError: time_indices[jumps])"
    )


def test_recognitions_failing_now_and_then_never_end_the_meeting(tmp_path: Path) -> None:
    backend = Backend(fail_at={n for n in range(1, 200) if n % 3})  # two of three fail
    rec = StreamingRecognizer(backend, StreamingOptions(vad=False))
    _, ev = _run_with(rec, tmp_path, seconds=30.0)
    assert backend.calls > 20
    assert not any(e.fatal for e in ev.of(ErrorEvent))
    assert any(e.final for e in ev.of(SubtitleEvent))  # the stream's end closed its segment


class RefusingServer:
    """Enough of CompletionsClient for RemoteEngine: it connects, then answers every
    completion with an error that is not an outage (a request the server will never take)."""

    where = "http://127.0.0.1:1/v1"
    model = ""

    def list_models(self) -> list[dict[str, object]]:
        return [{"id": "qwen3-4b"}]

    def find_tokenizer(self, deadline: float | None = None) -> bool:
        return True

    def tokenize(self, text: str, deadline: float | None = None) -> list[int]:
        return list(range(len(text.split())))

    def completion(self, *a: object, **kw: object) -> dict[str, object]:
        # What it says when the app connects: a completion without log-probabilities.
        return {"choices": [{"text": "x", "finish_reason": "length"}]}

    def verify(self, *a: object, **kw: object) -> None:
        raise ServerError(f"{self.where} answered HTTP 400: bad request")

    def generate(self, *a: object, **kw: object) -> None:
        raise ServerError(f"{self.where} answered HTTP 400: 'prompt' is too long")

    def close(self) -> None:
        pass


class FailingLM(SlowLM):
    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> np.ndarray:
        raise RuntimeError("llama_decode returned -1")


def _translations_stopped(tmp_path: Path, mt: MtConfig, loader: ModelLoader) -> str:
    script = [Step(0.1 * (i + 1), i, [f"line{i}", "done."], final=True) for i in range(14)]
    p, ev, _, _ = make(tmp_path, script=script, source=FakeSource(2.0, speed=0), mt=mt)
    p.factories = Factories(p.factories.audio, p.factories.recognizer, loader)
    p.start()
    assert p.finished.wait(15)
    p.stop()
    stopped = [e.message for e in ev.of(ErrorEvent) if "translation stopped" in e.message]
    assert len(stopped) == 1, [e.message for e in ev.of(ErrorEvent)]
    return str(stopped[0])


def test_a_server_failing_every_time_says_to_check_its_address_not_to_choose_a_model(
    tmp_path: Path,
) -> None:
    mt = MtConfig(backend="server", server_url=RefusingServer.where, template="chatml")
    message = _translations_stopped(
        tmp_path,
        mt,
        lambda m: RemoteEngine(m, client=RefusingServer()),  # type: ignore[arg-type]
    )
    assert message.startswith("translation stopped: the last 10 translations failed (")
    assert "HTTP 400" in message
    assert message.endswith(
        "showing the transcript only (check the translation server's address and model "
        "in Settings → Translation)"
    )


def test_a_model_file_failing_every_time_says_to_choose_another(tmp_path: Path) -> None:
    message = _translations_stopped(
        tmp_path, MtConfig(model_path="fake.gguf"), loader_for(FailingLM(0))
    )
    assert "llama_decode returned -1" in message
    assert message.endswith("showing the transcript only (choose a model in Settings)")


def test_a_server_chosen_without_an_address_says_where_to_give_it(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path, mt=MtConfig(backend="server", server_url=""))
    p.start()
    assert p.finished.wait(15)
    p.stop()
    (message,) = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    assert message == (
        "no translation server address given: subtitles show the transcript only "
        "(give its address in Settings → Translation)"
    )


class EchoingEngine:
    """Translates the first update of each line, then writes the source again (an echo:
    what a base model given the wrong prompt does; mt/output_rules.py rejects it)."""

    notice = ""
    name = "echoing"

    def configure(self, mt: MtConfig) -> None:
        pass  # (the settings change nothing this fake does)

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: object = None,
        progress: object = None,
    ) -> EngineResult:
        if len(source.split()) <= 2:
            text = source.upper()
            return EngineResult(text, (1,), (text.encode(),), UpdateStats())
        return EngineResult("", (), (), UpdateStats(), problem=ECHO)

    def set_glossary(self, glossary: object) -> None:
        pass

    def close(self) -> None:
        pass


def test_an_output_that_is_no_translation_keeps_the_last_good_text(tmp_path: Path) -> None:
    """Issue 25: an echo of the source is never shown or saved; the line keeps its last good
    translation (marked as shorter than what was said), the reader is told why once per line,
    and the model stays (a good update later is shown)."""
    script = [
        Step(0.5, 0, ["good", "morning"]),
        Step(1.0, 0, ["good", "morning", "everyone"]),
        Step(1.5, 0, ["good", "morning", "everyone."], final=True),
        Step(2.0, 1, ["the", "budget", "grew."], final=True),
        Step(2.5, 2, ["thanks"], final=True),
    ]
    p, ev, _, _ = make(tmp_path, script=script, loader=lambda m: EchoingEngine())
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    shown = [(e.segment_id, e.translation) for e in ev.of(SubtitleEvent)]
    assert shown == [(0, "GOOD MORNING"), (0, "GOOD MORNING…"), (1, ""), (2, "THANKS")]
    told = [e.message for e in ev.of(ErrorEvent)]
    assert told == [f"a line was not translated: {ECHO}"] * 2  # lines 0 and 1, once each
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.translation for r in recs] == ["GOOD MORNING…", "", "THANKS"]


class NothingEngine:
    """A model whose weights are damaged where no check looks: it loads, runs, and writes
    nothing (``loops``: one phrase over and over, which output_rules rejects), except for
    the lines given in ``good``."""

    notice = ""
    name = "flipped.gguf"

    def __init__(self, loops: bool = False, good: tuple[int, ...] = ()) -> None:
        self.loops, self.good = loops, good

    def configure(self, mt: MtConfig) -> None:
        pass  # (the settings change nothing this fake does)

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: object = None,
        progress: object = None,
    ) -> EngineResult:
        if segment_id in self.good:
            return EngineResult(source.upper(), (1,), (source.upper().encode(),), UpdateStats())
        problem = LOOP if self.loops else ""
        return EngineResult("", (), (), UpdateStats(), problem=problem)

    def set_glossary(self, glossary: object) -> None:
        pass

    def close(self) -> None:
        pass


def _lines(n: int) -> list[Step]:
    return [Step(0.3 * (i + 1), i, ["the", "budget", f"grew{i}."], final=True) for i in range(n)]


@pytest.mark.parametrize("loops", [False, True])
def test_a_model_that_keeps_writing_nothing_is_said_once(tmp_path: Path, loops: bool) -> None:
    """Issue 28: a translator that loads and writes nothing (or a loop) for every line gave
    9 empty lines and no word; after three finished lines in a row the reader is told, once,
    that the file may be damaged and how to check it."""
    p, ev, _, _ = make(
        tmp_path,
        script=_lines(6),
        source=FakeSource(2.5, speed=5.0),
        loader=lambda m: NothingEngine(loops),
    )
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    told = [e.message for e in ev.of(ErrorEvent) if "damaged" in e.message]
    assert told == [
        "flipped.gguf translated none of the last 3 lines (it wrote nothing, or one phrase "
        "over and over): its file may be damaged (`subtitler models verify` checks it); "
        "choose a model in Settings"
    ]


def test_a_model_that_translates_now_and_then_is_not_called_damaged(tmp_path: Path) -> None:
    p, ev, _, _ = make(
        tmp_path,
        script=_lines(8),
        source=FakeSource(3.0, speed=5.0),
        loader=lambda m: NothingEngine(good=(2, 4, 6)),
    )
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    assert not [e for e in ev.of(ErrorEvent) if "damaged" in e.message]


def test_whether_lines_are_translated_is_a_state_until_it_changes(tmp_path: Path) -> None:
    """Issue 27 point 2: a translator that failed was one passing line on the overlay; the
    meeting went on in the source language with nothing saying so. The pipeline says it as a
    state: off with the reason (none chosen, a failed load, set aside after failing every
    time), on once a model is loaded."""
    from subtitler.pipeline.events import TranslatorEvent

    def said(ev: Events) -> list[tuple[bool, str]]:
        return [(e.on, e.why) for e in ev.of(TranslatorEvent)]

    # None chosen.
    p, ev, _, _ = make(tmp_path / "a", mt=MtConfig(model_path=""))
    p.start()
    assert p.finished.wait(15)
    p.stop()
    ((on, why),) = said(ev)
    assert not on and why.startswith("no translation model chosen")

    # It fails to load; another one chosen in Settings loads: on.
    def refuse(mt: MtConfig) -> object:
        if mt.model_path == "bad.gguf":
            raise RuntimeError("bad.gguf: not a GGUF model file")
        return loader_for(echo_lm())(mt)

    p, ev, _, _ = make(tmp_path / "b", mt=MtConfig(model_path="bad.gguf"), loader=refuse)
    p.start()
    assert wait_for(lambda: said(ev))
    assert said(ev) == [(False, "bad.gguf: not a GGUF model file")]
    p.apply_config(AppConfig(mt=MtConfig(model_path="good.gguf")))
    assert wait_for(lambda: len(said(ev)) == 2)
    assert said(ev)[1] == (True, "")
    # A later failed load keeps the model in use: still on, nothing said.
    p.apply_config(AppConfig(mt=MtConfig(model_path="bad.gguf")))
    assert wait_for(lambda: any("not a GGUF" in e.message for e in ev.of(ErrorEvent)[1:]))
    p.stop()
    assert len(said(ev)) == 2

    # Loaded, then set aside after failing every time: off, with the stage's reason.
    script = [Step(0.1 * (i + 1), i, [f"line{i}", "done."], final=True) for i in range(14)]
    p, ev, _, _ = make(tmp_path / "c", script=script, source=FakeSource(2.0, speed=0))
    p.factories = Factories(p.factories.audio, p.factories.recognizer, loader_for(FailingLM(0)))
    p.start()
    assert p.finished.wait(15)
    p.stop()
    assert said(ev)[0] == (True, "")
    assert said(ev)[1][0] is False and "translation stopped" in said(ev)[1][1]
