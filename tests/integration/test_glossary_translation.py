"""Glossary translations with the real fixture translator (fixtures/translator, en-de): a term
the model gets wrong comes out as given, in the worker process too, changed live; sentences
without a term translate exactly as without a glossary; instruction templates are told the
translations after the text, so the prompt's shared prefix stays that of the source."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from subtitler.config import AppConfig, MtConfig
from subtitler.mt import terms as terms_mod
from subtitler.mt.engine import LocalEngine
from subtitler.mt.glossary import Glossary
from subtitler.mt.isolated import WorkerEngine
from subtitler.mt.lm import common_prefix_len
from subtitler.mt.loading import load_translator
from subtitler.mt.output_rules import ANOTHER_LANGUAGE, ECHO, problem
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.terms import TermBiasedLM, glued_tokens, present, words_before
from subtitler.pipeline.events import SubtitleEvent
from subtitler.pipeline.pipeline import Factories, Pipeline
from subtitler.types import AsrUpdate
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
# Sentences whose term the fixture translates otherwise (checked below without a glossary).
CASES = [
    ("Tom went to Subiaco yesterday.", "Subiaco", "Subiaco"),
    ("I like printing.", "printing", "Buchdruck"),
    ("A man is riding a bicycle in the park.", "bicycle", "Drahtesel"),
    ("She works at Mozilla.", "Mozilla", "Mozilla"),
]
PLAIN = ["A dog runs on the beach.", "Two children are playing in the snow."]
GLOSSARY = Glossary().with_pair("en", "de", [(t, x) for _, t, x in CASES])


def _mt() -> MtConfig:
    return MtConfig(model_path=str(FIXTURE), template="auto", threads=1, src_lang="en")


def _stream(engine: LocalEngine | WorkerEngine, seg: int, text: str, mt: MtConfig) -> str:
    """Word by word, as speech arrives; the final translation."""
    words = text.split()
    out = ""
    engine.configure(mt)
    for n in range(1, len(words) + 1):
        out = engine.translate(seg, " ".join(words[:n]), n == len(words), mt.tgt_lang, "en").text
    return out


@pytest.fixture(scope="module")
def engine() -> LocalEngine:
    return LocalEngine(load_translator(_mt()), _mt(), FIXTURE.name)


def test_a_term_comes_out_as_given_only_with_the_glossary(engine: LocalEngine) -> None:
    mt = _mt()
    engine.set_glossary(Glossary())
    before = [_stream(engine, i, s, mt) for i, (s, _, _) in enumerate(CASES)]
    for out, (_, _, given) in zip(before, CASES, strict=True):
        assert given not in out  # the fixture's own word (e.g. Subiaco -> "Boston")
    engine.set_glossary(GLOSSARY)
    after = [_stream(engine, 100 + i, s, mt) for i, (s, _, _) in enumerate(CASES)]
    assert after[0] == "Tom ging gestern in Subiaco."
    assert after[1] == "Ich mag Buchdruck."
    assert after[2] == "Ein Mann fährt auf einem Drahtesel."
    assert after[3] == "Sie arbeitet in Mozilla."  # a whole word: not "Mozillach"


def test_sentences_without_a_term_are_unchanged(engine: LocalEngine) -> None:
    mt = _mt()
    engine.set_glossary(Glossary())
    plain = [_stream(engine, 200 + i, s, mt) for i, s in enumerate(PLAIN)]
    engine.set_glossary(GLOSSARY)
    assert [_stream(engine, 300 + i, s, mt) for i, s in enumerate(PLAIN)] == plain


def test_the_worker_engine_takes_the_glossary_live() -> None:
    mt = _mt()
    w = WorkerEngine(mt, FIXTURE)
    try:
        pid = w.pid
        source = CASES[0][0]
        assert "Subiaco" not in w.translate(1, source, True, mt.tgt_lang, "en").text
        w.set_glossary(GLOSSARY)
        assert (
            w.translate(2, source, True, mt.tgt_lang, "en").text == "Tom ging gestern in Subiaco."
        )
        w.set_glossary(Glossary())
        assert "Subiaco" not in w.translate(3, source, True, mt.tgt_lang, "en").text
        assert w.pid == pid  # the same process: no model loaded again
    finally:
        w.close()


def test_ssbd_accepts_a_draft_holding_the_term(engine: LocalEngine) -> None:
    """The bias is applied to the rows SSBD verifies with, so the previous translation
    (holding the fixed translation) is accepted again as the draft of the next update."""
    mt = _mt()
    engine.set_glossary(GLOSSARY)
    first = engine.translate(400, CASES[0][0], False, mt.tgt_lang, "en")
    assert "Subiaco" in first.text
    again = engine.translate(400, CASES[0][0], False, mt.tgt_lang, "en")
    assert again.stats.accepted == len(first.tokens) == len(again.tokens)


def test_the_bias_touches_only_output_rows_and_only_with_a_term(engine: LocalEngine) -> None:
    lm = engine.lm
    prompt = lm.tokenize(PromptBuilder("chatml", "en", "de").build("Tom went to Subiaco."))
    lm.truncate(0)
    plain = np.array(lm.evaluate(prompt, list(range(len(prompt)))), copy=True)
    lm.truncate(0)
    biased = TermBiasedLM(lm, len(prompt), [("Subiaco", 3)])
    rows = biased.evaluate(prompt, list(range(len(prompt))))
    assert np.array_equal(rows[:-1], plain[:-1])  # the prompt's own rows are left alone
    first = biased.targets[0].variants[1][0]  # "Subiaco" without a space begins an output
    words_needed = biased.targets[0].at_word
    assert words_needed == 3  # not yet: the output has no words so far
    assert np.array_equal(rows[-1], plain[-1])
    lm.truncate(0)
    early = TermBiasedLM(lm, len(prompt), [("Subiaco", 0)])
    rows = early.evaluate(prompt, [len(prompt) - 1])
    assert rows[0][first] == pytest.approx(plain[-1][first] + early.bias)
    lm.truncate(0)


def test_terms_are_found_as_whole_words_in_any_case() -> None:
    terms = (("printing", "Buchdruck"), ("New York", "New York"), ("Sweynheim", ""))
    assert present("Printing presses in new  york.", terms) == terms[:2]
    assert present("reprinting in New Yorkshire", terms) == ()
    assert present("Sweynheim", terms) == ()  # no fixed translation: recognition only
    assert words_before("They began printing in Subiaco", "subiaco") == 4


def test_instruction_templates_are_told_after_the_text() -> None:
    terms = (("Subiaco", "Subiaco"), ("printing", "Buchdruck"))
    tower = PromptBuilder("tower", "en", "de", terms=terms)
    p = tower.build("They began printing")
    assert "English: They began printing\n(Glossary, use these German translations: " in p
    assert "printing = Buchdruck)\nGerman:" in p and "Subiaco =" not in p
    # chatml (small models trained here) follows no instruction: the prompt is unchanged.
    plain = PromptBuilder("chatml", "en", "de")
    assert PromptBuilder("chatml", "en", "de", terms=terms).build("printing") == plain.build(
        "printing"
    )
    # The shared prefix of two updates of a segment is as long as without a glossary.
    for template in ("tower", "qwen3"):
        a, b = "They began printing", "They began printing in Subiaco near Rome"
        with_terms = PromptBuilder(template, "en", "de", terms=terms)
        without = PromptBuilder(template, "en", "de")
        shared = common_prefix_len(with_terms.build(a), with_terms.build(b))
        assert shared == common_prefix_len(without.build(a), without.build(b))


class _GatedRecognizer(ScriptedRecognizer):
    """The second line is heard only once the test says so (after the glossary changed)."""

    def __init__(self, steps: list[Step], gate: threading.Event) -> None:
        super().__init__(steps)
        self.gate = gate

    def process(self, now: float = 0.0) -> list[AsrUpdate]:
        if self.steps and self.steps[0].segment_id > 0 and not self.gate.is_set():
            return []
        return super().process(now)


def test_the_pipeline_applies_a_glossary_change_from_the_next_line(tmp_path: Path) -> None:
    words = CASES[0][0].split()
    gate = threading.Event()
    rec = _GatedRecognizer([Step(0.5, 0, words, True), Step(1.0, 1, words, True)], gate)
    events: list[object] = []
    cfg = AppConfig(mt=_mt())
    p = Pipeline(
        cfg,
        events.append,
        Factories(
            lambda a, c: FakeSource(30.0, speed=1.0),
            lambda a: rec,
            lambda mt: LocalEngine(load_translator(mt), mt, FIXTURE.name),
        ),
    )

    def finals() -> list[SubtitleEvent]:
        return [e for e in list(events) if isinstance(e, SubtitleEvent) and e.final]

    try:
        p.start()
        deadline = time.monotonic() + 30
        while not finals() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert finals()[0].translation == "Tom ging gestern in Boston."
        p.set_glossary(GLOSSARY)  # while running: no model is loaded again
        assert rec.hotwords[-1] == "Subiaco. printing. bicycle. Mozilla."
        gate.set()
        while len(finals()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert finals()[1].translation == "Tom ging gestern in Subiaco."
    finally:
        p.stop()


def test_a_finished_term_is_a_whole_word_except_where_words_are_not_spaced(
    engine: LocalEngine,
) -> None:
    lm = engine.lm
    glued = glued_tokens(lm)

    def first(text: str) -> int:
        return lm.tokenize(text, special=False)[0]

    assert glued[first("ch")] and glued[first("9")]  # "Mozilla" + "ch"
    assert not glued[first(" Haus")] and not glued[first(".")] and not glued[first(",")]
    assert not glued[first("的")] and not glued[first("です")]  # zh / ja go on unspaced


def test_a_term_the_model_chose_itself_may_go_on_as_a_compound(engine: LocalEngine) -> None:
    """Only a fixed translation the bias put there is ended as a word ("Mozilla", not
    "Mozillach"); German compounds of the model's own choosing stay ("Schneeanzug")."""
    mt = _mt()
    source = "A child in a snow suit plays in the snow."
    engine.set_glossary(Glossary())
    plain = _stream(engine, 500, source, mt)
    assert plain == "Ein Kind im Schneeanzug spielt im Schnee."
    engine.set_glossary(Glossary().with_pair("en", "de", [("snow", "Schnee")]))
    assert _stream(engine, 501, source, mt) == plain


def test_a_translator_loaded_again_after_a_crash_keeps_the_glossary() -> None:
    mt = _mt()
    w = WorkerEngine(mt, FIXTURE)
    try:
        w.set_glossary(GLOSSARY)
        source = CASES[0][0]
        assert (
            w.translate(1, source, True, mt.tgt_lang, "en").text == "Tom ging gestern in Subiaco."
        )
        first = w.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)  # as a native abort would
        with pytest.raises(RuntimeError, match="loaded it again"):
            w.translate(2, source, True, mt.tgt_lang, "en")
        assert w.pid != first
        assert (
            w.translate(3, source, True, mt.tgt_lang, "en").text == "Tom ging gestern in Subiaco."
        )
    finally:
        w.close()


def test_a_term_inside_a_longer_term_said_is_not_one_of_its_own() -> None:
    terms = (("New York", "Neuyork"), ("New York Times", "New York Times"), ("York", "Jork"))
    assert present("He reads the New York Times.", terms) == terms[1:2]
    assert present("He reads the New York Times in New York.", terms) == terms[:2]
    assert present("He lives in New York.", terms) == terms[:1]
    assert present("He lives in York.", terms) == terms[2:]


def test_overlapping_terms_keep_the_longer_ones_translation_alone(engine: LocalEngine) -> None:
    """ "New York Times" said is not "New York" said too: the fixture wrote both fixed
    translations ("… eine New York Times Neuyork Dollar.")."""
    mt = _mt()
    engine.set_glossary(
        Glossary().with_pair("en", "de", [("New York", "Neuyork"), ("New York Times", "NYT")])
    )
    out = _stream(engine, 500, "A man reads the New York Times in the park.", mt)
    assert "NYT" in out and "Neuyork" not in out


def test_a_large_glossary_matches_a_line_against_the_terms_it_could_hold() -> None:
    """10,000 terms, more than the patterns kept compiled: each update compiled them all again
    (5,000 terms: 290 ms a line, docs/BENCHMARKS.md "Glossary"); now only those whose longest
    word the line holds are matched."""
    terms = tuple((f"Term{i} Project{i}", f"T{i}") for i in range(10_000))
    line = "the term4242 project4242 launch"
    terms_mod._pattern.cache_clear()
    assert present(line, terms) == (terms[4242],)
    assert terms_mod._pattern.cache_info().currsize <= 20  # (Term4242… and Project4242…)


@pytest.mark.parametrize(
    ("source", "term", "found"),
    [
        ("we use kubernetes, mostly", "Kubernetes", True),
        ("Acme's report", "Acme", True),
        ("the C++ code", "C++", True),
        ("the C code", "C++", False),
        ("ported to .NET today", ".NET", True),
        ("die STRASSE", "Straße", False),  # (not the same word to re.IGNORECASE either)
        ("Dev Ops team", "DevOps", True),  # (speech recognition splits or joins words)
        ("our devops team", "Dev Ops", True),
        ("the new roadmap", "road map", True),
        ("the road-map", "road map", True),
        ("on Git Hub", "GitHub", True),
        ("a gith ub", "GitHub", False),
        ("New Yorkshire", "New York", False),
        ("new   york", "New York", True),
        ("++ and --", "++", True),
        # Speech in a language written without spaces: a term is among other characters.
        ("私は東京都に住んでいます。", "東京都", True),
        ("我们把计费服务迁移到了库伯内特斯上。", "库伯内特斯", True),
        ("我们迁移到了Kubernetes上。", "Kubernetes", True),
        ("เราย้ายไปที่กรุงเทพแล้ว", "กรุงเทพ", True),
        ("我们迁移到了Kubernetesx上。", "Kubernetes", False),
        ("APIs", "API", False),
        # An acronym is written in capitals: "it" or "us" is no IT or US.
        ("Our IT team", "IT", True),
        ("Can it wait?", "IT", False),
        ("Let us go to the US", "US", True),
        ("let us go", "US", False),
        ("Das AT&T-Netz", "AT&T", True),  # (inflected forms are not matched: the README says so)
    ],
)
def test_a_term_is_found_as_its_pattern_finds_it(source: str, term: str, found: bool) -> None:
    assert present(source, ((term, "x"),)) == (((term, "x"),) if found else ())


def test_a_fixed_translation_kept_as_given_is_no_copy_nor_another_language() -> None:
    kept = (("Visual Studio Code", "Visual Studio Code"),)
    line = "Open Visual Studio Code."
    for tgt, out in (("de", "Visual Studio Code."), ("ja", "Visual Studio Code を開く。")):
        assert problem(line, out, [1, 2, 3], "en", tgt, kept=kept) == ""
    assert problem("Visual Studio Code.", "Visual Studio Code.", [1], "en", "de") == ECHO
    assert problem("GitHub Copilot?", "GitHub Copilot?", [1], "en", "ja").startswith(
        ANOTHER_LANGUAGE
    )
    # The rest of a line is judged as before: the source copied around a kept term.
    line = "We all open Visual Studio Code every single morning"
    assert problem(line, line, [1], "en", "de", kept=kept) == ECHO


def test_an_acronym_in_the_glossary_is_not_a_common_word_said(engine: LocalEngine) -> None:
    """'IT' = 'Informatik' made every 'it' a term: 'A dog runs and it jumps.' took
    'Informatik'."""
    mt = _mt()
    engine.set_glossary(Glossary().with_pair("en", "de", [("IT", "Informatik")]))
    assert "Informatik" not in _stream(engine, 600, "A dog runs and it jumps.", mt)
    assert "Informatik" in _stream(engine, 601, "A man works in IT.", mt)
