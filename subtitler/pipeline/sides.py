"""Both sides of a meeting: the microphone ("you") and the meeting's audio ("others"), each
heard with its own input, spoken language and target languages.

With one input (no meeting audio chosen) there is one side without a name, and the settings
mean what they always meant. With meeting audio the existing language settings become the
meeting's (its speech language, "Translate into" and the extra targets: what the reader reads
on the overlay), and the microphone gets its own: ``asr.you_language`` (None: detected) and
``mt.you_targets`` (empty: the meeting's language, so the others read what the user said).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from dataclasses import dataclass
from pathlib import Path

from subtitler.config import AppConfig, AsrConfig, AudioConfig, MtConfig, base_code, language_codes
from subtitler.types import OTHERS, YOU


@dataclass(frozen=True)
class Side:
    """One input and what is done with what it hears."""

    name: str  # "" (the only input), types.YOU or types.OTHERS
    audio: AudioConfig
    asr: AsrConfig
    mt: MtConfig


def two_sided(audio: AudioConfig) -> bool:
    """Is the meeting's audio heard as well as the microphone (or, from files, a second one)?"""
    if audio.source == "file":
        return bool(audio.meeting_file)
    return audio.meeting_device not in (None, "")


SAME_INPUT = (
    "the microphone and the meeting's audio are the same input ({}): it is heard once, as one "
    "side; choose each its own in Settings → Audio"
)


def same_input(audio: AudioConfig) -> str:
    """The input chosen for both the microphone and the meeting's audio ("" if none is): it
    would be heard twice, the user's copy of each line dropped as the meeting's echo."""
    if not two_sided(audio):
        return ""
    if audio.source == "file":
        mine, theirs = audio.file_path, audio.meeting_file
        try:
            same = Path(mine).resolve() == Path(theirs).resolve()
        except (OSError, RuntimeError):
            same = mine == theirs
        return Path(theirs).name if same else ""
    device, meeting = audio.device, audio.meeting_device
    return str(meeting) if str(device).casefold() == str(meeting).casefold() else ""


def sides_of(cfg: AppConfig) -> tuple[Side, ...]:
    """The sides the settings ask for: one without a name, or the meeting's then the user's
    (one, heard once, where both are the same input)."""
    if not two_sided(cfg.audio) or same_input(cfg.audio):
        return (Side("", cfg.audio, cfg.asr, cfg.mt),)
    one = dataclasses.replace(cfg.audio, meeting_device=None, meeting_file="")
    others_audio = dataclasses.replace(
        one, device=cfg.audio.meeting_device, file_path=cfg.audio.meeting_file
    )
    meeting_lang = base_code(cfg.asr.language or cfg.mt.src_lang)
    # Unless told otherwise, the user speaks the language they read.
    you_src = base_code(cfg.asr.you_language or cfg.mt.tgt_lang)
    you_targets = language_codes(cfg.mt.you_targets) or [meeting_lang]
    you_mt = dataclasses.replace(
        cfg.mt, src_lang=you_src, tgt_lang=you_targets[0], extra_targets=",".join(you_targets[1:])
    )
    you_asr = dataclasses.replace(cfg.asr, language=cfg.asr.you_language)
    return (
        Side(OTHERS, others_audio, cfg.asr, cfg.mt),
        Side(YOU, one, you_asr, you_mt),
    )


def engine_settings(sides: tuple[Side, ...]) -> MtConfig:
    """The settings the one translation model is given: the first side's, translating into
    every side's targets (each target keeps its own translator and draft on the model)."""
    first = sides[0].mt
    targets: list[str] = []
    for side in sides:
        targets += [t for t in side.mt.targets if t not in targets]
    if len(sides) == 1:
        return first
    return dataclasses.replace(first, tgt_lang=targets[0], extra_targets=",".join(targets[1:]))


class SegmentIds:
    """One numbering of lines for every input and recogniser: the pipeline's segment ids.

    Each recogniser numbers its own lines from 0; two inputs (or a recogniser swapped in
    mid-meeting) would give two lines one id. Ids are handed out in the order lines are first
    heard, so within one recogniser they keep its order."""

    def __init__(self) -> None:
        self._next = itertools.count()
        self._lock = threading.Lock()

    def numbering(self) -> SegmentNumbering:
        """The mapping for one recogniser (a new one for each)."""
        return SegmentNumbering(self)

    def take(self) -> int:
        with self._lock:
            return next(self._next)


class SegmentNumbering:
    """One recogniser's segment ids mapped onto the pipeline's."""

    def __init__(self, ids: SegmentIds) -> None:
        self._ids = ids
        self._map: dict[int, int] = {}

    def __call__(self, local: int) -> int:
        got = self._map.get(local)
        if got is None:
            got = self._map[local] = self._ids.take()
        return got
