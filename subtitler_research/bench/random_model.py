"""Build random-weight llama GGUFs with a real tokenizer, for tests and engine benchmarks.

The tokenizer is GPT-2's byte-level BPE rebuilt from a ``.tiktoken`` rank file: token strings
in GPT-2's byte-to-unicode alphabet and merges recovered from the ranks (each multi-byte token
is the merge of the two pieces that BPE with lower ranks produces). Weights are random normal,
quantized with ``gguf.quants`` (Q8_0 by default: with flash attention and n_ubatch < 64 its
batched logits are bit-identical to token-by-token ones, which the beta=0 tests rely on).
K-quants (``q4_k_m``), which gguf.quants cannot write, are made by llama.cpp's own quantizer from
an F16 copy, as a user's model is.

    python -m subtitler_research.bench.random_model --preset tiny --out tiny.gguf
    python -m subtitler_research.bench.random_model --preset qwen3-0.6b --out q06.gguf
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from subtitler_research.bench.gguf_llama import (
    QTYPES,
    BpeVocab,
    Shape,
    add_weight,
    finish,
    llama_writer,
)

log = logging.getLogger(__name__)

DEFAULT_TIKTOKEN = Path(__file__).resolve().parents[2] / "tests" / "data" / "gpt2.tiktoken"
CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


PRESETS: dict[str, Shape] = {
    "tiny": Shape(n_layer=2, n_embd=128, n_head=2, n_head_kv=1, n_ff=256),
    # Qwen3-0.6B's body (28 layers, hidden 1024, 16/8 heads, FFN 3072) in llama form.
    "qwen3-0.6b": Shape(n_layer=28, n_embd=1024, n_head=16, n_head_kv=8, n_ff=3072),
}
# The catalog's translators and Gemma 3 270M as llama-form stand-ins for timing, with each
# model's vocabulary size (its output layer is a large part of a small model's cost) and
# quantization (Q4_0 for Q4_K_M, whose K-quants gguf-py cannot write): (shape, vocabulary,
# qtype). Shapes from each model's config.json.
CATALOG_SHAPES: dict[str, tuple[Shape, int, str]] = {
    "gemma3-270m": (Shape(18, 640, 4, 1, 2048), 262144, "q4_0"),
    "qwen3-0.6b": (PRESETS["qwen3-0.6b"], 151936, "q8_0"),
    "qwen3-1.7b": (Shape(28, 2048, 16, 8, 6144), 151936, "q8_0"),
    "tower-plus-2b": (Shape(26, 2304, 8, 4, 9216), 256000, "q4_0"),
    "qwen3-4b": (Shape(36, 2560, 32, 8, 9728), 151936, "q4_0"),
    "gemma3-4b": (Shape(34, 2560, 8, 4, 10240), 262144, "q4_0"),
    "qwen3-8b": (Shape(36, 4096, 32, 8, 12288), 151936, "q4_0"),
    "tower-plus-9b": (Shape(42, 3584, 16, 8, 14336), 256000, "q4_0"),
}  # (layers, hidden, heads, kv heads, FFN)

# Real translators' exact layer shapes (head width included) for timing on other hardware
# (docs/benchmarks/gpu.md): each is built in every quantization asked for. From config.json.
TRANSLATOR_SHAPES: dict[str, tuple[Shape, int]] = {
    "gemma3-270m": (Shape(18, 640, 4, 1, 2048, head_dim=256), 262144),
    "gemma3-1b": (Shape(26, 1152, 4, 1, 6912, head_dim=256), 262144),
    "qwen3-0.6b": (Shape(28, 1024, 16, 8, 3072, head_dim=128), 151936),
    "qwen3-1.7b": (Shape(28, 2048, 16, 8, 6144, head_dim=128), 151936),
    "gemma2-2b": (Shape(26, 2304, 8, 4, 9216, head_dim=256), 256000),  # Tower+ 2B's base
    "qwen3-4b": (Shape(36, 2560, 32, 8, 9728, head_dim=128), 151936),
}
# llama.cpp's file types for the quantizations made by llama_model_quantize.
LLAMA_FTYPES: dict[str, int] = {"q4_k_m": 15, "q8_0": 7}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs, strict=True)}


def load_tiktoken(path: Path) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def _bpe_split(ranks: dict[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    parts = [bytes([b]) for b in token]
    while True:
        best: tuple[int, int] | None = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < max_rank and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return parts
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def gpt2_vocab(tiktoken: Path) -> tuple[list[str], list[int], list[str], int]:
    """(tokens, token types, merges, eos id) of the GPT-2 tokenizer in GGUF's conventions."""
    ranks = load_tiktoken(tiktoken)
    b2u = bytes_to_unicode()

    def enc(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    if [r for _, r in by_rank] != list(range(len(by_rank))):
        raise ValueError(f"{tiktoken}: ranks are not 0..n-1")
    tokens = [enc(t) for t, _ in by_rank]
    merges: list[str] = []
    for tok, rank in by_rank:
        if len(tok) < 2:
            continue
        parts = _bpe_split(ranks, tok, rank)
        if len(parts) != 2:
            raise ValueError(f"token {tok!r} is not a merge of two lower-ranked tokens")
        merges.append(f"{enc(parts[0])} {enc(parts[1])}")
    eos = len(tokens)
    tokens.append("<|endoftext|>")
    types = [1] * eos + [3]  # NORMAL ... CONTROL
    return tokens, types, merges, eos


def build_random_llama(
    out: Path,
    shape: Shape,
    *,
    tiktoken: Path = DEFAULT_TIKTOKEN,
    qtype: str = "q8_0",
    seed: int = 0,
    name: str = "random-llama",
    chat_template: str | None = CHATML,
    logit_std: float = 10.0,
    extra_tokens: Sequence[str] = (),
    vocab_size: int = 0,
    tiled: bool = False,
) -> Path:
    """Write a random llama GGUF; returns ``out``. ``extra_tokens`` are appended to the
    vocabulary (after EOS) as normal tokens, e.g. to test long pieces; ``vocab_size`` pads it
    with unused tokens to that size (a real model's output layer, for timing). ``tiled`` fills
    each matrix from one pool of 2^22 random numbers at a random offset instead of drawing every
    weight (billions of draws take minutes; timing does not need them independent). A
    ``qtype`` gguf-py cannot write (K-quants) is written as F16, then quantized by llama.cpp."""
    if qtype not in QTYPES:
        build_quantized(
            {qtype: out}, shape, tiktoken=tiktoken, seed=seed, name=name,
            chat_template=chat_template, logit_std=logit_std, extra_tokens=extra_tokens,
            vocab_size=vocab_size, tiled=tiled,
        )  # fmt: skip
        return out
    tokens, types, merges, eos = gpt2_vocab(tiktoken)
    b2u = bytes_to_unicode()
    for t in extra_tokens:
        tokens.append("".join(b2u[x] for x in t.encode("utf-8")))
        types.append(1)
    for i in range(max(0, vocab_size - len(tokens))):
        tokens.append(f"<unused{i}>")
        types.append(5)  # UNUSED: never produced by the tokenizer
    n_vocab = len(tokens)
    hd = shape.n_head_dim
    rng = np.random.default_rng(seed)
    vocab = BpeVocab(tokens, types, merges, bos=eos, eos=eos)
    w = llama_writer(out, shape, vocab, name=name, qtype=qtype)
    if chat_template:
        w.add_chat_template(chat_template)

    pool = rng.standard_normal(1 << 22, dtype=np.float32) if tiled else None

    def mat(name: str, rows: int, cols: int, std: float) -> None:
        if pool is None:
            a = rng.standard_normal((rows, cols), dtype=np.float32)
        else:
            start = int(rng.integers(len(pool)))
            turned = np.concatenate([pool[start:], pool[:start]])
            a = np.tile(turned, -(-rows * cols // len(pool)))[: rows * cols].reshape(rows, cols)
        add_weight(w, name, a * np.float32(std), qtype)

    def norm(name: str) -> None:
        w.add_tensor(name, np.ones(shape.n_embd, dtype=np.float32))

    e = shape.n_embd
    mat("token_embd.weight", n_vocab, e, 1.0)
    for i in range(shape.n_layer):
        s = 1.0 / np.sqrt(e)
        norm(f"blk.{i}.attn_norm.weight")
        mat(f"blk.{i}.attn_q.weight", shape.n_head * hd, e, s)
        mat(f"blk.{i}.attn_k.weight", shape.n_head_kv * hd, e, s)
        mat(f"blk.{i}.attn_v.weight", shape.n_head_kv * hd, e, s)
        mat(f"blk.{i}.attn_output.weight", e, shape.n_head * hd, s)
        norm(f"blk.{i}.ffn_norm.weight")
        mat(f"blk.{i}.ffn_gate.weight", shape.n_ff, e, s)
        mat(f"blk.{i}.ffn_up.weight", shape.n_ff, e, s)
        mat(f"blk.{i}.ffn_down.weight", e, shape.n_ff, 1.0 / np.sqrt(shape.n_ff))
    norm("output_norm.weight")
    # Logit spread: ~3 gives flat distributions, ~10 peaked ones with occasional close seconds.
    mat("output.weight", n_vocab, e, logit_std / np.sqrt(e))

    finish(w)
    return out


def build_quantized(outs: Mapping[str, Path], shape: Shape, **kw: Any) -> None:
    """One set of random weights (``build_random_llama``'s keywords), written once as F16 and
    quantized by llama.cpp into each of ``outs`` (qtype -> file)."""
    first = next(iter(outs.values()))
    f16 = first.with_name(first.name + ".f16.tmp")
    try:
        build_random_llama(f16, shape, qtype="f16", **kw)
        for qtype, path in outs.items():
            llama_quantize(f16, path, qtype)
    finally:
        f16.unlink(missing_ok=True)


def llama_quantize(src: Path, out: Path, qtype: str, threads: int = 0) -> Path:
    """Quantize the GGUF ``src`` into ``out`` with llama.cpp (``qtype`` in LLAMA_FTYPES)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = LLAMA_FTYPES[qtype]
    params.nthread = threads
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(out).encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama.cpp could not quantize {src} to {qtype} (code {rc})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench.random_model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument(
        "--catalog-shape", choices=sorted(CATALOG_SHAPES),
        help="a catalog translator's shape, vocabulary size and quantization (overrides "
        "--preset and --qtype)",
    )  # fmt: skip
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tiktoken", type=Path, default=DEFAULT_TIKTOKEN)
    ap.add_argument("--qtype", choices=["q8_0", "q4_0", "q4_k_m", "f16", "f32"], default="q8_0")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--logit-std", type=float, default=10.0, help="spread of the output logits")
    a = ap.parse_args(argv)
    if not a.tiktoken.is_file():
        print(f"error: tokenizer file not found: {a.tiktoken}", file=sys.stderr)
        return 2
    shape, vocab, qtype, name = PRESETS[a.preset], 0, a.qtype, a.preset
    if a.catalog_shape:
        shape, vocab, qtype = CATALOG_SHAPES[a.catalog_shape]
        name = a.catalog_shape
    build_random_llama(
        a.out,
        shape,
        tiktoken=a.tiktoken,
        qtype=qtype,
        seed=a.seed,
        name=f"random-{name}",
        logit_std=a.logit_std,
        vocab_size=vocab,
    )
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
