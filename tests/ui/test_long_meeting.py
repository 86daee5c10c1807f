"""A long meeting in the app: what it keeps does not grow with the meeting's length."""

from __future__ import annotations

from pathlib import Path

from subtitler.config import AppConfig, MtConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.pipeline.transcript import read_transcript
from subtitler.ui.app import SubtitlerApp
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for

LINES = 60


def test_the_apps_meeting_keeps_no_measurement_per_word(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every word's delays were kept in lists for a summary only a replay's report reads: a
    number per word and per update, for as long as the meeting went on."""
    steps = [Step(0.5 * k + 0.5, k, ["one", "two", f"line{k}."], True) for k in range(LINES)]
    f = Factories(
        lambda a, c: FakeSource(0.5 * LINES + 1.0),
        lambda a: ScriptedRecognizer(steps),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        AppConfig(mt=MtConfig(model_path="x")),
        f,
        config_path=tmp_path / "config.toml",
        data_dir=tmp_path,
    )
    qtbot.addWidget(app.overlay)
    app.start()
    written = lambda: [  # noqa: E731
        # (a line waiting behind newer ones is written as said first: read once)
        r
        for p in (tmp_path / "transcripts").glob("*.jsonl")
        for r in read_transcript(p)
        if r.translation
    ]
    qtbot.waitUntil(lambda: len(written()) == LINES, timeout=20_000)
    assert app.pipeline is not None
    m = app.pipeline.metrics
    try:
        assert (m.all_commit, m.all_latency, m.all_e2e, m.latency_by_lang) == ([], [], [], {})
        assert m.status(0.5 * LINES + 1.0)[2] == 0  # (what the status line reads still works)
    finally:
        app.pipeline.stop()
