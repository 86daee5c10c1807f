"""SSBD's speedup over RT predicted from per-token costs: a benchmark run's token counts priced
at another machine's (or model's) decode-step and verified-token costs.

    # what each shape would give at the acceptance of runs measured elsewhere
    python -m subtitler_research.bench.predict --costs gpu-costs.json --runs bench-*.json
    # a run against the costs of its own model on its own machine (the model named as in costs)
    python -m subtitler_research.bench.predict --costs gpu-costs.json --runs bench-gpu.json \\
        --check "fixture"

A run's generation time is ``decode_steps * c_d + verified_tokens * c_v`` (prompt evaluation is
not in TPS, as in the benchmark); the speedup is output tokens per generation second against
RT's in the same run, the benchmark's own definition. CD is left out: its verify pass reads one
logits row, not a distribution per draft token, so it costs less than ``c_v``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PREDICTED = ("RT", "SSBD")  # methods whose cost is decode steps and full verified tokens


def generation_ms(run: Mapping[str, Any], c_d: float, c_v: float) -> float:
    return float(run["decode_steps"]) * c_d + float(run["verified_tokens"]) * c_v


def predicted_speedup(
    rt: Mapping[str, Any], run: Mapping[str, Any], c_d: float, c_v: float
) -> float:
    """``run``'s TPS over ``rt``'s at a decode step of ``c_d`` ms and a verified token of
    ``c_v`` ms."""
    tps = float(run["output_tokens"]) / generation_ms(run, c_d, c_v)
    rt_tps = float(rt["output_tokens"]) / generation_ms(rt, c_d, c_v)
    return tps / rt_tps


def _rt(runs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    return next(r for r in runs if r["method"] == "RT" and not r.get("draft_model_tokens"))


def _predictable(run: Mapping[str, Any]) -> bool:
    return (
        run["method"] in PREDICTED
        and not run.get("lookahead")
        and not run.get("draft_model_tokens")
        and run.get("verify", "biased") == "biased"
    )


def check_rows(
    bench: Mapping[str, Any], cost: Mapping[str, Any]
) -> list[tuple[str, float, float, float]]:
    """(label, measured, predicted, relative error) for every predictable run of ``bench``."""
    rt = _rt(bench["runs"])
    out = []
    for run in bench["runs"]:
        if run["method"] == "RT" or not _predictable(run) or run["mask"] == "display":
            continue  # display-only masking decodes exactly as its beta's run
        pred = predicted_speedup(rt, run, cost["decode_step_ms"], cost["verified_token_ms"])
        out.append((run["label"], float(run["speedup"]), pred, pred / float(run["speedup"]) - 1))
    return out


def shape_table(
    costs: Sequence[Mapping[str, Any]], benches: Sequence[tuple[str, Mapping[str, Any]]], label: str
) -> str:
    """Markdown: per cost row, r = c_d / c_v and the predicted speedup of run ``label`` in each
    bench (the bench's measured speedup in its header)."""
    head = "| model | threads | decode step ms | verified token ms | r |"
    rule = "|---|---:|---:|---:|---:|"
    picked = []
    for name, bench in benches:
        run = next(r for r in bench["runs"] if r["label"] == label)
        picked.append((_rt(bench["runs"]), run))
        head += f" {name} (measured {run['speedup']:.2f}x) |"
        rule += "---:|"
    lines = [head, rule]
    for c in costs:
        c_d, c_v = c["decode_step_ms"], c["verified_token_ms"]
        row = f"| {c['model']} | {c['threads']} | {c_d:.2f} | {c_v:.2f} | {c_d / c_v:.1f} |"
        row += "".join(f" {predicted_speedup(rt, run, c_d, c_v):.2f}x |" for rt, run in picked)
        lines.append(row)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler_research.bench.predict")
    ap.add_argument("--costs", type=Path, required=True, help="mt_cost's --json output")
    ap.add_argument("--runs", type=Path, nargs="+", required=True, help="the benchmark's --json")
    ap.add_argument("--label", default="SSBD b=0.2", help="the run to predict (its label)")
    ap.add_argument(
        "--check", metavar="MODEL", help="check every run against this cost row's prediction"
    )
    ap.add_argument("--tolerance", type=float, default=0.10)
    a = ap.parse_args(argv)
    costs = json.loads(a.costs.read_text(encoding="utf-8"))
    benches = [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in a.runs]
    if a.check is None:
        print(shape_table(costs, benches, a.label))
        return 0
    cost = next((c for c in costs if c["model"] == a.check), None)
    if cost is None:
        print(f"no cost row named {a.check!r} in {a.costs}", file=sys.stderr)
        return 2
    worst = 0.0
    print("| run | method | measured | predicted | error |")
    print("|---|---|---:|---:|---:|")
    for name, bench in benches:
        for lbl, measured, pred, err in check_rows(bench, cost):
            worst = max(worst, abs(err))
            print(f"| {name} | {lbl} | {measured:.2f}x | {pred:.2f}x | {100 * err:+.1f}% |")
    print(f"\nlargest error {100 * worst:.1f}% (tolerance {100 * a.tolerance:.0f}%)")
    return 0 if worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
