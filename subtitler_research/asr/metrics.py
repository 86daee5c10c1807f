"""What the ASR benchmark reports: commit and display latency, update rate, real-time factor,
buffer length."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from subtitler.asr.streaming import RunInfo
from subtitler.types import AsrUpdate


def commit_delays(updates: list[AsrUpdate]) -> list[float]:
    """For every committed word: when it was first committed minus when it was spoken (s)."""
    seen: set[tuple[int, int]] = set()
    out: list[float] = []
    for u in updates:
        for i, w in enumerate(u.committed_words):
            if (u.segment_id, i) not in seen:
                seen.add((u.segment_id, i))
                out.append(u.emitted_at - w.end)
    return out


def shown_words(u: AsrUpdate) -> list[str]:
    """The words of the segment on screen after ``u``: committed, then the tentative tail."""
    return [w.text.strip() for w in u.committed_words] + u.tentative_text.split()


def display_latencies(updates: list[AsrUpdate]) -> list[float]:
    """For every committed word: when its text was first on screen (tentative included, at
    its place in the segment) minus when it was spoken (s). Never later than its commit."""
    first: dict[tuple[int, int, str], float] = {}
    out: list[float] = []
    done: set[tuple[int, int]] = set()
    for u in updates:
        for i, text in enumerate(shown_words(u)):
            first.setdefault((u.segment_id, i, text), u.emitted_at)
        for i, w in enumerate(u.committed_words):
            if (u.segment_id, i) not in done:
                done.add((u.segment_id, i))
                seen = first.get((u.segment_id, i, w.text.strip()), u.emitted_at)
                out.append(min(seen, u.emitted_at) - w.end)
    return out


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


@dataclass(frozen=True)
class StreamReport:
    audio_s: float  # length of the stream replayed
    compute_s: float  # time spent in the recogniser and the policy
    updates: int
    segments: int  # final updates
    words: int  # committed words
    commit_delay_median: float
    commit_delay_p90: float
    display_latency_median: float  # first time the word was on screen (tentative included)
    display_latency_p90: float
    updates_per_s: float  # per second of audio
    rtf: float  # compute_s / audio_s: below 1 keeps up with real time
    runs: int  # recogniser calls
    buffer_mean_s: float  # audio recognised per call
    buffer_max_s: float
    lag_max_s: float  # worst gap between an update and the end of the audio it covers
    lag_last_s: float  # the same for the last update (grows without bound when behind)
    dropped_blocks: int

    def lines(self) -> list[str]:
        return [
            f"audio {self.audio_s:.1f} s, {self.runs} recogniser runs, {self.updates} updates "
            f"({self.updates_per_s:.2f}/s), {self.segments} segments, {self.words} words",
            f"commit delay median {self.commit_delay_median:.2f} s, "
            f"p90 {self.commit_delay_p90:.2f} s; display latency median "
            f"{self.display_latency_median:.2f} s, p90 {self.display_latency_p90:.2f} s",
            f"real-time factor {self.rtf:.3f} (compute {self.compute_s:.2f} s); "
            f"lag max {self.lag_max_s:.2f} s, last {self.lag_last_s:.2f} s",
            f"buffer mean {self.buffer_mean_s:.2f} s, max {self.buffer_max_s:.2f} s; "
            f"dropped blocks {self.dropped_blocks}",
        ]


def summarize(
    updates: list[AsrUpdate],
    runs: list[RunInfo],
    audio_s: float,
    compute_s: float,
    dropped_blocks: int = 0,
) -> StreamReport:
    delays = commit_delays(updates)
    shown = display_latencies(updates)
    lags = [u.emitted_at - u.audio_t1 for u in updates]
    windows = [r.window_s for r in runs]
    return StreamReport(
        audio_s=audio_s,
        compute_s=compute_s,
        updates=len(updates),
        segments=sum(u.final for u in updates),
        words=len(delays),
        commit_delay_median=_pct(delays, 50),
        commit_delay_p90=_pct(delays, 90),
        display_latency_median=_pct(shown, 50),
        display_latency_p90=_pct(shown, 90),
        updates_per_s=len(updates) / audio_s if audio_s > 0 else 0.0,
        rtf=compute_s / audio_s if audio_s > 0 else 0.0,
        runs=len(runs),
        buffer_mean_s=float(np.mean(windows)) if windows else 0.0,
        buffer_max_s=max(windows, default=0.0),
        lag_max_s=max(lags, default=0.0),
        lag_last_s=lags[-1] if lags else 0.0,
        dropped_blocks=dropped_blocks,
    )
