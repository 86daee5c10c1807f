"""Mask-k: hide the unstable tail of an unfinished translation.

*Output* mask-k (the paper's baseline) shortens the output itself, so the next draft loses those
tokens. *Display-only* mask-k shortens only what is shown; the draft keeps every token.
Text is cut on whole characters: token pieces may end inside a UTF-8 sequence (a CJK character
split over byte-fallback or byte-level BPE tokens), and such a partial character is never shown.
In scripts written with spaces the cut also snaps back to a word boundary, so a word is shown
whole or not at all ("in der D" of "in der Dämmerung" shows as "in der"); Chinese, Japanese
and Thai are cut by character.

:func:`steady` keeps a line from going blank or back without cause: what was shown and is
still the start of the new translation stays, and a line the mask would empty shows the words
its last two translations agree on.
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Callable, Sequence

from subtitler.mt.lm import common_prefix_len

MAX_K = 10  # display-only mask-k is chosen in 0..MAX_K

# Scripts written without spaces between words: a cut between two of their characters is a
# word boundary (Han, kana, CJK punctuation and full-width forms, Thai, Lao, Khmer, Myanmar).
_UNSPACED = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x2E80, 0x2FDF),
    (0x3000, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x20000, 0x3FFFF),
)
_IN_WORD = "'’-‐_"  # inside a word between letters: don't, E-Mail


def unspaced(ch: str) -> bool:
    """Whether ``ch`` belongs to a script written without spaces between words."""
    o = ord(ch)
    return any(lo <= o <= hi for lo, hi in _UNSPACED)


def _mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def _wordish(ch: str) -> bool:
    return ch.isalnum() or ch in _IN_WORD or _mark(ch)


def inside_word(text: str, cut: int) -> bool:
    """Whether cutting ``text`` at ``cut`` would split a word (or a character from its
    combining marks)."""
    if cut <= 0 or cut >= len(text):
        return False
    a, b = text[cut - 1], text[cut]
    if _mark(b):
        return True  # an accent or a Thai vowel belongs to the character before it
    if unspaced(a) or unspaced(b):
        return False
    return _wordish(a) and _wordish(b)


def word_safe(text: str, cut: int) -> str:
    """``text[:cut]`` without a word it would cut in two, trailing spaces removed."""
    cut = max(0, min(cut, len(text)))
    while inside_word(text, cut):
        cut -= 1
    return text[:cut].rstrip()


def output_mask(tokens: Sequence[int], k: int, final: bool) -> list[int]:
    """The paper's output mask-k: drop the last k tokens of a non-final output."""
    if final or k <= 0:
        return list(tokens)
    return list(tokens[: max(0, len(tokens) - k)])


def complete_text(data: bytes) -> str:
    """Decode UTF-8 up to the last complete character; an unfinished trailing one is dropped."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return dec.decode(data, final=False)


def display_text(
    detokenize: Callable[[Sequence[int]], bytes],
    tokens: Sequence[int],
    k: int,
    final: bool,
) -> str:
    """What the overlay shows for a translation: all of it when final, else minus k tokens
    and any word that cut would split (trailing spaces removed)."""
    return shown_by_k(detokenize, tokens, final, ks=(k,))[0]


def shown_by_k(
    detokenize: Callable[[Sequence[int]], bytes],
    tokens: Sequence[int],
    final: bool,
    ks: Sequence[int] = range(MAX_K + 1),
) -> tuple[str, ...]:
    """:func:`display_text` for each k in ``ks`` (the whole text decoded once)."""
    # Final or not, a character the output stopped in the middle of (a length limit) is left out.
    full = complete_text(detokenize(tokens))
    out = []
    for k in ks:
        if final or k <= 0:
            out.append(full.strip())
            continue
        cut = complete_text(detokenize(tokens[: max(0, len(tokens) - k)]))
        # A piece's text can change with what follows (a tokenizer's leading-space rule): the
        # cut is where the two texts part, never past it.
        out.append(word_safe(full, common_prefix_len(cut, full)).strip())
    return tuple(out)


def steady(
    shown: Sequence[str],
    full: str,
    before: tuple[str, Sequence[str]] | None,
) -> tuple[str, ...]:
    """What each k shows of an open line, given what the same line showed before.

    ``shown``: the mask-k texts of ``full`` (k = 0, 1, ...); ``before``: the line's previous
    full translation and its shown texts (None for a line's first translation). A text that
    was shown and still starts the new translation stays (hiding it again would only make the
    line flicker); if the mask leaves nothing, the words the last two translations agree on
    are shown (a line shorter than k tokens is not left blank once it has stable words).
    """
    if before is None:
        return tuple(shown)
    prev_full, prev_shown = before
    agreed = word_safe(full, common_prefix_len(prev_full, full))
    out = []
    for k, text in enumerate(shown):
        old = prev_shown[k] if k < len(prev_shown) else ""
        if len(old) > len(text) and full.startswith(old) and not inside_word(full, len(old)):
            text = old
        if not text:
            text = agreed
        out.append(text)
    return tuple(out)
