"""The threaded pipeline with fake audio, a scripted recogniser and scripted LMs."""

from __future__ import annotations

import dataclasses
import threading
import time
import wave
from pathlib import Path

import pytest

from subtitler.config import AppConfig, MtConfig
from subtitler.pipeline.events import ErrorEvent, Event, MetricsEvent, StatusEvent, SubtitleEvent
from subtitler.pipeline.pipeline import Factories, Pipeline, replace_mt
from subtitler.pipeline.transcript import read_transcript
from subtitler.types import AsrUpdate, AudioBlock
from tests.helpers.fake_pipeline import (
    FakeSource,
    ScriptedRecognizer,
    SlowLM,
    Step,
    echo_lm,
    loader_for,
)

SCRIPT = [
    Step(0.5, 0, ["good"]),
    Step(1.0, 0, ["good", "morning", "everyone"]),
    Step(1.5, 0, ["good", "morning", "everyone."], final=True),
    Step(2.0, 1, ["the", "budget"]),
    Step(2.5, 1, ["the", "budget", "grew."], final=True),
    Step(3.0, 2, ["thanks"]),
]


class Events:
    def __init__(self) -> None:
        self.items: list[Event] = []
        self.lock = threading.Lock()

    def __call__(self, ev: Event) -> None:
        with self.lock:
            self.items.append(ev)

    def of(self, cls: type) -> list:  # type: ignore[type-arg]
        with self.lock:
            return [e for e in self.items if isinstance(e, cls)]

    def of_status(self) -> list[StatusEvent]:
        return self.of(StatusEvent)


def make(tmp_path: Path, lm=None, source=None, script=SCRIPT, mt=None, loader=None):  # type: ignore[no-untyped-def]
    cfg = AppConfig(mt=mt or MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    src = source or FakeSource(3.5, speed=5.0)
    rec = ScriptedRecognizer(script)
    f = Factories(
        audio=lambda a, c: src,
        recognizer=lambda a: rec,
        model=loader or loader_for(lm or echo_lm()),
    )
    p = Pipeline(cfg, ev, f, transcript_path=tmp_path / "transcript.jsonl")
    return p, ev, src, rec


def test_replay_translates_every_segment_and_writes_the_transcript(tmp_path: Path) -> None:
    p, ev, _, rec = make(tmp_path)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    subs = ev.of(SubtitleEvent)
    finals = [e for e in subs if e.final]
    assert [e.segment_id for e in finals] == [0, 1, 2]  # the open segment is closed at the end
    assert finals[0].source == "good morning everyone."
    assert all(e.translation and e.shown(0) for e in finals)
    # A final line is shown in full whatever k is; an open one is masked.
    assert finals[0].shown(10) == finals[0].shown(0)
    open_lines = [e for e in subs if not e.final and e.stats.output_len > 3]
    assert open_lines and all(len(e.shown(3)) < len(e.shown(0)) for e in open_lines)
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == ["good morning everyone.", "the budget grew.", "thanks"]
    assert [r.translation for r in recs] == [e.translation for e in finals]
    assert len(ev.of(MetricsEvent)) == 3
    m = ev.of(MetricsEvent)[0].metrics
    assert len(m.commit_delay_s) == 3 and len(m.end_to_end_s) == 3
    assert rec.finished == 1
    assert [s.state for s in ev.of(StatusEvent)][:2] == ["loading", "running"]


def test_second_update_drafts_from_the_first(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path)
    p.start()
    assert p.finished.wait(10)
    p.stop()
    seg0 = [e for e in ev.of(SubtitleEvent) if e.segment_id == 0]
    assert seg0[0].stats.draft_len == 0
    assert any(e.stats.draft_len > 0 for e in seg0[1:])
    seg1 = [e for e in ev.of(SubtitleEvent) if e.segment_id == 1]
    assert seg1[0].stats.draft_len == 0  # a new segment starts with an empty draft


def test_a_loaded_draft_model_guesses_with_the_configured_token_count(tmp_path: Path) -> None:
    from subtitler.mt.drafting import DraftModel
    from subtitler.mt.engine import LoadedModel, LocalEngine

    draft = DraftModel(echo_lm())  # the target's twin: every guess is right
    mt = MtConfig(model_path="fake.gguf", max_new_tokens=16, draft_tokens=3)
    p, ev, _, _ = make(
        tmp_path,
        mt=mt,
        loader=lambda m: LocalEngine(LoadedModel(echo_lm(), "chatml", draft=draft), m),
    )
    p.start()
    assert p.finished.wait(10)
    p.stop()
    stats = [e.stats for e in ev.of(SubtitleEvent)]
    assert sum(s.lookahead_drafted for s in stats) > 0
    assert sum(s.lookahead_accepted for s in stats) == sum(s.lookahead_drafted for s in stats)
    # Each guess pass holds at most draft_tokens guesses.
    assert all(s.lookahead_drafted <= 3 * max(1, s.decode_steps) for s in stats)


def test_a_load_notice_is_shown_and_translation_goes_on(tmp_path: Path) -> None:
    from subtitler.mt.engine import LoadedModel, LocalEngine

    notice = "draft model small.gguf not used: it has 9 tokens; translating without it"
    p, ev, _, _ = make(
        tmp_path, loader=lambda m: LocalEngine(LoadedModel(echo_lm(), "chatml", notice=notice), m)
    )
    p.start()
    assert p.finished.wait(10)
    p.stop()
    errors = ev.of(ErrorEvent)
    assert [(e.where, e.message, e.fatal) for e in errors] == [("mt", notice, False)]
    assert any(e.final and e.translation for e in ev.of(SubtitleEvent))


def test_a_speech_models_load_notice_is_shown_and_it_gets_the_glossary(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What the recogniser's load found (weights that may be damaged) is said once, not as a
    fatal error, and written to the log as the translator's is; the recogniser is given the
    glossary's terms, and closed at stop."""
    from subtitler.mt.glossary import Glossary

    notice = "speech model x: damaged: it recognises no word of a clip of speech"
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    rec = ScriptedRecognizer(SCRIPT, notice=notice)
    f = Factories(lambda a, c: FakeSource(3.5, speed=5.0), lambda a: rec, loader_for(echo_lm()))
    p = Pipeline(cfg, ev, f, transcript_path=tmp_path / "transcript.jsonl")
    p.set_glossary(Glossary().with_pair("en", "de", [("Subiaco", "Subiaco")]))
    p.start()
    assert p.finished.wait(10)
    assert not rec.closed
    p.stop()
    assert rec.closed
    told = [(e.where, e.message, e.fatal) for e in ev.of(ErrorEvent)]
    assert told == [("asr", notice, False)]
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [notice]
    assert rec.hotwords == [p.glossary.hotwords(cfg.asr.language)] and "Subiaco" in rec.hotwords[0]
    assert any(e.final and e.translation for e in ev.of(SubtitleEvent))


class HearsAnotherLanguage(ScriptedRecognizer):
    """A recogniser that finds, at its second line's end, that the speech is not in the
    language set (as StreamingRecognizer's notice says)."""

    SAID = "the speech sounds like Spanish, but the speech language is set to English (Settings)"

    def process(self, now: float = 0.0) -> list[AsrUpdate]:
        out = super().process(now)
        if any(u.final and u.segment_id == 1 for u in out):
            self.notice = self.SAID
        return out


def test_a_notice_the_recogniser_finds_mid_meeting_is_said_once(tmp_path: Path) -> None:
    """The speech in another language than the one set: said as the load's notice is (the
    path a lost input or a failed recognition takes), once, while the meeting goes on."""
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    rec = HearsAnotherLanguage(SCRIPT)
    f = Factories(lambda a, c: FakeSource(3.5, speed=5.0), lambda a: rec, loader_for(echo_lm()))
    p = Pipeline(cfg, ev, f, transcript_path=tmp_path / "transcript.jsonl")
    p.start()
    assert p.finished.wait(10)
    p.stop()
    told = [(e.where, e.message, e.fatal) for e in ev.of(ErrorEvent)]
    assert told == [("asr", HearsAnotherLanguage.SAID, False)]
    assert [e.source for e in ev.of(SubtitleEvent) if e.final][-1] == "thanks"


def test_stop_in_the_middle_of_a_decode_joins_within_2s(tmp_path: Path) -> None:
    lm = SlowLM(delay=0.2)
    p, _, _, _ = make(
        tmp_path,
        lm=lm,
        source=FakeSource(30.0, speed=1.0),
        mt=MtConfig(model_path="x", max_new_tokens=200, len_ratio=100.0),
    )
    p.start()
    assert lm.busy.wait(10)
    t0 = time.monotonic()
    assert p.stop(timeout=2.0)
    assert time.monotonic() - t0 < 2.0


def test_no_model_shows_transcript_only(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path, mt=MtConfig(model_path=""))
    p.start()
    assert p.finished.wait(10)
    p.stop()
    assert any("no translation model" in e.message for e in ev.of(ErrorEvent))
    finals = [e for e in ev.of(SubtitleEvent) if e.final]
    assert len(finals) == 3 and all(e.translation == "" for e in finals)
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert recs[0].source.startswith("good")


def test_model_load_failure_is_reported_and_app_stays_up(tmp_path: Path) -> None:
    def bad(mt: MtConfig):  # type: ignore[no-untyped-def]
        raise RuntimeError("not a GGUF model file (bad header): x.gguf")

    p, ev, _, _ = make(tmp_path, loader=bad)
    p.start()
    assert p.finished.wait(10)
    p.stop()
    assert any("bad header" in e.message and not e.fatal for e in ev.of(ErrorEvent))
    assert len([e for e in ev.of(SubtitleEvent) if e.final]) == 3


def test_recognizer_failure_is_fatal_but_reported(tmp_path: Path) -> None:
    cfg = AppConfig(mt=MtConfig(model_path=""))
    ev = Events()

    def no_asr(a):  # type: ignore[no-untyped-def]
        raise RuntimeError("not a CTranslate2 Whisper model: /tmp/x")

    p = Pipeline(cfg, ev, Factories(lambda a, c: FakeSource(1), no_asr, loader_for(echo_lm())))
    p.start()
    assert p.finished.wait(5)
    assert p.stop()
    errs = ev.of(ErrorEvent)
    assert errs and errs[-1].fatal and "CTranslate2" in errs[-1].message
    assert p.state == "stopped"


def test_settings_change_while_running(tmp_path: Path) -> None:
    lm1, lm2 = echo_lm(), echo_lm()
    loads: list[MtConfig] = []

    def loader(mt: MtConfig):  # type: ignore[no-untyped-def]
        loads.append(mt)
        return loader_for(lm1 if mt.model_path == "one.gguf" else lm2)(mt)

    src = FakeSource(20.0, speed=10.0)
    script = [Step(0.3 * i, i, [f"w{i}", "x."], final=True) for i in range(1, 60)]
    p, ev, _, _ = make(
        tmp_path,
        source=src,
        script=script,
        loader=loader,
        mt=MtConfig(model_path="one.gguf", beta=0.2),
    )
    p.start()
    deadline = time.monotonic() + 10
    while not ev.of(SubtitleEvent) and time.monotonic() < deadline:
        time.sleep(0.01)
    n_before = len(lm1.calls)
    p.apply_config(replace_mt(p.config, beta=0.6, tgt_lang="ja"))
    assert p._mt._mt.beta == 0.6 and len(loads) == 1  # no reload for beta / language
    p.apply_config(replace_mt(p.config, model_path="two.gguf"))
    while not lm2.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(loads) == 2 and lm2.calls, "the new model took over"
    assert len(lm1.calls) >= n_before  # the old one kept working meanwhile
    p.stop()


def test_pause_and_resume(tmp_path: Path) -> None:
    src = FakeSource(30.0, speed=5.0)
    p, _, _, _ = make(tmp_path, source=src)
    p.start()
    deadline = time.monotonic() + 5
    while p.state != "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    p.pause()
    assert p.state == "paused" and not src.running
    t = p.clock()
    time.sleep(0.05)
    assert p.clock() == t  # paused time does not count
    p.resume()
    assert p.state == "running" and src.running and src.starts == 2
    assert p.stop()


def test_config_objects_are_plain_data() -> None:
    cfg = AppConfig()
    assert dataclasses.asdict(cfg)["mt"]["beta"] == 0.2
    with pytest.raises(TypeError):
        replace_mt(cfg, no_such_field=1)


def test_audio_source_change_while_running(tmp_path: Path) -> None:
    first, second = FakeSource(30.0, speed=5.0), FakeSource(30.0, speed=5.0)
    sources = iter([first, second])
    cfg = AppConfig(mt=MtConfig(model_path="x", max_new_tokens=8))
    ev = Events()
    rec = ScriptedRecognizer([Step(0.3, 0, ["hello"]), Step(0.6, 0, ["hello", "there."], True)])
    p = Pipeline(
        cfg, ev, Factories(lambda a, c: next(sources), lambda a: rec, loader_for(echo_lm()))
    )
    p.start()
    deadline = time.monotonic() + 5
    while not ev.of(SubtitleEvent) and time.monotonic() < deadline:
        time.sleep(0.01)
    new = dataclasses.replace(cfg, audio=dataclasses.replace(cfg.audio, device="USB mic"))
    p.apply_config(new)
    while not second.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert second.running and not first.running  # swapped without a restart
    assert rec.finished >= 1  # the open segment was closed on the old timeline
    n = second.i
    while second.i == n and time.monotonic() < deadline:
        time.sleep(0.01)
    assert second.i > n  # the new source is being read
    assert p.stop()


def wait_for(cond, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(cond())


def test_unplugged_input_is_reported_once_and_its_return_too(tmp_path: Path) -> None:
    src = FakeSource(30.0, speed=5.0)
    p, ev, _, _ = make(tmp_path, source=src)
    p.start()
    assert wait_for(lambda: p.state == "running")
    src.problem = "audio input 'USB Mic' disappeared; retrying"
    assert wait_for(lambda: any(e.where == "audio" for e in ev.of(ErrorEvent)))
    time.sleep(0.1)  # many more reads while it is away: still one notice
    errors = [e for e in ev.of(ErrorEvent) if e.where == "audio"]
    assert [(e.message, e.fatal, e.lasting) for e in errors] == [(src.problem, False, True)]
    src.problem = ""
    assert wait_for(lambda: any(e.message == "audio input is back" for e in ev.of(StatusEvent)))
    assert p.state == "running"
    assert p.stop()


class Unpluggable(FakeSource):
    """Gives nothing while its device is away; its stop ends the retrying (as the real
    capture's: no problem once stopped)."""

    def read(self, timeout: float) -> AudioBlock | None:
        if self.problem:
            time.sleep(min(timeout, 0.01))
            return None
        return super().read(timeout)

    def stop(self) -> None:
        super().stop()
        self.problem = ""


def test_an_unplugged_input_ends_the_line_being_said_and_a_stop_is_no_return(
    tmp_path: Path,
) -> None:
    """The line being said when the input went away stayed open (not final, not in the
    transcript) until the input came back or the stop; and the stop said "audio input is
    back"."""
    src = Unpluggable(30.0, speed=5.0)
    script = [Step(0.3, 0, ["hello"]), Step(0.6, 0, ["hello", "there"])]
    p, ev, _, rec = make(tmp_path, source=src, script=script)
    p.start()
    assert wait_for(lambda: any(e.source == "hello there" for e in ev.of(SubtitleEvent)))
    src.problem = "audio input 'USB Mic' disappeared; retrying"
    assert wait_for(lambda: any(e.final for e in ev.of(SubtitleEvent)))
    assert rec.finished == 1
    path = tmp_path / "transcript.jsonl"
    assert wait_for(lambda: path.exists() and bool(read_transcript(path)))  # (written after)
    assert [r.source for r in read_transcript(path)] == ["hello there"]
    p.pause()  # (its stop ends the retrying: no problem any more, and no return either)
    assert wait_for(lambda: p.state == "paused")
    time.sleep(0.2)  # (reads while paused)
    assert p.stop()
    assert not [e for e in ev.of(StatusEvent) if "is back" in e.message]


def test_resume_with_the_input_gone_stays_paused_and_says_why(tmp_path: Path) -> None:
    src = FakeSource(30.0, speed=5.0)
    p, ev, _, _ = make(tmp_path, source=src)
    p.start()
    assert wait_for(lambda: p.state == "running")
    p.pause()
    src.refuse_start = "audio input device 'USB Mic' not found"
    p.resume()  # returns; no exception reaches the UI's event loop
    assert p.state == "paused" and not src.running
    assert [e.message for e in ev.of(ErrorEvent)][-1] == (
        "cannot resume: audio input device 'USB Mic' not found"
    )
    src.refuse_start = ""  # plugged back in
    p.resume()
    assert p.state == "running" and src.running
    assert p.stop()


def test_switching_to_an_input_that_fails_keeps_the_previous_one(tmp_path: Path) -> None:
    first, second = FakeSource(30.0, speed=5.0), FakeSource(30.0, speed=5.0)
    second.refuse_start = "cannot open audio input 'Headset': Device unavailable"
    sources = iter([first, second])
    cfg = AppConfig(mt=MtConfig(model_path="x", max_new_tokens=8))
    ev = Events()
    rec = ScriptedRecognizer([Step(0.3, 0, ["hello"])])
    p = Pipeline(
        cfg, ev, Factories(lambda a, c: next(sources), lambda a: rec, loader_for(echo_lm()))
    )
    p.start()
    assert wait_for(lambda: p.state == "running" and first.i > 0)
    p.apply_config(dataclasses.replace(cfg, audio=dataclasses.replace(cfg.audio, device="Headset")))
    assert wait_for(lambda: bool(ev.of(ErrorEvent)))
    assert [(e.message, e.fatal) for e in ev.of(ErrorEvent)] == [
        ("cannot open audio input 'Headset': Device unavailable (kept the previous input)", False)
    ]
    assert wait_for(lambda: first.running and first.starts == 2)
    n = first.i
    assert wait_for(lambda: first.i > n)  # speech recognition goes on with the old input
    assert p.state == "running"
    assert p.stop()


def test_unwritable_transcript_folder_keeps_the_lines_and_runs_on(tmp_path: Path) -> None:
    (tmp_path / "transcripts").write_text("a file where the folder should be")
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    rec = ScriptedRecognizer(SCRIPT)
    src = FakeSource(3.5, speed=5.0)
    f = Factories(lambda a, c: src, lambda a: rec, loader_for(echo_lm()))
    rescue = tmp_path / "home"
    rescue.mkdir()
    path = tmp_path / "transcripts" / "t.jsonl"
    p = Pipeline(cfg, ev, f, transcript_path=path, rescue_dirs=(tmp_path / "gone", rescue))
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    finals = [e for e in ev.of(SubtitleEvent) if e.final]
    assert len(finals) == 3  # every segment translated and shown
    errors = [e.message for e in ev.of(ErrorEvent) if e.where == "transcript"]
    # Said once while it lasts (each line said it again: an alert every few seconds).
    assert errors[0].startswith("could not write the transcript (")
    assert errors[0].endswith("); finished lines are kept in memory and written once that is fixed")
    # Nothing lost: the run still has every line (the tray's export uses these), and at the
    # stop, where they were promised to be written, they go where they can be.
    assert [r.source for r in p.transcript_records] == [e.source for e in finals]
    kept = rescue / "subtitler-t.jsonl"
    assert errors[1:] == [
        f"the transcript could not be written to {path.parent}: the meeting's lines are kept in "
        f"{kept}"
    ]
    assert [r.source for r in read_transcript(kept)] == [e.source for e in finals]


def test_a_transcript_that_works_again_is_said_once_each_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import subtitler.pipeline.transcript as tr
    from subtitler.pipeline.sealing import WRITTEN_AGAIN

    real_fsync, failing = os.fsync, {"left": 2}

    def full(fd: int) -> None:  # the first two lines meet a full disk
        if failing["left"]:
            failing["left"] -= 1
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(tr.os, "fsync", full)
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    f = Factories(
        lambda a, c: FakeSource(3.5, speed=5.0),
        lambda a: ScriptedRecognizer(SCRIPT),
        loader_for(echo_lm()),
    )
    path = tmp_path / "t.jsonl"
    p = Pipeline(cfg, ev, f, transcript_path=path)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "transcript"]
    assert len(said) == 1 and "No space left on device" in said[0]
    assert [e.message for e in ev.of(StatusEvent)].count(WRITTEN_AGAIN) == 1
    finals = [e.source for e in ev.of(SubtitleEvent) if e.final]
    assert [r.source for r in read_transcript(path)] == finals and len(finals) == 3


def test_any_language_whisper_detects_has_a_prompt_and_others_fall_back(tmp_path: Path) -> None:
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    from subtitler.mt.languages import LANGUAGES

    assert set(LANGUAGES) == set(_LANGUAGE_CODES)  # so a detected language never breaks prompts
    seen: list[str] = []
    script = [
        Step(0.5, 0, ["bore", "da."], final=True, language="cy"),  # Welsh: in Whisper's list
        Step(1.0, 1, ["hello."], final=True, language="xx"),  # unknown: the configured source
    ]
    lm = echo_lm()
    original = lm.tokenize

    def tokenize(text: str, **kw):  # type: ignore[no-untyped-def]
        seen.append(text)
        return original(text, **kw)

    lm.tokenize = tokenize  # type: ignore[method-assign]
    p, ev, _, _ = make(tmp_path, lm=lm, script=script)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    assert not ev.of(ErrorEvent)
    assert any("Welsh" in t for t in seen) and any("English" in t for t in seen)
    assert [r.source for r in read_transcript(tmp_path / "transcript.jsonl")] == [
        "bore da.",
        "hello.",
    ]


def test_a_failed_translation_still_keeps_the_line_in_the_transcript(tmp_path: Path) -> None:
    class Broken(SlowLM):
        def evaluate(self, tokens, logits_at):  # type: ignore[no-untyped-def]
            raise RuntimeError("llama_decode failed with code 1")

    p, ev, _, _ = make(tmp_path, lm=Broken(0.0))
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    failures = [e.message for e in ev.of(ErrorEvent) if e.where == "mt"]
    # Reported once per segment (3), not at each of its updates (6).
    assert len(failures) == 3 and "translation failed: llama_decode" in failures[0]
    # Each finished line stays on screen, shown as said.
    finals = [e for e in ev.of(SubtitleEvent) if e.final]
    assert [(e.source, e.translation) for e in finals] == [
        ("good morning everyone.", ""),
        ("the budget grew.", ""),
        ("thanks", ""),
    ]
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [(r.source, r.translation) for r in recs] == [
        ("good morning everyone.", ""),
        ("the budget grew.", ""),
        ("thanks", ""),
    ]


@pytest.mark.parametrize("live", [True, False])
def test_pausing_a_microphone_makes_the_open_sentence_final(tmp_path: Path, live: bool) -> None:
    src = FakeSource(30.0, speed=5.0, live=live)
    script = [Step(0.3, 0, ["so", "the"])]  # the speaker pauses mid-sentence
    p, ev, _, rec = make(tmp_path, source=src, script=script)
    p.start()
    assert wait_for(lambda: any(e.source == "so the" for e in ev.of(SubtitleEvent)))
    p.pause()
    if live:  # what was said before the pause is final now, not joined to what comes after
        assert wait_for(lambda: any(e.final for e in ev.of(SubtitleEvent)))
        assert rec.finished == 1
        assert [e.source for e in ev.of(SubtitleEvent) if e.final] == ["so the"]
    else:  # a file resumes mid-sentence: nothing is cut
        time.sleep(0.2)
        assert rec.finished == 0 and not any(e.final for e in ev.of(SubtitleEvent))
    assert p.stop()


def test_noise_and_the_target_language_are_not_translated(tmp_path: Path) -> None:
    script = [
        Step(0.5, 0, ["..."], final=True),  # Whisper on noise
        Step(1.0, 1, ["Guten", "Tag."], final=True, language="de"),  # already German
        Step(1.5, 2, ["hello."], final=True, language="en"),
    ]
    lm = echo_lm()
    p, ev, _, _ = make(tmp_path, lm=lm, script=script)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    finals = {e.segment_id: e for e in ev.of(SubtitleEvent) if e.final}
    assert finals[0].translation == "" and finals[0].shown(0) == ""
    assert finals[1].translation == "Guten Tag." == finals[1].shown(3)
    assert finals[2].translation  # English is translated
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [(r.source, r.translation) for r in recs][:2] == [
        ("...", ""),
        ("Guten Tag.", "Guten Tag."),
    ]
    assert not ev.of(ErrorEvent)


def test_a_translation_cut_at_its_length_limit_says_so(tmp_path: Path) -> None:
    never_ends = SlowLM(0.0)  # its translations never reach EOS
    mt = MtConfig(model_path="fake.gguf", max_new_tokens=6)
    p, ev, _, _ = make(tmp_path, lm=never_ends, mt=mt)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    finals = [e for e in ev.of(SubtitleEvent) if e.final]
    assert finals and all(e.stats is not None and e.stats.hit_cap for e in finals)
    assert all(e.shown(0).endswith("…") and not e.translation.endswith("…") for e in finals)


def test_stop_during_a_final_decode_keeps_the_line(tmp_path: Path) -> None:
    slow = SlowLM(0.05)
    script = [Step(0.3, 0, ["a", "long", "sentence."], final=True)]
    p, _, _, _ = make(tmp_path, lm=slow, script=script)
    p.start()
    assert slow.busy.wait(5)  # the final line is being translated...
    assert p.stop(timeout=2.0)  # ...when the user quits: still a quick stop
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == ["a long sentence."]


def test_at_stop_what_was_captured_is_heard_and_the_line_being_said_is_kept(
    tmp_path: Path,
) -> None:
    """Stop (or Quit) in the middle of a sentence: the audio the input captured before it is
    still recognised, and the line being said becomes final, on screen and in the transcript."""
    script = [Step(0.5, 0, ["good", "morning."], final=True), Step(1.0, 1, ["thanks", "for"])]
    src = FakeSource(30.0, speed=5.0, live=True, backlog=8)
    p, ev, _, rec = make(tmp_path, source=src, script=script)
    p.start()
    assert wait_for(lambda: rec.last is not None and rec.last.segment_id == 1)
    assert p.stop()
    assert src.held >= 8 and rec.t == pytest.approx(src.held * src.block_s)  # all captured
    assert rec.finished == 1
    finals = [e for e in ev.of(SubtitleEvent) if e.final]
    assert [e.source for e in finals] == ["good morning.", "thanks for"]
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == ["good morning.", "thanks for"]
    assert list(tmp_path.glob("*.wav")) == []  # all of it heard: nothing left over


class StuckAtTheEnd(ScriptedRecognizer):
    """Its last pass does not return until it is let go (a hung worker)."""

    def __init__(self, steps: list[Step]) -> None:
        super().__init__(steps)
        self.ending = threading.Event()
        self.let_go = threading.Event()

    def finish(self, now: float = 0.0) -> list:  # type: ignore[type-arg]
        self.ending.set()
        self.let_go.wait(30)
        return super().finish(now)


def test_a_last_pass_that_never_returns_does_not_hold_the_stop(tmp_path: Path) -> None:
    """A recogniser behind its input is given the backlog a few seconds at a time: what it
    finished before its last pass hung is kept, and the stop does not wait for it."""
    script = [
        Step(0.5, 0, ["good", "morning."], final=True),
        Step(1.0, 1, ["and"]),
        Step(3.0, 1, ["and", "then."], final=True),  # in the backlog's first seconds
        Step(4.0, 2, ["at"]),
    ]
    rec = StuckAtTheEnd(script)
    src = FakeSource(30.0, speed=5.0, live=True, backlog=80)  # 8 s captured, not heard yet
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    f = Factories(lambda a, c: src, lambda a: rec, loader_for(echo_lm()))
    p = Pipeline(cfg, Events(), f, transcript_path=tmp_path / "transcript.jsonl")
    p.start()
    assert wait_for(lambda: rec.last is not None and rec.last.segment_id == 1)
    t0 = time.monotonic()
    assert not p.stop(timeout=1.0)  # its recogniser did not end...
    assert time.monotonic() - t0 < 1.5  # ...and the stop did not wait for it
    assert rec.ending.is_set() and rec.closed
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.source for r in recs] == ["good morning.", "and then."]
    rec.let_go.set()
    # What it had not heard is not lost: beside the transcript, to be played again.
    unheard = tmp_path / "transcript.unheard.wav"
    with wave.open(str(unheard), "rb") as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        # The backlog's last 3 s (its first 5 were heard; a block may have been read as
        # usual between the input's stop and the stage's end).
        assert 29 * 1600 <= w.getnframes() <= 30 * 1600


def test_finals_still_queued_at_stop_reach_the_transcript(tmp_path: Path) -> None:
    from subtitler.pipeline.stages import TranslationStage
    from subtitler.pipeline.transcript import TranscriptWriter
    from subtitler.types import AsrUpdate

    mailbox_updates = [
        AsrUpdate(0, "first line.", "", True, 0.0, 1.0, 1.0),
        AsrUpdate(1, "an open one", "", False, 1.0, 2.0, 2.0),
        AsrUpdate(2, "second line.", "", True, 2.0, 3.0, 3.0),
    ]
    p, _, _, _ = make(tmp_path)
    stage: TranslationStage = p._mt
    for u in mailbox_updates:
        p.mailbox.put(u)
    writer = TranscriptWriter(tmp_path / "t.jsonl")
    stage.lines.transcript = writer
    p._halt.set()  # stopped before the translator got to them
    p.mailbox.close()
    stage.run()
    writer.close()
    assert [r.source for r in read_transcript(tmp_path / "t.jsonl")] == [
        "first line.",
        "second line.",
    ]
