"""Per-token costs through llama-cpp-python's own ``Llama.eval`` (logits at every row), for a
machine where the app's LlamaLM cannot run: it was the measurement of docs/benchmarks/gpu.md, on
an H200 where LlamaLM segfaulted in every process and ``Llama`` did not (cause not found in
the device time; see that page).

    python tools/gpu_plain_cost.py OUT.json [MODEL.gguf ...] [--gpu-layers N]

(models by default: the fixture translator and /tmp/gpu_bench/models/*.gguf, which
tools/gpu_bench.sh builds)

Same steps as subtitler_research.bench.mt_cost (48-token context; 8 single-token steps; a
24-token verify batch; a 64-token prompt batch; median of 5), except that every row of every
batch gets logits, so the prompt-token cost is over-stated (a prompt needs one row).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import statistics
import time
from pathlib import Path

import llama_cpp
import numpy as np

from subtitler.mt.llama_backend import amx_safe_load
from subtitler_research.bench.mt_cost import CONTEXT, DRAFT, PROMPT

STEPS, REPEAT = 8, 5  # as mt_cost's defaults


def measure(path: str, gpu_layers: int, threads: int | None = None) -> dict[str, float | str]:
    # On the CPU, the app's AMX workaround (without it llama.cpp dies on this project's Xeon);
    # the GPU run had it off.
    guard = amx_safe_load(llama_cpp) if gpu_layers == 0 else contextlib.nullcontext()
    with guard:
        m = llama_cpp.Llama(
            path, n_gpu_layers=gpu_layers, n_ctx=512, n_batch=512, n_ubatch=512, flash_attn=True,
            logits_all=True, verbose=False, n_threads=threads, n_threads_batch=threads,
        )  # fmt: skip
    rng = np.random.default_rng(0)
    ids = [int(t) for t in rng.integers(3, min(m.n_vocab(), 30000), CONTEXT + PROMPT)]
    ctx, batch = ids[:CONTEXT], ids[CONTEXT:]
    m.reset()
    m.eval(ctx)
    steps, verified, prompt = [], [], []
    for _ in range(REPEAT):
        m.n_tokens = CONTEXT  # Llama.eval drops the cache past n_tokens first
        t0 = time.perf_counter()
        for t in batch[:STEPS]:
            m.eval([t])
        steps.append((time.perf_counter() - t0) / STEPS)
        m.n_tokens = CONTEXT
        t0 = time.perf_counter()
        m.eval(batch[:DRAFT])
        verified.append((time.perf_counter() - t0) / DRAFT)
        m.n_tokens = CONTEXT
        t0 = time.perf_counter()
        m.eval(batch)
        prompt.append((time.perf_counter() - t0) / PROMPT)
    del m
    return {
        "model": Path(path).name,
        "decode_step_ms": 1e3 * statistics.median(steps),
        "verified_token_ms": 1e3 * statistics.median(verified),
        "prompt_token_ms": 1e3 * statistics.median(prompt),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--gpu-layers", type=int, default=-1)
    ap.add_argument(
        "--threads", type=int, default=None, help="llama-cpp-python's default if not given"
    )
    a = ap.parse_args()
    paths = a.models or [
        "fixtures/translator/model.gguf",
        *sorted(glob.glob("/tmp/gpu_bench/models/*.gguf")),
    ]
    rows = []
    for path in paths:
        rows.append(measure(path, a.gpu_layers, a.threads))
        print(rows[-1], flush=True)
        a.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
