"""The meeting's audio that leaks into the microphone (speakers, no headset) is the meeting's
line, not the user's: lines the microphone hears that repeat what the meeting's audio said at
about the same time are dropped.

Words, not samples, are compared: the leak reaches the microphone through a room (delayed,
quieter, coloured, mixed with the user's own voice), where the two recognisers' words still
agree. A line of the user's is passed on while it does not look like an echo; its final update
waits (at most ``wait_s``) until the meeting's side has been recognised that far, so that a
leak recognised on the microphone first is still caught. A line found to be an echo after
some of it was shown is withdrawn: its final update comes with no words (shown as nothing,
written nowhere).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import threading
from dataclasses import dataclass

from subtitler.types import AsrUpdate

log = logging.getLogger(__name__)

WINDOW_S = 2.0  # how far apart in time the two sides' words may be and still be one speech
WAIT_S = 1.5  # the longest a user's finished line waits for the meeting's side
SHARE = 0.6  # the part of a line's words the meeting's side must have said, in order
MIN_WORDS = 2  # fewer words in common than this are no echo ("yes" said by both)
KEEP_S = 60.0  # how long the meeting's words are kept for comparison
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def common_in_order(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two word lists."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@dataclass
class _Heard:
    t0: float
    t1: float
    words: list[str]


class EchoGate:
    """Between the two recognisers and the translator: the meeting's updates are recorded
    (``heard``), the user's are passed, held or dropped (``mine``, ``due``)."""

    def __init__(
        self, window_s: float = WINDOW_S, wait_s: float = WAIT_S, share: float = SHARE
    ) -> None:
        self.window_s, self.wait_s, self.share = window_s, wait_s, share
        self._lock = threading.Lock()
        self._heard: dict[int, _Heard] = {}  # the meeting's lines, by segment
        self._heard_t1 = -math.inf  # how far the meeting's audio has been recognised
        self._held: dict[int, AsrUpdate] = {}  # the user's finished lines waiting
        self._shown: set[int] = set()  # the user's lines with an update passed on
        self._echoes: set[int] = set()  # the user's lines found to be echoes
        self.dropped = 0  # the user's lines dropped as echoes

    def heard(self, u: AsrUpdate) -> list[AsrUpdate]:
        """An update of the meeting's side; returns the user's lines it lets go now."""
        with self._lock:
            self._heard[u.segment_id] = _Heard(u.audio_t0, u.audio_t1, words(u.text))
            self._heard_t1 = max(self._heard_t1, u.audio_t1)
            old = [s for s, h in self._heard.items() if h.t1 < u.audio_t1 - KEEP_S]
            for s in old:
                del self._heard[s]
            return self._release(u.emitted_at)

    def mine(self, u: AsrUpdate) -> list[AsrUpdate]:
        """An update of the user's side; returns what to pass on now."""
        with self._lock:
            if u.segment_id in self._echoes:
                return []
            if u.final:
                self._held[u.segment_id] = u
                return self._release(u.emitted_at)
            if self._is_echo(u):
                return []  # held back while it looks like the meeting's words
            self._shown.add(u.segment_id)
            return [u]

    def due(self, now: float) -> list[AsrUpdate]:
        """The user's finished lines whose wait is over at stream time ``now``."""
        with self._lock:
            return self._release(now) if self._held else []

    def _release(self, now: float) -> list[AsrUpdate]:
        out: list[AsrUpdate] = []
        for seg, u in list(self._held.items()):
            if self._is_echo(u):
                del self._held[seg]
                self._echoes.add(seg)
                self.dropped += 1
                log.info("line %d is the meeting's audio heard by the microphone: dropped", seg)
                if seg in self._shown:
                    out.append(withdrawn(u))
            elif self._heard_t1 >= u.audio_t1 or now - u.emitted_at >= self.wait_s:
                del self._held[seg]
                out.append(u)
        for v in out:
            self._shown.discard(v.segment_id)
        return out

    @property
    def holding(self) -> bool:
        """Does a finished line of the user's wait?"""
        with self._lock:
            return bool(self._held)

    def _is_echo(self, u: AsrUpdate) -> bool:
        mine = words(u.text)
        if len(mine) < MIN_WORDS:
            return False
        lo, hi = u.audio_t0 - self.window_s, u.audio_t1 + self.window_s
        theirs = [
            w for _, h in sorted(self._heard.items()) if h.t1 >= lo and h.t0 <= hi for w in h.words
        ]
        common = common_in_order(mine, theirs)
        return common >= MIN_WORDS and common >= self.share * len(mine)


def withdrawn(u: AsrUpdate) -> AsrUpdate:
    """A line's final update without its words: it ends the line, shown as nothing."""
    return dataclasses.replace(u, committed_text="", tentative_text="", committed_words=())
