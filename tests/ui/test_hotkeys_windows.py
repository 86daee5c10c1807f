"""The Windows hotkeys through their API seam: a user32 table that behaves as Windows does
(RegisterHotKey refuses a combination another program holds, with error 1409), and WM_HOTKEY
messages handed to the native event filter as Qt's event dispatcher hands them over."""

from __future__ import annotations

import ctypes
from ctypes import wintypes
from pathlib import Path

from subtitler.config import AppConfig, DisplayConfig, MtConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.ui import app as app_module
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.hotkeys import GlobalHotkeys
from subtitler.ui.hotkeys.chord import TAKEN
from subtitler.ui.hotkeys.windows import (
    ERROR_HOTKEY_ALREADY_REGISTERED,
    MOD_ALT,
    MOD_CONTROL,
    MOD_NOREPEAT,
    MOD_SHIFT,
    WM_HOTKEY,
    WindowsHotkeys,
)
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for

VK_F9, VK_F10, VK_F11 = 0x78, 0x79, 0x7A
WM_KEYDOWN = 0x0100


class User32:
    """Windows' hotkey table for one thread: (modifiers, vk) pairs are unique system-wide."""

    def __init__(self, held_elsewhere: set[tuple[int, int]]) -> None:
        self.held_elsewhere = held_elsewhere
        self.table: dict[int, tuple[int, int]] = {}  # id -> (mods without NOREPEAT, vk)
        self.calls: list[tuple[str, int]] = []
        self.error = 0

    def RegisterHotKey(self, hwnd: object, hotkey_id: int, mods: int, vk: int) -> bool:
        assert hwnd is None  # the thread's hotkeys: WM_HOTKEY goes to its message queue
        self.calls.append(("register", hotkey_id))
        combo = (mods & ~MOD_NOREPEAT, vk)
        if combo in self.held_elsewhere or combo in self.table.values() or hotkey_id in self.table:
            self.error = ERROR_HOTKEY_ALREADY_REGISTERED
            return False
        self.table[hotkey_id] = combo
        return True

    def UnregisterHotKey(self, hwnd: object, hotkey_id: int) -> bool:
        self.calls.append(("unregister", hotkey_id))
        return self.table.pop(hotkey_id, None) is not None

    def VkKeyScanW(self, ch: str) -> int:
        return {",": 0xBC}.get(ch, -1)

    def press(self, backend: WindowsHotkeys, mods: int, vk: int) -> tuple[bool, int]:
        """What Windows does for a registered combination: a WM_HOTKEY in the thread's
        queue, which Qt's dispatcher shows to the native event filters."""
        ids = [i for i, combo in self.table.items() if combo == (mods, vk)]
        msg = wintypes.MSG()
        msg.hWnd = None
        msg.message = WM_HOTKEY if ids else WM_KEYDOWN
        msg.wParam = ids[0] if ids else vk
        msg.lParam = (vk << 16) | mods
        return backend.nativeEventFilter(b"windows_generic_MSG", ctypes.addressof(msg))


def test_register_dispatch_and_conflict(qapp) -> None:  # type: ignore[no-untyped-def]
    user32 = User32(held_elsewhere={(MOD_CONTROL | MOD_SHIFT, VK_F10)})
    backend = WindowsHotkeys(user32, last_error=lambda: user32.error)
    hotkeys = GlobalHotkeys(backend)
    hits: list[str] = []
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("click")) == ""
    assert hotkeys.register("Ctrl+Shift+F10", lambda: hits.append("pause")) == TAKEN
    assert hotkeys.register("Ctrl+Alt+,", lambda: hits.append("comma")) == ""
    assert list(user32.table.values()) == [
        (MOD_CONTROL | MOD_SHIFT, VK_F9),
        (MOD_ALT | MOD_CONTROL, 0xBC),
    ]
    click_id, comma_id = user32.table
    assert click_id != comma_id and all(0 < i <= 0xBFFF for i in user32.table)
    assert user32.press(backend, MOD_CONTROL | MOD_SHIFT, VK_F9) == (True, 0)
    assert user32.press(backend, MOD_ALT | MOD_CONTROL, 0xBC) == (True, 0)
    assert hits == ["click", "comma"]
    # Anything else passes through to Qt untouched.
    assert user32.press(backend, MOD_CONTROL | MOD_SHIFT, VK_F10) == (False, 0)
    assert backend.nativeEventFilter(b"windows_dispatcher_MSG", 0) == (False, 0)
    assert hits == ["click", "comma"]
    hotkeys.unregister_all()
    assert user32.table == {} and ("unregister", click_id) in user32.calls
    msg = wintypes.MSG(None, WM_HOTKEY, click_id, 0, 0)  # one still queued from before
    assert backend.nativeEventFilter(b"windows_generic_MSG", ctypes.addressof(msg)) == (False, 0)
    assert hits == ["click", "comma"]
    hotkeys.close()


def test_app_rebinds_reports_and_gives_keys_back_at_quit(
    qtbot, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    user32 = User32(held_elsewhere={(MOD_CONTROL | MOD_SHIFT, VK_F10)})
    backend = WindowsHotkeys(user32, last_error=lambda: user32.error)
    cfg = AppConfig(mt=MtConfig(model_path="x"), display=DisplayConfig(click_through=True))
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path,
        hotkeys=GlobalHotkeys(backend),
    )  # fmt: skip
    qtbot.addWidget(app.overlay)
    assert app.hotkey_problems == {"hotkey_click_through": "", "hotkey_pause": TAKEN}
    assert "Hotkey Ctrl+Shift+F10: another app already uses" in app.overlay.alert
    (first_id,) = user32.table
    assert user32.press(backend, MOD_CONTROL | MOD_SHIFT, VK_F9) == (True, 0)
    assert not app.overlay.click_through  # switched off while another app had focus
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    assert "Another app already uses" in pane.key_problems["hotkey_pause"].text()
    pane.key_pause.setKeySequence("Ctrl+Shift+F11")
    assert pane.apply()
    # Rebinding gives every old key back before taking the new ones.
    assert ("unregister", first_id) in user32.calls and first_id not in user32.table
    assert sorted(user32.table.values()) == [
        (MOD_CONTROL | MOD_SHIFT, VK_F9),
        (MOD_CONTROL | MOD_SHIFT, VK_F11),
    ]
    assert pane.key_problems["hotkey_pause"].isHidden()
    monkeypatch.setattr(app_module.QApplication, "quit", staticmethod(lambda: None))
    app.quit()
    assert user32.table == {}  # all given back at quit
