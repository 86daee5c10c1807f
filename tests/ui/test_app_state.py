"""The app shell: geometry remembered per screen, settings applied live, notices shown."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication

from subtitler import settings_store
from subtitler.config import AppConfig, DisplayConfig, MtConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.overlay import SubtitleOverlay
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for


def make_app(tmp_path: Path, notice: str = "") -> SubtitlerApp:
    cfg = AppConfig(mt=MtConfig(model_path="x"))
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    return SubtitlerApp(
        cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path, notice=notice
    )


def test_geometry_is_remembered_per_screen(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    screen = QGuiApplication.primaryScreen().name()
    app.remember_geometry(screen, QRect(40, 50, 600, 110))
    saved = settings_store.load(tmp_path / "config.toml").config
    assert saved.display.geometry[screen] == [40, 50, 600, 110] and saved.display.screen == screen
    again = SubtitleOverlay(saved.display)
    qtbot.addWidget(again)
    again.place()
    assert again.geometry() == QRect(40, 50, 600, 110)
    # An unknown (unplugged) screen falls back to the primary one.
    third = SubtitleOverlay(dataclasses.replace(saved.display, screen="gone"))
    qtbot.addWidget(third)
    third.place()
    assert QGuiApplication.primaryScreen().availableGeometry().intersects(third.geometry())


def test_run_replay_and_live_settings(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path, notice="Your settings file could not be read")
    qtbot.addWidget(app.overlay)
    assert "could not be read" in app.overlay.alert  # the corrupt-config notice is visible
    app.start()
    qtbot.waitUntil(lambda: any(ln.translation for ln in app.overlay.lines()), timeout=10_000)
    cfg = AppConfig(mt=MtConfig(model_path="x", beta=0.5), display=DisplayConfig(mask_k=7))
    app.apply_settings(cfg)
    assert app.overlay.display.mask_k == 7
    assert settings_store.load(tmp_path / "config.toml").config.mt.beta == 0.5
    app.toggle_run()  # pause or restart, whatever state the short replay is in
    assert app.pipeline is not None
    app.pipeline.stop()
    assert list((tmp_path / "transcripts").glob("*.jsonl"))


def test_audio_inputs_offered_in_settings(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import contextlib
    import sys

    import numpy as np

    from subtitler.audio import loopback
    from subtitler.ui.app import input_devices
    from tests.helpers.fake_soundcard import FakeSoundCard
    from tests.helpers.fake_sounddevice import FakeSoundDevice

    quiet = np.zeros(1600, dtype=np.float32)
    sd = FakeSoundDevice(quiet)
    monkeypatch.setitem(sys.modules, "sounddevice", sd)
    monkeypatch.setitem(sys.modules, "soundcard", FakeSoundCard(quiet))
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(loopback, "com_apartment", contextlib.nullcontext)  # no COM here
    assert input_devices() == (
        [
            ("USB Mic (ALSA)", "USB Mic"),
            ("Monitor of Speakers (ALSA)  · meeting audio", "Monitor of Speakers"),
            (
                "Speakers (Realtek(R) Audio) [Loopback]  · meeting audio",
                "Speakers (Realtek(R) Audio) [Loopback]",
            ),
        ],
        "",
    )
    monkeypatch.setitem(sys.modules, "soundcard", None)  # not installed: microphones only
    sd.devices = sd.devices[:1]  # and only an output
    assert input_devices() == ([], "No input device found: connect a microphone or use --replay.")


def test_notices_for_a_lost_input_and_a_fatal_stop(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from subtitler.pipeline.events import ErrorEvent, StatusEvent
    from subtitler.ui import overlay

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    lost = "audio input 'USB Mic' disappeared; retrying"
    app.on_event(StatusEvent("running"))
    app.on_event(ErrorEvent("audio", lost, lasting=True))
    # Above the subtitles (running or not), once: the status line below stays a status.
    assert app.overlay.alert == lost and app.overlay._notice == "Listening…"
    app.on_event(StatusEvent("running", "audio input is back"))
    assert app.overlay._notice == "Listening…" and app.overlay.alert == ""
    app.on_event(ErrorEvent("asr", "speech recognition stopped: boom", fatal=True))
    app.on_event(StatusEvent("finished", "replay finished"))
    assert app.overlay.alert == "speech recognition stopped: boom"  # the reason stays
    assert app.overlay._notice == "Stopped"
    app.start()  # a new run forgets it
    assert app.overlay.alert == ""
    app.on_event(StatusEvent("finished", "replay finished"))
    assert app.overlay._notice == "Replay finished"
    assert app.pipeline is not None and app.pipeline.stop()
    # A passing problem goes by itself.
    overlay.ALERT_S = 0.05  # type: ignore[assignment]
    try:
        app.on_event(ErrorEvent("transcript", "could not write the transcript"))
        assert app.overlay.alert == "could not write the transcript"
        qtbot.waitUntil(lambda: app.overlay.alert == "", timeout=2000)
    finally:
        overlay.ALERT_S = 12


def test_click_through_from_a_hotkey_is_kept_when_open_settings_are_applied(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """With Settings open, a hotkey (or the tray) turns click-through on; applying the pane
    afterwards must not turn it off again with the box it showed before."""
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.open_settings()
    assert app.settings is not None
    qtbot.addWidget(app.settings)
    assert not app.settings.widget("display.click_through").isChecked()
    app.toggle("click-through")
    assert app.overlay.click_through
    assert app.settings.apply()
    assert app.overlay.click_through and app.config.display.click_through
    assert settings_store.load(tmp_path / "config.toml").config.display.click_through


def test_the_overlays_place_is_kept_when_settings_are_applied(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The overlay moved while Settings were open, or since they were last open: applying
    them must not put it back where it was (its place has no row in the pane)."""
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.open_settings()
    assert app.settings is not None
    qtbot.addWidget(app.settings)
    app.remember_geometry("A", QRect(40, 50, 600, 110))  # dragged with the pane open
    assert app.settings.apply()
    assert app.config.display.geometry == {"A": [40, 50, 600, 110]}
    app.settings.close()
    app.remember_geometry("B", QRect(10, 20, 300, 100))  # dragged with the pane closed
    app.open_settings()  # the same pane, shown again
    assert app.settings.apply()
    assert app.config.display.geometry == {"A": [40, 50, 600, 110], "B": [10, 20, 300, 100]}
    assert app.config.display.screen == "B"
    saved = settings_store.load(tmp_path / "config.toml").config
    assert saved.display.geometry == app.config.display.geometry


def test_look_settings_preview_on_the_overlay_until_applied_or_cancelled(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Each look control shows its effect on the overlay at once (with sample lines while the
    meeting has none); Cancel puts back what the settings say, Apply keeps it."""
    import os

    from subtitler.ui.preview import PREVIEW_ID

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.overlay.show()
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    assert app.overlay.lines() == []
    pane.widget("display.font_size").setValue(40)
    assert app.overlay.display.font_size == 40  # before Apply
    lines = app.overlay.lines()
    assert lines and all(ln.segment_id <= PREVIEW_ID for ln in lines)
    unfinished = lines[-1].translation
    pane.widget("display.mask_k").setValue(0)
    assert app.overlay.lines()[-1].translation.startswith(unfinished)
    assert len(app.overlay.lines()[-1].translation) > len(unfinished)  # k hides its end
    pane.widget("display.bilingual").setChecked(True)
    assert app.overlay.display.bilingual
    app.overlay.grab().save(str(Path(os.environ.get("SUBTITLER_SHOTS", tmp_path)) / "preview.png"))
    assert app.config.display.font_size != 40  # nothing applied or saved yet
    pane.reject()  # Cancel
    assert app.overlay.display == app.config.display and app.overlay.lines() == []

    app.open_settings()
    pane.widget("display.font_size").setValue(36)
    pane._ok()  # OK: applied, saved, the preview's samples gone
    assert app.overlay.display.font_size == 36 and app.config.display.font_size == 36
    assert settings_store.load(tmp_path / "config.toml").config.display.font_size == 36
    assert app.overlay.lines() == []


def test_the_app_shows_every_target_language(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    assert app.overlay.targets == 1
    two = dataclasses.replace(app.config, mt=MtConfig(model_path="x", extra_targets="ja"))
    app.apply_settings(two)  # (saved, and used by the next run)
    assert app.overlay.targets == 2
    assert settings_store.load(tmp_path / "config.toml").config.mt.extra_targets == "ja"
    app.start()
    qtbot.waitUntil(lambda: any(ln.extra for ln in app.overlay.lines()), timeout=10_000)
    (line,) = app.overlay.lines()
    assert line.translation and line.extra[0] and line.extra[0] != line.translation
    app.quit()


def test_the_trays_first_item_follows_the_run_and_is_not_offered_while_loading(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Seen on the screenshots: the menu said Pause before anything ran, and its Start did
    nothing while the models loaded (there is nothing to pause yet)."""
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    action = app.tray.run_action
    assert action.text() == "Start" and action.isEnabled()
    states = []
    app.tray.set_state("loading")
    states.append((action.text(), action.isEnabled()))
    app.start()
    qtbot.waitUntil(lambda: action.text() == "Pause", timeout=10_000)
    assert action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: action.text() == "Resume", timeout=10_000)
    assert states == [("Loading models…", False)]
    app.quit()
