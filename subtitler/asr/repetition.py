"""Decoder loops versus a person repeating words, told apart by where the words lie in the audio.

Whisper's beam search can loop on a window ("printing then for our purpose, printing then for
our purpose, ..."), and a person can say "words, words, words". Both are a phrase followed by
copies of itself; what differs is the audio under the copies. A copy the decoder made up has
no audio of its own: the word alignment (cross-attention, monotonic) squeezes it into almost
no time, mostly at the end of the window. A copy a person said takes the time a word takes.

The rule: among consecutive occurrences of a phrase (one word or more; for three words or more
also with one word between them, "between Gothic and Roman, and between Gothic and Roman"),
an occurrence is *unheard* when most of its words (more than half) were aligned to no time
(less than ``MIN_WORD_S``). One occurrence always stays: the committed one where the
recogniser was given it as its prefix, else the first heard one, else the one with the most
aligned time. Of the others, copies of a phrase of ``LONG_PHRASE`` words or more are dropped
whatever their time (a person repeats a word or two, not a sentence, and the aligner may
share one sentence's audio between two copies of it); copies of a word or two only when
unheard, so that "words, words, words" stays however often it was said. A copy cut off at the
end of the text (a loop stopped by the token limit) counts when unheard; the word between two
copies goes with the dropped copy when it is unheard too. Besides copies, a run of
``MIN_RUN`` or more unheard words is dropped wherever it is: text beyond the audio
(near-copies such as "here's" / "here are" included). Where a long phrase's copies share its
audio (the aligner gave the first copy the start and a later one the end), the copy that stays
first takes the later copies' times for its unheard words (:func:`lend_times`).

Measured on real speech before choosing it (docs/benchmarks/asr.md, "Repetition"): in the
decoder loops of tiny.en 89% of the words from the loop's start were aligned to no time,
against 3.4% of the words of real speech; the words of repetitions people said ("words,
words, words, words", "word word word word word") took 0.1-0.8 s each. The average
log-probability of the looping hypotheses (-0.05 to -0.6) and their gzip compression ratio
(1.2 to 3.6) overlapped those of hypotheses with real repetitions, so Whisper's fallback
thresholds (-1.0, 2.4) tell neither apart on a streaming window.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from subtitler.types import Word

# A word aligned to less than this was given no audio at all (word times come in 20 ms steps):
# 89% of the words of tiny.en's decoder loops, 3.4% of the words of real speech.
MIN_WORD_S = 0.02
# This many unheard words in a row are text beyond the audio, copies or not (a loop whose
# copies differ in a word, "here's" / "here are"); the offline transcripts of real speech
# had no such run (863 words).
MIN_RUN = 3
# A phrase this long said twice in a row is a loop whatever the times (a person repeats a word
# or two, "words, words", not a sentence; the aligner can share one sentence's audio between
# two copies of it).
LONG_PHRASE = 3


def plain(w: Word) -> str:
    """The word without case and punctuation."""
    return re.sub(r"[^\w']+", "", w.text.lower())


def _unheard(words: Sequence[Word]) -> bool:
    squeezed = sum(w.end - w.start < MIN_WORD_S for w in words)
    return 2 * squeezed > len(words)


def _periodic(phrase: list[str]) -> bool:
    """Is the phrase a shorter phrase said several times over?"""
    k = len(phrase)
    return any(k % d == 0 and phrase == phrase[:d] * (k // d) for d in range(1, k))


def _occurrences(keys: list[str], i: int, k: int, gap: int) -> list[tuple[int, int]]:
    """(start, end) of the occurrences of keys[i:i+k] from i on, each ``gap`` words after the
    one before; the last may be cut off at the end of the text."""
    phrase = keys[i : i + k]
    out = [(i, i + k)]
    j = i + k + gap
    while j < len(keys):
        end = min(j + k, len(keys))
        if keys[j:end] != phrase[: end - j]:
            break
        if end < j + k and gap:  # a cut-off copy only where copies follow each other
            break
        out.append((j, end))
        if end < j + k:
            break
        j = end + gap
    return out


def _unheard_runs(words: Sequence[Word]) -> set[int]:
    """Indices of the words in runs of MIN_RUN or more unheard words."""
    out: set[int] = set()
    run: list[int] = []
    for i, w in enumerate([*words, None]):
        if w is not None and w.end - w.start < MIN_WORD_S:
            run.append(i)
            continue
        if len(run) >= MIN_RUN:
            out.update(run)
        run = []
    return out


def _kept(
    words: Sequence[Word], occ: list[tuple[int, int]], unheard: list[bool], fixed: int
) -> int:
    """Which occurrence stays: the settled one, else the first heard one, else the one with
    the most audio (the first of equals)."""
    if occ[0][0] < fixed:
        return 0
    if False in unheard:
        return unheard.index(False)
    heard = [sum(w.end - w.start for w in words[s:e]) for s, e in occ]
    return heard.index(max(heard))


def lend_times(words: Sequence[Word], fixed: int = 0) -> list[Word]:
    """The words, where a phrase of LONG_PHRASE words or more was written twice in a row, with
    the audio the aligner gave a dropped copy's word lent to the same word of the copy that
    stays.

    Whisper can write a whole utterance twice ("... words, words. And that should be all. And
    here are some more words, words. And that should be all."), and the monotonic aligner may
    then give the start of the utterance's audio to the first copy and its end to the second:
    each copy is half heard. The copies are one phrase; the one that stays (:func:`loop_words`)
    takes each of its unheard words' time from a later copy that has it, so that the phrase is
    kept once with the audio it was said in (before, the first copy's end counted as unheard
    and the second copy went as a loop: the words were lost)."""
    out = list(words)
    keys = [plain(w) for w in words]
    n = len(keys)
    for i in range(n):
        for k in range(LONG_PHRASE, (n - i) // 2 + 1):
            if _periodic(keys[i : i + k]):
                continue
            occ = [(s, e) for s, e in _occurrences(keys, i, k, 0) if e - s == k]
            if len(occ) < 2:
                continue
            keep = _kept(out, occ, [_unheard(out[s:e]) for s, e in occ], fixed)
            s0 = occ[keep][0]
            lent = list(out[s0 : s0 + k])
            for j, w in enumerate(lent):
                if s0 + j < fixed or w.end - w.start >= MIN_WORD_S:
                    continue
                donors = [out[s + j] for o, (s, _) in enumerate(occ) if o != keep]
                donor = next((d for d in donors if d.end - d.start >= MIN_WORD_S), None)
                if donor is not None:
                    lent[j] = Word(
                        w.text, donor.start, donor.end, max(w.probability, donor.probability)
                    )
            # A word left without audio goes where the one before it ends (it had none to be
            # placed by); the copy is taken only where its words stay in order.
            for j in range(1, k):
                w = lent[j]
                if w.end - w.start < MIN_WORD_S and w.start < lent[j - 1].end:
                    at = lent[j - 1].end
                    lent[j] = Word(w.text, at, at, w.probability)
            if all(a.start <= b.start + 1e-6 for a, b in itertools.pairwise(lent)):
                out[s0 : s0 + k] = lent
    return out


def loop_words(words: Sequence[Word], fixed: int = 0) -> set[int]:
    """Indices of the words that are loop copies of a phrase, or in a run of unheard words
    (see the module's rule). The first ``fixed`` words are settled (committed text the
    recogniser was given): an occurrence among them is the one that stays."""
    keys = [plain(w) for w in words]
    n = len(keys)
    drop = _unheard_runs(words)
    for i in range(n):
        for k in range(1, (n - i) // 2 + 1):
            if _periodic(keys[i : i + k]):
                continue  # "word word word" is three of "word": the copies of "word" decide
            for gap in (0, 1) if k >= 3 else (0,):
                occ = _occurrences(keys, i, k, gap)
                if len(occ) < 2 or (gap and occ[1][1] - occ[1][0] < k):
                    continue
                unheard = [_unheard(words[s:e]) for s, e in occ]
                # A loop copy of a phrase of LONG_PHRASE words or more is one whole, whatever
                # its time; a shorter one only when the audio does not hold it.
                loop = [
                    u or (k >= LONG_PHRASE and e - s == k)
                    for (s, e), u in zip(occ, unheard, strict=True)
                ]
                keep = _kept(words, occ, unheard, fixed)
                for o, ((s, e), x) in enumerate(zip(occ, loop, strict=True)):
                    if x and o != keep:
                        drop.update(range(s, e))
                        # The word between goes with the copy when it has no audio either.
                        if gap and o and _unheard(words[s - 1 : s]):
                            drop.add(s - 1)
    return {i for i in drop if i >= fixed}
