"""Settings → Audio: the meeting's audio as a second input, and the microphone's own languages."""

from __future__ import annotations

from subtitler.config import AppConfig, with_settings
from subtitler.ui.settings_pane import NO_MEETING_AUDIO, Choices, SettingsPane

DEVICES = [
    ("Mic A (ALSA)", "Mic A"),
    ("Monitor of Speakers  · meeting audio", "Monitor of Speakers"),
]


def test_meeting_audio_is_chosen_in_plain_words_and_saved(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig(), Choices(input_devices=lambda: list(DEVICES)))
    qtbot.addWidget(pane)
    combo = pane.meeting
    items = [combo.itemText(i) for i in range(combo.count())]
    # Off first; the inputs that record what the speakers play come before the microphones.
    assert items == [NO_MEETING_AUDIO, DEVICES[1][0], DEVICES[0][0]]
    assert pane.values().audio.meeting_device is None
    # The microphone's own languages apply only with two sides.
    assert not pane.widget("asr.you_language").isEnabled()
    assert not pane.widget("mt.you_targets").isEnabled()
    combo.setCurrentIndex(1)
    assert pane.widget("asr.you_language").isEnabled()
    you = pane.widget("asr.you_language")
    you.setCurrentIndex(you.findData("ja"))
    pane.widget("mt.you_targets").setText("en, de")
    cfg = pane.values()
    assert cfg.audio.meeting_device == "Monitor of Speakers"
    assert (cfg.asr.you_language, cfg.mt.you_targets) == ("ja", "en, de")


def test_a_meeting_input_that_is_away_stays_chosen(qtbot) -> None:  # type: ignore[no-untyped-def]
    cfg = with_settings(AppConfig(), {"audio.meeting_device": "BlackHole 2ch"})
    pane = SettingsPane(cfg, Choices(input_devices=lambda: list(DEVICES)))
    qtbot.addWidget(pane)
    assert pane.meeting.currentText() == "BlackHole 2ch (not connected)"
    assert pane.values().audio.meeting_device == "BlackHole 2ch"
