"""Scores runs (chrF, BLEU, NE, A/D, A/O, TPS, speedup) and renders the paper's tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from subtitler.mt.languages import normalize_code
from subtitler_research.bench.runner import RunResult


def bleu_tokenizer(tgt_lang: str) -> str:
    code = normalize_code(tgt_lang)
    return {"zh": "zh", "ja": "char", "th": "char"}.get(code, "13a")


def score_runs(
    results: Sequence[RunResult], references: Sequence[str], tgt_lang: str
) -> list[dict[str, Any]]:
    import sacrebleu

    rt_tps = next(
        (r.totals.tps for r in results if r.spec.method == "RT" and not r.spec.draft_tokens), 0.0
    )
    rows: list[dict[str, Any]] = []
    for r in results:
        chrf = sacrebleu.corpus_chrf(r.finals, [list(references)]).score
        bleu = sacrebleu.corpus_bleu(
            r.finals, [list(references)], tokenize=bleu_tokenizer(tgt_lang)
        ).score
        t = r.totals
        rows.append(
            {
                "method": str(r.spec.method),
                "label": r.spec.label,
                "beta": r.spec.beta,
                "mask": r.spec.mask,
                "k": r.spec.k,
                "lookahead": r.spec.lookahead,
                "resync": r.spec.resync,
                "verify": r.spec.verify,
                "draft_model_tokens": r.spec.draft_tokens,
                "adaptive": r.spec.adaptive,
                "lookahead_drafted": t.lookahead_drafted,
                "lookahead_accepted": t.lookahead_accepted,
                "chrf": round(chrf, 2),
                "bleu": round(bleu, 2),
                "ne": round(r.ne(tgt_lang), 3),
                "ad": None if t.ad is None else round(t.ad, 1),
                "ao": round(t.ao, 1),
                "tps": round(t.tps, 1),
                "speedup": round(t.tps / rt_tps, 2) if rt_tps else None,
                "latency_ms": round(t.latency_ms, 1),
                "updates": t.updates,
                "output_tokens": t.output_tokens,
                "draft_tokens": t.draft_tokens,
                "accepted": t.accepted,
                "decode_steps": t.decode_steps,
                "verified_tokens": t.verified_tokens,
                "prompt_tokens": t.prompt_tokens,
                "prompt_s": round(t.prompt_s, 4),
                "verify_s": round(t.verify_s, 4),
                "decode_s": round(t.decode_s, 4),
                "guess_s": round(t.guess_s, 4),
                "ms_per_verified": _r(t.ms_per_verified),
                "ms_per_decoded": _r(t.ms_per_decoded),
                "ms_per_prompt_token": _r(t.ms_per_prompt_token),
                "finals": list(r.finals),
            }
        )
    return rows


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def _f(x: object, fmt: str = "{:.1f}") -> str:
    return "-" if x is None else fmt.format(x)


def label(row: dict[str, Any]) -> str:
    dm = f" + draft model {row['draft_model_tokens']}" if row.get("draft_model_tokens") else ""
    if row["method"] != "SSBD":
        return f"{row['method']}{dm}" + (", adaptive" if row.get("adaptive") else "")
    s = f"SSBD β={row['beta']:g}"
    if row.get("verify") == "specdec":
        s = "SpecDec top-3 τ=1"
    if row.get("lookahead"):
        s += f" + n-gram {row['lookahead']}"
    if row.get("resync"):
        s += " + resync"
    s += dm
    if row.get("adaptive"):
        s += ", adaptive"
    if row["mask"] == "output":
        return f"{s} + mask-{row['k']}"
    if row["mask"] == "display":
        return f"{s} + display-only mask-{row['k']}"
    return s


def quality_table(rows: Sequence[dict[str, Any]]) -> str:
    out = [
        "| method | chrF | BLEU | NE | A/D % | A/O % | TPS | speedup | latency ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {label(r)} | {r['chrf']:.2f} | {r['bleu']:.2f} | {r['ne']:.3f} | {_f(r['ad'])} | "
            f"{r['ao']:.1f} | {r['tps']:.1f} | {_f(r['speedup'], '{:.2f}')} | "
            f"{r['latency_ms']:.1f} |"
        )
    return "\n".join(out)


def cost_table(rows: Sequence[dict[str, Any]]) -> str:
    out = [
        "| method | ms / prompt token | ms / verified token | ms / decoded token | "
        "decoded ÷ verified | verified tokens | decode steps |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r["mask"] == "display":
            continue  # same decoding as its SSBD run
        v, d = r["ms_per_verified"], r["ms_per_decoded"]
        ratio = d / v if v and d else None
        out.append(
            f"| {label(r)} | {_f(r['ms_per_prompt_token'], '{:.2f}')} | {_f(v, '{:.2f}')} | "
            f"{_f(d, '{:.2f}')} | {_f(ratio, '{:.1f}')} | {r['verified_tokens']} | "
            f"{r['decode_steps']} |"
        )
    return "\n".join(out)
