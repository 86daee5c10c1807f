"""Simulated streaming input: each sentence revealed a few source words at a time."""

from __future__ import annotations

from pathlib import Path

from subtitler.mt.languages import UNSEGMENTED, normalize_code


class CorpusError(ValueError):
    pass


def prefixes(sentence: str, step: int, src_lang: str = "en") -> list[str]:
    """Prefixes of ``step``, 2*step, ... words (characters for zh/ja), then the whole sentence."""
    if step < 1:
        raise ValueError("step must be >= 1")
    unsegmented = normalize_code(src_lang) in UNSEGMENTED
    units = list(sentence.replace(" ", "")) if unsegmented else sentence.split()
    joiner = "" if unsegmented else " "
    out = [joiner.join(units[:n]) for n in range(step, len(units), step)]
    out.append(joiner.join(units))
    return out


def read_parallel(source: Path, reference: Path, limit: int | None) -> tuple[list[str], list[str]]:
    """Line-aligned source and reference sentences; blank lines are skipped in both."""
    for p in (source, reference):
        if not p.is_file():
            raise CorpusError(f"corpus file not found: {p}")
    src = source.read_text(encoding="utf-8").splitlines()
    ref = reference.read_text(encoding="utf-8").splitlines()
    if len(src) != len(ref):
        raise CorpusError(
            f"{source.name} has {len(src)} lines but {reference.name} has {len(ref)}; "
            "source and reference must be line-aligned"
        )
    pairs = [
        (s.strip(), r.strip()) for s, r in zip(src, ref, strict=True) if s.strip() and r.strip()
    ]
    if limit is not None:
        pairs = pairs[:limit]
    if not pairs:
        raise CorpusError(f"no sentence pairs in {source.name} / {reference.name}")
    return [s for s, _ in pairs], [r for _, r in pairs]
