"""Where committed text ends a sentence (so the segment can be finalised and translated)."""

from __future__ import annotations

import re

# Closing quotes and brackets may follow the full stop: 'he said "no."' ends a sentence.
_END = re.compile(r"[.!?…。！？]+[\"'”’»)\]]*$")
# A full stop after these is not a sentence end ("Mr. Smith", "e.g. this").
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "no", "fig"}
)


def ends_sentence(word: str) -> bool:
    """True when ``word`` (as the recogniser wrote it) closes a sentence."""
    w = word.strip()
    if not _END.search(w):
        return False
    if w.endswith(("!", "?", "…", "。", "！", "？")):
        return True
    stem = w.rstrip(".\"'”’»)]").lower()
    # Initials ("J. R. R.") and abbreviations are not sentence ends.
    return not (stem in _ABBREVIATIONS or (len(stem) == 1 and stem.isalpha()))


def split_sentences(words: list[str]) -> list[list[str]]:
    """Group words into sentences; the last group may be an unfinished sentence."""
    out: list[list[str]] = []
    cur: list[str] = []
    for w in words:
        cur.append(w)
        if ends_sentence(w):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def join_words(words: list[str]) -> str:
    """Text of recogniser words, which carry their own leading spaces (none between CJK words)."""
    return " ".join("".join(words).split())
