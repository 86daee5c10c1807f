"""A slower twin of a llama GGUF: the same translations at a chosen cost.

Extra layers are appended whose attention and FFN output projections are zero, so each adds
exactly 0.0 to the residual stream (the logits are bit for bit the original's) while
llama.cpp still does all of its work. That makes a "larger model" whose outputs are real
translations, to measure speed-ups that depend on the target's cost (a draft model's pay-off)
on machines where no larger real model can be trained or downloaded.

    python -m subtitler_research.bench.padded_model --model fixtures/translator/model.gguf \
        --extra-layers 28 --out /tmp/translator-slow.gguf
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from subtitler_research.bench.gguf_llama import finish

# Per-layer tensors copied from layer 0 into each extra layer; the *_output / ffn_down ones
# are replaced by zeros so the layer's contribution vanishes.
ZEROED = ("attn_output", "ffn_down")


def pad_llama(src: Path, out: Path, extra_layers: int) -> Path:
    """Write ``src`` with ``extra_layers`` zero-contribution layers appended to ``out``."""
    import gguf

    if extra_layers < 0:
        raise ValueError("extra_layers must be >= 0")
    reader = gguf.GGUFReader(str(src))
    arch = reader.fields["general.architecture"].contents()
    if arch != "llama":
        raise ValueError(f"only llama models can be padded (this one is {arch!r})")
    n_layer = int(reader.fields["llama.block_count"].contents())
    out.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(out), arch)
    for f in reader.fields.values():
        if f.name.startswith("GGUF.") or f.name == "general.architecture":
            continue
        value = f.contents()
        if f.name == "llama.block_count":
            value = n_layer + extra_layers
        elif f.name == "general.name":
            value = f"{value} + {extra_layers} zero layers"
        sub = f.types[-1] if f.types[0] == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(f.name, value, f.types[0], sub_type=sub)
    first: dict[str, gguf.ReaderTensor] = {}
    for t in reader.tensors:
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
        if t.name.startswith("blk.0."):
            first[t.name.removeprefix("blk.0.")] = t
    for layer in range(n_layer, n_layer + extra_layers):
        for part, t in first.items():
            name = f"blk.{layer}.{part}"
            if part.split(".")[0] in ZEROED:
                zeros = np.zeros(tuple(int(x) for x in reversed(t.shape)), dtype=np.float32)
                if t.tensor_type == gguf.GGMLQuantizationType.F32:
                    w.add_tensor(name, zeros)
                else:
                    w.add_tensor(
                        name, gguf.quants.quantize(zeros, t.tensor_type), raw_dtype=t.tensor_type
                    )
            else:
                w.add_tensor(name, t.data, raw_dtype=t.tensor_type)
    finish(w)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench.padded_model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", type=Path, required=True, help="llama GGUF to pad")
    ap.add_argument("--extra-layers", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    try:
        pad_llama(a.model, a.out, a.extra_layers)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
