"""One replay's translations under the display rules (issue 17's before/after on one stream)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from subtitler_research.pipeline.display import display_report
from subtitler_research.pipeline.display_rules import main, shown_under

PIECES: list[str] = []


def tokenize(text: str) -> list[int]:
    """Pieces of up to three letters with their leading space, numbered as they come."""
    out = []
    for p in re.findall(r"\s*\S{1,3}", text):
        if p not in PIECES:
            PIECES.append(p)
        out.append(PIECES.index(p))
    return out


def detok(ids: Sequence[int]) -> bytes:
    return "".join(PIECES[i] for i in ids).encode()


STREAM = [
    ("in der", False),
    ("in der Dämmerung", False),
    ("in der Dämmerung sahen", False),
    ("in der Nacht sahen wir", False),
    ("in der Nacht sahen wir es.", True),
]
DISPLAYED = [
    {"t": float(i), "segment": 0, "final": f, "shown": "", "translation": t}
    for i, (t, f) in enumerate(STREAM)
]


def test_the_rules_show_the_same_translations_differently() -> None:
    shown = {
        rule: [e.shown(1) for e in shown_under(rule, DISPLAYED, tokenize, detok, 1)]
        for rule in ("token", "word", "steady")
    }
    assert shown["token"] == [
        "in",  # "der" hidden
        "in der Dämmer",  # a fragment
        "in der Dämmerung sah",  # another
        "in der Nacht sahen",
        "in der Nacht sahen wir es.",
    ]
    assert shown["word"] == [
        "in", "in der", "in der Dämmerung", "in der Nacht sahen", "in der Nacht sahen wir es."
    ]  # fmt: skip
    # Nothing shown here was hidden again by a later mask: steady changes nothing.
    assert shown["steady"] == shown["word"]
    ne = {
        r: display_report(shown_under(r, DISPLAYED, tokenize, detok, 1), [], 1, "de")[
            "ne_displayed"
        ]
        for r in ("token", "word")
    }
    assert ne["word"] < ne["token"]


def test_a_replay_without_translations_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"displayed": [{"t": 0, "segment": 0, "final": True, "shown": "x"}]}))
    assert main([str(old), "--mt-model", str(tmp_path / "m.gguf")]) == 2
    assert "without translations" in capsys.readouterr().err
