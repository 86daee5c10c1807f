"""Display-only mask-k: what an unfinished line shows of its translation.

*Display-only* mask-k hides the last k tokens of an open line from the reader; the draft the
translator continues from keeps every token (*output* mask-k, which shortens the output itself,
is the translator's: :func:`subtitler.mt.masking.output_mask`). The engine reports a
translation as its pieces, the bytes each output token adds (``EngineResult.pieces``); what
each k shows is decided here.

Text is cut on whole characters: pieces may end inside a UTF-8 sequence (a CJK character split
over byte-fallback or byte-level BPE tokens), and such a partial character is never shown.
In scripts written with spaces the cut also snaps back to a word boundary, so a word is shown
whole or not at all ("in der D" of "in der Dämmerung" shows as "in der"); a number, a time or an
address is one word ("1.500.000", "10:30", "anna@example.com": "1.500" or "10" would say
another). Chinese, Japanese and Thai are cut by character, never between a Thai consonant and
its vowel.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from subtitler.mt.masking import complete_text
from subtitler.mt.scripts import unspaced

MAX_K = 10  # display-only mask-k is chosen in 0..MAX_K

_IN_WORD = "'’-‐_"  # inside a word between letters: don't, E-Mail
# Thai and Lao vowels written before the consonant they follow, and those written after it as
# letters (not marks): neither is ever cut off its consonant ("เ" alone, "ประช" of "ประชากร").
_LEADING_VOWELS = "\u0e40\u0e41\u0e42\u0e43\u0e44\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4"
_ZWJ = "\u200d"
_FOLLOWING_VOWELS = "\u0e30\u0e32\u0e33\u0e45\u0eb0\u0eb2\u0eb3"


def _mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def _wordish(ch: str) -> bool:
    return ch.isalnum() or ch in _IN_WORD or _mark(ch)


def _flag_letter(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"  # (two of them make a country's flag)


def joined(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (in this order) are one written character: a letter and its
    combining marks, a Thai or Lao consonant and its vowel, an emoji and its skin tone, the
    emoji a zero-width joiner joins (a family), a flag's two letters."""
    return (
        _mark(b)
        or b in _FOLLOWING_VOWELS
        or a in _LEADING_VOWELS
        or _ZWJ in (a, b)
        or "\U0001f3fb" <= b <= "\U0001f3ff"
        or (_flag_letter(a) and _flag_letter(b))
    )


def inside_word(text: str, cut: int) -> bool:
    """Whether cutting ``text`` at ``cut`` would split a word (or a character from its
    combining marks). A run of characters without a space is one word where it has letters or
    digits on both sides of the cut ("1.500|.000", "anna|@example.com"), and a number the text
    ends in may still go on ("10|:" of a line being translated: "10:30")."""
    if cut <= 0 or cut >= len(text):
        return False
    a, b = text[cut - 1], text[cut]
    if joined(a, b):
        return True  # an accent or a Thai vowel belongs to the character before it
    if unspaced(a) or unspaced(b):
        return False
    if _wordish(a) and _wordish(b):
        return True
    if b.isspace() or a.isspace():
        return False
    # Punctuation on one side of the cut: inside a run such as "1.500.000" or "x.org/a"?
    after = cut
    while after < len(text) and not (text[after].isspace() or unspaced(text[after])):
        if _wordish(text[after]):
            break
        after += 1
    else:
        if after < len(text):
            return False  # only punctuation after the cut, then a space: "Hallo|, Welt"
        return a.isdigit()  # "10|:" at the end: the number may go on
    before = cut - 1
    while before >= 0 and not (text[before].isspace() or unspaced(text[before])):
        if _wordish(text[before]):
            return True
        before -= 1
    return False


def word_safe(text: str, cut: int) -> str:
    """``text[:cut]`` without a word it would cut in two, trailing spaces removed."""
    cut = max(0, min(cut, len(text)))
    while inside_word(text, cut):
        a, b = text[cut - 1], text[cut]
        if joined(a, b) or unspaced(a) or unspaced(b):
            cut -= 1
            continue
        # Inside a run without spaces: back to its first letter or digit at once (a step at a
        # time scanned the run again at each step: a long address cost milliseconds).
        start = cut - 1
        while start > 0 and not (text[start - 1].isspace() or unspaced(text[start - 1])):
            start -= 1
        while start < cut - 1 and not _wordish(text[start]):
            start += 1
        cut = start
    return text[:cut].rstrip()


def display_text(pieces: Sequence[bytes], k: int, final: bool) -> str:
    """What the overlay shows of a translation given as its token ``pieces``: all of it when
    final, else minus the last k pieces and any word that cut would split (trailing spaces
    removed)."""
    return shown_by_k(pieces, final, ks=(k,))[0]


def shown_by_k(
    pieces: Sequence[bytes],
    final: bool,
    ks: Sequence[int] = range(MAX_K + 1),
    whole: Sequence[str] = (),
) -> tuple[str, ...]:
    """:func:`display_text` for each k in ``ks`` (the whole text decoded once). ``whole``:
    texts shown whole or not at all (the glossary's fixed translations of the line's terms:
    "Neu Sankt" of "Neu Sankt Petersburg", "库伯" of "库伯内特斯" would say another name)."""
    # Final or not, a character the output stopped in the middle of (a length limit) is left out.
    full = complete_text(b"".join(pieces))
    spans = [span for w in dict.fromkeys(w.strip() for w in whole) for span in _spans(full, w)]
    out = []
    for k in ks:
        if final or k <= 0:
            out.append(full.strip())
            continue
        # The pieces join and UTF-8 decoding only ever adds to what it gave: the text of the
        # kept pieces is a start of the full text.
        cut = len(complete_text(b"".join(pieces[: max(0, len(pieces) - k)])))
        text = word_safe(full, cut)
        while inside := [a for a, b in spans if a < len(text) < b]:  # cut inside a term's
            text = word_safe(full, min(inside))
        out.append(text.strip())
    return tuple(out)


def _spans(text: str, word: str) -> list[tuple[int, int]]:
    """Where ``word`` is in ``text``, and where ``text`` ends with its beginning at the start
    of a word (a decode still writing it): a cut inside these shows part of it."""
    if len(word) < 2:
        return []
    out, i = [], text.find(word)
    while i >= 0:
        out.append((i, i + len(word)))
        i = text.find(word, i + 1)
    for m in range(len(word) - 1, 0, -1):
        start = len(text) - m
        if text.endswith(word[:m]) and not inside_word(text, start):
            out.append((start, len(text) + 1))
            break
    return out
