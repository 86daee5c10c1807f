"""Streaming translation metrics: A/D, A/O, NE, TPS and update latency (see ARCHITECTURE.md)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from subtitler.mt.languages import UNSEGMENTED, normalize_code
from subtitler.mt.lm import common_prefix_len
from subtitler.types import UpdateStats


def units(text: str, lang: str) -> list[str]:
    """NE's fixed tokenizer: words for Latin-like scripts, characters for zh/ja/th."""
    if normalize_code(lang) in UNSEGMENTED:
        return [c for c in text if not c.isspace()]
    return text.split()


def erasure(shown: Sequence[str], lang: str) -> tuple[int, int]:
    """(units erased over a stream of displayed texts, units in the final one)."""
    erased = 0
    prev: list[str] = []
    for text in shown:
        cur = units(text, lang)
        erased += len(prev) - common_prefix_len(prev, cur)
        prev = cur
    return erased, len(prev)


def normalized_erasure(streams: Iterable[Sequence[str]], lang: str) -> float:
    """NE over many streams: erased units / units of all final outputs."""
    erased = total = 0
    for shown in streams:
        e, n = erasure(shown, lang)
        erased += e
        total += n
    return erased / total if total else 0.0


@dataclass
class RunTotals:
    """Sums of per-update statistics over a run."""

    updates: int = 0
    draft_tokens: int = 0  # over updates that had a draft
    accepted: int = 0
    output_tokens: int = 0
    decode_steps: int = 0
    verified_tokens: int = 0
    prompt_tokens: int = 0
    lookahead_drafted: int = 0
    lookahead_accepted: int = 0
    prompt_s: float = 0.0
    verify_s: float = 0.0
    decode_s: float = 0.0
    guess_s: float = 0.0
    latencies_s: list[float] = field(default_factory=list)

    def add(self, st: UpdateStats) -> None:
        self.updates += 1
        if st.draft_len:
            self.draft_tokens += st.draft_len
        self.accepted += st.accepted
        self.output_tokens += st.output_len
        self.decode_steps += st.decode_steps
        self.verified_tokens += st.verified_tokens
        self.prompt_tokens += st.prompt_tokens
        self.lookahead_drafted += st.lookahead_drafted
        self.lookahead_accepted += st.lookahead_accepted
        self.prompt_s += st.prompt_s
        self.verify_s += st.verify_s
        self.decode_s += st.decode_s
        self.guess_s += st.guess_s
        self.latencies_s.append(st.latency_s)

    @property
    def ad(self) -> float | None:
        """Accepted / draft tokens, percent (None when no update had a draft)."""
        return 100.0 * self.accepted / self.draft_tokens if self.draft_tokens else None

    @property
    def ao(self) -> float:
        return 100.0 * self.accepted / self.output_tokens if self.output_tokens else 0.0

    @property
    def tps(self) -> float:
        gen = self.verify_s + self.decode_s
        return self.output_tokens / gen if gen > 0 else 0.0

    @property
    def latency_ms(self) -> float:
        return 1000.0 * statistics.fmean(self.latencies_s) if self.latencies_s else 0.0

    @property
    def ms_per_verified(self) -> float | None:
        if not self.verified_tokens:
            return None
        return 1000.0 * self.verify_s / self.verified_tokens

    @property
    def ms_per_decoded(self) -> float | None:
        return 1000.0 * self.decode_s / self.decode_steps if self.decode_steps else None

    @property
    def ms_per_prompt_token(self) -> float | None:
        return 1000.0 * self.prompt_s / self.prompt_tokens if self.prompt_tokens else None
