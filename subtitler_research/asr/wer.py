"""Word error rate against a reference transcript, one normaliser for every system compared.

Whisper writes numbers as digits ("1455", "42-line") where a reference transcript may spell
them out ("fourteen fifty-five", "forty-two line"); both sides are normalised the same way:
lower case, numbers spelt out (num2words; 4-digit numbers from 1100 to 2099 read as years),
hyphens and dashes split words, other punctuation dropped, and hesitations ("uh", "um", "hmm":
the list of Whisper's English normaliser, and "hm") left out: transcripts of spontaneous speech
write them, Whisper does not; and one spelling for a word written two ways ("alright" as "all
right", "ok" as "okay": Whisper writes either, as transcripts do). In a part in another
language its numbers are spelt in that language first (``spell_numbers``: a Swedish "2" is
"två", not "two"). The edit-distance alignment is jiwer's. Both libraries are benchmark/test
dependencies (the ``bench`` and ``dev`` extras).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_NUMBER = re.compile(r"(\d+)(st|nd|rd|th)?$")
_SPLIT = re.compile(r"[\s\-–—/]+")
_DROP = re.compile(r"[^\w']+")
# Whisper's EnglishTextNormalizer drops these (openai/whisper normalizers/english.py), + "hm".
HESITATIONS = frozenset({"hmm", "mm", "mhm", "mmm", "uh", "um", "hm"})
# One word, two spellings: an error on neither side (tiny.en wrote "All right." where the
# reference and offline decoding wrote "alright", two errors each time).
_SPELLINGS = {"alright": "all right", "ok": "okay"}
_DIGITS = re.compile(r"\d+")


def _is_year(digits: str) -> bool:
    """Four digits from 1100 to 2099 are read as a year ("1984": "nineteen eighty-four")."""
    return len(digits) == 4 and 1100 <= int(digits) <= 2099


def _spell(token: str) -> str:
    from num2words import num2words

    m = _NUMBER.match(token)
    if m is None:
        return token
    n = int(m.group(1))
    if m.group(2):
        return str(num2words(n, to="ordinal"))
    if _is_year(m.group(1)):
        return str(num2words(n, to="year"))
    return str(num2words(n))


def spell_numbers(word: str, language: str) -> str:
    """``word`` with its numbers spelt out in ``language``, as a transcript in that language
    writes them (the normaliser itself spells them in English: Whisper wrote the Swedish part's
    "en, två, tre" as "1, 2, 3", eight errors for offline decoding as "one, two, three").
    Unchanged in English (the normaliser's own, with ordinals and years) and where num2words
    lacks the language."""
    from num2words import num2words

    if language == "en" or not _DIGITS.search(word):
        return word

    def spelt(m: re.Match[str]) -> str:
        n = int(m.group())
        try:
            if _is_year(m.group()):
                try:
                    return f" {num2words(n, to='year', lang=language)} "
                except NotImplementedError:  # (Swedish has no years: the number)
                    pass
            return f" {num2words(n, lang=language)} "
        except NotImplementedError:  # a language num2words does not know: the digits
            return m.group()

    return _DIGITS.sub(spelt, word.replace(",", "")).strip()


def normalize_word(word: str) -> list[str]:
    """The normalised tokens of one written word (a number may give several)."""
    out: list[str] = []
    for part in _SPLIT.split(word.lower().replace(",", "")):
        part = _DROP.sub("", part).strip("'")
        if not part:
            continue
        spelt = _SPELLINGS.get(part) or _spell(part)
        out += [p for p in (_DROP.sub("", x) for x in _SPLIT.split(spelt)) if p]
    return [t for t in out if t not in HESITATIONS]


def normalize(text: str) -> list[str]:
    return [t for w in text.split() for t in normalize_word(w)]


@dataclass(frozen=True)
class WerResult:
    wer: float  # (substitutions + deletions + insertions) / reference words
    substitutions: int
    deletions: int
    insertions: int
    ref_words: int

    def line(self) -> str:
        return (
            f"WER {100 * self.wer:.1f}% ({self.substitutions} sub, {self.deletions} del, "
            f"{self.insertions} ins / {self.ref_words} words)"
        )


def word_error_rate(reference: str, hypothesis: str) -> WerResult:
    import jiwer

    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref:
        raise ValueError("empty reference")
    if not hyp:
        return WerResult(1.0, 0, len(ref), 0, len(ref))
    o = jiwer.process_words(" ".join(ref), " ".join(hyp))
    return WerResult(o.wer, o.substitutions, o.deletions, o.insertions, len(ref))


def align(reference: Sequence[str], hypothesis: Sequence[str]) -> list[int | None]:
    """For each hypothesis token, the index of the reference token it was aligned to (equal or
    substituted), or None for an insertion."""
    import jiwer

    out: list[int | None] = [None] * len(hypothesis)
    if not reference or not hypothesis:
        return out
    o = jiwer.process_words(" ".join(reference), " ".join(hypothesis))
    for c in o.alignments[0]:
        if c.type in ("equal", "substitute"):
            for k in range(c.hyp_end_idx - c.hyp_start_idx):
                out[c.hyp_start_idx + k] = c.ref_start_idx + k
    return out
