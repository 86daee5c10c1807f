"""Sample subtitles that show what the look settings do before they are applied."""

from __future__ import annotations

import re

from subtitler.display.masking import shown_by_k
from subtitler.session import SubtitleEvent

PREVIEW_ID = -1000  # segment ids at or below it are samples (a pipeline counts from 0)
# Each a row at the default 42 characters, so that the default two rows show both lines.
SAMPLE = (
    ("Good morning and welcome, everyone.", "Guten Morgen und willkommen."),
    ("Let's start with the budget for Zurich", "Beginnen wir mit dem Budget für Zürich"),
)


def _pieces(text: str) -> list[str]:
    """The text in pieces of about a translator's token (up to 4 letters, with the space
    before them), so that mask-k hides about as much as it would."""
    return re.findall(r"\s*\S{1,4}", text)


def sample_events() -> list[SubtitleEvent]:
    """A finished line and one still being spoken (masked as the settings say)."""
    out = []
    for i, (source, translation) in enumerate(SAMPLE):
        final = i == 0
        shown = shown_by_k([p.encode() for p in _pieces(translation)], final)
        out.append(SubtitleEvent(PREVIEW_ID - i, source, translation, shown, final, 0.0, 0.0))
    return out
