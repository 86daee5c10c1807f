"""What a display shows of a translation from the pieces an engine reports (issue 29) is, byte
for byte and for every k, what the engine showed before it reported pieces: its tokens'
prefixes detokenized one by one. Real tokenizers that cut characters across tokens: GPT-2's
byte-level BPE (the tiny test model's) and Gemma 3's SentencePiece with byte fallback."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from subtitler.config import MtConfig
from subtitler.display.masking import MAX_K, shown_by_k, word_safe
from subtitler.mt.engine import LoadedModel, LocalEngine, token_pieces
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler.mt.lm import common_prefix_len
from subtitler.mt.masking import complete_text

Detok = Callable[[Sequence[int]], bytes]

TEXTS = [
    " 日本語のテキストと中文字幕、Grüße 🦙",
    " 会議は午後三時に始まりますが、資料はまだ届いていません。",
    " 我们明天在上海开会，请大家准时到达。鱇鱇𠮷野家",
    " in der Dämmerung sahen wir den Leuchtturm über der Bucht",
]


def shown_before(detokenize: Detok, tokens: Sequence[int], final: bool) -> tuple[str, ...]:
    """The rule as the engine ran it before issue 29 (mt/masking.py at ef1507f): the text of
    each kept prefix detokenized anew, cut where it parts from the full text."""
    full = complete_text(detokenize(tokens))
    out = []
    for k in range(MAX_K + 1):
        if final or k <= 0:
            out.append(full.strip())
            continue
        cut = complete_text(detokenize(tokens[: max(0, len(tokens) - k)]))
        out.append(word_safe(full, common_prefix_len(cut, full)).strip())
    return tuple(out)


@pytest.fixture(scope="module")
def gemma_lm(gemma: Path) -> Iterator[LlamaLM]:
    lm = LlamaLM(LlamaSettings(str(gemma), n_ctx=256, n_threads=1))
    yield lm
    lm.close()


def splits_characters(lm: Any, tokens: Sequence[int]) -> bool:
    """Whether some token of ``tokens`` ends inside a character."""
    for t in tokens:
        piece = lm.detokenize([t])
        if piece and piece.decode("utf-8", "replace") != piece.decode("utf-8", "ignore"):
            return True
    return False


def check_every_prefix(lm: Any) -> None:
    split = False
    for text in TEXTS:
        tokens = lm.tokenize(text, special=False)
        split = split or splits_characters(lm, tokens)
        for n in range(len(tokens) + 1):
            pieces = token_pieces(lm.detokenize, tokens[:n])
            assert b"".join(pieces) == lm.detokenize(tokens[:n])
            for final in (False, True):
                got = shown_by_k(pieces, final)
                assert got == shown_before(lm.detokenize, tokens[:n], final), (text, n, final)
                assert all("\ufffd" not in s for s in got)
    assert split, "the texts should make the tokenizer cut a character across tokens"


def test_gpt2_byte_level_bpe(exact_lm: Any) -> None:
    check_every_prefix(exact_lm)


def test_gemma_sentencepiece_with_byte_fallback(gemma_lm: LlamaLM) -> None:
    check_every_prefix(gemma_lm)


def test_the_engine_reports_the_pieces_of_what_it_wrote(tiny_gguf: Path) -> None:
    """An engine's result: as many pieces as tokens, joined the translation's text; a display
    masks them as the engine did before (both the final and the open line)."""
    lm = LlamaLM(LlamaSettings(str(tiny_gguf), n_ctx=512, n_threads=1))
    # (German: a random model's words in no language's script are no Japanese translation.)
    mt = MtConfig(model_path=str(tiny_gguf), tgt_lang="de", max_new_tokens=24, len_ratio=100.0)
    engine = LocalEngine(LoadedModel(lm, "chatml"), mt)
    try:
        for final in (False, True):
            r = engine.translate(0, "Good morning, everyone", final, "de", "en")
            assert r.tokens and len(r.pieces) == len(r.tokens)
            assert complete_text(b"".join(r.pieces)).strip() == r.text
            assert shown_by_k(r.pieces, final) == shown_before(lm.detokenize, r.tokens, final)
    finally:
        engine.close()


# What a meeting says that is one word to a reader though written with dots, commas, colons,
# slashes or an at sign; Gemma writes a number digit by digit.
WHOLE = [
    " Das Budget beträgt 1.500.000 Euro",  # "1.500." / "1.500" read as one thousand five hundred
    " Um 10:30 Uhr",  # "10:" / "10"
    " Das kostet 3,14 Euro",  # "3,"
    " Schreib an anna.schmidt@example.com bitte",  # "anna.schmidt@"
    " Siehe https://example.com/docs/setup heute",  # "https://example.com/"
]


@pytest.mark.parametrize("text", WHOLE)
def test_a_number_time_or_address_is_shown_whole_or_not_at_all(
    gemma_lm: LlamaLM, text: str
) -> None:
    """An open line masked at any k after any token (a translation, or a slow decode's words so
    far) shows whole words of it: never the first part of a number ("Das Budget beträgt
    1.500." of 1.500.000), a time or an address; a number the text ends in ("1." of a decode
    that has not written "500.000" yet) only once a space follows it."""
    tokens = gemma_lm.tokenize(text, special=False)
    for n in range(len(tokens) + 1):
        pieces = token_pieces(gemma_lm.detokenize, tokens[:n])
        full = complete_text(b"".join(pieces)).strip()
        for k, shown in enumerate(shown_by_k(pieces, final=False)):
            if k == 0 or not shown:
                continue
            last = shown.split()[-1]
            word = full.split()[len(shown.split()) - 1]  # the word of the text it shows
            rest = word[len(last) :]
            assert word.startswith(last) and not any(c.isalnum() for c in rest), (n, k, shown)
            if last[-1].isdigit() and rest:
                assert not full.endswith(word), (n, k, shown)


THAI = " ประเทศไทยมีประชากรมากกว่าหกสิบล้านคน เมืองหลวงคือกรุงเทพ"
LEADING = "เแโใไ"  # Thai vowels written before the consonant they follow
FOLLOWING = "ะาำๅ"  # and those written after it, in the same syllable


def test_thai_is_never_cut_inside_a_syllable(gemma_lm: LlamaLM) -> None:
    """Thai is cut by character (no spaces between words), but never between a consonant and
    its vowel: not after a vowel written before its consonant ("…เ"), nor before one written
    after it ("ประช" of "ประชากร")."""
    tokens = gemma_lm.tokenize(THAI, special=False)
    for n in range(len(tokens) + 1):
        pieces = token_pieces(gemma_lm.detokenize, tokens[:n])
        full = complete_text(b"".join(pieces)).strip()
        for k, shown in enumerate(shown_by_k(pieces, final=False)):
            rest = full[len(shown) :]
            assert not shown.endswith(tuple(LEADING)), (n, k, shown)
            assert not rest.startswith(tuple(FOLLOWING)), (n, k, shown, rest)


EMOJI = " Gut gemacht 👍🏽 und 🇩🇪 sowie 👨‍👩‍👧 heute"
ZWJ = "\u200d"


def test_an_emoji_is_shown_whole_or_not_at_all(gemma_lm: LlamaLM) -> None:
    """An emoji written as several characters (a skin tone, a flag's two letters, a family
    joined by zero-width joiners) is one picture: a cut inside it showed another one ('👨' of
    the family, '👍' without its tone, a flag's lone letter 🇩)."""
    tokens = gemma_lm.tokenize(EMOJI, special=False)
    for n in range(len(tokens) + 1):
        pieces = token_pieces(gemma_lm.detokenize, tokens[:n])
        full = complete_text(b"".join(pieces)).strip()
        for k, shown in enumerate(shown_by_k(pieces, final=False)):
            if k == 0:
                continue  # (no mask: the text as decoded so far)
            rest = full[len(shown) :]
            flags = sum(0x1F1E6 <= ord(c) <= 0x1F1FF for c in shown)
            assert not shown.endswith(ZWJ) and not rest.startswith(ZWJ), (n, k, shown)
            assert not rest[:1] or not 0x1F3FB <= ord(rest[0]) <= 0x1F3FF, (n, k, shown)
            assert flags % 2 == 0, (n, k, shown)
