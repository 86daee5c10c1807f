"""Hotkey text -> one key and modifiers, that key in each OS's terms, and desktops without
global hotkeys (Wayland)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from subtitler.config import AppConfig, DisplayConfig, MtConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.hotkeys import GlobalHotkeys, platform_backend, replace_old_defaults
from subtitler.ui.hotkeys.chord import Chord, HotkeyError, Unavailable, parse_chord
from subtitler.ui.hotkeys.macos import key_code
from subtitler.ui.hotkeys.windows import virtual_key
from subtitler.ui.hotkeys.x11 import keysym
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for

F9 = Qt.Key.Key_F9.value


def test_parse_takes_one_combination_with_a_modifier() -> None:
    assert parse_chord("Ctrl+Shift+F9") == Chord(F9, ctrl=True, shift=True)
    assert parse_chord("Meta+Alt+K") == Chord(ord("K"), alt=True, meta=True)
    assert parse_chord("F9") == Chord(F9)  # a function key alone types nothing: allowed
    with pytest.raises(HotkeyError, match="one key combination"):
        parse_chord("Ctrl+K, Ctrl+C")
    for alone in ("A", "Shift+A", "Return", "Shift+Left"):
        with pytest.raises(HotkeyError, match="alone would stop working in every other app"):
            parse_chord(alone)
    with pytest.raises(HotkeyError):
        parse_chord("Ctrl+Nonsense")
    with pytest.raises(HotkeyError, match="no key besides"):
        parse_chord("Ctrl+Shift")


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("foo bar", "“foo bar” is not a key name"),
        ("Ctrl+Nonsense", "“Nonsense” is not a key name (in “Ctrl+Nonsense”)"),
        ("ctrl+shift+foo", "“foo” is not a key name (in “ctrl+shift+foo”)"),
        ("foo+F9", "“foo” is not a key name (in “foo+F9”)"),
    ],
)
def test_a_word_that_is_no_key_is_named(typed: str, said: str) -> None:
    """Words that name no key ("foo bar") were said to have "no key besides the modifiers"."""
    with pytest.raises(HotkeyError) as e:
        parse_chord(typed)
    assert str(e.value) == said


def test_register_explains_what_cannot_be_a_hotkey(qapp) -> None:  # type: ignore[no-untyped-def]
    hotkeys = GlobalHotkeys(Unavailable("note", "refused here"))
    assert hotkeys.register("", lambda: None) == ""  # no hotkey: nothing to say
    assert hotkeys.register("Ctrl+K, Ctrl+C", lambda: None).startswith("a global hotkey is one")
    assert hotkeys.register("Ctrl+Shift+F9", lambda: None) == "refused here"
    assert not hotkeys.available and hotkeys.note == "note"


def test_x11_keysyms() -> None:
    assert keysym(F9) == 0xFFC6
    assert keysym(ord("A")) == ord("a")  # the key, not the capital
    assert keysym(ord(",")) == 0x2C
    assert keysym(0xC4) == 0xE4  # Ä -> the ä key
    assert keysym(0x142) == 0x1000142  # ł: Unicode keysym
    assert keysym(Qt.Key.Key_PageUp.value) == 0xFF55
    assert keysym(Qt.Key.Key_VolumeUp.value) is None


def test_windows_virtual_keys() -> None:
    scans = {",": 0x00BC, "ä": 0x00DE, "€": -1}  # VkKeyScanW on a German layout
    vk = lambda k: virtual_key(Chord(k, ctrl=True), scans.__getitem__)  # noqa: E731
    assert vk(F9) == 0x78
    assert vk(Qt.Key.Key_F24.value) == 0x87 and vk(Qt.Key.Key_F25.value) is None
    assert vk(ord("A")) == 0x41 and vk(ord("5")) == 0x35
    assert vk(ord(",")) == 0xBC and vk(0xC4) == 0xDE
    assert vk(0x20AC) is None  # no key types it on this layout
    assert vk(Qt.Key.Key_Left.value) == 0x25


def test_macos_key_codes_follow_the_layout() -> None:
    code = lambda k, layout: key_code(Chord(k, ctrl=True), layout)  # noqa: E731
    assert code(F9, {}) == 0x65
    assert code(ord("A"), {}) == 0x00  # layout unreadable: the US place
    azerty = {"a": 0x0C, "q": 0x00, "z": 0x0D, "w": 0x06, "m": 0x29}
    assert code(ord("A"), azerty) == 0x0C and code(ord("M"), azerty) == 0x29
    assert code(ord("A"), {"ф": 0x00}) == 0x00  # Cyrillic: shortcuts use the US place
    assert code(Qt.Key.Key_Left.value, azerty) == 0x7B
    assert code(Qt.Key.Key_F21.value, {}) is None
    assert code(ord("!"), {}) == 0x12  # Shift+1 on a US keyboard, as Qt names it


def test_settings_with_both_old_defaults_move_to_the_new_ones() -> None:
    d = DisplayConfig(hotkey_click_through="Ctrl+Shift+T", hotkey_pause="Ctrl+Shift+P")
    moved = replace_old_defaults(d)
    assert moved is not None
    new = DisplayConfig()
    assert (moved.hotkey_click_through, moved.hotkey_pause) == (
        new.hotkey_click_through,
        new.hotkey_pause,
    )
    assert "T" not in new.hotkey_click_through and "P" not in new.hotkey_pause
    chosen = DisplayConfig(hotkey_click_through="Ctrl+Shift+T", hotkey_pause="Ctrl+Alt+F8")
    assert replace_old_defaults(chosen) is None  # one was changed: the user chose both
    assert chosen.hotkey_click_through == "Ctrl+Shift+T"


def test_wayland_has_no_global_hotkeys_and_the_tab_says_what_to_do(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hotkeys = GlobalHotkeys(platform_backend("wayland"))
    assert not hotkeys.available
    assert "not available on Wayland" in hotkeys.note and "tray" in hotkeys.note
    assert "subtitler --toggle click-through" in hotkeys.note
    cfg = AppConfig(mt=MtConfig(model_path="x"))
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path, hotkeys=hotkeys
    )
    qtbot.addWidget(app.overlay)
    assert "Hotkey" not in app.overlay.alert  # said in the tab, not at every start
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    assert not pane.key_click.isEnabled() and not pane.key_pause.isEnabled()
    assert pane.keys_note.text() == hotkeys.note
    assert all(label.isHidden() for label in pane.key_problems.values())
    # The desktop's own shortcut runs `subtitler --toggle ...`, which lands here.
    app.toggle("click-through")
    assert app.overlay.click_through
    app.toggle("click-through")
    assert not app.overlay.click_through


def test_a_display_without_hotkeys_says_so(qapp) -> None:  # type: ignore[no-untyped-def]
    backend = platform_backend("offscreen")
    assert isinstance(backend, Unavailable)
    assert backend.register(Chord(F9, ctrl=True), lambda: None) == (
        "no global hotkeys on this display (offscreen)"
    )
