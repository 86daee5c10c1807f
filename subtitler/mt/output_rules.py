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

ECHO = "the model wrote the source again instead of translating it"


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


def problem(
    source: str,
    text: str,
    tokens: Sequence[Hashable],
    src_lang: str,
    tgt_lang: str,
    hit_cap: bool = False,
) -> str:
    """Why an output is not a translation to show ("" when it is one); ``hit_cap``: the
    length limit stopped it (one that goes round a phrase until then is a loop)."""
    if loops(tokens) or (hit_cap and goes_round(tokens)):
        return LOOP
    if src_lang != tgt_lang and echoes(source, text):
        return ECHO
    return ""
