"""Events the pipeline hands to its subscriber (the UI bridge, a log, the replay tool)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from subtitler.display.masking import MAX_K as MAX_K  # display-only mask-k: 0..MAX_K
from subtitler.types import AsrUpdate, UpdateStats


@dataclass(frozen=True)
class SubtitleEvent:
    """A translation of a segment's current source, ready to show."""

    segment_id: int
    source: str
    translation: str  # the full translation
    shown_by_k: tuple[str, ...]  # what display-only mask-k shows, for k = 0..MAX_K
    final: bool
    asr_emitted_at: float  # stream clock of the ASR update it translates
    emitted_at: float  # stream clock when the translation was ready
    audio_t0: float = 0.0
    audio_t1: float = 0.0
    stats: UpdateStats = field(default_factory=UpdateStats, compare=False)
    lang: str = ""  # the language of ``translation`` (a target language code)
    target: int = 0  # which target: 0 the main one ("Translate into"), 1.. the extra ones
    # The prefix of a translation still being decoded (a slow decode shown as it goes, or
    # one given up for a newer update): on screen like any open line, not a finished
    # translation of ``source`` (the latency metrics skip it).
    partial: bool = False
    side: str = ""  # who spoke (types.YOU / types.OTHERS; "" with one input)

    @property
    def extra(self) -> bool:
        """A translation into one of the extra target languages (shown under the main one)."""
        return self.target > 0

    def shown(self, k: int) -> str:
        """The text to display with mask-k (a final line is always shown in full)."""
        return self.shown_by_k[max(0, min(k, len(self.shown_by_k) - 1))]


@dataclass(frozen=True)
class AsrEvent:
    update: AsrUpdate


class PipelineState(enum.StrEnum):
    """Where a pipeline's life stands; it moves loading -> running <-> paused, and ends
    stopped (asked, or a part failed to start) or finished (the replay came to its end)."""

    LOADING = "loading"
    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"
    FINISHED = "finished"


@dataclass(frozen=True)
class StatusEvent:
    state: str  # a PipelineState (a str: "loading", "running", ...)
    message: str = ""


@dataclass(frozen=True)
class ErrorEvent:
    """A failure the user should see; ``fatal`` means the pipeline stopped."""

    where: str  # "audio" | "asr" | "mt" | "transcript"
    message: str
    fatal: bool = False
    lasting: bool = False  # a state (an input away, being retried) until an event says it is over


@dataclass(frozen=True)
class TranslatorEvent:
    """Whether lines are translated now. ``on`` False: they are shown as said, and ``why``
    says why (no model chosen, it failed to load, it was set aside) until an event says on
    (a model loaded). Said when it changes."""

    on: bool
    why: str = ""


@dataclass(frozen=True)
class LevelEvent:
    """The live state for a status line, several times a second."""

    level_dbfs: float  # input level for the meter (types.SILENCE_DBFS: silence)
    dropped_blocks: int = 0  # audio blocks lost since the start (the input outran the app)
    latency_s: float | None = None  # speech to screen: median of the last words (None: none yet)
    lag_s: float = 0.0  # how long the newest line's oldest update has waited for its translation
    waiting_lines: int = 0  # older lines whose translation waits (the translator is behind)
    side: str = ""  # the input whose level this is (types.YOU / types.OTHERS; "": the only one)


@dataclass(frozen=True)
class SegmentMetrics:
    segment_id: int
    commit_delay_s: list[float]  # per committed word: commit time - word end
    translation_latency_s: list[float]  # per translated update: translation ready - ASR update
    end_to_end_s: list[float]  # per word: first translation covering it - word end
    abandoned: int
    dropped_blocks: int
    draft_tokens: int
    accepted: int

    @property
    def ad(self) -> float | None:
        return 100.0 * self.accepted / self.draft_tokens if self.draft_tokens else None


@dataclass(frozen=True)
class MetricsEvent:
    metrics: SegmentMetrics


Event = (
    SubtitleEvent
    | AsrEvent
    | StatusEvent
    | ErrorEvent
    | TranslatorEvent
    | LevelEvent
    | MetricsEvent
)
