"""Choose the few-shot examples shipped in assets/fewshot/.

A base model (no chat template) is prompted with a handful of translated pairs before the line
to translate (subtitler/mt/fewshot.py). The pairs come from Tatoeba (https://tatoeba.org,
CC BY 2.0 FR), as the Helsinki-NLP/OPUS-MT-testsets tatoeba-test v2021-08-07 files have them.
Only the example pool is read: every line whose index is 0 mod 10. Lines 1 mod 10 are the
speech-like tuning set and lines 2 mod 10 the held-out report set of
``python -m subtitler_research.bench.prompts``, so examples, tuning and report never share a pair.

    python -m subtitler_research.mt.fewshot_examples --tatoeba DIR --pair en-de --seed 0 [--write]

The rule (the same for every language pair): a sentence of 10 to 20 words that names something
(a capitalised word after the first, so the model sees names kept and the rest translated), no
quotation marks, not one of Tatoeba's stock names (Tom, Mary), a translation 0.7 to 1.6 times
as long (characters; 0.2 to 0.8 for Chinese and Japanese), Simplified Chinese only; then ``n``
of them in a seeded shuffle. The seed was chosen on the tuning set (docs/benchmarks/translator.md).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = {  # pair -> (file stem, English side, other side, labels of the other side)
    "en-de": ("deu-eng", "eng", "deu", ""),
    "en-ja": ("eng-jpn", "eng", "jpn", ""),
    "en-zh": ("eng-zho", "eng", "zho", "zho.labels"),
}
STEM = "tatoeba-test-v2021-08-07"
# Characters of Traditional Chinese that Simplified writes otherwise (Tatoeba's labels are not
# always right).
TRADITIONAL = set("這們與個來說為對會時國學後還過裡麼愛樣點體門兄們聽見電話語錢買賣")
STOCK_NAMES = re.compile(r"\b(Tom|Mary|John|Ken)\b")
NAMED = re.compile(r"\s[A-Z][a-z]+")
UNSPACED = ("ja", "zh")


def read_pairs(folder: Path, pair: str) -> list[tuple[str, str, str]]:
    """(English, other, label) per line of the Tatoeba test files of ``pair``."""
    stem, en, other, labels = FILES[pair]

    def lines(ext: str) -> list[str]:
        return (folder / f"{stem}.{STEM}.{ext}").read_text(encoding="utf-8").splitlines()

    tags = lines(labels) if labels else [""] * len(lines(en))
    return list(zip(lines(en), lines(other), tags, strict=True))


def split(rows: list[tuple[str, str, str]], part: int) -> list[tuple[str, str, str]]:
    """Every line whose index is ``part`` mod 10 (0: example pool, 1: tuning, 2: report)."""
    return [r for i, r in enumerate(rows) if i % 10 == part]


def eligible(en: str, other: str, label: str, tgt: str) -> bool:
    words = en.split()
    low, high = (0.2, 0.8) if tgt in UNSPACED else (0.7, 1.6)
    return (
        10 <= len(words) <= 20
        and NAMED.search(en) is not None
        and not STOCK_NAMES.search(en)
        and not any(q in en + other for q in '"“”„«»「」『』')
        and low <= len(other) / len(en) <= high
        and label in ("", "cmn_Hans")
        and not (tgt == "zh" and TRADITIONAL.intersection(other))
    )


def choose(folder: Path, pair: str, n: int, seed: int) -> list[tuple[str, str]]:
    tgt = pair.split("-")[1]
    pool = [(e, o) for e, o, lab in split(read_pairs(folder, pair), 0) if eligible(e, o, lab, tgt)]
    random.Random(seed).shuffle(pool)
    return pool[:n]


def render(pair: str, examples: list[tuple[str, str]], seed: int) -> str:
    src, tgt = pair.split("-")
    stem = FILES[pair][0]
    head = [
        f"# Tatoeba (https://tatoeba.org), CC BY 2.0 FR: sentence pairs of tatoeba-test {stem} "
        f"v2021-08-07 (Helsinki-NLP/OPUS-MT-testsets), chosen by "
        f"subtitler_research.mt.fewshot_examples --pair {pair} --seed {seed}",
        f"{src}\t{tgt}",
    ]
    return "\n".join(head + [f"{a}\t{b}" for a, b in examples]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tatoeba", type=Path, required=True, help="folder of the tatoeba-test files")
    ap.add_argument("--pair", choices=sorted(FILES), required=True)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true", help="write assets/fewshot/PAIR.tsv")
    a = ap.parse_args(argv)
    text = render(a.pair, choose(a.tatoeba, a.pair, a.n, a.seed), a.seed)
    if a.write:
        out = ROOT / "assets" / "fewshot" / f"{a.pair}.tsv"
        out.parent.mkdir(exist_ok=True)
        out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
