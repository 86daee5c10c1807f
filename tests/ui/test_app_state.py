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


def test_the_apps_state_is_shown_until_it_changes(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 27 points 2 and 3: one state on the overlay and in the tray, until an event
    changes it (a lost input, translation off and why, a translation behind the speech, a
    stop and why); a passing problem goes by itself."""
    from subtitler.pipeline.events import ErrorEvent, LevelEvent, StatusEvent, TranslatorEvent
    from subtitler.pipeline.sealing import WRITTEN_AGAIN
    from subtitler.ui import overlay
    from tests.ui.overlay_shots import event

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    o, tray = app.overlay, app.tray

    def said() -> tuple[str, str, str]:
        assert tray.state_action.toolTip() == o.state.text  # the tray says the same, whole
        return o.state.text, o.state.problem, tray.run_action.text()

    assert said() == ("Not started", "", "Start")
    overlay.ALERT_S = 0.05  # type: ignore[assignment]
    try:
        app.on_event(StatusEvent("running"))
        assert said() == ("Listening…", "", "Pause")
        lost = "audio input 'USB Mic' disappeared; retrying"
        app.on_event(ErrorEvent("audio", lost, lasting=True))
        assert said() == (f"No input: {lost}",) * 2 + ("Pause",)
        qtbot.wait(200)  # (longer than a passing problem stays)
        assert o.state.problem == f"No input: {lost}" and o.alert == ""
        app.on_event(StatusEvent("running", "audio input is back"))
        assert said() == ("Listening…", "", "Pause")

        why = "bad.gguf: not a GGUF model file"
        app.on_event(ErrorEvent("mt", why))  # (said as it happens, then as the state)
        app.on_event(TranslatorEvent(False, why))
        off = f"Translation off: {why}"
        assert said() == (f"Listening… · {off}", off, "Pause") and o.alert == ""
        o.on_subtitle(event(0, "Good morning, everyone.", final=True))
        qtbot.wait(200)
        o.grab()
        assert [t.rows for t in o.own_texts if t.kind == "problem"] == [(off,)]  # above them
        assert o.drawn[0] == "Good morning, everyone."
        app.on_event(TranslatorEvent(True))
        app.on_event(LevelEvent(-20.0, lag_s=5.2, waiting_lines=2))
        behind = "Translation 5 s behind the speech"
        assert said() == (f"Listening… · {behind}", behind, "Pause")
        app.on_event(LevelEvent(-20.0, lag_s=2.0))  # catching up: still said
        assert o.state.problem == "Translation 2 s behind the speech"
        app.on_event(LevelEvent(-20.0, lag_s=0.4))
        assert said() == ("Listening…", "", "Pause")
        # A transcript that cannot be written is a state until it is written again (each
        # line raised an alert and a notification of its own).
        full = "could not write the transcript (No space left on device); finished lines …"
        app.on_event(ErrorEvent("transcript", full, lasting=True))
        assert o.alert == full  # said as it happens, then as the state
        unsaved = "Transcript not written: lines kept until it can be"
        assert said() == (f"Listening… · {unsaved}", unsaved, "Pause")
        qtbot.wait(200)
        assert o.state.problem == unsaved
        app.on_event(StatusEvent("running", WRITTEN_AGAIN))
        assert said() == ("Listening…", "", "Pause")
        app.on_event(StatusEvent("paused"))
        assert said() == ("Paused", "", "Resume")

        app.on_event(ErrorEvent("asr", "speech recognition stopped: boom", fatal=True))
        app.on_event(StatusEvent("finished", "replay finished"))
        stop = "Stopped: speech recognition stopped: boom"
        assert said() == (stop, stop, "Start")
        app.start()  # a new run forgets it
        assert said() == ("Loading models…", "", "Loading models…")
        assert not tray.run_action.isEnabled()
        qtbot.waitUntil(lambda: o.state.run == "finished", timeout=10_000)
        assert said() == ("Replay finished", "", "Start")
        assert app.pipeline is not None and app.pipeline.stop()
        # A passing problem goes by itself.
        app.on_event(ErrorEvent("transcript", "could not write the transcript"))
        assert o.alert == "could not write the transcript"
        qtbot.waitUntil(lambda: o.alert == "", timeout=2000)
    finally:
        overlay.ALERT_S = 12


def test_a_missing_microphone_ends_loading_with_what_to_do(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 27 point 3: "Loading models…" stayed on the overlay after the models loaded when
    the microphone was missing, while the tray offered Start."""
    from subtitler.audio.capture import AudioDeviceError

    def no_microphone(a: object, c: object) -> FakeSource:
        raise AudioDeviceError("no audio input device found (is a microphone connected?)")

    app = make_app(tmp_path)
    app.session.factories = Factories(
        no_microphone, app.session.factories.recognizer, app.session.factories.model
    )
    qtbot.addWidget(app.overlay)
    app.start()
    qtbot.waitUntil(lambda: app.overlay.state.run == "stopped", timeout=10_000)
    stop = "Stopped: no audio input device found (is a microphone connected?)"
    assert app.overlay.state.text == stop and app.tray.state_action.toolTip() == stop
    assert app.tray.run_action.text() == "Start" and app.tray.run_action.isEnabled()
    app.overlay.grab()
    assert app.overlay.drawn and "Loading" not in " ".join(app.overlay.drawn)
    assert " ".join(reversed(app.overlay.drawn)).replace("  ", " ") == stop
    app.quit()


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
    from subtitler.pipeline.events import StatusEvent

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    action = app.tray.run_action
    assert action.text() == "Start" and action.isEnabled()
    states = []
    app.on_event(StatusEvent("loading"))
    states.append((action.text(), action.isEnabled()))
    app.start()
    qtbot.waitUntil(lambda: action.text() == "Pause", timeout=10_000)
    assert action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: action.text() == "Resume", timeout=10_000)
    assert states == [("Loading models…", False)]
    app.quit()


def test_quit_hides_every_window_before_it_waits_for_the_stop(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Quit waits for the pipeline's stop on the UI thread (up to 2 s with a recogniser
    behind): the overlay and the settings stood there frozen until it returned."""
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.start()
    app.overlay.show()
    app.open_settings()
    assert app.settings is not None and app.settings.isVisible()
    seen: list[tuple[bool, bool]] = []
    real_stop = app.session.stop

    def stop(timeout: float) -> bool:
        seen.append(
            (app.overlay.isVisible(), app.settings is not None and app.settings.isVisible())
        )
        return real_stop(timeout)

    app.session.stop = stop  # type: ignore[method-assign]
    app.quit()
    assert seen == [(False, False)]
    assert app.pipeline is None or app.pipeline.finished.is_set()  # and the stop was made


def test_the_apps_errors_are_kept_bounded(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every problem said in the app's life was kept, a string each: the list only grew for
    as long as the app ran. The newest are kept; the overlay says the newest as before."""
    from subtitler.pipeline.events import ErrorEvent

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    said = [f"translation failed: outage {i}" for i in range(3000)]
    for message in said:
        app.on_event(ErrorEvent("mt", message))
    kept = list(app.errors)
    assert 0 < len(kept) <= 1000
    assert kept == said[-len(kept) :]  # the newest, in order
    assert app.overlay.alert == said[-1]
