"""``python -m subtitler_research.bench.targets``: update latency of several target languages
at once on one loaded model (issue 19 point 4), against one target.

Every streaming update (the source revealed ``--step`` words at a time) is translated into each
target in turn, as one translation stage would; an update's latency is the time until all its
targets are done. The targets share the model's weights and each keeps its own KV cache:
"sequences" = sequences of one llama.cpp context, "contexts" = one context each.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from subtitler.models.templates import resolve_template
from subtitler.mt.languages import normalize_code
from subtitler.mt.lm import LanguageModel
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.streaming import LengthCap
from subtitler.mt.translator import StreamTranslator
from subtitler_research.bench.streams import prefixes

log = logging.getLogger("subtitler_research.bench.targets")


def replay(
    lms: dict[str, LanguageModel],
    template: str,
    src_lang: str,
    sources: list[str],
    step: int,
    options: DecodeOptions,
    cap: LengthCap,
) -> dict[str, Any]:
    """Translate every update of every sentence into each target of ``lms``; latencies (ms)
    of whole updates and the final translations per target."""
    trs = {
        tgt: StreamTranslator(lm, PromptBuilder(template, src_lang, tgt), options, cap=cap)
        for tgt, lm in lms.items()
    }
    updates: list[float] = []
    finals: dict[str, list[str]] = {tgt: [] for tgt in lms}
    for i, sentence in enumerate(sources):
        stream = prefixes(sentence, step)
        for j, source in enumerate(stream):
            final = j == len(stream) - 1
            t0 = time.perf_counter()
            for tgt, tr in trs.items():
                t = tr.update(i, source, final)
                if final:
                    finals[tgt].append(t.text)
            updates.append((time.perf_counter() - t0) * 1e3)
    return {"updates": len(updates), **summary(updates), "finals": finals}


def summary(ms: list[float]) -> dict[str, float]:
    q = statistics.quantiles(ms, n=10)
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p90_ms": round(q[8], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench.targets", description=__doc__
    )
    ap.add_argument("--model", type=Path, required=True, help="GGUF translation model")
    ap.add_argument("--source", type=Path, required=True, help="source sentences, one per line")
    ap.add_argument("--src-lang", default="en")
    ap.add_argument("--targets", default="de,ja", help="comma-separated target languages")
    ap.add_argument("--step", type=int, default=3, help="source words revealed per update")
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--beta", type=float, default=0.2, help="SSBD beta")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=1024)
    ap.add_argument("--n-ubatch", type=int, default=512)
    ap.add_argument("--template", default="auto")
    ap.add_argument("--json", type=Path, default=None)
    return ap


def run(a: argparse.Namespace) -> dict[str, Any]:
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    targets = [normalize_code(t) for t in a.targets.split(",") if t.strip()]
    lines = a.source.read_text(encoding="utf-8").splitlines()
    sources = [s for s in lines if s.strip()][: a.limit]
    settings = LlamaSettings(str(a.model), n_ctx=a.n_ctx, n_ubatch=a.n_ubatch, n_threads=a.threads)
    lm = LlamaLM(settings)
    try:
        template = resolve_template(a.template, lm.metadata)
        opts = DecodeOptions(method=Method.SSBD, beta=a.beta, max_new_tokens=256)
        cap = LengthCap()
        runs: dict[str, Any] = {}
        one = targets[0]
        replay({one: lm}, template, a.src_lang, sources[:3], a.step, opts, cap)  # warm-up
        runs[f"1 target ({one})"] = replay(
            {one: lm}, template, a.src_lang, sources, a.step, opts, cap
        )
        for layout in ("sequences", "contexts"):
            views = lm.views(len(targets), layout)
            lms: dict[str, LanguageModel] = dict(zip(targets, views, strict=True))
            name = f"{len(targets)} targets ({','.join(targets)}), {layout}"
            runs[name] = replay(lms, template, a.src_lang, sources, a.step, opts, cap)
        for tgt in targets:  # each target alone, on the parent's context
            runs[f"1 target ({tgt}) alone"] = replay(
                {tgt: lm}, template, a.src_lang, sources, a.step, opts, cap
            )
    finally:
        lm.close()
    alone = {tgt: runs[f"1 target ({tgt}) alone"]["finals"][tgt] for tgt in targets}
    for r in runs.values():  # sharing the model must not change a translation
        r["same_as_alone"] = all(r["finals"][t] == alone[t] for t in r["finals"])
    return {"model": str(a.model), "sentences": len(sources), "step": a.step, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    a = parser().parse_args(argv)
    out = run(a)
    print(f"## {out['model']} · {out['sentences']} sentences · step {out['step']}")
    print()
    print("| run | updates | p50 ms | p90 ms | mean ms | finals as alone |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r in out["runs"].items():
        same = "yes" if r["same_as_alone"] else "NO"
        print(
            f"| {name} | {r['updates']} | {r['p50_ms']} | {r['p90_ms']} | {r['mean_ms']} | {same} |"
        )
    if a.json is not None:
        a.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
