"""The meeting's audio that leaks into the microphone (speakers, no headset) is the meeting's
line, not the user's: lines the microphone hears that repeat what the meeting's audio said at
about the same time are dropped.

Words, not samples, are compared: the leak reaches the microphone through a room (delayed,
quieter, coloured, mixed with the user's own voice), where the two recognisers' words still
agree. A line of the user's is passed on while it does not look like an echo; its final update
waits until the meeting's side has been recognised that far (its words reach the line's end,
or its recogniser has run over audio a second past it), so that a leak recognised on the
microphone first is still caught, on a slow machine too; ``wait_s`` bounds the wait should
the meeting's side stall. A line found to be an echo after
some of it was shown is withdrawn: its final update comes with no words (shown as nothing,
written nowhere).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import re
import threading
from dataclasses import dataclass
from difflib import SequenceMatcher

from subtitler.types import AsrUpdate

log = logging.getLogger(__name__)

WINDOW_S = 2.0  # how far apart in time the two sides' words may be and still be one speech
WAIT_S = 3.0  # the longest a user's finished line waits for the meeting's side (stalled)
# How far past a line's end the meeting's recogniser must have run over audio before its
# silence there says "no echo": a pass runs every update interval (0.5 s; more when busy).
AHEAD_S = 1.0
SHARE = 0.6  # the part of a line's words the meeting's side must have said, in order
MIN_WORDS = 2  # a shorter run of words in common is no echo ("yes" said by both, "of the")
SHORT = 3  # a line this short is an echo when every word of it was said on the other side
GAP = 2  # words of the meeting's side an echoed run may skip (a word the leak lost)
KEEP_S = 60.0  # how long the meeting's words are kept for comparison
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _key(token: str) -> str:
    """A token as compared: its letters and digits, lower case ("Friday," -> "friday")."""
    return "".join(words(token))


@functools.lru_cache(maxsize=1 << 16)  # (a meeting's words repeat: compared again and again)
def same(a: str, b: str) -> bool:
    """One word as two recognisers may write it: the leak reaches the microphone quieter and
    coloured, so its words come out a little different ("moveable" / "movable", "consider" /
    "considered"); short words must be equal."""
    if a == b:
        return True
    if min(len(a), len(b)) < 4:
        return False
    return a.startswith(b) or b.startswith(a) or SequenceMatcher(None, a, b).ratio() >= 0.8


def aligned(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The pairs (i, j) of a longest common subsequence of two word lists (words compared
    with :func:`same`), in order."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if same(a[i], b[j]):
                dp[i][j] = dp[i + 1][j + 1] + 1
            else:
                dp[i][j] = max(dp[i + 1][j], dp[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if same(a[i], b[j]) and dp[i][j] == dp[i + 1][j + 1] + 1:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def common_in_order(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two word lists."""
    return len(aligned(a, b))


def echoed(mine: list[str], theirs: list[str]) -> list[bool]:
    """Which of ``mine`` repeat ``theirs``: runs of at least MIN_WORDS words said in the same
    order on both sides (the meeting's may skip a word or two the leak lost); a word in common
    alone ("the") is no echo."""
    out = [False] * len(mine)
    run: list[tuple[int, int]] = []
    for i, j in [*aligned(mine, theirs), (-1, -1)]:
        if run and i == run[-1][0] + 1 and 0 < j - run[-1][1] <= GAP + 1:
            run.append((i, j))
            continue
        if len(run) >= MIN_WORDS:
            for k, _ in run:
                out[k] = True
        run = [(i, j)]
    return out


@dataclass
class _Heard:
    t0: float
    t1: float
    words: list[str]


class EchoGate:
    """Between the two recognisers and the translator: the meeting's updates are recorded
    (``heard``), the user's are passed, held, cleaned or dropped (``mine``, ``due``)."""

    def __init__(
        self, window_s: float = WINDOW_S, wait_s: float = WAIT_S, share: float = SHARE
    ) -> None:
        self.window_s, self.wait_s, self.share = window_s, wait_s, share
        self._lock = threading.Lock()
        self._heard: dict[int, _Heard] = {}  # the meeting's lines, by segment
        self._heard_t1 = -math.inf  # how far the meeting's audio has been recognised
        self._fed_t1 = -math.inf  # how far the meeting's recogniser has run over audio
        self._held: dict[int, AsrUpdate] = {}  # the user's finished lines waiting
        self._shown: set[int] = set()  # the user's lines with an update passed on
        self._echoes: set[int] = set()  # the user's lines found to be echoes
        self.dropped = 0  # the user's lines dropped as echoes
        self.cleaned = 0  # the user's lines that kept their own words, the echo cut out

    def heard(self, u: AsrUpdate) -> list[AsrUpdate]:
        """An update of the meeting's side; returns the user's lines it lets go now."""
        with self._lock:
            self._heard[u.segment_id] = _Heard(u.audio_t0, u.audio_t1, words(u.text))
            self._heard_t1 = max(self._heard_t1, u.audio_t1)
            old = [s for s, h in self._heard.items() if h.t1 < u.audio_t1 - KEEP_S]
            for s in old:
                del self._heard[s]
            return self._release(u.emitted_at)

    def fed(self, t1: float, now: float) -> list[AsrUpdate]:
        """The meeting's recogniser has run over its audio up to ``t1``; returns the user's
        lines that lets go (no word was heard: a waiting line is looked at again only once
        its wait is over; this comes with every block of audio)."""
        with self._lock:
            self._fed_t1 = max(self._fed_t1, t1)
            return self._release(now, heard=False) if self._held else []

    def mine(self, u: AsrUpdate) -> list[AsrUpdate]:
        """An update of the user's side; returns what to pass on now."""
        with self._lock:
            if u.segment_id in self._echoes:
                return []
            if u.final:
                self._held[u.segment_id] = u
                return self._release(u.emitted_at)
            _, _, echo, own = self._look(u)
            if echo >= MIN_WORDS and echo >= self.share * (echo + own):
                return []  # held back while it looks like the meeting's words
            self._shown.add(u.segment_id)
            return [u]

    def due(self, now: float) -> list[AsrUpdate]:
        """The user's finished lines whose wait is over at stream time ``now``."""
        with self._lock:
            return self._release(now) if self._held else []

    def flush(self) -> list[AsrUpdate]:
        """Every finished line of the user's that waits, decided on what is known now (the
        app stops: a line that waits must still reach the transcript)."""
        with self._lock:
            return self._release(math.inf)

    @property
    def holding(self) -> bool:
        """Does a finished line of the user's wait?"""
        with self._lock:
            return bool(self._held)

    def _release(self, now: float, heard: bool = True) -> list[AsrUpdate]:
        """The waiting lines decided now (``heard`` False: no new words of the meeting's
        since the last look, so a line still waiting stays as it was)."""
        out: list[AsrUpdate] = []
        for seg, u in list(self._held.items()):
            covered = self._heard_t1 >= u.audio_t1 or self._fed_t1 >= u.audio_t1 + AHEAD_S
            over = covered or now - u.emitted_at >= self.wait_s
            if not over and not heard:
                continue
            tokens, mask, echo, own = self._look(u)
            whole = echo >= MIN_WORDS and own < MIN_WORDS  # (more of theirs changes nothing)
            if not whole and not over:
                continue
            del self._held[seg]
            if whole:
                self._echoes.add(seg)
                self.dropped += 1
                log.info("line %d is the meeting's audio heard by the microphone: dropped", seg)
                if seg in self._shown:
                    out.append(withdrawn(u))
            elif echo >= MIN_WORDS:
                self.cleaned += 1
                out.append(_cleaned(u, tokens, mask))
            else:
                out.append(u)
            self._shown.discard(seg)
        return out

    def _theirs(self, u: AsrUpdate) -> list[str]:
        """The meeting's words said around the time of ``u``, in order."""
        lo, hi = u.audio_t0 - self.window_s, u.audio_t1 + self.window_s
        return [
            w for _, h in sorted(self._heard.items()) if h.t1 >= lo and h.t0 <= hi for w in h.words
        ]

    def _look(self, u: AsrUpdate) -> tuple[list[str], list[bool], int, int]:
        """The line's tokens, which of them echo the meeting (a token without letters or
        digits, "-", never does), and (echoed words, the user's own words). A line of a few
        words each said on the other side around then is all echo, whatever lies between
        them there (the leftovers of a leak the two recognisers wrote differently: "moveable
        just")."""
        tokens = u.text.split()
        keys = [_key(t) for t in tokens]
        spoken = [i for i, k in enumerate(keys) if k]
        said = [keys[i] for i in spoken]
        theirs = self._theirs(u)
        mask = [False] * len(tokens)
        for i, m in zip(spoken, echoed(said, theirs), strict=True):
            mask[i] = m
        if MIN_WORDS <= len(said) <= SHORT and common_in_order(said, theirs) == len(said):
            return tokens, mask, len(said), 0
        echo = sum(mask)
        return tokens, mask, echo, len(said) - echo


def _cleaned(u: AsrUpdate, tokens: list[str], mask: list[bool]) -> AsrUpdate:
    """The line with the runs of the meeting's words (``mask``) cut out; the user's stay."""
    n_committed = len(u.committed_text.split())
    kept = [t for t, m in zip(tokens, mask, strict=True) if not m]
    committed = [t for t, m in zip(tokens[:n_committed], mask, strict=False) if not m]
    cw = u.committed_words
    if len(cw) == n_committed:  # (one Word per committed token: keep the same ones)
        cw = tuple(w for w, m in zip(cw, mask, strict=False) if not m)
    return dataclasses.replace(
        u,
        committed_text=" ".join(committed),
        tentative_text=" ".join(kept[len(committed) :]),
        committed_words=cw,
    )


def withdrawn(u: AsrUpdate) -> AsrUpdate:
    """A line's final update without its words: it ends the line, shown as nothing."""
    return dataclasses.replace(u, committed_text="", tentative_text="", committed_words=())
