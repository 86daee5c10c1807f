"""A user's glossary with the real Gemma 3 270M (a base model: the decoder alone keeps the
terms' translations), the line growing word by word as speech arrives, into languages written
without spaces. No clock: each update decodes to its end, so the runs are fixed; the tests
check what must hold of any output (the fixed translation is there), not its other words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.config import MtConfig
from subtitler.display.masking import shown_by_k
from subtitler.mt.engine import LocalEngine, token_pieces
from subtitler.mt.glossary import Glossary
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler.mt.loading import load_translator

LINE = "We moved the billing service to Kubernetes last week."
GIVEN = {"ja": "クバネティス", "zh": "库伯内特斯"}


@pytest.fixture(scope="module")
def engine(gemma: Path) -> Iterator[LocalEngine]:
    mt = MtConfig(model_path=str(gemma), threads=2, src_lang="en")
    e = LocalEngine(load_translator(mt), mt, gemma.name)
    yield e
    e.close()


@pytest.mark.parametrize("tgt", sorted(GIVEN))
def test_a_terms_translation_is_kept_in_a_language_without_spaces(
    engine: LocalEngine, tgt: str
) -> None:
    """The bias waits until the output has as many words as come before the term in the
    source: counted by spaces, a Chinese or Japanese output never had them, and the term was
    never favoured (Gemma wrote "Kubernetes" in Latin letters)."""
    glossary = Glossary()
    for to, given in GIVEN.items():
        glossary = glossary.with_pair("en", to, [("Kubernetes", given)])
    engine.set_glossary(glossary)
    engine.configure(MtConfig(model_path=engine.mt.model_path, threads=2, src_lang="en",
                              tgt_lang=tgt))  # fmt: skip
    words = LINE.split()
    for n in range(1, len(words) + 1):
        out = engine.translate(7, " ".join(words[:n]), n == len(words), tgt, "en").text
    assert GIVEN[tgt] in out


@pytest.mark.parametrize(
    ("text", "given"),
    [
        ("我们搬运了账单服务到库伯内特斯了。", "库伯内特斯"),
        ("支払いサービスを クバネティス に移動しました。", "クバネティス"),
        (" Wir haben die Rechnung nach Neu Sankt Petersburg verlagert.", "Neu Sankt Petersburg"),
    ],
)
def test_mask_k_shows_a_terms_translation_whole_or_not_at_all(
    gemma: Path, text: str, given: str
) -> None:
    """An open line masked at any k after any token of Gemma's: the term's fixed translation
    (the decoder forces it token by token) never shows in part ('…账单服务到库伯' of 库伯内特斯,
    'Neu Sankt' of 'Neu Sankt Petersburg'), nor while a decode is still writing it."""
    lm = LlamaLM(LlamaSettings(str(gemma), n_ctx=256, n_threads=1))
    try:
        tokens = lm.tokenize(text, special=False)
        halves = [given[:m] for m in range(1, len(given))]
        for n in range(len(tokens) + 1):
            pieces = token_pieces(lm.detokenize, tokens[:n])
            for shown in shown_by_k(pieces, False, whole=(given,))[1:]:  # (k = 0: all of it)
                if not shown.endswith(given):
                    assert not any(shown.endswith(h) for h in halves), (n, shown)
            # (without the term: cut as before)
            assert shown_by_k(pieces, False, whole=("nowhere",)) == shown_by_k(pieces, False)
    finally:
        lm.close()


def test_a_term_said_in_chinese_keeps_its_translation(engine: LocalEngine, gemma: Path) -> None:
    """A term among other Chinese characters (no spaces around it) was never found: whole
    words were those with no letter beside them, and every Chinese character is one."""
    g = Glossary().with_pair("zh", "en", [("库伯内特斯", "Kubrix")])
    engine.set_glossary(g)
    mt = MtConfig(model_path=str(gemma), threads=2, src_lang="zh", tgt_lang="en")
    engine.configure(mt)
    line = "我们上周把计费服务迁移到了库伯内特斯上。"
    out = ""
    for n in range(2, len(line) + 1, 2):  # (as recognition writes it: a few characters more)
        out = engine.translate(9, line[:n], n >= len(line) - 1, "en", "zh").text
    assert "Kubrix" in out


@pytest.mark.parametrize("tgt", ["ja", "ru", "de"])
def test_a_line_of_a_term_kept_as_it_is_is_a_translation(
    engine: LocalEngine, gemma: Path, tgt: str
) -> None:
    """A term the glossary keeps as written ("Visual Studio Code" = "Visual Studio Code"),
    said alone, came out as given and was refused: 'the model wrote the source again', or
    into Japanese or Russian 'the model wrote another language' (the line left untranslated,
    the reader told the model cannot do the pair)."""
    kept = [("Visual Studio Code", "Visual Studio Code"), ("GitHub Copilot", "GitHub Copilot")]
    engine.set_glossary(Glossary().with_pair("en", tgt, kept))
    engine.configure(MtConfig(model_path=str(gemma), threads=2, src_lang="en", tgt_lang=tgt))
    for i, line in enumerate(["Visual Studio Code.", "GitHub Copilot?"]):
        r = engine.translate(300 + i, line, True, tgt, "en")
        assert r.problem == "" and kept[i][1] in r.text, (line, r.text, r.problem)
