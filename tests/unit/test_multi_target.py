"""Several target languages at once (issue 19 point 4): every update into each target, each
with its own translator on the one model; the targets take turns when the translator is slow;
a finished line reaches the transcript with every target's text."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

from subtitler.config import AppConfig, MtConfig
from subtitler.mt.engine import EngineResult, Progress
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.events import MetricsEvent, SubtitleEvent
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.metrics import LiveMetrics
from subtitler.pipeline.stages import TranslationStage
from subtitler.pipeline.transcript import TranscriptWriter, read_transcript, to_srt
from subtitler.types import AsrUpdate, UpdateStats
from tests.unit.test_pipeline import Events, make

TWO = MtConfig(model_path="fake.gguf", max_new_tokens=16, tgt_lang="de", extra_targets="ja")


def by_target(events: list[SubtitleEvent]) -> dict[tuple[str, int], list[SubtitleEvent]]:
    out: dict[tuple[str, int], list[SubtitleEvent]] = {}
    for e in events:
        out.setdefault((e.lang, e.target), []).append(e)
    return out


def test_every_update_is_translated_into_each_target(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path, mt=TWO)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    subs = by_target(ev.of(SubtitleEvent))
    assert set(subs) == {("de", 0), ("ja", 1)}
    de, ja = subs["de", 0], subs["ja", 1]
    # The translator keeps up here: each update in each language, the line's draft its own.
    assert [(e.segment_id, e.source, e.final) for e in de] == [
        (e.segment_id, e.source, e.final) for e in ja
    ]
    assert any(not e.final for e in ja)
    assert all(e.extra for e in ja) and not any(e.extra for e in de)
    assert [e.translation for e in de] != [e.translation for e in ja]
    assert any(e.stats.draft_len > 0 for e in ja[1:])
    finals = {lang: [e for e in subs[lang, i] if e.final] for lang, i in subs}
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert [r.translation for r in recs] == [e.translation for e in finals["de"]]
    assert [r.extra for r in recs] == [(("ja", e.translation),) for e in finals["ja"]]
    assert all(r.tgt_lang == "de" and r.targets == ("de", "ja") for r in recs)
    # One set of metrics per line (the main target's), the extra one's latency beside it.
    assert len(ev.of(MetricsEvent)) == 3
    assert len(p.metrics.latency_by_lang["ja"]) == len(ja)
    assert p.metrics.all_latency == p.metrics.latency_by_lang["de"]


def test_one_target_writes_the_transcript_as_before(tmp_path: Path) -> None:
    p, ev, _, _ = make(tmp_path)
    p.start()
    assert p.finished.wait(10)
    assert p.stop()
    assert {(e.lang, e.target) for e in ev.of(SubtitleEvent)} == {("de", 0)}
    text = (tmp_path / "transcript.jsonl").read_text(encoding="utf-8")
    assert '"extra"' not in text  # a line with one target reads as before (older versions too)


class PushingEngine:
    """Translates instantly, but the recogniser is faster: during every call the next
    scripted update arrives (so the update being translated is superseded)."""

    notice = ""
    name = "pushing"

    def __init__(self, mailbox: Mailbox, updates: list[AsrUpdate]) -> None:
        self.mailbox, self.updates = mailbox, list(updates)
        self.calls: list[tuple[str, str]] = []

    def configure(self, mt: MtConfig) -> None:
        pass  # (the settings change nothing this fake does)

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: Callable[[], bool] | None = None,
        progress: Progress | None = None,
    ) -> EngineResult:
        self.calls.append((target, source))
        if self.updates:
            self.mailbox.put(self.updates.pop(0))
        text = f"{target}:{source}"
        return EngineResult(text, (1,), (text.encode(),), UpdateStats())

    def set_glossary(self, glossary: Glossary) -> None:
        pass

    def close(self) -> None:
        pass


def update(i: int, final: bool = False) -> AsrUpdate:
    words = " ".join(f"w{j}" for j in range(i + 1))
    return AsrUpdate(0, words, "", final, 0.0, float(i), float(i))


def run_stage(mt: MtConfig, updates: list[AsrUpdate], tmp_path: Path) -> tuple[Events, Path]:
    """The translation stage over ``updates``, each arriving while the one before is being
    translated (a translator slower than the recogniser)."""
    mailbox, ev = Mailbox(), Events()
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path)
    stage = TranslationStage(mailbox, ev, lambda: 0.0, LiveMetrics(), threading.Event(), mt, writer)
    stage.set_model(PushingEngine(mailbox, updates[1:]))
    mailbox.put(updates[0])
    while (u := mailbox.get(timeout=0)) is not None:
        stage.translate(u)
    writer.close()
    return ev, path


def test_with_a_slow_translator_the_targets_take_turns(tmp_path: Path) -> None:
    """Every update is superseded once one target has it: the other goes first next time,
    so each language's line moves on every other update rather than only the first's."""
    updates = [update(i) for i in range(10)] + [update(10, final=True)]
    ev, path = run_stage(TWO, updates, tmp_path)
    subs = by_target(ev.of(SubtitleEvent))
    shown = {k[0]: [e.source for e in v if not e.final] for k, v in subs.items()}
    assert shown["de"] == [updates[i].text for i in (0, 2, 4, 6, 8)]
    assert shown["ja"] == [updates[i].text for i in (1, 3, 5, 7, 9)]
    # A final update is translated into every target, superseded or not.
    assert [e.translation for e in ev.of(SubtitleEvent) if e.final] == [
        f"de:{updates[10].text}",
        f"ja:{updates[10].text}",
    ]
    (rec,) = read_transcript(path)
    assert (rec.translation, rec.extra) == (
        f"de:{updates[10].text}",
        (("ja", f"ja:{updates[10].text}"),),
    )


def test_three_targets_share_the_turns(tmp_path: Path) -> None:
    mt = MtConfig(model_path="x", tgt_lang="de", extra_targets="ja, fr")
    updates = [update(i) for i in range(9)] + [update(9, final=True)]
    ev, _ = run_stage(mt, updates, tmp_path)
    counts = {t: 0 for t in ("de", "ja", "fr")}
    for e in ev.of(SubtitleEvent):
        if not e.final:
            counts[e.lang] += 1
    assert counts == {"de": 3, "ja": 3, "fr": 3}
    finals = [(e.lang, e.target) for e in ev.of(SubtitleEvent) if e.final]
    assert sorted(finals, key=lambda x: x[1]) == [("de", 0), ("ja", 1), ("fr", 2)]


def test_an_extra_target_spoken_already_is_shown_as_said(tmp_path: Path) -> None:
    """Someone speaks one of the targets: that target shows the line as said (no model call
    for it); the others are translated."""
    mt = MtConfig(model_path="x", src_lang="ja", tgt_lang="de", extra_targets="ja")
    u = AsrUpdate(0, "konnichiwa", "", True, 0.0, 1.0, 1.0, language="ja")
    ev, path = run_stage(mt, [u], tmp_path)
    finals = {e.lang: e.translation for e in ev.of(SubtitleEvent)}
    assert finals == {"de": "de:konnichiwa", "ja": "konnichiwa"}
    (rec,) = read_transcript(path)
    assert rec.translation_in("ja") == "konnichiwa"
    # Exported into the extra target, the line is written once (not source and "translation").
    assert to_srt([rec], "both", "ja").count("konnichiwa") == 1


def test_settings_are_given_once_and_each_target_sees_them_as_its_own(tmp_path: Path) -> None:
    mailbox = Mailbox()
    engine = PushingEngine(mailbox, [])
    configured: list[MtConfig] = []
    targets: list[str] = []
    real_translate, real_configure = engine.translate, engine.configure

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        targets.append(a[3])
        return real_translate(*a, **k)

    def spy_configure(mt: MtConfig) -> None:
        configured.append(mt)
        real_configure(mt)

    engine.translate = spy  # type: ignore[method-assign]
    engine.configure = spy_configure  # type: ignore[method-assign]
    stage = TranslationStage(
        mailbox, Events(), lambda: 0.0, LiveMetrics(), threading.Event(), TWO, None
    )
    stage.set_model(engine)
    stage.translate(update(0, final=True))
    stage.translate(update(1, final=True))
    assert targets == ["de", "ja", "de", "ja"]  # (the least recently served first)
    assert configured and all(m is TWO for m in configured)  # the settings, not per call
    stage.set_mt(dataclasses.replace(TWO, beta=0.4))
    stage.translate(update(2, final=True))
    assert [m.beta for m in configured][-1] == 0.4 and len(targets) == 6
    # Each target's translator sees the settings as its own (main target first).
    assert [(m.tgt_lang, m.targets) for m in map(TWO.for_target, ("de", "ja"))] == [
        ("de", ("de", "ja")),
        ("ja", ("ja", "de")),
    ]
    cfg = AppConfig(mt=TWO)
    assert cfg.mt.targets == ("de", "ja")


def test_a_target_added_while_running_is_translated_from_the_next_update(tmp_path: Path) -> None:
    """No model is loaded again: the next update is translated into the new target too."""
    from tests.helpers.fake_pipeline import FakeSource, Step, echo_lm, loader_for
    from tests.unit.test_pipeline import wait_for

    loads: list[MtConfig] = []
    script = [Step(0.3 * i, i, [f"w{i}", "x."], final=True) for i in range(1, 40)]
    p, ev, _, _ = make(
        tmp_path,
        source=FakeSource(13.0, speed=5.0),
        script=script,
        loader=loader_for(echo_lm(), loads),
    )
    p.start()
    assert wait_for(lambda: len(ev.of(SubtitleEvent)) >= 2)
    p.apply_config(
        dataclasses.replace(p.config, mt=dataclasses.replace(p.config.mt, extra_targets="ja"))
    )
    assert wait_for(lambda: any(e.lang == "ja" for e in ev.of(SubtitleEvent)))
    assert p.finished.wait(20)
    p.stop()
    assert len(loads) == 1
    first_ja = next(e.segment_id for e in ev.of(SubtitleEvent) if e.lang == "ja")
    later = {e.segment_id for e in ev.of(SubtitleEvent) if e.segment_id >= first_ja}
    ja = {e.segment_id for e in ev.of(SubtitleEvent) if e.lang == "ja"}
    assert ja == later  # from then on, every line in both
    recs = read_transcript(tmp_path / "transcript.jsonl")
    assert recs[0].extra == () and recs[-1].targets == ("de", "ja")
