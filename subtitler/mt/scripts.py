"""Scripts written without spaces between words (what the display's word-safe cut and the
glossary's whole-word match both need to know of a character)."""

from __future__ import annotations

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


def unspaced(ch: str) -> bool:
    """Whether ``ch`` belongs to a script written without spaces between words."""
    o = ord(ch)
    return o >= 0x0E00 and any(lo <= o <= hi for lo, hi in _UNSPACED)
