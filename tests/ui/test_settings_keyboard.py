"""Settings by keyboard alone."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from subtitler.config import AppConfig
from subtitler.ui.settings_pane import SettingsPane


@pytest.mark.parametrize(
    ("key", "mods"),
    [
        (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier),  # (what a keyboard sends)
        (Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier),
    ],
)
def test_shift_tab_leaves_a_hotkey_recorder_and_is_not_recorded(  # type: ignore[no-untyped-def]
    qtbot, key: Qt.Key, mods: Qt.KeyboardModifier
) -> None:
    """Shift+Tab out of the pause key's recorder was recorded as the hotkey 'Shift+Backtab',
    and focus stayed: going back through the Hotkeys tab changed the key and never left."""
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    hotkeys = [pane.tabs.tabText(i) for i in range(pane.tabs.count())].index("Hotkeys")
    pane.tabs.setCurrentIndex(hotkeys)
    pane.show()
    pane.activateWindow()
    qtbot.waitActive(pane)
    before = pane.key_pause.keySequence().toString()
    pane.key_pause.setFocus()
    qtbot.keyClick(pane.key_pause, key, mods)
    assert pane.key_pause.keySequence().toString() == before
    assert pane.focusWidget() is not pane.key_pause
    assert not pane.key_pause.isAncestorOf(pane.focusWidget())
    qtbot.keyClick(pane.key_click, Qt.Key.Key_Tab)  # and Tab forward, as before
    assert pane.key_click.keySequence().toString() == "Ctrl+Shift+F9"


def test_a_hotkey_is_still_recorded_with_its_modifiers(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    pane.show()
    pane.key_pause.setFocus()
    ctrl_alt = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    qtbot.keyClick(pane.key_pause, Qt.Key.Key_K, ctrl_alt)  # (Ctrl and Alt pressed first)
    assert pane.values().display.hotkey_pause == "Ctrl+Alt+K"
