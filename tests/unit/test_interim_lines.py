"""Interim lines under load (issue 17): a translator slower than the speech shows the prefix
it has decoded so far instead of nothing, and an open line does not go blank or back without
cause."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from subtitler.config import MtConfig
from subtitler.mt.engine import EngineResult, LoadedModel, LocalEngine
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.events import SubtitleEvent
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.metrics import LiveMetrics
from subtitler.pipeline.stages import TranslationStage
from subtitler.types import AsrUpdate, UpdateStats
from tests.helpers.fake_lm import ScriptedLM, peaked
from tests.helpers.fake_pipeline import EOS, FakeSource, SlowLM, Step, V, echo_lm
from tests.unit.test_pipeline import Events, make

MT = MtConfig(model_path="fake.gguf", max_new_tokens=200, len_ratio=100.0)


def update(i: int, final: bool = False) -> AsrUpdate:
    words = " ".join(f"word{j}" for j in range(i + 1))
    return AsrUpdate(0, words, "", final, 0.0, float(i), float(i))


def stage_with(lm: object, mt: MtConfig, mailbox: Mailbox) -> tuple[TranslationStage, Events]:
    ev = Events()
    stage = TranslationStage(mailbox, ev, lambda: 0.0, LiveMetrics(), threading.Event(), mt, None)
    stage.set_model(LocalEngine(LoadedModel(lm, "chatml"), mt))  # type: ignore[arg-type]
    return stage, ev


class NewerArrives(ScriptedLM):
    """A newer update of the segment arrives during every decode (after ``after``
    evaluations): the recogniser is faster than the translator. The translation goes on from
    the prompt's end the same way whatever the source (each token follows from the last), so
    a draft stays right as the source grows."""

    def __init__(self, mailbox: Mailbox, updates: list[AsrUpdate], after: int = 6) -> None:
        super().__init__(V, EOS, lambda ctx: peaked(V, {5 + (ctx[-1] * 7 + 3) % 30: 1.0}))
        self.mailbox, self.updates, self.after = mailbox, updates, after
        self.n = 0

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> np.ndarray:
        self.n += 1
        if self.n % self.after == 0 and self.updates:
            self.mailbox.put(self.updates.pop(0))
        return super().evaluate(tokens, logits_at)


def run(mt: MtConfig) -> list[SubtitleEvent]:
    updates = [update(i) for i in range(10)] + [update(10, final=True)]
    mailbox = Mailbox()
    stage, ev = stage_with(NewerArrives(mailbox, updates[1:]), mt, mailbox)
    mailbox.put(updates[0])
    while (u := mailbox.get(timeout=0)) is not None:
        stage.translate(u)
    subs: list[SubtitleEvent] = ev.of(SubtitleEvent)
    return subs


def test_a_decode_given_up_for_a_newer_update_leaves_its_prefix_on_screen() -> None:
    """Every update is superseded mid-decode. Before: nothing until the final (10 of 11
    updates abandoned, the line blank for the whole sentence); now each one's prefix shows."""
    subs = run(MT)
    interim = [e for e in subs if not e.final]
    assert len(interim) == 10 and all(e.partial and e.translation for e in interim)
    # Each prefix was the next update's draft: the line grows, it does not start again.
    shown = [e.shown(0) for e in interim]
    assert all(len(b) >= len(a) for a, b in itertools.pairwise(shown))
    (final,) = [e for e in subs if e.final]
    assert not final.partial and final.stats.draft_len == interim[-1].stats.output_len > 0
    # mask-k applies to a prefix as to any open line (whole tokens of the fake are "<n>").
    assert all(len(e.shown(3)) <= len(e.shown(0)) for e in interim)


def test_with_interim_lines_off_a_given_up_decode_shows_nothing() -> None:
    subs = run(MtConfig(model_path="fake.gguf", max_new_tokens=200, len_ratio=100.0,
                        partial_every_s=0.0))  # fmt: skip
    assert [e.final for e in subs] == [True]


def test_a_slow_decode_shows_its_prefix_as_it_goes() -> None:
    """No newer update, but one decode takes long: its prefix is shown on the way (here at
    every step), each a start of the translation that follows."""
    mt = MtConfig(model_path="fake.gguf", max_new_tokens=40, len_ratio=100.0,
                  partial_every_s=1e-9)  # fmt: skip
    mailbox = Mailbox()
    stage, ev = stage_with(echo_lm(), mt, mailbox)
    u = AsrUpdate(0, "good morning everyone and welcome", "", False, 0.0, 1.0, 1.0)
    stage.translate(u)
    subs: list[SubtitleEvent] = ev.of(SubtitleEvent)
    *partials, whole = subs
    assert partials and all(e.partial and not e.final for e in partials)
    assert not whole.partial and whole.translation
    texts = [e.translation for e in partials] + [whole.translation]
    assert all(whole.translation.startswith(t) for t in texts)
    assert len({e.translation for e in partials}) == len(partials)  # only changes are shown
    # A prefix is no translation of the whole source: the latency metrics skip it.
    assert len(stage.metrics.all_latency) == 1


class _FixedEngine:
    """An engine whose answers a test writes (its translate); the rest does nothing."""

    notice, name = "", "fixed"

    def set_glossary(self, glossary: Glossary) -> None:
        pass

    def configure(self, mt: object) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_line_with_stable_words_is_never_blank() -> None:
    """A short open line that mask-3 would empty shows the words its last two translations
    agree on (before: blank until it was 4 tokens long)."""

    class Fixed(_FixedEngine):
        def __init__(self) -> None:
            self.texts = ["Guten Morgen", "Guten Morgen zusammen", "Guten Morgen zusammen!"]

        def translate(self, *args: object, **kw: object) -> EngineResult:
            t = self.texts.pop(0)
            # One token: mask-k (k >= 1) hides all of it.
            return EngineResult(t, (1,), (t.encode(),), UpdateStats())

    ev = Events()
    stage = TranslationStage(Mailbox(), ev, lambda: 0.0, LiveMetrics(), threading.Event(), MT, None)
    stage.set_model(Fixed())
    for i in range(3):
        stage.translate(update(i))
    assert [e.shown(3) for e in ev.of(SubtitleEvent)] == ["", "Guten Morgen", "Guten Morgen"]


def test_a_pipeline_with_a_translator_slower_than_the_speech_shows_lines_as_it_goes(
    tmp_path: Path,
) -> None:
    """The whole pipeline: updates every 0.2 s of speech, a decode of the sentence takes
    about 2 s. Before, every interim decode was abandoned and the line stayed blank until the
    sentence ended; now its prefix is on screen while it is spoken."""
    script = [Step(0.2 * (i + 1), 0, [f"w{j}" for j in range(i + 2)]) for i in range(15)]
    script.append(Step(3.2, 0, [f"w{j}" for j in range(16)], final=True))
    p, ev, _, _ = make(
        tmp_path,
        lm=SlowLM(delay=0.05),
        source=FakeSource(3.4, speed=1.0),
        script=script,
        mt=MtConfig(model_path="fake.gguf", max_new_tokens=40, len_ratio=100.0),
    )
    p.start()
    assert p.finished.wait(30)
    assert p.stop()
    subs = ev.of(SubtitleEvent)
    final_at = next(e.emitted_at for e in subs if e.final)
    before_final = [e for e in subs if not e.final and e.emitted_at < final_at and e.shown(0)]
    assert len(before_final) >= 3


def test_an_open_line_shows_a_terms_fixed_translation_whole_or_not_at_all() -> None:
    """The stage tells mask-k the line's fixed translations: 'Ich fahre nach Neu Sankt' of
    'Neu Sankt Petersburg' (another city) was shown at k = 1 and 2."""
    pieces = [b"Ich", b" fahre", b" nach", b" Neu", b" Sankt", b" Peters", b"burg", b" heute"]

    class Fixed(_FixedEngine):
        def translate(self, *args: object, **kw: object) -> EngineResult:
            return EngineResult(b"".join(pieces).decode(), (1,) * 8, tuple(pieces), UpdateStats())

    mt = MtConfig(model_path="fake.gguf", src_lang="en", tgt_lang="de")
    ev = Events()
    stage = TranslationStage(Mailbox(), ev, lambda: 0.0, LiveMetrics(), threading.Event(), mt, None)
    stage.set_model(Fixed())
    stage.set_glossary(
        Glossary().with_pair("en", "de", [("New Saint Petersburg", "Neu Sankt Petersburg")])
    )
    stage.translate(AsrUpdate(0, "I go to New Saint Petersburg today", "", False, 0.0, 1.0, 1.0))
    (sub,) = ev.of(SubtitleEvent)
    assert [sub.shown(k) for k in range(4)] == [
        "Ich fahre nach Neu Sankt Petersburg heute",
        "Ich fahre nach Neu Sankt Petersburg",
        "Ich fahre nach",
        "Ich fahre nach",
    ]
