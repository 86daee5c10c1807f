"""A translator slower than the speech (issue 25 point 5): the newest line is translated first,
finished lines catch up later for the transcript, and the reader is told plainly."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from subtitler.config import MtConfig
from subtitler.display.lines import ShownLines
from subtitler.mt.engine import EngineResult, EngineUnavailable
from subtitler.mt.output_rules import wrote_another_language
from subtitler.pipeline import stages
from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.sealing import FinishedLines
from subtitler.pipeline.stages import BEHIND
from subtitler.pipeline.transcript import TranscriptWriter, read_transcript
from subtitler.types import AsrUpdate, UpdateStats
from tests.helpers.fake_pipeline import FakeSource, Step
from tests.unit.test_pipeline import make


class SlowEngine:
    """Takes ``delay`` s per update, ``final_delay`` per final one (aborted as soon as asked);
    "translates" to upper case."""

    notice = ""
    name = "slow"

    def __init__(
        self, delay: float, final_delay: float | None = None, abortable: bool = True
    ) -> None:
        self.delay = delay
        self.final_delay = delay if final_delay is None else final_delay
        self.abortable = abortable  # False: like one long native decode, it runs to its end
        self.calls: list[tuple[str, bool]] = []  # (source, finished) of translations done
        self.lock = threading.Lock()

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
        end = time.monotonic() + (self.final_delay if final else self.delay)
        while time.monotonic() < end:
            if self.abortable and callable(should_abort) and should_abort():
                return EngineResult("", (), (), UpdateStats(aborted=True))
            time.sleep(0.005)
        with self.lock:
            self.calls.append((source, final))
        text = source.upper()
        return EngineResult(text, (1,), (text.encode(),), UpdateStats(output_len=1))

    def set_glossary(self, glossary: object) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_newest_line_first_and_finished_lines_later(tmp_path: Path) -> None:
    # Six lines of four words in 3.6 s of speech, a word every 0.15 s; an open line's
    # translation takes 0.1 s and a finished one's 1 s: more work than speech, so the
    # translator falls behind while they are said and catches up in the silence after them.
    script = []
    for i in range(6):
        words = [f"line{i}", "and", "more", "done."]
        for n in range(1, 5):
            script.append(Step(0.6 * i + 0.15 * n, i, words[:n], final=n == 4))
    engine = SlowEngine(0.1, final_delay=1.0)
    p, ev, _, _ = make(
        tmp_path, script=script, source=FakeSource(6.0, speed=1.0), loader=lambda m: engine
    )
    p.start()
    assert p.finished.wait(20)
    assert p.stop()

    finals = [src for src, final in engine.calls if final]
    assert sorted(finals) == [f"line{i} and more done." for i in range(6)]
    assert finals != sorted(finals)  # a newer finished line went before an older one
    # Every line reaches the transcript translated, in the order it was said.
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.translation for r in recs] == [f"LINE{i} AND MORE DONE." for i in range(6)]
    # The screen ends with every line translated, in the order said.
    shown = ShownLines()
    for e in ev.of(SubtitleEvent):
        shown.add(e)
    assert [ln.text for ln in shown.lines(0, 12)] == [f"LINE{i} AND MORE DONE." for i in range(6)]
    # Said once, with what would help.
    told = [e.message for e in ev.of(ErrorEvent) if BEHIND in e.message]
    assert len(told) == 1 and "smaller translation model or a translation server" in told[0]
    assert told[0].startswith(f"{BEHIND} on this computer: the newest lines are translated")


def test_an_overtaken_open_line_stays_on_screen_until_its_translation(tmp_path: Path) -> None:
    """A line shown open whose final waits behind a newer finished line is shown finished as
    it stood (not dropped from the screen), and its translation replaces it later."""
    # One long decode that cannot be interrupted (a native llama_decode) takes 1.5 s: while it
    # runs, line 0 ends and line 1 is said and ends too.
    script = [
        Step(0.3, 0, ["one", "two"]),
        Step(0.6, 0, ["one", "two", "three."], final=True),
        Step(0.9, 1, ["four"]),
        Step(1.2, 1, ["four", "five."], final=True),
    ]
    engine = SlowEngine(1.5, final_delay=0.1, abortable=False)
    p, ev, _, _ = make(
        tmp_path, script=script, source=FakeSource(3.0, speed=1.0), loader=lambda m: engine
    )
    p.start()
    assert p.finished.wait(20)
    assert p.stop()
    subs = [(e.segment_id, e.translation, e.final, e.partial) for e in ev.of(SubtitleEvent)]
    # Line 0 shown open, then closed as it stood ("…": less than was said) while line 1 goes
    # first, then translated in full.
    assert subs.index((0, "ONE TWO…", True, True)) < subs.index((1, "FOUR FIVE.", True, False))
    assert subs[-1] == (0, "ONE TWO THREE.", True, False)
    shown = ShownLines()
    for e in ev.of(SubtitleEvent):
        shown.add(e)
    assert [ln.text for ln in shown.lines(0, 12)] == ["ONE TWO THREE.", "FOUR FIVE."]


def test_a_translator_that_keeps_up_is_served_in_order(tmp_path: Path) -> None:
    engine = SlowEngine(0.0)
    script = [Step(0.3 * (i + 1), i, [f"line{i}", "done."], True) for i in range(5)]
    p, ev, _, _ = make(tmp_path, script=script, loader=lambda m: engine)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    assert [src for src, _ in engine.calls] == [f"line{i} done." for i in range(5)]
    assert not [e for e in ev.of(ErrorEvent) if BEHIND in e.message]
    assert not [e for e in ev.of(SubtitleEvent) if e.partial]


class StalledServer(SlowEngine):
    """A translation server that answers nothing: each update gives up after ``delay``."""

    def translate(self, *a: object, **kw: object) -> EngineResult:
        end = time.monotonic() + self.delay
        while time.monotonic() < end:
            time.sleep(0.005)
        raise EngineUnavailable("translation server http://x did not answer within 1 s")


def stalled_run(
    tmp_path: Path, script: list[Step], seconds: float, delay: float
) -> tuple[list[str], list[str]]:
    """The pipeline behind a StalledServer: what was said about translation, and the lines
    the transcript holds."""
    p, ev, _, _ = make(
        tmp_path,
        script=script,
        source=FakeSource(seconds, speed=1.0),
        loader=lambda m: StalledServer(delay),
    )
    p.start()
    assert p.finished.wait(60)
    assert p.stop()
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    return said, [r.source for r in read_transcript(tmp_path / "transcript.jsonl")]


STALLED = "translation failed: translation server http://x did not answer within 1 s"


def test_behind_a_server_that_does_not_answer_only_that_is_said(tmp_path: Path) -> None:
    """A stalled server's notice was at once replaced on screen by "translation is slower
    than the speech on this computer", which blamed the computer."""
    script = []
    for i in range(6):
        words = [f"line{i}", "and", "more", "done."]
        for n in range(1, 5):
            script.append(Step(0.6 * i + 0.15 * n, i, words[:n], final=n == 4))
    said, lines = stalled_run(tmp_path, script, 5.0, 1.0)
    assert said == [STALLED]
    assert lines == [f"line{i} and more done." for i in range(6)]


def test_an_outage_is_said_once_even_with_a_line_the_server_was_not_asked_about(
    tmp_path: Path,
) -> None:
    """A line with nothing to translate (Whisper's "-" for a noise) was taken for an answer
    of the server: the outage around it was said twice."""
    script = [
        Step(0.3, 0, ["hello", "there."], final=True),
        Step(0.6, 1, ["-"], final=True),
        Step(0.9, 2, ["good", "morning."], final=True),
    ]
    said, lines = stalled_run(tmp_path, script, 1.5, 0.0)
    assert said == [STALLED]
    assert lines == ["hello there.", "-", "good morning."]


class StuckOnce(SlowEngine):
    """The first finished line's decode does not end (a hung decode) until it is asked to
    stop; every other translation takes no time."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self.stuck = True

    def translate(self, *a: object, **kw: object) -> EngineResult:
        final, should_abort = a[2], kw.get("should_abort")
        if final and self.stuck:
            while not (callable(should_abort) and should_abort()):
                time.sleep(0.005)
            self.stuck = False
            return EngineResult("", (), (), UpdateStats(aborted=True))
        return super().translate(*a, **kw)  # type: ignore[arg-type]


def test_a_finished_line_stuck_in_its_decode_gives_way_to_newer_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung decode of a finished line held every later line off the screen; after STUCK_S
    with newer lines waiting it gives way (and the worker ends an engine that then does not
    answer: test_engine_workers.py); the line is translated later, for the transcript."""
    monkeypatch.setattr(stages, "STUCK_S", 0.5)
    script = [Step(0.2 * (i + 1), i, [f"line{i}", "done."], True) for i in range(3)]
    engine = StuckOnce()
    p, _, _, _ = make(
        tmp_path, script=script, source=FakeSource(3.0, speed=1.0), loader=lambda m: engine
    )
    p.start()
    assert p.finished.wait(20)
    assert p.stop()
    done = [src for src, _ in engine.calls]
    assert sorted(done) == ["line0 done.", "line1 done.", "line2 done."]
    assert done[-1] == "line0 done."  # after the newer lines
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.translation for r in recs] == ["LINE0 DONE.", "LINE1 DONE.", "LINE2 DONE."]


class ServerAway(SlowEngine):
    """A translation server away for the first lines: each of their updates fails until the
    first update of line ``back_at`` is answered; then it translates every line."""

    def __init__(self, back_at: int) -> None:
        super().__init__(0.0)
        self.back_at, self.away = back_at, True

    def translate(self, segment_id: int, *a: object, **kw: object) -> EngineResult:
        if segment_id >= self.back_at:
            self.away = False
        if self.away:
            raise EngineUnavailable("translation server http://x: connection refused")
        return super().translate(segment_id, *a, **kw)  # type: ignore[arg-type]


def test_lines_finished_while_the_server_was_away_are_translated_once_it_answers(
    tmp_path: Path,
) -> None:
    """They kept an empty translation in the transcript (and History) for good."""
    script = [Step(0.3 * (i + 1), i, [f"line{i}", "done."], True) for i in range(5)]
    p, ev, _, _ = make(tmp_path, script=script, loader=lambda m: ServerAway(back_at=3))
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    records = read_transcript(tmp_path / "transcript.jsonl")
    assert [(r.source, r.translation) for r in records] == [
        (f"line{i} done.", f"LINE{i} DONE.") for i in range(5)
    ]
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    assert len(said) == 1 and "connection refused" in said[0], said  # the outage, once
    # The late translations reach the screen (History reads the file).
    assert {e.segment_id: e.translation for e in ev.of(SubtitleEvent) if e.final}[0] == (
        "LINE0 DONE."
    )


class HeldEngine(SlowEngine):
    """Translates an open line at once and a finished one when the test lets it (``go``);
    ``started``: the finished lines it began, in order."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self.go = threading.Semaphore(0)
        self.started: list[int] = []

    def translate(
        self, segment_id: int, source: str, final: bool, *a: object, **kw: object
    ) -> EngineResult:  # type: ignore[override]
        if final:
            self.started.append(segment_id)
            assert self.go.acquire(timeout=30)
        return super().translate(segment_id, source, final, *a, **kw)


def test_finished_lines_waiting_for_the_translator_are_on_disk_at_once(tmp_path: Path) -> None:
    """Finished lines waiting behind newer ones were only in memory until translated: with a
    translator behind the speech, more of them the longer the meeting, all lost to a crash."""
    engine = HeldEngine()
    script = [Step(0.1 * (i + 1), i, [f"line{i}", "done."], True) for i in range(6)]
    p, _, _, _ = make(tmp_path, script=script, source=FakeSource(1.0), loader=lambda m: engine)
    p.start()
    try:
        # One finished line in the translator, four waiting behind a newer one (which line
        # went first depends on when the translator was ready).
        wait_until(lambda: len(engine.started) == 1 and p.mailbox.deferred() == 4)
        engine.go.release()  # that line translated; the newest waiting goes next
        wait_until(lambda: len(engine.started) == 2)
        first, now = engine.started
        recs = read_transcript(tmp_path / "transcript.jsonl")
        said = {r.segment_id: r.translation for r in recs}
        assert len(recs) == len(said)  # each line once
        assert set(said) >= set(range(6)) - {now}  # every line but the one translating
        assert said[first] == f"LINE{first} DONE."
        assert all(said[i] == "" for i in said if i not in (first, now))  # as said, for now
    finally:
        engine.go.release(10)
    assert p.finished.wait(20)
    assert p.stop()
    done = [(f"line{i} done.", f"LINE{i} DONE.") for i in range(6)]
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [(r.source, r.translation) for r in recs] == done  # each line once, translated
    assert sorted((r.source, r.translation) for r in p.transcript_records) == done


def wait_until(cond: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class CannotDoThePair(SlowEngine):
    """A model asked for a pair it cannot do: every line comes out in another script."""

    def translate(self, *a: object, **kw: object) -> EngineResult:
        r = super().translate(*a, **kw)  # type: ignore[arg-type]
        return EngineResult(r.text, r.tokens, r.pieces, r.stats, wrote_another_language("he"))


def test_a_pair_the_model_cannot_do_is_said_once(tmp_path: Path) -> None:
    """Every line said 'the model wrote another language, not Hebrew': one notice a line."""
    script = [Step(0.2 * (i + 1), i, [f"line{i}", "done."], True) for i in range(4)]
    p, ev, _, _ = make(tmp_path, script=script, loader=lambda m: CannotDoThePair(0.0))
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    assert said == [f"a line was not translated: {wrote_another_language('he')}"]
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == [f"line{i} done." for i in range(4)]  # none lost


def finished(i: int) -> AsrUpdate:
    return AsrUpdate(i, f"line{i} done.", "", True, float(i), i + 0.9, i + 1.0)


@pytest.mark.parametrize("how", ["seal", "keep_queued"])
def test_a_line_written_ahead_is_written_once_at_a_stop(tmp_path: Path, how: str) -> None:
    """A finished line written ahead as said (waiting behind a newer one) was written as said
    once more at the stop: the same record twice in the transcript file."""
    path = tmp_path / "transcript.jsonl"
    writer = TranscriptWriter(path)
    mailbox = Mailbox()
    for i in range(3):
        mailbox.put(finished(i))
    lines = FinishedLines(writer, mailbox, lambda ev: None, lambda side: MtConfig())
    taken = lines.next_update(timeout=0)  # the newest first; 0 and 1 written ahead
    assert taken is not None and taken.segment_id == 2
    if how == "keep_queued":  # the translation thread's own end: line 2 translated first
        lines.finish(taken, {"de": "ZEILE2"}, ("de",))
        lines.keep_queued()
    lines.seal()
    writer.close()
    written = [json.loads(raw)["segment_id"] for raw in path.read_bytes().splitlines()]
    assert sorted(written) == [0, 1, 2], written
    assert [(r.segment_id, r.translation) for r in read_transcript(path)] == [
        (0, ""),
        (1, ""),
        (2, "ZEILE2" if how == "keep_queued" else ""),
    ]


class ServerBack(SlowEngine):
    """A translation server away until the test says it is back (``back``); then it
    translates every line (upper case); ``stall``: once back, it answers nothing until asked
    to stop."""

    def __init__(self, stall: bool = False) -> None:
        super().__init__(0.0)
        self.back = threading.Event()
        self.stall = stall

    def translate(self, segment_id: int, *a: object, **kw: object) -> EngineResult:
        if not self.back.is_set():
            raise EngineUnavailable(
                "translation server http://x: connection refused", unreachable=True
            )
        if self.stall:
            should_abort = kw.get("should_abort")
            while not (callable(should_abort) and should_abort()):
                time.sleep(0.005)
            return EngineResult("", (), (), UpdateStats(aborted=True))
        return super().translate(segment_id, *a, **kw)  # type: ignore[arg-type]


def silent_meeting(tmp_path: Path, engine: ServerBack, lines: int = 3):  # type: ignore[no-untyped-def]
    """A meeting whose ``lines`` lines are said while the server is away, then silence (a
    live input: it goes on until stopped); returns the pipeline and its events once every
    line is in the transcript, as said."""
    script = [Step(0.1 * (i + 1), i, [f"line{i}", "done."], True) for i in range(lines)]
    p, ev, _, _ = make(
        tmp_path, script=script, source=FakeSource(60.0, speed=1.0), loader=lambda m: engine
    )
    p.start()
    path = tmp_path / "transcript.jsonl"
    wait_until(lambda: path.exists() and len(read_transcript(path)) == lines)
    return p, ev


def translations(tmp_path: Path) -> list[tuple[str, str]]:
    return [(r.source, r.translation) for r in read_transcript(tmp_path / "transcript.jsonl")]


def test_lines_missed_are_translated_when_the_server_is_back_in_a_silent_meeting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They were asked again only after another line was translated: in a meeting gone
    silent they waited for ever, and stayed untranslated in the transcript."""
    monkeypatch.setattr(stages, "MISSED_RETRY_S", (0.05,))
    engine = ServerBack()
    p, ev = silent_meeting(tmp_path, engine)
    try:
        assert translations(tmp_path) == [(f"line{i} done.", "") for i in range(3)]
        engine.back.set()  # no word said since
        done = [(f"line{i} done.", f"LINE{i} DONE.") for i in range(3)]
        wait_until(lambda: translations(tmp_path) == done)
    finally:
        assert p.stop()
    assert translations(tmp_path) == done
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    assert len(said) == 1 and "connection refused" in said[0], said  # the outage, once


def test_lines_missed_have_a_last_try_at_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server back during the pause before it is asked again: the lines it missed were
    sealed in the transcript as said."""
    monkeypatch.setattr(stages, "MISSED_RETRY_S", (3600.0,))  # (not asked again before)
    engine = ServerBack()
    p, _ = silent_meeting(tmp_path, engine)
    engine.back.set()
    assert p.stop()
    assert translations(tmp_path) == [(f"line{i} done.", f"LINE{i} DONE.") for i in range(3)]


def test_a_stalled_server_does_not_hold_the_stop_in_its_last_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stages, "MISSED_RETRY_S", (3600.0,))
    engine = ServerBack(stall=True)
    p, _ = silent_meeting(tmp_path, engine)
    engine.back.set()
    assert p.stop()  # every thread ended within the stop's time
    assert translations(tmp_path) == [(f"line{i} done.", "") for i in range(3)]


def test_lines_missed_in_a_long_outage_are_the_newest_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line of an outage was kept to translate later: a day's outage grew memory
    without end. The newest are kept, and the reader told once how many stay as said."""
    monkeypatch.setattr(stages, "MISSED_RETRY_S", (0.05,))
    monkeypatch.setattr(stages, "MISSED_KEPT", 3)
    engine = ServerBack()
    p, ev = silent_meeting(tmp_path, engine, lines=6)
    try:
        engine.back.set()
        done = [(f"line{i} done.", "" if i < 3 else f"LINE{i} DONE.") for i in range(6)]
        wait_until(lambda: translations(tmp_path) == done)
    finally:
        assert p.stop()
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    assert said[1:] == [
        "3 line(s) finished while the translation server was away stay untranslated in the "
        "transcript: only the last 3 are translated once it answers"
    ], said
    assert sorted(src for src, _ in engine.calls) == [f"line{i} done." for i in range(3, 6)]


def test_lines_missed_with_both_inputs_are_the_newest_kept_whichever_side_said_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each input's recogniser numbers its lines from 0; the pipeline's one numbering
    (sides.SegmentIds) is the order they were heard, so the lines given up for newer ones are
    the oldest said, on either side."""
    from subtitler.pipeline.pipeline import Factories, Pipeline
    from tests.helpers.fake_pipeline import ScriptedRecognizer
    from tests.unit.test_pipeline import Events
    from tests.unit.test_two_sides import MEETING, two_sided

    monkeypatch.setattr(stages, "MISSED_RETRY_S", (0.05,))
    monkeypatch.setattr(stages, "MISSED_KEPT", 3)
    engine = ServerBack()
    # The meeting's lines 0-2, then the user's 0-2: by each side's own numbers the user's
    # first lines would go before the meeting's last.
    others = [Step(0.3 + 0.3 * i, i, [f"o{i}", "gut."], True) for i in range(3)]
    you = [Step(1.2 + 0.3 * i, i, [f"y{i}", "good."], True) for i in range(3)]
    sources = {MEETING: FakeSource(60.0, 1.0), "Mic": FakeSource(60.0, 1.0)}
    recognizers = {"de": ScriptedRecognizer(others), "en": ScriptedRecognizer(you)}
    factories = Factories(
        audio=lambda a, c: sources[str(a.device)],
        recognizer=lambda a: recognizers[str(a.language)],
        model=lambda m: engine,
    )
    path = tmp_path / "t.jsonl"
    p = Pipeline(two_sided(), Events(), factories, transcript_path=path, echo_gate=False)
    p.start()
    try:
        wait_until(lambda: path.exists() and len(read_transcript(path)) == 6)
        engine.back.set()
        wait_until(lambda: len(engine.calls) == 3)
    finally:
        assert p.stop()
    said = [(r.source, r.translation) for r in read_transcript(path)]
    assert said == [
        ("o0 gut.", ""),
        ("o1 gut.", ""),
        ("o2 gut.", ""),
        ("y0 good.", "Y0 GOOD."),
        ("y1 good.", "Y1 GOOD."),
        ("y2 good.", "Y2 GOOD."),
    ]


class FailsOnALine(SlowEngine):
    """A server that answers every line but one: that line's updates fail (HTTP 500 for
    what it says, say): not a server away."""

    def translate(self, segment_id: int, source: str, *a: object, **kw: object) -> EngineResult:  # type: ignore[override]
        if "football" in source:
            with self.lock:
                self.calls.append((source, True))
            raise EngineUnavailable("translation server http://x answered HTTP 500")
        return super().translate(segment_id, source, *a, **kw)  # type: ignore[arg-type]


def test_a_line_a_server_fails_on_is_not_asked_again_and_again_in_a_quiet_meeting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a server that answered nothing is asked again while the meeting is quiet: a real
    server's pause grows with each failure, and the line said next found it refused."""
    monkeypatch.setattr(stages, "MISSED_RETRY_S", (0.05,))
    engine = FailsOnALine(0.0)
    script = [
        Step(0.2, 0, ["they", "play", "football."], True),
        Step(2.0, 1, ["a", "girl", "runs."], True),  # after a quiet while
    ]
    p, _, _, _ = make(
        tmp_path, script=script, source=FakeSource(2.5, speed=1.0), loader=lambda m: engine
    )
    p.start()
    assert p.finished.wait(20)
    assert p.stop()
    # Its own update, then once more after the next line was translated; never in between.
    assert [src for src, _ in engine.calls] == [
        "they play football.",
        "a girl runs.",
        "they play football.",
    ]
    assert translations(tmp_path) == [("they play football.", ""), ("a girl runs.", "A GIRL RUNS.")]
