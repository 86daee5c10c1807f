"""What a reader of the overlay saw over time: how often the visible text changed (the flicker
rate, next to NE), how often a change took words back, and how long a line being spoken went
without a visible update."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from subtitler.mt.lm import common_prefix_len
from subtitler.pipeline.events import SubtitleEvent
from subtitler.pipeline.metrics import median_p90
from subtitler.types import AsrUpdate
from subtitler_research.mt.metrics import units

GAP_TARGET_S = 1.5  # issue 17: a visible, updated line at least every 1.5 s of speech


@dataclass(frozen=True)
class Change:
    t: float  # stream time it was shown
    segment_id: int
    text: str  # what the line shows from then on
    final: bool
    erased: int  # units (words; characters for zh/ja/th) of the previous text taken back


def visible_changes(subs: Sequence[SubtitleEvent], k: int, lang: str) -> list[Change]:
    """Each time a line's displayed text (the open line with mask-k, a finished one in full)
    changed, in the order shown; an event that shows the same text is no change."""
    last: dict[int, str] = {}
    out = []
    for e in subs:
        text = e.shown(k)
        old = last.get(e.segment_id, "")
        if text == old:
            continue
        last[e.segment_id] = text
        before, after = units(old, lang), units(text, lang)
        out.append(Change(e.emitted_at, e.segment_id, text, e.final,
                          len(before) - common_prefix_len(before, after)))  # fmt: skip
    return out


def _gaps(shown: Sequence[tuple[int, float]], first_asr: dict[int, float]) -> list[float]:
    """Per line: from its first recognised update to the first time in ``shown`` (segment,
    stream time), then between consecutive times."""
    times: dict[int, list[float]] = defaultdict(list)
    for seg, t in shown:
        if not times[seg] and seg in first_asr:
            times[seg].append(first_asr[seg])
        times[seg].append(t)
    return [b - a for ts in times.values() for a, b in itertools.pairwise(ts)]


def _gap_stats(name: str, gaps: Sequence[float]) -> dict[str, float | None]:
    med, p90 = median_p90(gaps)
    return {
        f"{name}_median_s": None if med is None else round(med, 4),
        f"{name}_p90_s": None if p90 is None else round(p90, 4),
        f"{name}_max_s": round(max(gaps), 4) if gaps else None,
        f"{name}s_within_target": round(
            sum(g <= GAP_TARGET_S for g in gaps) / len(gaps), 4
        ) if gaps else None,
    }  # fmt: skip


def display_report(
    subs: Sequence[SubtitleEvent], asr: Sequence[AsrUpdate], k: int, lang: str
) -> dict[str, float | int | None]:
    """Flicker and gaps of the main target's display.

    ``display_changes_per_s``: visible changes per second of the talk (first recognised
    update to the last subtitle, stream time); ``display_rewrites_per_s``: those that took a
    shown word back. Gaps, per line from its first recognised update until it is finished
    (stream time): ``update_gap``: between changes of its visible words; ``refresh_gap``:
    between translations (or prefixes of one) of newer speech reaching the screen, whether
    or not they changed a visible word (a translation that stays the same while the source
    grows is the translator's doing, not the display's); ``screen_*``: the same for the
    screen as a whole."""
    changes = visible_changes(subs, k, lang)
    first_asr: dict[int, float] = {}
    for u in asr:
        first_asr.setdefault(u.segment_id, u.emitted_at)
    start = min((u.emitted_at for u in asr), default=0.0)
    end = max((e.emitted_at for e in subs), default=start)
    span = max(end - start, 1e-9)
    finals: dict[int, str] = {}
    for c in changes:
        finals[c.segment_id] = c.text
    total = sum(len(units(text, lang)) for text in finals.values())
    return {
        # NE of what was displayed: words taken back over the words of the lines as they end.
        "ne_displayed": round(sum(c.erased for c in changes) / total, 4) if total else 0.0,
        "display_changes": len(changes),
        "display_changes_per_s": round(len(changes) / span, 4),
        "display_rewrites_per_s": round(sum(c.erased > 0 for c in changes) / span, 4),
        **_gap_stats("update_gap", _gaps([(c.segment_id, c.t) for c in changes], first_asr)),
        **_gap_stats("refresh_gap", _gaps([(e.segment_id, e.emitted_at) for e in subs], first_asr)),
        # The same over the whole screen (any line), from the first recognised update: what
        # a reader sees while a new line waits behind the last one's final translation.
        **_gap_stats("screen_update_gap", _gaps([(-1, c.t) for c in changes], {-1: start})),
        **_gap_stats("screen_refresh_gap", _gaps([(-1, e.emitted_at) for e in subs], {-1: start})),
    }
