"""What may reach the screen from a translator, whichever model or server it is.

A subtitle is one line of text. Decoding ends at end-of-generation, at a line break, and where
the model starts writing a chat template's marker as plain text (a template the model was not
trained on: Gemma shown ChatML writes ``<|im_end|>`` piece by piece). An output that only
says the source again, or that loops on one token or phrase, is not a translation: the update
fails and the line keeps its last good text (pipeline/stages.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence

from subtitler.mt.languages import LANGUAGES, NATIVE_NAMES
from subtitler.repeats import LOOP, goes_round, loops

# Chat-template markers, as text: "<|" starts ChatML's, Llama 3's and Phi's
# (<|im_end|>, <|eot_id|>, <|end|>, <|endoftext|>).
MARKERS = ("<|", "<start_of_turn", "<end_of_turn", "</s>", "<eos>", "<bos>", "[INST]", "[/INST]")
_LONGEST_MARKER = max(len(m) for m in MARKERS)
# A marker spans a few tokens at most: the text of the last ones is searched.
_MARKER_TOKENS = 12
# An echo: the output copies a run of the source's words this long relative to the shorter
# of the two (and at least _ECHO_WORDS words).
_ECHO_SHARE = 0.8
_ECHO_WORDS = 3
_WORD = re.compile(r"\w+")
_LETTERS = re.compile(r"[^\W\d_]+")  # a run of letters

ECHO = "the model wrote the source again instead of translating it"

# Languages written in a script of their own (no other language of theirs is written in Latin
# letters): the letters of its translation are of that script, some of them at least. A small
# model asked for a pair it cannot do writes English, or a time, instead (Gemma 3 270M into
# Hebrew: "The Language of the Hebrew Bible" for a line about a budget).
_ARABIC = ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))
_HEBREW = ((0x0590, 0x05FF), (0xFB1D, 0xFB4F))
_CYRILLIC = ((0x0400, 0x052F),)
_HAN = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_KANA = ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F))
_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xAC00, 0xD7AF))
_DEVANAGARI = ((0x0900, 0x097F),)
SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    "ar": _ARABIC, "fa": _ARABIC, "ur": _ARABIC, "ps": _ARABIC,
    "he": _HEBREW, "yi": _HEBREW,
    "ru": _CYRILLIC, "uk": _CYRILLIC, "be": _CYRILLIC, "bg": _CYRILLIC, "mk": _CYRILLIC,
    "kk": _CYRILLIC, "mn": _CYRILLIC, "tg": _CYRILLIC,
    "el": ((0x0370, 0x03FF), (0x1F00, 0x1FFF)),
    "zh": _HAN, "yue": _HAN, "ja": _HAN + _KANA, "ko": _HANGUL + _HAN,
    "hi": _DEVANAGARI, "mr": _DEVANAGARI, "ne": _DEVANAGARI,
    "bn": ((0x0980, 0x09FF),), "ta": ((0x0B80, 0x0BFF),), "te": ((0x0C00, 0x0C7F),),
    "kn": ((0x0C80, 0x0CFF),), "ml": ((0x0D00, 0x0D7F),), "gu": ((0x0A80, 0x0AFF),),
    "pa": ((0x0A00, 0x0A7F),), "si": ((0x0D80, 0x0DFF),),
    "th": ((0x0E00, 0x0E7F),), "lo": ((0x0E80, 0x0EFF),), "km": ((0x1780, 0x17FF),),
    "my": ((0x1000, 0x109F),), "ka": ((0x10A0, 0x10FF),), "hy": ((0x0530, 0x058F),),
    "am": ((0x1200, 0x139F),),
}  # fmt: skip


def other_script(text: str, tgt_lang: str) -> bool:
    """Is ``text`` written in letters, none of which is of the target language's own script
    (a language written in Latin letters, or one not listed: never)? Two words of letters at
    least: a name alone, "OK" or "2027" in Japanese are not judged."""
    ranges = SCRIPTS.get(tgt_lang.split("-")[0].lower())
    if ranges is None or len(_LETTERS.findall(text)) < 2:
        return False
    letters = [ord(c) for c in text if c.isalpha()]
    return not any(lo <= o <= hi for o in letters for lo, hi in ranges)


ANOTHER_LANGUAGE = "the model wrote another language"


def wrote_another_language(tgt_lang: str) -> str:
    """Why an output in the wrong script is no translation."""
    name = LANGUAGES.get(tgt_lang.split("-")[0].lower(), tgt_lang)
    return f"{ANOTHER_LANGUAGE}, not {name} (it may not know this language pair)"


# Subtitle markup, which subtitle corpora are full of and a small model writes around a line
# ("<i><b>…</b></i>"): never shown; a tag still being written at the end of the output neither.
_TAGS = ("i", "b", "u", "s", "em", "strong", "font")
_TAG_NAMES = b"|".join(t.encode() for t in _TAGS)
_MARKUP = re.compile(rb"</?(?:%s)(?:\s[^<>\n]{0,64})?>" % _TAG_NAMES, re.I)
_OPEN_TAG = re.compile(rb"</?[a-zA-Z]{0,6}\Z")


def _tag_begun(tail: bytes) -> bool:
    """Is ``tail`` ("<", "</", "<fo") the start of a markup tag?"""
    name = tail.lstrip(b"<").lstrip(b"/").lower().decode("ascii")
    return any(t.startswith(name) for t in _TAGS)


def without_markup(pieces: Sequence[bytes]) -> tuple[bytes, ...]:
    """Token ``pieces`` without the subtitle markup their text holds (a piece inside a tag
    becomes empty, one with a tag in it keeps the rest): one piece per token still, and the
    text they join to is the output's without its tags."""
    data = b"".join(pieces)
    if b"<" not in data:
        return tuple(pieces)
    spans = [m.span() for m in _MARKUP.finditer(data)]
    end = _OPEN_TAG.search(data)
    if end is not None and _tag_begun(end.group()):
        spans.append(end.span())
    if not spans:
        return tuple(pieces)
    out, at = [], 0
    for piece in pieces:
        lo, hi = at, at + len(piece)
        kept = bytearray()
        i = lo
        for a, b in spans:
            if b <= i or a >= hi:
                continue
            kept += data[i : max(i, a)]
            i = max(i, min(b, hi))
        kept += data[i:hi]
        out.append(bytes(kept))
        at = hi
    return tuple(out)


def ends_line(piece: bytes) -> bool:
    """A token that breaks the line ends the subtitle (the break itself is not kept)."""
    return b"\n" in piece or b"\r" in piece


def marker_at(text: str) -> int:
    """Where the first chat-template marker in ``text`` begins; -1 if none."""
    found = [i for i in (text.find(m) for m in MARKERS) if i >= 0]
    return min(found) if found else -1


def without_markers(text: str) -> str:
    """``text`` up to its first chat-template marker or line break (a server's answer)."""
    i = marker_at(text)
    text = text if i < 0 else text[:i]
    return re.split(r"[\r\n]", text, maxsplit=1)[0]


def text_cut(pieces: Sequence[str]) -> list[str]:
    """Token texts (a server's answer) up to the first line break or chat-template marker:
    the piece where one begins keeps only what comes before it."""
    text = "".join(pieces)
    ends = [i for i in (marker_at(text), text.find("\n"), text.find("\r")) if i >= 0]
    if not ends:
        return list(pieces)
    cut, out, at = min(ends), [], 0
    for piece in pieces:
        if at + len(piece) > cut:
            if cut > at:
                out.append(piece[: cut - at])
            break
        out.append(piece)
        at += len(piece)
    return out


def marker_cut(tokens: Sequence[int], detokenize: Callable[[Sequence[int]], bytes]) -> int:
    """The index of the token where a chat-template marker begins in the output, looking at
    its last tokens only (called after every token); -1 if none."""
    start = max(0, len(tokens) - _MARKER_TOKENS)
    tail = detokenize(tokens[start:]).decode("utf-8", errors="replace")
    if marker_at(tail) < 0:
        return -1
    # The last token whose own text onwards still holds the marker is where it begins.
    for j in range(len(tokens) - 1, start - 1, -1):
        if marker_at(detokenize(tokens[j:]).decode("utf-8", errors="replace")) >= 0:
            return j
    return start


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _longest_common_run(a: list[str], b: list[str]) -> int:
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b):
            if x == y:
                cur[j + 1] = prev[j] + 1
                best = max(best, cur[j + 1])
        prev = cur
    return best


def echoes(source: str, text: str) -> bool:
    """Does ``text`` copy the source instead of translating it: a run of words of the source,
    case and punctuation aside, that makes up most of the shorter of the two? Short outputs
    (names, "OK") and translations that keep a name or two are not echoes."""
    s, t = _words(source), _words(text)
    if len(t) < _ECHO_WORDS or len(s) < _ECHO_WORDS:
        return False
    run = _longest_common_run(s, t)
    return run >= _ECHO_WORDS and run >= _ECHO_SHARE * min(len(s), len(t))


LABEL = "the model wrote its prompt's language label, not a translation"


def label_only(source: str, text: str, src_lang: str, tgt_lang: str) -> bool:
    """Is ``text`` only a language's label as a few-shot prompt writes it ("English",
    "Deutsch:"), for a line that says more than that?"""
    said = text.strip(" :.").casefold()
    if not said or said == source.strip(" :.!?").casefold():
        return False
    names = {LANGUAGES.get(c.split("-")[0].lower(), "") for c in (src_lang, tgt_lang, "en")}
    names |= {NATIVE_NAMES.get(c.split("-")[0].lower(), "") for c in (src_lang, tgt_lang, "en")}
    return said in {n.casefold() for n in names if n}


def problem(
    source: str,
    text: str,
    tokens: Sequence[Hashable],
    src_lang: str,
    tgt_lang: str,
    hit_cap: bool = False,
    kept: Sequence[tuple[str, str]] = (),
) -> str:
    """Why an output is not a translation to show ("" when it is one); ``hit_cap``: the
    length limit stopped it (one that goes round a phrase until then is a loop). ``kept``:
    the glossary's (term, fixed translation) pairs of the source: a fixed translation as
    given is no copy of the source nor another language ("Visual Studio Code" kept as it is,
    said alone, was refused as both)."""
    if loops(tokens) or (hit_cap and goes_round(tokens)):
        return LOOP
    for term, given in kept:
        source = re.sub(re.escape(term), " ", source, flags=re.IGNORECASE)
        text = re.sub(re.escape(given), " ", text, flags=re.IGNORECASE)
    if src_lang != tgt_lang and echoes(source, text):
        return ECHO
    if other_script(text, tgt_lang):
        return wrote_another_language(tgt_lang)
    if label_only(source, text, src_lang, tgt_lang):
        return LABEL
    return ""
