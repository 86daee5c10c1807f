"""Who spoke a line, as the outputs name it (issue 31: the microphone and the meeting at once).

A line has a side (types.YOU, types.OTHERS) only when the app listens to two inputs; with one
it has none (""), and every output shows it exactly as before: no label, no filter.
"""

from __future__ import annotations

from subtitler.types import SIDE_LABELS


def label(side: str) -> str:
    """The short name shown with a line ("You", "Others"); "" for a line heard on the only
    input, and for a side this version does not know (a hand-edited or newer transcript):
    better no name than a wrong one."""
    return SIDE_LABELS.get(side, "")


def prefixed(side: str, text: str) -> str:
    """``text`` after its speaker's name ("You: Hello."); unchanged for a line without one."""
    name = label(side)
    return f"{name}: {text}" if name else text
