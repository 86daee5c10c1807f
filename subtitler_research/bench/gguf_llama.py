"""Writing llama-architecture GGUFs with a GPT-2-style BPE tokenizer (random models for tests
and benchmarks, and the translator trained in tools/train_translator.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# name -> (gguf.GGMLQuantizationType member name, general.file_type)
QTYPES: dict[str, tuple[str, int]] = {
    "q8_0": ("Q8_0", 7),
    "q4_0": ("Q4_0", 2),
    "f16": ("F16", 1),
    "f32": ("F32", 0),
}


@dataclass(frozen=True)
class Shape:
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_ctx: int = 4096
    head_dim: int = 0  # 0: n_embd // n_head (Gemma and Qwen3 use wider heads than that)

    @property
    def n_head_dim(self) -> int:
        return self.head_dim or self.n_embd // self.n_head


@dataclass(frozen=True)
class BpeVocab:
    """A byte-level BPE vocabulary in GGUF's conventions (GPT-2 alphabet, "a b" merges)."""

    tokens: Sequence[str]
    types: Sequence[int]  # 1 normal, 3 control
    merges: Sequence[str]
    bos: int
    eos: int


def llama_writer(
    out: Path,
    shape: Shape,
    vocab: BpeVocab,
    *,
    name: str,
    qtype: str,
    eps: float = 1e-5,
    rope_base: float = 10000.0,
) -> Any:
    """A GGUFWriter with the llama hyper-parameters and the tokenizer filled in; the caller
    adds extra metadata and the tensors (``add_weight``), then calls ``finish``."""
    import gguf

    if qtype not in QTYPES:
        raise ValueError(f"unknown qtype {qtype!r} (one of {', '.join(QTYPES)})")
    out.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(out), "llama")
    w.add_name(name)
    w.add_context_length(shape.n_ctx)
    w.add_embedding_length(shape.n_embd)
    w.add_block_count(shape.n_layer)
    w.add_feed_forward_length(shape.n_ff)
    w.add_head_count(shape.n_head)
    w.add_head_count_kv(shape.n_head_kv)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_dimension_count(shape.n_head_dim)
    if shape.head_dim:
        w.add_key_length(shape.head_dim)
        w.add_value_length(shape.head_dim)
    w.add_rope_freq_base(rope_base)
    w.add_vocab_size(len(vocab.tokens))
    w.add_file_type(QTYPES[qtype][1])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(list(vocab.tokens))
    w.add_token_types(list(vocab.types))
    w.add_token_merges(list(vocab.merges))
    w.add_bos_token_id(vocab.bos)
    w.add_eos_token_id(vocab.eos)
    w.add_add_bos_token(False)
    return w


def add_weight(w: Any, name: str, a: np.ndarray, qtype: str) -> None:
    """Vectors stay F32; matrices are stored as ``qtype`` (Q8_0/Q4_0 rows need 32 | columns)."""
    import gguf

    a = np.ascontiguousarray(a, dtype=np.float32)
    q = getattr(gguf.GGMLQuantizationType, QTYPES[qtype][0])
    if a.ndim == 1 or qtype == "f32":
        w.add_tensor(name, a)
    elif qtype == "f16":
        w.add_tensor(name, a.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(a, q), raw_dtype=q)


def finish(w: Any) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
