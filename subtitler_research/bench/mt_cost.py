"""What one translator costs on this machine: decode step, verified token, prompt token (ms).

    python -m subtitler_research.bench.mt_cost --model gemma3-270m=PATH.gguf \\
        --shapes qwen3-0.6b,tower-plus-2b,qwen3-4b --threads 1,2,4 --cache DIR --json OUT.json
    python -m subtitler_research.bench.mt_cost --translators gemma3-1b,qwen3-4b \\
        --qtypes q8_0,q4_k_m --gpu-layers -1 --threads 4 --json gpu.json

For each model (a real GGUF given as NAME=PATH, or a catalog shape built with random weights
by subtitler_research.bench.random_model into ``--cache``; ``--translators``: real translators'
exact shapes in each of ``--qtypes``) and thread count, in llama.cpp through the app's own
LlamaLM (default settings: flash attention, n_ubatch 512; ``--gpu-layers`` as the app's):

- **decode step**: one token evaluated with its logits (greedy decoding's cost per token);
- **verified token**: a batch of 24 draft tokens with logits at every row, per token (SSBD's
  verify pass);
- **prompt token**: a batch of 64 tokens with logits at the last only, per token (a new
  line's prompt, or the source words an update adds).

Each is the median of ``--repeat`` runs after a 48-token context; random weights only time.
The planner's table (subtitler/models/hardware.py, TRANSLATOR_COST_MS) is these figures.

``--rows N`` times instead one batch of N tokens by how many of its last tokens have logits
(0..N): what a verify pass costs by the length of its draft, where llama.cpp's CPU matrix
product for the output layer works in tiles of columns (docs/benchmarks/translator.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler_research.bench.random_model import (
    CATALOG_SHAPES,
    TRANSLATOR_SHAPES,
    build_quantized,
    build_random_llama,
)

CONTEXT, DRAFT, PROMPT = 48, 24, 64


@contextmanager
def after_context(
    path: Path, threads: int, n: int, gpu_layers: int | None = None
) -> Iterator[tuple[LlamaLM, list[int]]]:
    """The model loaded with a CONTEXT-token context evaluated, and ``n`` more token ids to
    time after it (``lm.truncate(CONTEXT)`` returns to that context)."""
    lm = LlamaLM(LlamaSettings(str(path), n_ctx=512, n_threads=threads, n_gpu_layers=gpu_layers))
    try:
        rng = np.random.default_rng(0)
        ids = [int(t) for t in rng.integers(3, min(lm.n_vocab, 30000), CONTEXT + n)]
        lm.evaluate(ids[:CONTEXT], [CONTEXT - 1])
        yield lm, ids[CONTEXT:]
    finally:
        lm.close()


def measure(
    path: Path, threads: int, repeat: int, gpu_layers: int | None = None
) -> dict[str, float]:
    with after_context(path, threads, PROMPT, gpu_layers) as (lm, batch):
        steps, verified, prompt = [], [], []
        for _ in range(repeat):
            lm.truncate(CONTEXT)
            t0 = time.perf_counter()
            for t in batch[:8]:
                lm.evaluate([t], [0])
            steps.append((time.perf_counter() - t0) / 8)
            lm.truncate(CONTEXT)
            t0 = time.perf_counter()
            lm.evaluate(batch[:DRAFT], list(range(DRAFT)))
            verified.append((time.perf_counter() - t0) / DRAFT)
            lm.truncate(CONTEXT)
            t0 = time.perf_counter()
            lm.evaluate(batch, [PROMPT - 1])
            prompt.append((time.perf_counter() - t0) / PROMPT)
        return {
            "decode_step_ms": 1e3 * statistics.median(steps),
            "verified_token_ms": 1e3 * statistics.median(verified),
            "prompt_token_ms": 1e3 * statistics.median(prompt),
            "n_vocab": float(lm.n_vocab),
            "gpu_offload": float(lm.gpu_offload),
        }


def rows_curve(
    path: Path, threads: int, n: int, repeat: int, gpu_layers: int | None = None
) -> list[float]:
    """ms of one batch of ``n`` tokens with logits at its last r tokens, for r = 0..n (the
    median of ``repeat`` rounds, every r once per round)."""
    with after_context(path, threads, n, gpu_layers) as (lm, batch):
        times: list[list[float]] = [[] for _ in range(n + 1)]
        for _ in range(repeat):
            for r in range(n + 1):
                lm.truncate(CONTEXT)
                t0 = time.perf_counter()
                lm.evaluate(batch, list(range(n - r, n)))
                times[r].append(time.perf_counter() - t0)
        return [1e3 * statistics.median(t) for t in times]


def models(a: argparse.Namespace) -> list[tuple[str, Path]]:
    out = []
    for spec in a.model:
        name, _, path = spec.partition("=")
        out.append((name, Path(path)))
    for name in [s for s in a.shapes.split(",") if s]:
        shape, vocab, qtype = CATALOG_SHAPES[name]
        path = a.cache / f"random-{name}-{qtype}.gguf"
        if not path.is_file():
            print(f"building {path} ...", file=sys.stderr, flush=True)
            build_random_llama(path, shape, qtype=qtype, name=f"random-{name}", vocab_size=vocab)
        out.append((f"{name} (random)", path))
    qtypes = [q for q in a.qtypes.split(",") if q]
    for name in [s for s in a.translators.split(",") if s]:
        paths = {q: a.cache / f"random-{name}-{q}.gguf" for q in qtypes}
        missing = [q for q, path in paths.items() if not path.is_file()]
        if missing:
            build_translator(name, {q: paths[q] for q in missing})
        out.extend((f"{name} {q} (random)", path) for q, path in paths.items())
    return out


def build_translator(name: str, paths: dict[str, Path]) -> None:
    """A translator's shape with random weights, written once as F16 and quantized by
    llama.cpp into each of ``paths`` (qtype -> file)."""
    shape, vocab = TRANSLATOR_SHAPES[name]
    print(f"building {', '.join(map(str, paths.values()))} ...", file=sys.stderr, flush=True)
    build_quantized(paths, shape, name=f"random-{name}", vocab_size=vocab, tiled=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler_research.bench.mt_cost")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH of a real GGUF")
    ap.add_argument("--shapes", default="", help=f"comma-separated: {', '.join(CATALOG_SHAPES)}")
    ap.add_argument(
        "--translators", default="", help=f"comma-separated: {', '.join(TRANSLATOR_SHAPES)}"
    )
    ap.add_argument("--qtypes", default="q8_0,q4_k_m", help="quantizations of --translators")
    ap.add_argument("--gpu-layers", type=int, default=None, help="as the app's (-1: all)")
    ap.add_argument("--build-only", action="store_true", help="build the random models, no timing")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "subtitler-bench")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--rows", type=int, default=0, help="time one batch of N tokens by its rows of logits"
    )
    a = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    if a.build_only:
        for _, path in models(a):
            print(path)
        return 0
    if a.rows:
        print("| model | threads | " + " | ".join(f"{r} rows" for r in range(a.rows + 1)) + " |")
        print("|---|---:|" + "---:|" * (a.rows + 1))
        for name, path in models(a):
            for th in (int(x) for x in a.threads.split(",")):
                ms = rows_curve(path, th, a.rows, a.repeat, a.gpu_layers)
                rows.append({"model": name, "threads": th, "batch": a.rows, "ms_by_rows": ms})
                print(f"| {name} | {th} | " + " | ".join(f"{x:.1f}" for x in ms) + " |", flush=True)
        if a.json:
            a.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        return 0
    print("| model | threads | decode step ms | verified token ms | prompt token ms |")
    print("|---|---:|---:|---:|---:|")
    for name, path in models(a):
        for th in (int(x) for x in a.threads.split(",")):
            m = measure(path, th, a.repeat, a.gpu_layers)
            rows.append({"model": name, "threads": th, **m})
            print(
                f"| {name} | {th} | {m['decode_step_ms']:.2f} | {m['verified_token_ms']:.2f} "
                f"| {m['prompt_token_ms']:.2f} |",
                flush=True,
            )
            if a.json:  # after every row: a run stopped at its time limit keeps what it measured
                a.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
