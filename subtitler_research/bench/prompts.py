"""How well a base model translates whole sentences under different prompts (issue 25).

    python -m subtitler_research.bench.prompts split --shared SHARED_DATA --out SPLITS
    python -m subtitler_research.bench.prompts run --model M.gguf --splits SPLITS \\
        --sets tune --pairs en-de,en-ja,en-zh --variants app,english-labels,k3,k8,seed1,seed2 \\
        [--limit 100] [--threads 2] --json OUT.json

``split`` writes line-aligned test sets: news (WMT newstest, research terms: tune on 2019,
report on 2020/2021; en-ja has no 2019, so it tunes on the first half of 2020 and reports on
2021) and speech-like short sentences (Tatoeba, CC BY 2.0 FR: lines 1 mod 10 tune, lines 2 mod
10 report; lines 0 mod 10 are the example pool, subtitler_research/mt/fewshot_examples.py).

``run`` translates ``--limit`` sentences spread evenly over each set, each whole sentence
once, greedy, through the app's own translator (StreamTranslator: prompt, stop rules, the
retry of an echo or a loop) and prints chrF, BLEU of what the app shows (a line it cannot
translate is shown as said), the share that leaves the source unchanged (case, spacing and
punctuation aside), the share decoded twice (the first output echoed the source or looped),
the share still rejected, and the time per sentence.
A variant changes only the prompt:

- ``app``: the shipped examples with each language's own name as its label (the app's prompt);
- ``english-labels``: the same with the English names ("German:");
- ``kN``: the first N of the examples the shipped rule picks (k0: the labels alone);
- ``seedN``: another seeded draw of the same rule.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from subtitler.mt import fewshot
from subtitler.mt.languages import language_name, native_name
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.translator import StreamTranslator
from subtitler_research.mt import fewshot_examples

NEWS = {  # pair -> (tune files, report files) under wmt_dev/, each (source, reference, range)
    "en-de": (("newstest2019.en-de.en", "newstest2019.en-de.de", None),
              ("newstest2020.en-de.en", "newstest2020.en-de.de", None)),
    "en-zh": (("newstest2019.en-zh.en", "newstest2019.en-zh.zh", None),
              ("newstest2020.en-zh.en", "newstest2020.en-zh.zh", None)),
    "en-ja": (("newstest2020.en-ja.en", "newstest2020.en-ja.ja", 0),
              ("newstest2021.en-ja.src.en", "newstest2021.en-ja.ref.A.ja", None)),
}  # fmt: skip
TATOEBA_PART = {"tune": 1, "report": 2}


def cmd_split(a: argparse.Namespace) -> int:
    a.out.mkdir(parents=True, exist_ok=True)
    for pair, (tune, report) in NEWS.items():
        src, tgt = pair.split("-")
        for name, (s, r, half) in (("tune", tune), ("report", report)):
            sl = (a.shared / "corpora" / "wmt_dev" / s).read_text(encoding="utf-8").splitlines()
            rl = (a.shared / "corpora" / "wmt_dev" / r).read_text(encoding="utf-8").splitlines()
            if half is not None:  # en-ja: tune on the first half of 2020 only
                sl, rl = sl[: len(sl) // 2], rl[: len(rl) // 2]
            _write(a.out / f"news-{name}.{pair}", sl, rl, src, tgt)
        rows = fewshot_examples.read_pairs(a.shared / "corpora" / "tatoeba_test", pair)
        for name, part in TATOEBA_PART.items():
            chosen = fewshot_examples.split(rows, part)
            if tgt == "zh":  # the app's Chinese is Simplified, as its examples
                chosen = [r for r in chosen if r[2] == "cmn_Hans"]
            _write(a.out / f"tatoeba-{name}.{pair}", [e for e, _, _ in chosen],
                   [o for _, o, _ in chosen], src, tgt)  # fmt: skip
    print(f"written to {a.out}")
    return 0


def _write(stem: Path, src: list[str], ref: list[str], s: str, t: str) -> None:
    keep = [(x.strip(), y.strip()) for x, y in zip(src, ref, strict=True) if x.strip() and y]
    stem.with_name(f"{stem.name}.{s}").write_text("\n".join(x for x, _ in keep) + "\n", "utf-8")
    stem.with_name(f"{stem.name}.{t}").write_text("\n".join(y for _, y in keep) + "\n", "utf-8")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def unchanged(source: str, output: str) -> bool:
    """Does the output leave the source as it was (case, spacing, punctuation aside)?"""
    return bool(_words(source)) and _words(source) == _words(output)


def variant_prompts(name: str, pair: str, tatoeba: Path | None) -> Any:
    """A PromptBuilder-like object for a variant (``build(text)``)."""
    src, tgt = pair.split("-")
    if name == "app":
        return PromptBuilder("fewshot", src, tgt)
    if name == "english-labels":
        labels = (language_name(src), language_name(tgt))
        return _Fixed(fewshot.examples(src, tgt), labels, src, tgt)
    m = re.fullmatch(r"(k|seed)(\d+)", name)
    if not m:
        raise SystemExit(f"unknown variant {name!r}")
    n = int(m.group(2))
    native = (native_name(src), native_name(tgt))
    if m.group(1) == "k":
        return _Fixed(fewshot.examples(src, tgt)[:n], native, src, tgt)
    if tatoeba is None:
        raise SystemExit("seedN variants need --tatoeba")
    return _Fixed(tuple(fewshot_examples.choose(tatoeba, pair, 5, n)), native, src, tgt)


@dataclasses.dataclass(frozen=True)
class _Fixed:
    """The app's few-shot layout with other examples or labels."""

    examples: tuple[tuple[str, str], ...]
    labels: tuple[str, str]
    src_lang: str
    tgt_lang: str
    template: str = "fewshot"
    terms: tuple[tuple[str, str], ...] = ()

    def build(self, text: str, context: str = "") -> str:
        s, t = self.labels
        pre = "".join(fewshot.PAIR.format(src=s, tgt=t, a=a, b=b) for a, b in self.examples)
        return pre + fewshot.LINE.format(src=s, tgt=t, text=" ".join(text.split()))


def cmd_run(a: argparse.Namespace) -> int:
    import sacrebleu

    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    lm = LlamaLM(LlamaSettings(str(a.model), n_ctx=2048, n_threads=a.threads))
    results: list[dict[str, Any]] = []
    for pair in a.pairs.split(","):
        src, tgt = pair.split("-")
        for kind in ("news", "tatoeba"):
            stem = a.splits / f"{kind}-{a.sets}.{pair}"
            srcs = stem.with_name(f"{stem.name}.{src}").read_text("utf-8").splitlines()
            refs = stem.with_name(f"{stem.name}.{tgt}").read_text("utf-8").splitlines()
            # ``limit`` sentences spread over the whole set (news sets are whole articles).
            every = max(1, len(srcs) // a.limit)
            srcs, refs = srcs[::every][: a.limit], refs[::every][: a.limit]
            for v in a.variants.split(","):
                prompts = variant_prompts(v, pair, a.tatoeba)
                tr = StreamTranslator(lm, prompts, DecodeOptions(Method.RT, 0.0))
                hyps, same, rejected, retried = [], 0, 0, 0
                t0 = time.perf_counter()
                for i, s in enumerate(srcs):
                    # What the app shows for the line: the translation, or (an output that is
                    # no translation even on the retry) the line as said.
                    t = tr.update(i, s, True)
                    text = s if t.problem else t.text
                    hyps.append(text)
                    same += unchanged(s, text)
                    rejected += bool(t.problem)
                    retried += t.stats.retried
                dt = time.perf_counter() - t0
                tok = {"zh": "zh", "ja": "char"}.get(tgt, "13a")
                row = {
                    "pair": pair, "set": f"{kind}-{a.sets}", "variant": v, "n": len(srcs),
                    "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
                    "bleu": sacrebleu.corpus_bleu(hyps, [refs], tokenize=tok).score,
                    "unchanged_pct": 100.0 * same / len(srcs),
                    "rejected_pct": 100.0 * rejected / len(srcs),
                    "retried_pct": 100.0 * retried / len(srcs),
                    "s_per_sentence": dt / len(srcs),
                }  # fmt: skip
                results.append(row)
                print(
                    f"{pair} {kind}-{a.sets} {v:15s} chrF {row['chrf']:5.1f} "
                    f"BLEU {row['bleu']:5.1f} unchanged {row['unchanged_pct']:4.1f}% "
                    f"retried {row['retried_pct']:4.1f}% rejected {row['rejected_pct']:4.1f}% "
                    f"{row['s_per_sentence']:.2f} s/sent",
                    flush=True,
                )
    if a.json:
        a.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler_research.bench.prompts")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("split")
    sp.add_argument("--shared", type=Path, required=True, help="the shared data folder")
    sp.add_argument("--out", type=Path, required=True)
    rp = sub.add_parser("run")
    rp.add_argument("--model", type=Path, required=True)
    rp.add_argument("--splits", type=Path, required=True)
    rp.add_argument("--sets", choices=("tune", "report"), default="tune")
    rp.add_argument("--pairs", default="en-de,en-ja,en-zh")
    rp.add_argument("--variants", default="app")
    rp.add_argument("--tatoeba", type=Path, help="tatoeba-test folder (seedN variants)")
    rp.add_argument("--limit", type=int, default=100)
    rp.add_argument("--threads", type=int, default=2)
    rp.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    return cmd_split(a) if a.cmd == "split" else cmd_run(a)


if __name__ == "__main__":
    sys.exit(main())
