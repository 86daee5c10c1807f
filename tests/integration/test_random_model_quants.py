"""Random-weight translators of real shapes: wide heads and llama.cpp's K-quants."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler_research.bench.gguf_llama import Shape
from subtitler_research.bench.random_model import TRANSLATOR_SHAPES, build_random_llama

DATA = Path(__file__).resolve().parents[1] / "data"
# Heads wider than n_embd / n_head, as Gemma's 256 and Qwen3's 128 are.
WIDE = Shape(n_layer=1, n_embd=256, n_head=2, n_head_kv=1, n_ff=512, n_ctx=256, head_dim=192)


def _field(r: gguf.GGUFReader, key: str) -> int:
    return int(r.fields[key].parts[-1][0])


def test_q4_k_m_is_quantized_by_llama_cpp_with_the_wide_heads(tmp_path: Path) -> None:
    out = build_random_llama(
        tmp_path / "m.gguf", WIDE, tiktoken=DATA / "gpt2.tiktoken", qtype="q4_k_m", tiled=True
    )
    assert [p.name for p in tmp_path.iterdir()] == ["m.gguf"]  # the F16 copy is gone
    r = gguf.GGUFReader(str(out))
    assert _field(r, "general.file_type") == 15  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    assert _field(r, "llama.attention.key_length") == 192
    types = {t.name: t.tensor_type.name for t in r.tensors}
    assert types["blk.0.ffn_gate.weight"] == "Q4_K"
    assert types["output.weight"] == "Q6_K"  # Q4_K_M keeps the output layer at 6 bits
    q = next(t for t in r.tensors if t.name == "blk.0.attn_q.weight")
    assert [int(x) for x in q.shape] == [256, 2 * 192]  # (columns, rows): n_head * head_dim
    lm = LlamaLM(LlamaSettings(str(out), n_ctx=256, n_threads=1))
    try:
        logits = lm.evaluate([5, 6, 7], [0, 1, 2])
        assert logits.shape == (3, lm.n_vocab) and np.isfinite(logits).all()
        assert len({float(x) for x in logits[-1, :64]}) > 1  # not degenerate
    finally:
        lm.close()


def test_tiled_weights_are_seeded_and_differ_between_matrices(tmp_path: Path) -> None:
    a, b, c = (
        build_random_llama(tmp_path / f"{n}.gguf", WIDE, tiktoken=DATA / "gpt2.tiktoken",
                           qtype="f16", tiled=True, seed=s)
        for n, s in (("a", 1), ("b", 1), ("c", 2))
    )  # fmt: skip
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    t = {x.name: np.asarray(x.data) for x in gguf.GGUFReader(str(a)).tensors}
    assert not np.array_equal(t["blk.0.ffn_up.weight"][:4], t["blk.0.ffn_gate.weight"][:4])


def test_translator_shapes_are_the_models_own() -> None:
    # Parameter counts near the published sizes (random stand-ins, untied output layers).
    def params(shape: Shape, vocab: int) -> float:
        hd, e = shape.n_head_dim, shape.n_embd
        attn = e * hd * (2 * shape.n_head + 2 * shape.n_head_kv)
        return (shape.n_layer * (attn + 3 * e * shape.n_ff) + vocab * e) / 1e9

    got = {name: round(params(*sv), 2) for name, sv in TRANSLATOR_SHAPES.items()}
    assert got == {
        "gemma3-270m": 0.27, "gemma3-1b": 1.0, "qwen3-0.6b": 0.6, "qwen3-1.7b": 1.72,
        "gemma2-2b": 2.61, "qwen3-4b": 4.02,
    }  # fmt: skip
