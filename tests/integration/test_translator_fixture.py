"""The trained translator: PyTorch and llama.cpp agree, and the committed fixture translates.

The committed fixture is Q8_0 and its PyTorch weights are not committed, so the equality test
rebuilds a tiny model through the same code path as the real one (tools/train_translator.py:
tokenizer training, model, export): it memorises 13 committed sentence pairs in a few seconds,
is exported as F32 and as Q8_0, and llama.cpp's greedy output must equal PyTorch's (for Q8_0,
PyTorch runs on the dequantized weights). Logits are compared too, which catches a wrong RoPE
convention or tensor layout that a lucky greedy match could hide.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
TORCH_SKIP = (
    "the translator trainer's tests need torch, which the dev extra leaves out (750+ MB): "
    "pip install -e '.[train]' to run them"
)
SAMPLES = {
    "en": "The quick brown fox jumps over the lazy dog's 3 tents.",
    "de": "Ein älterer Mann läuft über die Straße – größer als ich.",
    "zh": "2016年是有记录以来最热的一年。",
    "ja": "「トム、おやすみなさい」３０分待ってて。",
}


def _trainer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "train_translator", ROOT / "tools" / "train_translator.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["train_translator"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, Any, Path]]:
    # torch is 750 MB or more (CUDA wheels on some indexes): the dev extra leaves it out for
    # these tests of the trainer alone (tools/train_translator.py).
    pytest.importorskip("torch", reason=TORCH_SKIP)
    pytest.importorskip("tokenizers", reason=TORCH_SKIP)
    T = _trainer()
    rows = (DATA / "translator_pairs.tsv").read_text(encoding="utf-8").splitlines()
    pairs = [tuple(r.split("\t")) for r in rows if r.strip()]
    texts = [p[1] for p in pairs] + [p[2] for p in pairs] + list(SAMPLES.values())
    texts += [T.prompt("", lang) for lang in T.TARGETS] * 5
    tok = T.train_tokenizer(texts, 700)
    cfg = T.Config(n_vocab=tok.get_vocab_size(), d=64, n_layer=2, n_head=2, n_ff=128, n_ctx=128)
    run = tmp_path_factory.mktemp("translator")
    args = T.TrainArgs(
        seed=0, steps=100, batch_tokens=2048, lr=1e-2, warmup=10, prefix_frac=0.0, ckpt_every=10**6
    )
    model = T.train(run, pairs, tok, cfg, args, log_every=10**6)
    yield T, tok, model, run


def _llama(path: Path) -> Any:
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    return LlamaLM(LlamaSettings(str(path), n_ctx=256, n_ubatch=32, n_threads=1))


@pytest.mark.parametrize("qtype", ["f32", "q8_0"])
def test_llama_cpp_greedy_equals_torch(tiny: tuple[Any, Any, Any, Path], qtype: str) -> None:
    import torch

    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Decoder, Method

    T, tok, model, run = tiny
    path = T.export_gguf(model, tok, run / f"tiny-{qtype}.gguf", qtype=qtype)
    ref = T.build_model(model.cfg)
    ref.load_state_dict(model.state_dict())
    T.load_arrays(ref, T.quantized_roundtrip(T.state_arrays(model), qtype))
    ref.eval()
    cases = [
        ("de", "A man in a blue shirt is standing on a ladder cleaning a window."),
        ("de", "A boy and a girl playing on the beach."),
        ("zh", "2016 was the hottest year on record."),
        ("ja", "Wait thirty minutes."),
        ("de", "A girl on the beach."),  # unseen: exercises a non-memorised path
    ]
    lm = _llama(path)
    try:
        nonempty = 0
        for lang, src in cases:
            text = PromptBuilder("chatml", "en", lang).build(src)
            assert text == T.prompt(src, lang)
            ids = lm.tokenize(text, add_bos=True, special=True)
            assert ids == T.encode(tok, [text])[0]
            lm.truncate(0)
            got = lm.evaluate(ids, list(range(len(ids))))
            with torch.no_grad():
                want = ref(torch.tensor([ids]))[0].numpy()
            tol = 2e-3 if qtype == "f32" else 0.1  # llama.cpp quantizes activations for Q8_0
            assert np.abs(got - want).max() < tol * max(1.0, float(np.abs(want).max()))
            out_torch = T.greedy_torch(ref, ids, 40)
            lm.truncate(0)
            res = Decoder(lm).decode(ids, [], DecodeOptions(Method.RT, max_new_tokens=40))
            assert res.tokens == out_torch, (lang, src)
            nonempty += bool(out_torch)
        assert nonempty >= 4
        # the memorised training pair comes back verbatim: the model really learned the format
        lm.truncate(0)
        ids = lm.tokenize(T.prompt(cases[0][1], "de"), add_bos=True, special=True)
        res = Decoder(lm).decode(ids, [], DecodeOptions(Method.RT, max_new_tokens=40))
        assert lm.detokenize(res.tokens).decode() == (
            "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt ein Fenster."
        )
    finally:
        lm.close()


def test_tokenizer_matches_llama_cpp(tiny: tuple[Any, Any, Any, Path]) -> None:
    T, tok, model, run = tiny
    path = T.export_gguf(model, tok, run / "tiny-tok.gguf", qtype="f32")
    lm = _llama(path)
    try:
        for text in [*SAMPLES.values(), T.prompt(SAMPLES["en"], "ja")]:
            assert lm.tokenize(text, special=True) == T.encode(tok, [text])[0], text
            assert lm.detokenize(lm.tokenize(text, special=False)).decode() == text
    finally:
        lm.close()


# -- the committed fixture ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_lm() -> Iterator[Any]:
    lm = _llama(FIXTURE)
    yield lm
    lm.close()


def test_fixture_metadata_and_template(fixture_lm: Any) -> None:
    from subtitler.models.templates import resolve_template

    md = fixture_lm.metadata
    assert md["general.architecture"] == "llama"
    assert md["subtitler.prompt_template"] == "chatml"
    assert resolve_template("auto", md) == "chatml"
    assert "<|im_start|>" in md["tokenizer.chat_template"]
    assert FIXTURE.stat().st_size < 40 * 2**20
    eos = fixture_lm.tokenize("<|im_end|>", special=True)
    assert len(eos) == 1 and fixture_lm.eos_ids == frozenset(eos)


def test_fixture_tokenizer_round_trips(fixture_lm: Any) -> None:
    tokens_for = {}
    for lang, text in SAMPLES.items():
        ids = fixture_lm.tokenize(text, special=False)
        assert fixture_lm.detokenize(ids).decode() == text
        tokens_for[lang] = len(ids)
    # the BPE learned CJK characters, not just bytes
    assert tokens_for["zh"] < len(SAMPLES["zh"].encode())


def test_fixture_translates(fixture_lm: Any) -> None:
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Method
    from subtitler.mt.translator import StreamTranslator

    def translate(src: str, tgt: str) -> str:
        tr = StreamTranslator(
            fixture_lm, PromptBuilder("chatml", "en", tgt), DecodeOptions(Method.RT)
        )
        return tr.update(0, src, True).text

    de = translate("A man is riding a bicycle on the street.", "de")
    assert "Mann" in de and "Fahrrad" in de, de
    zh = translate("I like apples.", "zh")
    assert zh and all(ord(c) > 0x2E80 for c in zh if not c.isspace()), zh
    ja = translate("I like apples.", "ja")
    assert ja and any(0x3040 <= ord(c) <= 0x30FF or 0x4E00 <= ord(c) <= 0x9FFF for c in ja), ja


def test_context_never_crowds_out_the_sentence(fixture_lm: Any) -> None:
    """Three previous sentences as context and a 40-word line (the longest segment) in a
    256-token context: the context gives way, the line is translated to its end."""
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Method
    from subtitler.mt.streaming import CONTEXT_WORDS
    from subtitler.mt.translator import StreamTranslator

    tr = StreamTranslator(fixture_lm, PromptBuilder("chatml", "en", "de"), DecodeOptions(Method.RT))
    tr.context_sentences = 3
    line = " ".join(" ".join(CAPTIONS * 3).split()[:40])
    for seg in range(4):
        out = tr.update(seg, line, True)
        assert out.text and out.stats.ended_by_eos and not out.stats.hit_cap, seg
        assert len(tr.context.split()) <= CONTEXT_WORDS


# -- the committed draft model ----------------------------------------------------------------
DRAFT = ROOT / "fixtures" / "translator" / "draft.gguf"
CAPTIONS = [
    "A man in a blue shirt is standing on a ladder.",
    "Two children are playing soccer in a park.",
    "A woman with a red umbrella walks down the street.",
    "A dog is running through the snow.",
]


def test_draft_model_shares_the_vocabulary_and_guesses_well(fixture_lm: Any) -> None:
    """The 1.9M-parameter draft translates too: it has the translator's vocabulary, and with
    exact decoding (RT + draft model) the output is the translator's own while most of the
    draft model's guesses are kept."""
    from subtitler.mt.drafting import DraftModel, check_same_vocabulary
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Method
    from subtitler.mt.translator import StreamTranslator
    from subtitler_research.bench.streams import prefixes

    draft = LlamaLM(LlamaSettings(str(DRAFT), n_ctx=512, n_ubatch=32, n_threads=1))
    try:
        check_same_vocabulary(fixture_lm, draft)
        prompts = PromptBuilder("chatml", "en", "de")
        rt = StreamTranslator(fixture_lm, prompts, DecodeOptions(Method.RT))
        spec = StreamTranslator(
            fixture_lm,
            prompts,
            DecodeOptions(Method.RT, lookahead=2),
            draft_model=DraftModel(draft),
        )
        guessed = kept = 0
        for i, sentence in enumerate(CAPTIONS):
            stream = prefixes(sentence, 3)
            for j, src in enumerate(stream):
                final = j == len(stream) - 1
                a, b = rt.update(i, src, final), spec.update(i, src, final)
                assert a.tokens == b.tokens, (src, a.text, b.text)
                guessed += b.stats.lookahead_drafted
                kept += b.stats.lookahead_accepted
        assert guessed > 20 and kept / guessed > 0.4, (kept, guessed)
    finally:
        draft.close()
