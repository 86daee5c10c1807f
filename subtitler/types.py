"""Plain data passed between the stages (no behaviour, no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class UpdateStats:
    """What one update cost and how much of the draft survived."""

    method: str = "RT"
    draft_len: int = 0  # draft tokens offered (after the length cap)
    accepted: int = 0  # draft tokens kept
    output_len: int = 0  # tokens in the output (no EOS)
    decode_steps: int = 0  # single-token forward passes after verification
    prompt_tokens: int = 0  # prompt tokens evaluated (not reused from the cache)
    prompt_reused: int = 0  # prompt tokens reused from the cache
    verified_tokens: int = 0  # tokens evaluated in the verify pass (draft, plus prompt if fused)
    prompt_s: float = 0.0  # prompt-only pass (0 when fused into the verify pass)
    verify_s: float = 0.0
    decode_s: float = 0.0
    ended_by_eos: bool = False
    aborted: bool = False

    @property
    def generation_s(self) -> float:
        """Time spent producing output tokens (the paper's TPS denominator)."""
        return self.verify_s + self.decode_s

    @property
    def latency_s(self) -> float:
        return self.prompt_s + self.verify_s + self.decode_s


@dataclass(frozen=True)
class Translation:
    """One translation of a segment's current source text."""

    segment_id: int
    source: str
    text: str  # the full translation (what the next draft is made of)
    tokens: tuple[int, ...]
    final: bool
    stats: UpdateStats = field(default_factory=UpdateStats, compare=False)
