"""Plain data passed between the stages (no behaviour, no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    lookahead_drafted: int = 0  # tokens guessed past the draft (n-gram / resync)
    lookahead_accepted: int = 0  # ... and kept
    guess_s: float = 0.0  # part of decode_s spent making guesses (draft model, tables)
    ended_by_eos: bool = False
    aborted: bool = False
    hit_cap: bool = False  # stopped at the output length limit, not by EOS
    looped: bool = False  # stopped in a decoding loop (mt/output_rules.py)
    retried: bool = False  # decoded once more after an echo of the source or a loop

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
    # Why the output is not a translation to show (mt/output_rules.py); "" when it is one.
    problem: str = ""


# The input level of silence, in dBFS: levels go in dBFS from the audio input to the meters,
# floored here (silence has no logarithm).
SILENCE_DBFS = -100.0


@dataclass(frozen=True)
class AudioBlock:
    """A block of 16 kHz mono float32 samples; ``t0`` is its start on the stream clock (s)."""

    samples: Any  # numpy float32 array, shape (n,)
    t0: float
    sample_rate: int = 16000

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass(frozen=True)
class Word:
    """A recognised word with its audio times (stream clock, seconds)."""

    text: str
    start: float
    end: float
    probability: float = 1.0


# Who spoke a line when the app listens to two inputs at once: the microphone ("you") and the
# meeting's audio ("others"). With one input lines have no side ("").
YOU = "you"
OTHERS = "others"
SIDES = (YOU, OTHERS)
SIDE_LABELS = {YOU: "You", OTHERS: "Others"}


@dataclass(frozen=True)
class AsrUpdate:
    """The current state of one segment (a sentence or utterance) of the transcript."""

    segment_id: int
    committed_text: str  # stable words; only ever grows within a segment
    tentative_text: str  # the unstable tail of the newest hypothesis
    final: bool  # no more words will join this segment
    audio_t0: float  # segment start on the stream clock (s)
    audio_t1: float  # end of the audio the hypothesis covers (s)
    emitted_at: float  # stream-clock time the update was produced (s)
    committed_words: tuple[Word, ...] = ()
    language: str | None = None
    side: str = ""  # who spoke: YOU, OTHERS, or "" with one input (see SIDES)

    @property
    def text(self) -> str:
        """Committed plus tentative text: what the translator sees."""
        return " ".join(x for x in (self.committed_text, self.tentative_text) if x)


class EngineGone(RuntimeError):
    """An engine cannot be used any more (its process ended); the message is one line."""


class EngineLost(EngineGone):
    """An engine's process died and its model could not be loaded again (the file removed or
    damaged meanwhile): it will not come back this meeting."""
