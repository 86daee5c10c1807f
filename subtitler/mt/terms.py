"""Glossary translations kept by the decoder: when the source holds a glossary term, its fixed
translation is favoured where the model would start it, and completed once started.

Instruction-following translators (Tower, Qwen3) are also told the translations in the prompt
(subtitler.mt.prompts); a small model trained here (fixtures/translator) follows no
instruction, and a large one sometimes does not either. So the decoder itself biases: the
fixed translation's first token gets ``TERM_BIAS`` added to its logit while the translation
is still missing from the output and the output has as many words as come before the term
in the source (so it wins where the model hesitates between it and its own word, near where
the term belongs, not at the start; a character of Chinese or Japanese counts as a word),
growing with each word past that place; once the output ends with the beginning of a fixed
translation, its next token is forced, and the word ends
there ("Mozilla", not "Mozillach"). This is
vocabulary biasing (as Whisper's hotwords bias recognition), applied to every row the decoder
reads — greedy steps and SSBD's verification alike — so a previous translation holding the
term is accepted again as its draft.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from subtitler.mt.lm import LanguageModel, Logits
from subtitler.mt.scripts import unspaced

# Added to the logit of a pending fixed translation's first token once the output has reached
# the term's place (natural-log units: it wins against a token up to e^8 ~ 3000 times more
# probable). On the fixture translator, Multi30k with a 20-term glossary, 4 / 8 / 12 kept 199 /
# 203 / 207 of 226 terms at BLEU 27.5 / 27.4 / 26.7 on those sentences (27.2 without):
# docs/BENCHMARKS.md, "Glossary".
TERM_BIAS = 8.0
_FORCE = 100.0  # above any other logit: the next token of a started fixed translation
# Each word the output goes past a term's place in the source (its word index) adds this to
# the bias: a term's translation comes near where the term is, and before the output ends.
_GROWTH = 2.0


# Where a word of a term written in camel case ("DevOps", "GitHub") may be split.
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _parts(term: str) -> list[list[str]]:
    """The term's words, each as its camel-case parts."""
    return [_CAMEL.split(w) for w in term.split()]


@functools.lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    """Whole words, any case, split or joined as speech recognition writes them: between two
    words of the term spaces, a hyphen or nothing ("road map", "road-map", "roadmap"), between
    two camel-case parts nothing or a space ("DevOps", "Dev Ops"). A term written in capitals
    (an acronym: "IT", "US", "AWS") matches in capitals only: "it" and "us" are common words,
    and recognition writes acronyms in capitals."""
    words = r"(?:\s+|[-‐]|)".join(r"\s?".join(map(re.escape, w)) for w in _parts(term))
    return re.compile(words, 0 if term.isupper() else re.IGNORECASE)


def _matches(term: str, source: str) -> Iterator[re.Match[str]]:
    """Where ``source`` holds ``term`` as whole words: no letter or digit of a script written
    with spaces beside it. (Chinese, Japanese and Thai run words together: "私は東京都に" holds
    東京都 and "迁移到了Kubernetes上" holds Kubernetes; with a letter beside them, neither was
    found. Checked here rather than in the pattern: a class of those scripts' ranges cost
    1.6 ms to compile, a term's pattern 0.04.)"""
    for m in _pattern(term).finditer(source):
        if _edge(source, m.start() - 1) and _edge(source, m.end()):
            yield m


def _edge(text: str, i: int) -> bool:
    """Whether ``text[i]`` may border a whole word (none there, or no letter of a spaced
    script)."""
    if i < 0 or i >= len(text):
        return True
    ch = text[i]
    return not (ch.isalnum() or ch == "_") or unspaced(ch)


@functools.lru_cache(maxsize=65536)  # (a glossary file holds at most about 50,000 terms)
def _key(term: str) -> str:
    """The longest run of letters and digits of ``term`` (of a camel-case part), case-folded:
    a source that holds the term holds it (a term without one: "")."""
    runs = [p for w in _parts(term) for part in w for p in re.findall(r"\w+", part)]
    return max(runs, key=len, default="").casefold()


def present(source: str, terms: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The (term, translation) pairs whose term the source holds (whole words, any case but an
    acronym's), in ``terms``' order. A term said only inside a longer term said ("New York" of
    "New York Times") is not said on its own: its translation would be kept beside the longer
    one's."""
    # Only terms whose longest word the source holds are matched: with more terms than the
    # patterns cached, each update compiled every pattern again (5,000 terms: 290 ms a line).
    folded = source.casefold()
    found = [(t, x) for t, x in terms if x and _key(t) in folded and any(_matches(t, source))]
    if len(found) < 2:
        return tuple(found)
    taken: list[tuple[int, int]] = []  # the spans of longer terms found
    kept: set[int] = set()
    for i in sorted(range(len(found)), key=lambda i: -len(found[i][0])):
        own = [
            m.span()
            for m in _matches(found[i][0], source)
            if not any(a <= m.start() and m.end() <= b for a, b in taken)
        ]
        if own:
            kept.add(i)
            taken += own
    return tuple(f for i, f in enumerate(found) if i in kept)


def words_before(source: str, term: str) -> int:
    """How many words of ``source`` come before ``term`` (its first occurrence)."""
    m = next(_matches(term, source), None)
    return output_words(source[: m.start()]) if m else 0


def output_words(text: str) -> int:
    """How many words ``text`` has: runs between spaces, each Chinese or Japanese character
    one (counted by spaces, a Chinese line had one word however long: the term's place in it
    never came). Thai, Lao, Khmer and Myanmar put spaces between phrases, and their words
    are several letters: counted by spaces."""
    n = 0
    for run in text.split():
        own = sum(1 for ch in run if ord(ch) >= 0x2E80 and unspaced(ch))
        n += own + (own < len(run))  # (the run's other letters: one word)
    return n


@dataclass(frozen=True)
class _Target:
    text: str  # the fixed translation
    variants: tuple[tuple[int, ...], ...]  # its tokens mid-sentence (" X") and first ("X")
    at_word: int  # where it is expected in the output (words before it, as in the source)


class TermBiasedLM:
    """``lm`` whose logits favour the fixed translations of terms in the source (see the
    module docstring). Rows are those of the output that follows ``prompt_len`` tokens;
    ``targets`` are (fixed translation, words before the term in the source)."""

    def __init__(
        self,
        lm: LanguageModel,
        prompt_len: int,
        targets: Sequence[tuple[str, int]],
        glued: npt.NDArray[np.bool_] | None = None,
        bias: float | None = None,
    ) -> None:
        self.lm = lm
        self.prompt_len = prompt_len
        self.bias = TERM_BIAS if bias is None else bias
        self.glued = glued
        made = []
        for x, at in dict.fromkeys(targets):
            variants = [tuple(lm.tokenize(" " + x, special=False))]
            if not x[:1].isspace():
                variants.append(tuple(lm.tokenize(x, special=False)))
            made.append(_Target(x, tuple(v for v in dict.fromkeys(variants) if v), at))
        self.targets = tuple(t for t in made if t.variants)
        self._won: dict[int, bool] = {}  # output index -> the bias began a translation there

    # -- LanguageModel, passed through ---------------------------------------------------
    @property
    def n_vocab(self) -> int:
        return self.lm.n_vocab

    @property
    def n_ctx(self) -> int | None:
        return self.lm.n_ctx

    def new_stream(self) -> LanguageModel | None:
        return None  # (one translator's view of the model: its streams are the model's)

    @property
    def eos_ids(self) -> frozenset[int]:
        return self.lm.eos_ids

    @property
    def cached(self) -> Sequence[int]:
        return self.lm.cached

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        return self.lm.tokenize(text, add_bos=add_bos, special=special)

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return self.lm.detokenize(tokens)

    def truncate(self, n: int) -> None:
        self.lm.truncate(n)

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        before = len(self.lm.cached)
        rows = self.lm.evaluate(tokens, logits_at)
        if not self.targets:
            return rows
        seq = list(self.lm.cached)
        rows = np.array(rows, dtype=np.float32, copy=True)
        for j, i in enumerate(logits_at):
            end = before + i + 1  # the row predicts the token after seq[:end]
            if end >= self.prompt_len:
                self._adjust(rows[j], seq[self.prompt_len : end])
        return rows

    # -- the bias ------------------------------------------------------------------------
    def _adjust(self, row: np.ndarray, out: list[int]) -> None:
        text = self.lm.detokenize(out).decode("utf-8", "replace") if out else ""
        folded = text.casefold()
        pending = [t for t in self.targets if t.text.casefold() not in folded]
        top = float(row.max())
        if self.glued is not None and any(
            tuple(out[-len(v) :]) == v and self._won.get(len(out) - len(v), False)
            for t in self.targets
            for v in t.variants
            if out
        ):
            # A fixed translation the bias put there is a whole word: "Mozilla", not
            # "Mozillach". (One the model chose itself may go on: "Schnee" + "kleidung".)
            row[self.glued[: len(row)]] -= _FORCE
        if not pending:
            return
        for t in pending:  # a fixed translation begun is finished
            for v in t.variants:
                for m in range(min(len(v) - 1, len(out)), 0, -1):
                    if tuple(out[-m:]) == v[:m]:
                        row[v[m]] = top + _FORCE
                        return
        words = output_words(text)
        firsts = []
        best = int(np.argmax(row))
        for t in pending:
            late = words - t.at_word
            if late < 0:
                continue  # not where the term's translation would come yet
            for v in t.variants[: 2 if not out else 1]:  # no space only to begin the output
                row[v[0]] += self.bias + _GROWTH * late
                firsts.append(v[0])
        # Whether the bias, not the model, starts a fixed translation here.
        self._won[len(out)] = best not in firsts and int(np.argmax(row)) in firsts


def glued_tokens(lm: LanguageModel) -> npt.NDArray[np.bool_]:
    """Per token id: whether it continues the word before it (starts with a letter or digit
    of a script that separates words by spaces; Chinese and Japanese do not)."""
    out = np.zeros(lm.n_vocab, dtype=np.bool_)
    for i in range(lm.n_vocab):
        first = lm.detokenize([i])[:4].decode("utf-8", "ignore")[:1]
        out[i] = first.isalnum() and ord(first) < 0x2E80  # (CJK starts at U+2E80)
    return out
