"""Mask-k, NE and friends, prompt templates, streams: exact outputs on fixed inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from subtitler.display.masking import display_text
from subtitler.models.templates import TemplateError, detect_template, resolve_template
from subtitler.mt.languages import UnknownLanguageError, language_name
from subtitler.mt.masking import complete_text, output_mask
from subtitler.mt.prompts import PromptBuilder
from subtitler.types import UpdateStats
from subtitler_research.bench.streams import CorpusError, prefixes, read_parallel
from subtitler_research.mt.metrics import RunTotals, erasure, normalized_erasure, units

# Byte pieces of "猫が好き" as a byte-level BPE would split them: characters cut in the middle.
CJK = "猫が好き".encode()
PIECES = {1: CJK[:2], 2: CJK[2:4], 3: CJK[4:7], 4: CJK[7:11], 5: CJK[11:]}


def detok(tokens: list[int]) -> bytes:
    return b"".join(PIECES[t] for t in tokens)


def pieces(tokens: list[int]) -> list[bytes]:
    return [PIECES[t] for t in tokens]


class TestMasking:
    def test_output_mask(self) -> None:
        assert output_mask([1, 2, 3, 4], 2, final=False) == [1, 2]
        assert output_mask([1, 2, 3, 4], 2, final=True) == [1, 2, 3, 4]
        assert output_mask([1, 2], 5, final=False) == []
        assert output_mask([1, 2], 0, final=False) == [1, 2]

    def test_complete_text_drops_partial_trailing_character(self) -> None:
        assert complete_text(CJK[:2]) == ""
        assert complete_text(CJK[:4]) == "猫"
        assert complete_text(CJK[:7]) == "猫が"
        assert complete_text("Grüße".encode()[:3]) == "Gr"

    @pytest.mark.parametrize("n", range(0, 6))
    def test_display_never_splits_a_character(self, n: int) -> None:
        tokens = [1, 2, 3, 4, 5]
        for k in range(0, 6):
            shown = display_text(pieces(tokens[:n]), k, final=False)
            assert "\ufffd" not in shown
            assert "猫が好き".startswith(shown)
            # Exactly the whole characters inside the first n-k pieces.
            kept = detok(tokens[: max(0, n - k)] if k else tokens[:n])
            assert shown.encode() == kept[: len(shown.encode())]
            assert len(kept) - len(shown.encode()) < 4

    def test_final_is_shown_in_full(self) -> None:
        assert display_text(pieces([1, 2, 3, 4, 5]), 3, final=True) == "猫が好き"

    @pytest.mark.parametrize("n", range(0, 6))
    def test_a_final_cut_by_the_length_limit_shows_no_broken_character(self, n: int) -> None:
        shown = display_text(pieces([1, 2, 3, 4, 5][:n]), 0, final=True)
        assert "\ufffd" not in shown and "猫が好き".startswith(shown)

    def test_display_mask_leaves_tokens_alone(self) -> None:
        ps = pieces([1, 2, 3, 4, 5])
        display_text(ps, 2, final=False)
        assert ps == pieces([1, 2, 3, 4, 5])


class TestMetrics:
    def test_units(self) -> None:
        assert units("Der Hund  läuft.", "de") == ["Der", "Hund", "läuft."]
        assert units("我 爱你", "zh") == ["我", "爱", "你"]

    def test_erasure_counts_units_removed(self) -> None:
        # a b c -> a x c d : erase 2 (b c), then a x c d -> a x c d e: erase 0.
        assert erasure(["a b c", "a x c d", "a x c d e"], "en") == (2, 5)
        assert normalized_erasure([["a b c", "a x c d", "a x c d e"], ["z", "y"]], "en") == 3 / 6

    def test_totals(self) -> None:
        t = RunTotals()
        t.add(UpdateStats(draft_len=0, accepted=0, output_len=4, decode_s=0.4))
        t.add(
            UpdateStats(
                draft_len=4,
                accepted=3,
                output_len=5,
                verify_s=0.1,
                decode_s=0.1,
                decode_steps=2,
                verified_tokens=4,
                prompt_s=0.3,
            )
        )
        assert t.ad == 75.0
        assert t.ao == pytest.approx(100 * 3 / 9)
        assert t.tps == pytest.approx(9 / 0.6)
        assert t.latency_ms == pytest.approx(1000 * (0.4 + 0.5) / 2)
        assert t.ms_per_verified == pytest.approx(25.0)


class TestPrompts:
    def test_tower_exact(self) -> None:
        p = PromptBuilder("tower", "en", "de").build("Hello  there")
        assert p == (
            "<start_of_turn>user\nTranslate the English source text to German. Return only the "
            "translation, without any additional explanations or commentary.\nEnglish: Hello there"
            "\nGerman: <end_of_turn>\n<start_of_turn>model\n"
        )

    def test_qwen3_exact(self) -> None:
        p = PromptBuilder("qwen3", "en", "zh").build("Hi")
        assert p == (
            "<|im_start|>system\nTranslate the English source text to Chinese. Return only the "
            "translation, without any additional explanations or commentary.<|im_end|>\n"
            "<|im_start|>user\nEnglish: Hi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>"
            "\n\nChinese:"
        )

    def test_context_line(self) -> None:
        p = PromptBuilder("chatml", "en", "de").build("And then?", context="It rained.")
        assert p == (
            "<|im_start|>system\nTranslate English to German.<|im_end|>\n<|im_start|>user\n"
            "(Previous English sentence, for context only, do not translate: It rained.)\n"
            "And then?<|im_end|>\n<|im_start|>assistant\n"
        )

    def test_gguf_template_goes_through_formatter(self) -> None:
        class Fmt:
            def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
                return "|".join(m["role"] + ":" + m["content"] for m in messages)

        p = PromptBuilder("gguf", "en", "ja", formatter=Fmt()).build("Hi")
        assert p.startswith("user:Translate the English source text to Japanese.")
        assert p.endswith("\nEnglish: Hi\nJapanese:")

    def test_language_names(self) -> None:
        assert language_name("de") == "German"
        assert language_name("zh-CN") == "Chinese"
        with pytest.raises(UnknownLanguageError):
            language_name("xx")
        with pytest.raises(UnknownLanguageError):
            PromptBuilder("tower", "en", "qq")

    def test_chatml_exact(self) -> None:
        p = PromptBuilder("chatml", "en", "ja").build("Good morning.")
        assert p == (
            "<|im_start|>system\nTranslate English to Japanese.<|im_end|>\n"
            "<|im_start|>user\nGood morning.<|im_end|>\n<|im_start|>assistant\n"
        )

    def test_detect(self) -> None:
        assert detect_template({"subtitler.prompt_template": "chatml"}) == "chatml"
        assert detect_template({"general.name": "Tower-Plus-2B"}) == "tower"
        assert detect_template({"general.architecture": "qwen3"}) == "qwen3"
        assert detect_template({"tokenizer.chat_template": "{{x}}"}) == "gguf"
        # A base model (no chat template) is shown example translations.
        assert detect_template({"general.architecture": "llama"}) == "fewshot"
        assert detect_template({"subtitler.prompt_template": "fewshot"}) == "fewshot"
        # ... also a base Gemma whose converter copied the chat template; the
        # instruction-tuned ones keep it.
        base = {"general.name": "Gemma 3 270m", "tokenizer.chat_template": "{{x}}"}
        assert detect_template(base) == "fewshot"
        for it in ("Gemma 3 270m It", "gemma-2-2b-it", "Llama 3.2 1B", "random-llama"):
            assert detect_template({**base, "general.name": it}) == "gguf", it
        with pytest.raises(TemplateError):
            resolve_template("gguf", {})
        assert resolve_template("qwen3", {}) == "qwen3"


class TestStreams:
    def test_prefixes(self) -> None:
        s = "one two three four five six seven"
        assert prefixes(s, 3) == ["one two three", "one two three four five six", s]
        assert prefixes("a b c", 3) == ["a b c"]
        assert prefixes("我爱你们", 2, "zh") == ["我爱", "我爱你们"]

    def test_mismatched_corpus(self, tmp_path: Path) -> None:
        (tmp_path / "s").write_text("a\nb\n")
        (tmp_path / "r").write_text("x\n")
        with pytest.raises(CorpusError, match="line-aligned"):
            read_parallel(tmp_path / "s", tmp_path / "r", None)


def test_the_templates_a_setting_may_name_are_the_prompts_known() -> None:
    """One list of template names (the schema's): every one resolves or says what it lacks,
    and every builtin prompt is on it."""
    from subtitler.config import TEMPLATES
    from subtitler.mt.prompts import BUILTIN

    assert set(TEMPLATES) == {"auto", *BUILTIN, "gguf", "fewshot"}
    chat = {"tokenizer.chat_template": "{{ messages }}", "general.name": "Tower-Plus-2B"}
    assert [resolve_template(t, chat) for t in TEMPLATES] == ["tower", *BUILTIN, "gguf", "fewshot"]
    with pytest.raises(TemplateError, match="one of"):
        resolve_template("llama3", chat)
