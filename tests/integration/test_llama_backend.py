"""The llama-cpp-python backend on a tiny random model with a real tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.models.templates import resolve_template
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings, ModelLoadError
from subtitler.mt.prompts import INSTRUCTION, PromptBuilder

# Expected ids from llama.cpp's GPT-2 tokenizer test vectors (models/ggml-vocab-gpt-2.gguf.inp/.out,
# MIT, the ggml authors): the rebuilt tokenizer must reproduce them.
VECTORS = {
    "Hello world": [15496, 995],
    " Hello, world!": [18435, 11, 995, 0],
    " this is 🦙.cpp": [428, 318, 12520, 99, 247, 13, 20322],
    "w048 7tuijk dsdfhu": [86, 47202, 767, 28047, 45961, 288, 82, 7568, 13415],
}


def test_rebuilt_gpt2_tokenizer_matches_llama_cpp_vectors(exact_lm: LlamaLM) -> None:
    for text, ids in VECTORS.items():
        assert exact_lm.tokenize(text, add_bos=False, special=False) == ids
        assert exact_lm.detokenize(ids).decode() == text


def test_eos_and_vocab(exact_lm: LlamaLM) -> None:
    assert exact_lm.n_vocab == 50257
    assert 50256 in exact_lm.eos_ids


def test_batched_logits_equal_stepwise_bit_for_bit(exact_lm: LlamaLM) -> None:
    toks = exact_lm.tokenize("The quick brown fox jumps over the lazy dog, again and again.")
    exact_lm.truncate(0)
    batched = exact_lm.evaluate(toks, list(range(len(toks))))
    exact_lm.truncate(0)
    stepwise = np.stack([exact_lm.evaluate([t], [0])[0] for t in toks])
    assert batched.shape == (len(toks), exact_lm.n_vocab)
    assert np.array_equal(batched, stepwise)


def test_logits_rows_in_requested_order_and_truncate(exact_lm: LlamaLM) -> None:
    toks = exact_lm.tokenize("one two three four five six")
    exact_lm.truncate(0)
    full = exact_lm.evaluate(toks, list(range(len(toks))))
    exact_lm.truncate(0)
    some = exact_lm.evaluate(toks, [4, 1])
    assert np.array_equal(some[0], full[4]) and np.array_equal(some[1], full[1])
    assert list(exact_lm.cached) == toks
    exact_lm.truncate(3)
    assert list(exact_lm.cached) == toks[:3]
    again = exact_lm.evaluate(toks[3:], [1])
    assert np.array_equal(again[0], full[4])


def test_batches_larger_than_n_batch_are_split(tiny_gguf: Path) -> None:
    with LlamaLM(
        LlamaSettings(str(tiny_gguf), n_ctx=512, n_batch=8, n_ubatch=8, n_threads=1)
    ) as lm:
        toks = lm.tokenize(" ".join(["word"] * 30))
        rows = lm.evaluate(toks, [0, 9, len(toks) - 1])
        assert rows.shape[0] == 3 and len(lm.cached) == len(toks)


def test_gguf_chat_template_via_llama_cpp(exact_lm: LlamaLM) -> None:
    assert resolve_template("auto", exact_lm.metadata) == "gguf"
    p = PromptBuilder("gguf", "en", "de", formatter=exact_lm).build("Hi there")
    assert p.startswith("<|im_start|>user\nTranslate the English source text to German.")
    assert p.endswith("English: Hi there\nGerman:<|im_end|>\n<|im_start|>assistant\n")


def test_a_gemma_chat_template_gives_gemma_turns(tmp_path: Path) -> None:
    """The catalog's Gemma 3 4B uses its file's own template ("gguf"): llama.cpp recognises a
    Gemma template by its turn markers and writes the translation request as a user turn with
    the model's turn opened after it (a system message has no place in Gemma's turns)."""
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    gemma_style = (
        "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}"
        "<end_of_turn>\n{% endfor %}<start_of_turn>model\n"
    )
    path = build_random_llama(
        tmp_path / "g.gguf", PRESETS["tiny"],
        tiktoken=Path(__file__).resolve().parents[1] / "data" / "gpt2.tiktoken",
        chat_template=gemma_style,
    )  # fmt: skip
    with LlamaLM(LlamaSettings(str(path), n_ctx=256, n_threads=1)) as lm:
        assert resolve_template("auto", lm.metadata) == "gguf"
        p = PromptBuilder("gguf", "en", "de", formatter=lm).build("Hi there")
    user = INSTRUCTION.format(src="English", tgt="German") + "\nEnglish: Hi there\nGerman:"
    assert p == f"<start_of_turn>user\n{user}<end_of_turn>\n<start_of_turn>model\n"
    assert p.count("<start_of_turn>") == 2 and "system" not in p


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "not found"), (b"", "bad header"), (b"PK\x03\x04zipfile", "bad header")],
)
def test_bad_model_files_give_one_line_reasons(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    p = tmp_path / "m.gguf"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(ModelLoadError, match=reason) as e:
        LlamaLM(LlamaSettings(str(p)))
    assert "\n" not in str(e.value)


def test_truncated_gguf_is_refused(tiny_gguf: Path, tmp_path: Path) -> None:
    p = tmp_path / "cut.gguf"
    p.write_bytes(tiny_gguf.read_bytes()[:100_000])
    with pytest.raises(ModelLoadError, match="could not load") as e:
        LlamaLM(LlamaSettings(str(p)))
    assert "\n" not in str(e.value)


def test_output_never_overflows_the_context(tiny_gguf: Path) -> None:
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Method
    from subtitler.mt.streaming import LengthCap
    from subtitler.mt.translator import StreamTranslator

    with LlamaLM(LlamaSettings(str(tiny_gguf), n_ctx=96, n_threads=1)) as lm:
        tr = StreamTranslator(
            lm,
            PromptBuilder("qwen3", "en", "de"),
            DecodeOptions(method=Method.RT, max_new_tokens=1000),
            cap=LengthCap(ratio=40.0, hard=1000),
        )
        t = tr.update(0, "a long sentence about the budget of next quarter", final=True)
        n_prompt = len(tr.prompt_tokens("a long sentence about the budget of next quarter"))
        # llama.cpp may round the context up; the cap follows the real one.
        assert 0 < len(t.tokens) <= lm.n_ctx - n_prompt - 1 < 256


def test_long_token_pieces_are_not_lost(tmp_path: Path) -> None:
    """A vocabulary with a token longer than 32 bytes (llama-cpp-python's own detokenizer
    returns b"" for it) still detokenizes to the right bytes."""
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    long_piece = "非常に長い日本語の単語です"  # 13 characters, 39 bytes
    p = build_random_llama(tmp_path / "m.gguf", PRESETS["tiny"], seed=3, extra_tokens=[long_piece])
    with LlamaLM(LlamaSettings(str(p), n_ctx=256, n_threads=1)) as lm:
        tok = lm.n_vocab - 1
        assert lm.detokenize([tok]).decode() == long_piece
        assert lm.detokenize([15496, tok]).decode() == "Hello" + long_piece


@pytest.mark.parametrize("amx", [True, False])
def test_amx_cpus_load_without_extra_buffers(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch, amx: bool
) -> None:
    """On a CPU with AMX the weights stay out of ggml's AMX buffers (its matrix product
    segfaulted in the first decode on this project's Sapphire Rapids machine); elsewhere
    llama.cpp's defaults are kept, and the factory is put back after the load."""
    import llama_cpp

    info = b"CPU : AVX2 = 1 | AMX_INT8 = 1 | " if amx else b"CPU : AVX2 = 1 | "
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: info)
    factory = llama_cpp.llama_cpp.llama_model_default_params
    lm = LlamaLM(LlamaSettings(str(tiny_gguf), n_ctx=256, n_batch=64, n_ubatch=32))
    try:
        assert lm._llm.model_params.use_extra_bufts is (not amx)
        assert llama_cpp.llama_cpp.llama_model_default_params is factory
        if amx:  # (the other case would crash where the CPU really has AMX)
            assert lm.evaluate(lm.tokenize("hello there"), [0]).shape[0] == 1
    finally:
        lm.close()
