"""How much cheaper a verified token is than a decoded one, by model size, on this machine.

SSBD's speedup is bounded by r = (ms per decode step) / (ms per token of a batched verify pass
with logits at every row). This builds random-weight llama GGUFs (Q8_0, the translator's
tokenizer and export code, so vocabulary and head match the fixture) for several shapes and
times both in llama.cpp: a 40-token prompt, then 24 tokens decoded one by one vs the same 24
evaluated in one batch with all logits. Weights are random: only the timing means anything.

    python tools/verify_cost.py --tokenizer RUN/tokenizer.json \
        --shapes 128x2x352,256x4x704,384x6x1024,512x8x1408,640x6x1792 --threads 1
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import train_translator as tt

from subtitler.mt.llama_backend import LlamaLM, LlamaSettings


def parse_shape(s: str) -> tuple[int, int, int]:
    """'DxLxFF' -> (hidden, layers, ffn); heads = hidden / 64."""
    d, layers, ff = (int(x) for x in s.lower().split("x"))
    return d, layers, ff


def measure(path: Path, threads: int, reps: int) -> tuple[float, float]:
    lm = LlamaLM(LlamaSettings(model_path=str(path), n_ctx=512, n_threads=threads))
    try:
        rng = np.random.default_rng(0)
        n_vocab = lm.n_vocab
        prompt = [int(t) for t in rng.integers(3, n_vocab, 40)]
        toks = [int(t) for t in rng.integers(3, n_vocab, 24)]
        decode, verify = [], []
        for _ in range(reps):
            lm.truncate(0)
            lm.evaluate(prompt, [len(prompt) - 1])
            t0 = time.perf_counter()
            for t in toks:
                lm.evaluate([t], [0])
            decode.append((time.perf_counter() - t0) / len(toks))
            lm.truncate(len(prompt))
            t0 = time.perf_counter()
            lm.evaluate(toks, list(range(len(toks))))
            verify.append((time.perf_counter() - t0) / len(toks))
            lm.truncate(len(prompt))
        return float(np.median(decode)) * 1e3, float(np.median(verify)) * 1e3
    finally:
        lm.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tokenizer", type=Path, required=True, help="tokenizer.json of a run")
    ap.add_argument("--shapes", default="128x2x352,256x4x704,384x6x1024,512x8x1408,640x6x1792")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=8)
    a = ap.parse_args(argv)

    import torch
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(a.tokenizer))
    print(
        "| shape (hidden x layers x FFN) | parameters | Q8_0 MB | ms / decode step | "
        "ms / verified token | r |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for s in a.shapes.split(","):
            d, layers, ff = parse_shape(s)
            cfg = tt.Config(
                n_vocab=tok.get_vocab_size(), d=d, n_layer=layers, n_head=d // 64, n_ff=ff
            )
            torch.manual_seed(0)
            model = tt.build_model(cfg)
            path = Path(tmp) / f"{s}.gguf"
            tt.export_gguf(model, tok, path, qtype="q8_0")
            cd, cv = measure(path, a.threads, a.reps)
            print(
                f"| {d} x {layers} x {ff} | {tt.count(model) / 1e6:.1f}M | "
                f"{path.stat().st_size / 1e6:.1f} | {cd:.3f} | {cv:.3f} | {cd / cv:.2f} |",
                flush=True,
            )
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
