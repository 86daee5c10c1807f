"""Live metrics: commit delay, translation latency, end-to-end, abandoned decodes, A/D."""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from subtitler.pipeline.events import SegmentMetrics, SubtitleEvent
from subtitler.types import AsrUpdate, Word


def display_latencies(
    updates: Sequence[AsrUpdate], subtitles: Sequence[SubtitleEvent]
) -> list[float]:
    """For every committed word: when a subtitle whose source held it (at its place in the
    segment, tentative text included) was first shown, minus when the word was spoken (s)."""
    words: dict[tuple[int, int], Word] = {}
    for u in updates:
        for i, w in enumerate(u.committed_words):
            words.setdefault((u.segment_id, i), w)
    first: dict[tuple[int, int, str], float] = {}
    for ev in subtitles:
        for i, text in enumerate(ev.source.split()):
            first.setdefault((ev.segment_id, i, text), ev.emitted_at)
    out = []
    for (sid, i), w in words.items():
        t = first.get((sid, i, w.text.strip()))
        if t is not None:
            out.append(t - w.end)
    return out


def median_p90(xs: Sequence[float]) -> tuple[float | None, float | None]:
    if not xs:
        return None, None
    s = sorted(xs)
    p90 = s[min(len(s) - 1, max(0, round(0.9 * (len(s) - 1))))]
    return statistics.median(s), p90


@dataclass
class _Seg:
    words: list[Word] = field(default_factory=list)  # committed words seen so far
    commit: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    covered: int = 0  # committed words already on screen in some translation
    pending: dict[float, int] = field(default_factory=dict)  # ASR emitted_at -> words committed
    abandoned: int = 0
    draft: int = 0
    accepted: int = 0


RECENT_WORDS = 20  # the status line's speech-to-screen delay: median over these last words


class LiveMetrics:
    """Collects per-segment measurements from ASR updates and translations (one stream clock)."""

    def __init__(self, keep_all: bool = True) -> None:
        """``keep_all`` False: the whole run's lists (``all_*``, ``latency_by_lang``, for
        ``summary``) stay empty: the app's grew by a number per word for as long as a meeting
        went on; a replay's summary reads them."""
        self._keep_all = keep_all
        self._lock = threading.Lock()  # the status, read by one thread, written by two
        self._recent: deque[float] = deque(maxlen=RECENT_WORDS)  # end-to-end, newest words
        # Per segment: when each recognised update not answered by a translation yet came.
        self._waiting: dict[int, list[float]] = {}
        self._newest = -1  # the newest segment (line) recognised
        self._segs: dict[int, _Seg] = {}
        self._dropped: dict[str, int] = {}  # per input (side): audio blocks it lost
        self.all_commit: list[float] = []
        self.all_latency: list[float] = []
        self.all_e2e: list[float] = []
        self.abandoned = 0
        # Translation latency per target language (the main one's is also all_latency).
        self.latency_by_lang: dict[str, list[float]] = {}

    def set_dropped(self, side: str, n: int) -> None:
        """How many audio blocks the input of ``side`` has lost since the start."""
        self._dropped[side] = n

    @property
    def dropped_blocks(self) -> int:
        """Audio blocks lost by every input together."""
        return sum(self._dropped.values())

    def _seg(self, sid: int) -> _Seg:
        return self._segs.setdefault(sid, _Seg())

    def on_asr(self, u: AsrUpdate) -> None:
        s = self._seg(u.segment_id)
        new = u.committed_words[len(s.words) :]
        for w in new:
            d = u.emitted_at - w.end
            s.commit.append(d)
            if self._keep_all:
                self.all_commit.append(d)
        s.words.extend(new)
        s.pending[u.emitted_at] = len(u.committed_words)
        with self._lock:
            self._waiting.setdefault(u.segment_id, []).append(u.emitted_at)
            self._newest = max(self._newest, u.segment_id)

    def on_abandoned(self, segment_id: int) -> None:
        self._seg(segment_id).abandoned += 1
        self.abandoned += 1

    def on_translation(self, ev: SubtitleEvent) -> None:
        """A translation into the main target language (the one end-to-end is about)."""
        s = self._seg(ev.segment_id)
        lat = ev.emitted_at - ev.asr_emitted_at
        s.latency.append(lat)
        if self._keep_all:
            self.all_latency.append(lat)
            self.latency_by_lang.setdefault(ev.lang, []).append(lat)
        if ev.stats.draft_len:
            s.draft += ev.stats.draft_len
        s.accepted += ev.stats.accepted
        n = s.pending.pop(ev.asr_emitted_at, len(s.words) if ev.final else s.covered)
        shown = [ev.emitted_at - w.end for w in s.words[s.covered : n]]
        s.e2e.extend(shown)
        if self._keep_all:
            self.all_e2e.extend(shown)
        s.covered = max(s.covered, n)
        with self._lock:
            self._recent.extend(shown)
            # This update is answered, and so are the older ones it made stale.
            left = [t for t in self._waiting.get(ev.segment_id, []) if t > ev.asr_emitted_at]
            if left and not ev.final:
                self._waiting[ev.segment_id] = left
            else:
                self._waiting.pop(ev.segment_id, None)

    def status(self, now: float) -> tuple[float | None, float, int]:
        """For a status line at stream time ``now``: the median delay from speech to screen
        over the last words shown (None before any), how long the newest line's oldest
        recognised update has waited for its translation (0 when the translation keeps up),
        and how many older lines still wait for theirs (finished lines a translator behind
        the speech translates later)."""
        with self._lock:
            latency = statistics.median(self._recent) if self._recent else None
            waiting = {sid: ts for sid, ts in self._waiting.items() if ts}
        newest = waiting.pop(self._newest, None)
        return latency, max(0.0, now - newest[0]) if newest else 0.0, len(waiting)

    def on_extra_translation(self, ev: SubtitleEvent) -> None:
        """A translation into an extra target language: only its latency is kept (the
        segment's metrics are the main target's)."""
        if self._keep_all:
            self.latency_by_lang.setdefault(ev.lang, []).append(ev.emitted_at - ev.asr_emitted_at)

    def finish_segment(self, segment_id: int, dropped_blocks: int = 0) -> SegmentMetrics:
        s = self._segs.pop(segment_id, _Seg())
        with self._lock:
            self._waiting.pop(segment_id, None)
        return SegmentMetrics(
            segment_id=segment_id,
            commit_delay_s=s.commit,
            translation_latency_s=s.latency,
            end_to_end_s=s.e2e,
            abandoned=s.abandoned,
            dropped_blocks=dropped_blocks,
            draft_tokens=s.draft,
            accepted=s.accepted,
        )

    def summary(self) -> dict[str, float | int | None]:
        cm, cp = median_p90(self.all_commit)
        lm, lp = median_p90(self.all_latency)
        em, ep = median_p90(self.all_e2e)
        return {
            "commit_delay_median_s": cm,
            "commit_delay_p90_s": cp,
            "translation_latency_median_s": lm,
            "translation_latency_p90_s": lp,
            "end_to_end_median_s": em,
            "end_to_end_p90_s": ep,
            "abandoned_decodes": self.abandoned,
            "dropped_blocks": self.dropped_blocks,
        }
