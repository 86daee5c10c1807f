"""The same translations shown under other display rules: what the overlay would have shown
of one replay (one recognition, one translation of every update) with token mask-k (the rule
before issue 17), with word-safe mask-k, and with word-safe mask-k kept steady (the rule
now), so NE and flicker compare on the same stream.

    python -m subtitler_research.pipeline.display_rules REPLAY.json \\
        --mt-model fixtures/translator/model.gguf [--k 3] [--lang de]

The translations are tokenized again with the model's tokenizer (the tokens a decode made may
split a word otherwise; every rule gets the same tokens).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from subtitler.display.masking import MAX_K, shown_by_k
from subtitler.display.steadiness import steady
from subtitler.mt.engine import token_pieces
from subtitler.mt.masking import complete_text
from subtitler.pipeline.events import SubtitleEvent
from subtitler_research.pipeline.display import display_report

Detok = Callable[[Sequence[int]], bytes]
Tokenize = Callable[[str], list[int]]


def token_mask(detok: Detok, tokens: Sequence[int], k: int, final: bool) -> str:
    """The rule before issue 17: all but the last k tokens, on whole characters."""
    kept = tokens if final or k <= 0 else tokens[: max(0, len(tokens) - k)]
    return complete_text(detok(kept)).strip()


def shown_under(
    rule: str, displayed: Sequence[dict[str, Any]], tokenize: Tokenize, detok: Detok, k: int
) -> list[SubtitleEvent]:
    """The replay's events with what ``rule`` ("token", "word", "steady") shows at k."""
    out = []
    before: dict[int, tuple[str, Sequence[str]]] = {}
    for x in displayed:
        full, final, seg = x["translation"], x["final"], x["segment"]
        toks = tokenize(full)
        if rule == "token":
            text = token_mask(detok, toks, k, final)
        else:
            by_k = shown_by_k(token_pieces(detok, toks), final)
            if rule == "steady" and not final:
                full = complete_text(detok(toks)).strip()
                by_k = steady(by_k, full, before.get(seg))
                before[seg] = (full, by_k)
            text = by_k[min(k, MAX_K)]
        t = x["t"]
        out.append(SubtitleEvent(seg, "", full, (text,) * (MAX_K + 1), final, t, t))
    return out


RULES = {"token": "token mask-k", "word": "word-safe mask-k", "steady": "word-safe, kept steady"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.pipeline.display_rules",
        description=__doc__.split("\n\n")[0],
    )
    ap.add_argument("replay", type=Path, help="a replay's --json output")
    ap.add_argument("--mt-model", type=Path, required=True, help="the GGUF it translated with")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--lang", default="de", help="the target language (NE's units)")
    a = ap.parse_args(argv)
    try:
        displayed = json.loads(a.replay.read_text(encoding="utf-8"))["displayed"]
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {a.replay}: {e}", file=sys.stderr)
        return 2
    if displayed and "translation" not in displayed[0]:
        print(f"error: {a.replay} is from a replay without translations", file=sys.stderr)
        return 2
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    lm = LlamaLM(LlamaSettings(str(a.mt_model), n_ctx=256, n_threads=1))
    try:

        def tokenize(text: str) -> list[int]:
            return lm.tokenize(text, add_bos=False, special=False)

        rows = {
            rule: display_report(shown_under(rule, displayed, tokenize, lm.detokenize, a.k), [],
                                 a.k, a.lang)
            for rule in RULES
        }  # fmt: skip
    finally:
        lm.close()
    keys = ("ne_displayed", "display_changes_per_s", "display_rewrites_per_s")
    print(f"{'rule':24} " + " ".join(f"{k:>22}" for k in keys))
    for rule, r in rows.items():
        print(f"{RULES[rule]:24} " + " ".join(f"{r[k]!s:>22}" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
