"""Both sides of a meeting: the microphone ("you") and the meeting's audio ("others") heard at
once, each with its own languages, lines marked with who spoke, one numbering of lines, and the
meeting's audio that leaks into the microphone dropped from the user's side."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from subtitler.config import AppConfig, AsrConfig, AudioConfig, MtConfig
from subtitler.pipeline.echo import EchoGate, common_in_order, echoed
from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.pipeline import Factories, Pipeline
from subtitler.pipeline.sides import SegmentIds, engine_settings, same_input, sides_of
from subtitler.pipeline.transcript import read_transcript
from subtitler.types import OTHERS, YOU, AsrUpdate
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for
from tests.unit.test_pipeline import Events, HearsAnotherLanguage, wait_for

MEETING = "Speakers [Loopback]"


def two_sided(**mt: object) -> AppConfig:
    return AppConfig(
        audio=AudioConfig(device="Mic", meeting_device=MEETING),
        asr=AsrConfig(language="de", you_language="en"),
        mt=MtConfig(model_path="fake.gguf", src_lang="de", tgt_lang="en", max_new_tokens=16, **mt),  # type: ignore[arg-type]
    )


# -- the settings ------------------------------------------------------------------------------
def test_one_input_is_one_side_with_the_settings_as_they_are() -> None:
    cfg = AppConfig(mt=MtConfig(tgt_lang="ja", extra_targets="fr"))
    (side,) = sides_of(cfg)
    assert (side.name, side.audio, side.asr, side.mt) == ("", cfg.audio, cfg.asr, cfg.mt)
    assert engine_settings(sides_of(cfg)) is cfg.mt


def test_meeting_audio_makes_two_sides_each_with_its_languages() -> None:
    cfg = two_sided(extra_targets="fr")
    others, you = sides_of(cfg)
    assert (others.name, others.audio.device, others.asr.language) == (OTHERS, MEETING, "de")
    assert others.mt.targets == ("en", "fr")  # what the reader reads: as chosen
    assert (you.name, you.audio.device, you.asr.language) == (YOU, "Mic", "en")
    assert (you.mt.src_lang, you.mt.targets) == ("en", ("de",))  # into the meeting's language
    assert you.audio.meeting_device is None and others.audio.meeting_device is None
    # One model translates into every side's targets.
    assert engine_settings((others, you)).targets == ("en", "fr", "de")
    # The user's own choices win; without a language of theirs, they speak what they read.
    mine = dataclasses.replace(cfg.mt, you_targets="fr, it")
    cfg2 = dataclasses.replace(cfg, mt=mine, asr=dataclasses.replace(cfg.asr, you_language=None))
    _, you2 = sides_of(cfg2)
    assert (you2.mt.targets, you2.mt.src_lang, you2.asr.language) == (("fr", "it"), "en", None)


def test_a_second_file_is_the_meetings_side() -> None:
    cfg = AppConfig(audio=AudioConfig(source="file", file_path="me.wav", meeting_file="them.wav"))
    others, you = sides_of(cfg)
    assert (others.audio.file_path, you.audio.file_path) == ("them.wav", "me.wav")
    assert len(sides_of(AppConfig(audio=AudioConfig(source="file", file_path="me.wav")))) == 1


def test_the_same_input_chosen_twice_is_one_side() -> None:
    """Chosen for both, each line was heard twice and the user's copy dropped as the
    meeting's echo (the user's lines gone), with no word."""
    for audio in (
        AudioConfig(device=MEETING, meeting_device=MEETING.upper()),
        AudioConfig(source="file", file_path="talk.wav", meeting_file="./talk.wav"),
    ):
        cfg = AppConfig(audio=audio)
        assert same_input(audio) in (MEETING.upper(), "talk.wav")
        (side,) = sides_of(cfg)
        assert side.name == ""
    assert same_input(two_sided().audio) == ""


def test_the_same_input_chosen_twice_is_said(tmp_path: Path) -> None:
    cfg = AppConfig(
        audio=AudioConfig(device="Mic", meeting_device="Mic"),
        asr=AsrConfig(language="en"),
        mt=MtConfig(model_path="fake.gguf", src_lang="en", tgt_lang="de", max_new_tokens=16),
    )
    inputs = Inputs([], [Step(0.6, 0, ["good", "morning."], final=True)])
    _, ev = run(cfg, inputs, tmp_path)
    said = [e.message for e in ev.of(ErrorEvent) if e.where == "audio"]
    assert said == [
        "the microphone and the meeting's audio are the same input (Mic): it is heard once, "
        "as one side; choose each its own in Settings → Audio"
    ]
    finals = [(e.source, e.side) for e in ev.of(SubtitleEvent) if e.final]
    assert finals == [("good morning.", "")]


def test_segment_ids_are_one_numbering_in_the_order_lines_are_heard() -> None:
    ids = SegmentIds()
    a, b = ids.numbering(), ids.numbering()
    assert [a(0), b(0), a(0), a(1), b(1), b(0)] == [0, 1, 0, 2, 3, 1]


# -- the mailbox -------------------------------------------------------------------------------
def up(seg: int, text: str, final: bool = False, side: str = "") -> AsrUpdate:
    return AsrUpdate(seg, text, "", final, 0.0, 1.0, 1.0, side=side)


def test_a_sides_pending_update_is_replaced_though_the_other_side_spoke_since() -> None:
    mb = Mailbox()
    mb.put(up(0, "a", side=OTHERS))
    mb.put(up(1, "x", side=YOU))
    mb.put(up(0, "a b", side=OTHERS))
    assert mb.replaced == 1 and len(mb) == 2
    assert [(u.segment_id, u.text) for u in (mb.get(0), mb.get(0))] == [(0, "a b"), (1, "x")]


def test_a_finished_line_waits_only_behind_newer_lines_of_its_own_side() -> None:
    mb = Mailbox()
    mb.put(up(0, "they said", final=True, side=OTHERS))
    mb.put(up(1, "i said", final=True, side=YOU))
    assert mb.deferred() == 0  # one finished line per side: nobody is behind
    assert not mb.has_later_final(0, OTHERS)
    mb.put(up(2, "they said more", final=True, side=OTHERS))
    assert mb.deferred() == 1 and mb.has_later_final(0, OTHERS) and mb.has_later(0, OTHERS)
    # Newest first within a side; the user's line is not held back by the meeting's.
    assert [mb.get(0).segment_id for _ in range(3)] == [1, 2, 0]  # type: ignore[union-attr]


# -- the echo gate -----------------------------------------------------------------------------
def said(seg: int, text: str, t0: float, t1: float, final: bool, at: float) -> AsrUpdate:
    return AsrUpdate(seg, text, "", final, t0, t1, at)


def test_common_in_order() -> None:
    assert common_in_order("a b c d".split(), "x a c y d".split()) == 3
    assert common_in_order([], ["a"]) == 0


def test_echoed_words_are_runs_said_in_the_same_order() -> None:
    theirs = "printing then for our purpose may be considered as the art".split()
    mine = "thanks printing then for our purpose maybe considered as the art".split()
    # "may be" heard as "maybe": the run goes on over the word the leak lost.
    assert echoed(mine, theirs) == [False] + [True] * 5 + [False] + [True] * 4
    # One word in common is no echo; nor are common words far apart on their side.
    assert echoed("the cat sat".split(), "the dog ran off the road".split()) == [False] * 3
    assert echoed("of the".split(), "of a big house in the city".split()) == [False, False]


def test_the_meetings_words_heard_by_the_microphone_are_not_the_users_line() -> None:
    gate = EchoGate()
    assert gate.heard(said(0, "we ship the release on friday", 1.0, 3.0, False, 3.2)) == []
    # The microphone heard the speakers, a little later and a word short.
    assert gate.mine(said(1, "we ship the release on", 1.2, 2.9, False, 3.4)) == []
    assert gate.mine(said(1, "we ship the release on friday", 1.2, 3.2, True, 3.9)) == []
    assert gate.dropped == 1 and not gate.holding
    # Its later updates are dropped too (the line is the meeting's).
    assert gate.mine(said(1, "we ship the release on friday", 1.2, 3.2, True, 4.0)) == []


def test_the_users_own_words_pass_and_their_end_waits_for_the_other_side() -> None:
    gate = EchoGate(wait_s=1.5)
    own = said(2, "sounds good to me", 5.0, 6.5, False, 6.7)
    assert gate.mine(own) == [own]  # shown at once
    end = said(2, "sounds good to me", 5.0, 7.0, True, 7.2)
    assert gate.mine(end) == [] and gate.holding  # the meeting's side is not that far yet
    assert gate.due(7.5) == []
    # The meeting's side reaches the line's end with other words: it is the user's.
    assert gate.heard(said(3, "thanks", 6.8, 7.1, False, 7.6)) == [end]
    # Or nothing comes from the other side: the wait ends.
    gate.mine(said(4, "one more thing", 9.0, 10.0, True, 10.1))
    assert gate.due(11.0) == [] and [u.segment_id for u in gate.due(11.6)] == [4]
    assert gate.dropped == 0


def test_the_meetings_recogniser_running_past_a_line_in_silence_lets_it_go() -> None:
    """On a slow machine the meeting's side may lag: the user's line waits for it to have run
    a second past the line's end (not for the clock), then goes on if nothing matched."""
    gate = EchoGate(wait_s=30.0)
    end = said(2, "sounds good to me", 5.0, 7.0, True, 7.2)
    assert gate.mine(end) == []
    assert gate.fed(7.5, 20.0) == []  # not that far yet, however late it is
    assert gate.fed(8.0, 20.1) == [end]


def test_a_line_shown_before_it_was_found_an_echo_is_withdrawn() -> None:
    gate = EchoGate()
    first = said(5, "the budget is approved", 20.0, 21.5, False, 21.6)
    assert gate.mine(first) == [first]  # the meeting's side has not said it yet
    end = said(5, "the budget is approved", 20.0, 22.0, True, 22.1)
    assert gate.mine(end) == []
    (gone,) = gate.heard(said(9, "the budget is approved today", 19.9, 22.3, False, 22.4))
    assert (gone.segment_id, gone.final, gone.text) == (5, True, "")
    assert gate.dropped == 1


def test_the_users_own_words_next_to_an_echo_stay_and_the_echo_goes() -> None:
    gate = EchoGate()
    gate.heard(said(0, "it is worth mention in passing that", 80.0, 85.0, True, 85.5))
    # The microphone's line began with the leak, then the user spoke on.
    start = said(3, "it is worth mention in passing", 80.1, 84.0, False, 84.5)
    assert gate.mine(start) == []  # all echo so far: not shown
    end = AsrUpdate(
        3, "it is worth mention in passing that", "and so my fellow americans", True,
        80.1, 88.3, 88.5,
    )  # fmt: skip
    assert gate.mine(end) == []  # waits for the meeting's side to be recognised that far
    (mine,) = gate.heard(said(1, "", 88.0, 89.0, False, 89.0))
    assert (mine.committed_text, mine.tentative_text) == ("", "and so my fellow americans")
    assert mine.final and gate.cleaned == 1 and gate.dropped == 0


def test_a_few_words_each_said_on_the_other_side_are_an_echo() -> None:
    gate = EchoGate()
    gate.heard(
        said(0, "the invention of movable metal letters may justly be", 70.0, 78.0, True, 78.5)
    )
    # What the microphone made of the quiet leak: two words, far apart on the other side.
    assert gate.mine(said(4, "Moveable just", 71.5, 78.9, True, 79.0)) == []
    assert gate.dropped == 1
    # One of them with a word of the user's is the user's.
    mine = said(5, "movable? really", 78.0, 79.0, True, 79.1)
    gate.heard(said(1, "", 79.0, 80.0, False, 80.0))
    assert gate.mine(mine) == [mine]


def test_a_short_reply_said_by_both_is_kept() -> None:
    gate = EchoGate()
    gate.heard(said(0, "yes", 1.0, 1.5, True, 1.5))
    end = said(1, "yes", 1.0, 1.4, True, 1.6)
    assert gate.mine(end) == [end]  # the meeting's side reached its end: one word is no echo


# -- the pipeline ------------------------------------------------------------------------------
class Inputs:
    """Factories keyed by side: the meeting's input and recogniser, and the microphone's."""

    def __init__(self, others: list[Step], you: list[Step], seconds: float = 3.0) -> None:
        self.sources = {MEETING: FakeSource(seconds, 5.0), "Mic": FakeSource(seconds, 5.0)}
        self.recognizers = {"de": ScriptedRecognizer(others), "en": ScriptedRecognizer(you)}

    def factories(self) -> Factories:
        return Factories(
            audio=lambda a, c: self.sources[str(a.device)],
            recognizer=lambda a: self.recognizers[str(a.language)],
            model=loader_for(echo_lm()),
        )


def run(
    cfg: AppConfig, inputs: Inputs, tmp_path: Path, echo_gate: bool = True
) -> tuple[Pipeline, Events]:
    ev = Events()
    p = Pipeline(
        cfg, ev, inputs.factories(), transcript_path=tmp_path / "t.jsonl", echo_gate=echo_gate
    )
    p.start()
    assert wait_for(lambda: p.finished.is_set(), timeout=20)
    p.stop()
    return p, ev


def test_both_sides_are_heard_translated_each_their_way_and_marked(tmp_path: Path) -> None:
    others = [Step(0.6, 0, ["guten", "morgen."], final=True), Step(2.4, 1, ["alles", "gut."])]
    you = [Step(1.2, 0, ["good", "morning", "everyone."], final=True)]
    p, ev = run(two_sided(), Inputs(others, you), tmp_path)
    subs: list[SubtitleEvent] = ev.of(SubtitleEvent)
    by_side = {(s.side, s.source): s.lang for s in subs if s.final}
    assert by_side == {
        (OTHERS, "guten morgen."): "en",
        (OTHERS, "alles gut."): "en",
        (YOU, "good morning everyone."): "de",
    }
    records = read_transcript(tmp_path / "t.jsonl")
    assert [(r.side, r.source, r.src_lang, r.tgt_lang) for r in records] == [
        (OTHERS, "guten morgen.", "de", "en"),
        (YOU, "good morning everyone.", "en", "de"),
        (OTHERS, "alles gut.", "de", "en"),
    ]
    assert len({r.segment_id for r in records}) == 3  # one numbering for both recognisers
    assert p.echoes_dropped == 0


def test_a_notice_the_microphones_recogniser_finds_says_which_input(tmp_path: Path) -> None:
    """The user's language set ("You speak") but another spoken into the microphone: the
    notice says it is the microphone's (its setting is not the meeting's)."""
    others = [Step(0.6, 0, ["guten", "morgen."], final=True)]
    you = [Step(0.6, 0, ["hola."], final=True), Step(1.2, 1, ["buenos", "días."], final=True)]
    inputs = Inputs(others, you)
    inputs.recognizers["en"] = HearsAnotherLanguage(you)
    _, ev = run(two_sided(), inputs, tmp_path)
    told = [(e.where, e.message) for e in ev.of(ErrorEvent)]
    assert told == [("asr", "your microphone: " + HearsAnotherLanguage.SAID)]


def test_the_meetings_words_leaking_into_the_microphone_are_dropped(tmp_path: Path) -> None:
    others = [Step(1.5, 0, ["we", "ship", "on", "friday."], final=True)]
    you = [
        Step(1.6, 0, ["we", "ship", "on", "friday."], final=True),  # the leak
        Step(2.8, 1, ["sounds", "good."], final=True),  # the user's own
    ]
    p, ev = run(two_sided(), Inputs(others, you, seconds=3.5), tmp_path)
    records = read_transcript(tmp_path / "t.jsonl")
    assert [(r.side, r.source) for r in records] == [
        (OTHERS, "we ship on friday."),
        (YOU, "sounds good."),
    ]
    mine = {s.source for s in ev.of(SubtitleEvent) if s.side == YOU}
    assert "we ship on friday." not in mine and p.echoes_dropped == 1
    # Without the gate (what it is measured against) the leak is a line of the user's.
    p, _ = run(two_sided(), Inputs(others, you, seconds=3.5), tmp_path / "nogate", False)
    kept = read_transcript(tmp_path / "nogate" / "t.jsonl")
    assert (YOU, "we ship on friday.") in [(r.side, r.source) for r in kept]


def test_one_input_numbers_lines_on_across_a_recogniser_swap(tmp_path: Path) -> None:
    """A recogniser swapped in mid-meeting numbers its lines from 0 again: they are new
    lines all the same (they were once taken for old ones, late, and collided with them)."""
    first = ScriptedRecognizer([Step(0.3 * i, i, [f"a{i}", "x."], final=True) for i in range(4)])
    second = ScriptedRecognizer(
        [Step(2.0 + 0.3 * i, i, [f"b{i}", "y."], final=True) for i in range(4)]
    )
    recs = iter([first, second])
    cfg = AppConfig(mt=MtConfig(model_path="fake.gguf", max_new_tokens=16))
    ev = Events()
    src = FakeSource(4.0, 5.0)
    p = Pipeline(
        cfg,
        ev,
        Factories(lambda a, c: src, lambda a: next(recs), loader_for(echo_lm())),
        transcript_path=tmp_path / "t.jsonl",
    )
    p.start()
    assert wait_for(lambda: first.last is not None and first.last.segment_id == 3)
    p.apply_config(dataclasses.replace(cfg, asr=dataclasses.replace(cfg.asr, beam_size=1)))
    assert wait_for(lambda: p.finished.is_set(), timeout=20)
    p.stop()
    records = read_transcript(tmp_path / "t.jsonl")
    assert [r.source for r in records] == [f"a{i} x." for i in range(4)] + [
        f"b{i} y." for i in range(4)
    ]
    assert [r.segment_id for r in records] == list(range(8))


class LiveRecognizer(ScriptedRecognizer):
    """A microphone's recogniser: its input ending (the input switched) ends the line being
    said, and what the script says later was never spoken."""

    def finish(self, now: float = 0.0) -> list[AsrUpdate]:
        self.steps = [s for s in self.steps if s.at <= self.t + 1e-9]
        return super().finish(now)


def test_meeting_audio_turned_on_while_running_adds_the_meetings_side(tmp_path: Path) -> None:
    """Applied live: the input heard so far finishes its open line and gives way to both
    sides (its recogniser closed); turned off again, one side without a name is back."""
    made: list[tuple[str, ScriptedRecognizer]] = []

    def recognizer(a: AsrConfig) -> ScriptedRecognizer:
        lang = str(a.language)
        steps = [Step(0.3 * i, i, [f"{lang}{i}", "x."], final=i % 2 == 1) for i in range(400)]
        rec = LiveRecognizer(steps)
        made.append((lang, rec))
        return rec

    one = AppConfig(
        audio=AudioConfig(device="Mic"),
        asr=AsrConfig(language="de", you_language="en"),
        mt=MtConfig(model_path="fake.gguf", src_lang="de", tgt_lang="en", max_new_tokens=16),
    )
    ev = Events()
    sources: dict[object, FakeSource] = {}  # per device: the microphone is the same one
    p = Pipeline(
        one,
        ev,
        Factories(
            lambda a, c: sources.setdefault(a.device, FakeSource(600.0, 5.0)),
            recognizer,
            loader_for(echo_lm()),
        ),
        transcript_path=tmp_path / "t.jsonl",
    )
    p.start()
    assert wait_for(lambda: p.state == "running")
    assert wait_for(lambda: any(isinstance(e, SubtitleEvent) for e in ev.items))
    both = dataclasses.replace(one, audio=dataclasses.replace(one.audio, meeting_device=MEETING))
    p.apply_config(both)
    assert wait_for(lambda: {a.side for a in p._asrs} == {OTHERS, YOU}, timeout=10)
    first = made[0][1]
    assert first.closed and first.finished == 1  # its open line was ended, then released
    assert wait_for(lambda: {s.side for s in ev.of(SubtitleEvent)} >= {"", OTHERS, YOU})
    p.apply_config(one)
    assert wait_for(lambda: [a.side for a in p._asrs] == [""], timeout=10)
    p.stop()
    sides = [r.side for r in read_transcript(tmp_path / "t.jsonl")]
    assert sides[0] == "" and {OTHERS, YOU} <= set(sides)
    ids = [r.segment_id for r in read_transcript(tmp_path / "t.jsonl")]
    assert len(ids) == len(set(ids))


def test_a_users_line_waiting_for_the_other_side_reaches_the_transcript_at_stop(
    tmp_path: Path,
) -> None:
    inputs = Inputs([], [Step(0.3, 0, ["one", "more", "thing."], final=True)], seconds=60.0)
    ev = Events()
    p = Pipeline(two_sided(), ev, inputs.factories(), transcript_path=tmp_path / "t.jsonl")
    p.start()
    # The meeting's side says nothing: the user's finished line waits for it (1.5 s).
    assert wait_for(lambda: p._gate is not None and p._gate.holding)
    p.stop()
    assert [(r.side, r.source) for r in read_transcript(tmp_path / "t.jsonl")] == [
        (YOU, "one more thing.")
    ]


def test_at_stop_both_sides_lines_being_said_are_kept(tmp_path: Path) -> None:
    """Quit while both are talking: each side's open line becomes final, in the transcript
    with its side."""
    inputs = Inputs([], [], seconds=60.0)
    inputs.recognizers = {
        "de": LiveRecognizer([Step(0.5, 0, ["also", "wir"]), Step(20.0, 0, ["nie"])]),
        "en": LiveRecognizer([Step(0.8, 0, ["so", "we"]), Step(20.0, 0, ["never"])]),
    }
    ev = Events()
    p = Pipeline(two_sided(), ev, inputs.factories(), transcript_path=tmp_path / "t.jsonl")
    p.start()
    assert wait_for(lambda: all(r.last is not None for r in inputs.recognizers.values()))
    assert p.stop()
    said = {(r.side, r.source) for r in read_transcript(tmp_path / "t.jsonl")}
    assert said == {(OTHERS, "also wir"), (YOU, "so we")}


def test_at_stop_a_users_line_the_meetings_audio_still_to_be_heard_echoes_is_dropped(
    tmp_path: Path,
) -> None:
    """Quit while the meeting's side is behind: the user's waiting line is decided only once
    the meeting's captured audio has been heard, so the leak it says is not the user's line."""
    leak = ["we", "ship", "on", "friday."]
    inputs = Inputs([], [], seconds=60.0)
    inputs.sources = {
        # Behind the microphone's (a block every 0.1 s against 0.02 s), with 2.5 s captured
        # and not heard yet when the stop comes.
        MEETING: FakeSource(60.0, 1.0, live=True, backlog=25),
        "Mic": FakeSource(60.0, 5.0, live=True),
    }
    inputs.recognizers = {
        "de": LiveRecognizer([Step(2.2, 0, leak, final=True)]),
        "en": LiveRecognizer([Step(2.0, 0, leak, final=True)]),
    }
    ev = Events()
    p = Pipeline(two_sided(), ev, inputs.factories(), transcript_path=tmp_path / "t.jsonl")
    p.start()
    assert wait_for(lambda: p._gate is not None and p._gate.holding)
    assert inputs.recognizers["de"].t < 2.2  # the meeting's side has not heard it yet
    assert p.stop()
    assert [(r.side, r.source) for r in read_transcript(tmp_path / "t.jsonl")] == [
        (OTHERS, "we ship on friday.")
    ]
    assert p.echoes_dropped == 1
