"""Few-shot prompts for base models (issue 25): the shipped examples, their labels, and a prefix
that every update of every line shares."""

from __future__ import annotations

from pathlib import Path

import pytest

from subtitler.mt import fewshot
from subtitler.mt.languages import LANGUAGES, NATIVE_NAMES, native_name
from subtitler.mt.prompts import PromptBuilder


def test_every_language_has_its_own_name() -> None:
    assert set(NATIVE_NAMES) == set(LANGUAGES)
    assert native_name("de") == "Deutsch" and native_name("fr-CA") == "Français"
    assert native_name("ja") == "日本語" and native_name("zh") == "中文"


@pytest.mark.parametrize("pair", ["en-de", "en-ja", "en-zh"])
def test_the_shipped_pairs_have_examples_both_ways(pair: str) -> None:
    src, tgt = pair.split("-")
    there, back = fewshot.examples(src, tgt), fewshot.examples(tgt, src)
    assert len(there) == 5
    assert back == tuple((b, a) for a, b in there)
    # Short sentences that name something, without line breaks or tabs.
    for a, b in there:
        assert 10 <= len(a.split()) <= 20 and a != b
        assert "\n" not in a + b and "\t" not in a + b


def test_the_prompt_is_the_examples_then_the_line() -> None:
    p = PromptBuilder("fewshot", "en", "de").build("Good  morning, everyone")
    pairs, line = p.rsplit("\n\n", 1)
    assert line == "English: Good morning, everyone\nDeutsch:"
    assert pairs.count("English: ") == 5 and pairs.count("\nDeutsch: ") == 5
    a, b = fewshot.examples("en", "de")[0]
    assert p.startswith(f"English: {a}\nDeutsch: {b}\n\n")


def test_every_line_shares_the_examples_as_prefix() -> None:
    """Two lines' prompts differ only after the examples and the source label: their keys and
    values are evaluated once per model and pair."""
    b = PromptBuilder("fewshot", "en", "ja")
    one, two = b.build("The weather is nice."), b.build("Where is the station?")
    prefix = fewshot.fewshot_prefix("en", "ja")
    assert one.startswith(prefix + "English: ") and two.startswith(prefix + "English: ")
    # A context or glossary line would be translated by a base model as one more line.
    assert b.build("Hello there", context="Earlier words") == b.build("Hello there")


def test_other_pairs() -> None:
    # Through English where both files share a sentence, else the labels alone.
    assert fewshot.examples("de", "ja") == ()
    assert PromptBuilder("fewshot", "de", "ja").build("Guten Tag") == "Deutsch: Guten Tag\n日本語:"
    assert PromptBuilder("fewshot", "fr", "es").build("Bonjour") == "Français: Bonjour\nEspañol:"


def test_a_damaged_examples_file_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fewshot").mkdir()
    (tmp_path / "fewshot" / "en-fr.tsv").write_bytes(b"en\tfr\n\xff\xfe broken\n")
    monkeypatch.setattr(fewshot, "asset_path", lambda name: tmp_path / name)
    fewshot._file.cache_clear()
    try:
        assert fewshot.examples("en", "fr") == ()
        assert PromptBuilder("fewshot", "en", "fr").build("Hi") == "English: Hi\nFrançais:"
    finally:
        fewshot._file.cache_clear()
