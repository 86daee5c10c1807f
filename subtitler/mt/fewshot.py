"""Few-shot prompts for base models: a model without a chat template translates when it is shown
a handful of translated pairs and then the line, each labelled with its language's own name.

The examples (assets/fewshot/SRC-TGT.tsv, from Tatoeba, CC BY 2.0 FR) come first, so every
update of every line shares them as the prompt's prefix: llama.cpp keeps their keys and values
and they are evaluated once per model and language pair. A pair shipped one way serves the
other way too. A pair between two languages that each have examples with English (de -> ja)
takes the pairs whose English sentence both files have; a pair with no examples at all gets
the labels alone (zero-shot: weaker, see docs/benchmarks/translator.md).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from subtitler.mt.languages import native_name, normalize_code
from subtitler.resources import asset_path

log = logging.getLogger(__name__)

EXAMPLES_DIR = "fewshot"
PIVOT = "en"
# How a pair reads: the source line, then its translation, then a blank line.
PAIR = "{src}: {a}\n{tgt}: {b}\n\n"
LINE = "{src}: {text}\n{tgt}:"


def _read(path: Path) -> list[dict[str, str]]:
    """Rows of an examples file as {language: sentence}; a damaged file gives none."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        log.warning("few-shot examples %s not readable: %s", path, e)
        return []
    rows = [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]
    if not rows:
        return []
    header, *body = rows
    return [dict(zip(header, r, strict=True)) for r in body if len(r) == len(header)]


@functools.lru_cache(maxsize=32)
def _file(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """(a sentence, b sentence) pairs of the shipped file for a and b, in either order."""
    for name in (f"{a}-{b}.tsv", f"{b}-{a}.tsv"):
        path = asset_path(EXAMPLES_DIR) / name
        if path.is_file():
            rows = _read(path)
            return tuple((r[a], r[b]) for r in rows if r.get(a) and r.get(b))
    return ()


def examples(src: str, tgt: str) -> tuple[tuple[str, str], ...]:
    """The example pairs (source sentence, target sentence) for a language pair."""
    src, tgt = normalize_code(src), normalize_code(tgt)
    direct = _file(src, tgt)
    if direct or src == tgt or PIVOT in (src, tgt):
        return direct
    # Through English: pairs whose English sentence both files have.
    to_src = dict(_file(PIVOT, src))
    return tuple((to_src[e], t) for e, t in _file(PIVOT, tgt) if e in to_src)


def fewshot_prefix(src: str, tgt: str) -> str:
    """The examples part of the prompt, the same for every line of the pair."""
    s, t = native_name(src), native_name(tgt)
    return "".join(PAIR.format(src=s, tgt=t, a=a, b=b) for a, b in examples(src, tgt))


def fewshot_prompt(src: str, tgt: str, text: str) -> str:
    """The whole prompt for ``text``: the examples, then the line; the model writes the
    translation after the target's label and ends it with a line break."""
    line = LINE.format(src=native_name(src), tgt=native_name(tgt), text=text)
    return fewshot_prefix(src, tgt) + line
