"""Global hotkeys on Windows: RegisterHotKey, with WM_HOTKEY read from Qt's own message loop.

The hotkeys belong to the GUI thread (no window handle): Windows posts WM_HOTKEY to that
thread's queue, and Qt's event dispatcher shows every message it takes from there to native
event filters as "windows_generic_MSG" before dispatching it. A window handle would not do:
Qt makes a new one for the overlay each time click-through is switched.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from ctypes import wintypes
from typing import Any

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication, Qt

from subtitler.ui.hotkeys.chord import F_KEYS, FIRST_SPECIAL_KEY, TAKEN, Chord

log = logging.getLogger(__name__)

WM_HOTKEY = 0x0312
MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x1, 0x2, 0x4, 0x8, 0x4000
ERROR_HOTKEY_ALREADY_REGISTERED = 1409
FIRST_ID, LAST_ID = 0x0001, 0xBFFF  # ids an application may use (0xC000.. are for DLLs)

_VK = {
    Qt.Key.Key_Backspace: 0x08,
    Qt.Key.Key_Tab: 0x09,
    Qt.Key.Key_Return: 0x0D,
    Qt.Key.Key_Enter: 0x0D,
    Qt.Key.Key_Pause: 0x13,
    Qt.Key.Key_Escape: 0x1B,
    Qt.Key.Key_Space: 0x20,
    Qt.Key.Key_PageUp: 0x21,
    Qt.Key.Key_PageDown: 0x22,
    Qt.Key.Key_End: 0x23,
    Qt.Key.Key_Home: 0x24,
    Qt.Key.Key_Left: 0x25,
    Qt.Key.Key_Up: 0x26,
    Qt.Key.Key_Right: 0x27,
    Qt.Key.Key_Down: 0x28,
    Qt.Key.Key_Print: 0x2C,
    Qt.Key.Key_Insert: 0x2D,
    Qt.Key.Key_Delete: 0x2E,
    Qt.Key.Key_Menu: 0x5D,
    Qt.Key.Key_ScrollLock: 0x91,
}


def load_user32() -> Any:
    """user32.dll with the calls used here typed, and Windows' last error kept per call."""
    user32 = ctypes.WinDLL("user32", use_last_error=True)  # type: ignore[attr-defined]
    user32.RegisterHotKey.argtypes = [wintypes.HWND, ctypes.c_int, wintypes.UINT, wintypes.UINT]
    user32.RegisterHotKey.restype = wintypes.BOOL
    user32.UnregisterHotKey.argtypes = [wintypes.HWND, ctypes.c_int]
    user32.UnregisterHotKey.restype = wintypes.BOOL
    user32.VkKeyScanW.argtypes = [wintypes.WCHAR]
    user32.VkKeyScanW.restype = ctypes.c_short
    return user32


def virtual_key(chord: Chord, vk_key_scan: Callable[[str], int]) -> int | None:
    """The Windows virtual-key code of the chord's key, or None when this keyboard has none."""
    key = chord.key
    if key in F_KEYS:
        return 0x70 + key - Qt.Key.Key_F1.value if key <= Qt.Key.Key_F24.value else None
    if key < FIRST_SPECIAL_KEY:
        ch = chr(key).lower()  # Qt names letters by their capital; the key types both
        if ch.isascii() and ch.isalnum():
            return ord(ch.upper())  # VK_A..VK_Z and VK_0..VK_9 follow the layout's letters
        scan = vk_key_scan(ch)  # others: where the current layout has it (low byte)
        return None if scan == -1 else scan & 0xFF
    for k, vk in _VK.items():
        if k.value == key:
            return vk
    return None


class WindowsHotkeys(QAbstractNativeEventFilter):
    """Hotkeys of the GUI thread. ``user32`` and ``last_error`` are for tests."""

    def __init__(self, user32: Any = None, last_error: Callable[[], int] | None = None) -> None:
        super().__init__()
        self.note = ""
        self._user32 = user32 if user32 is not None else load_user32()
        self._last_error = last_error or ctypes.get_last_error  # type: ignore[attr-defined]
        self._actions: dict[int, Callable[[], None]] = {}
        self._next_id = FIRST_ID
        app = QCoreApplication.instance()
        if app is None:
            raise OSError("hotkeys need the Qt application first")
        app.installNativeEventFilter(self)

    def register(self, chord: Chord, callback: Callable[[], None]) -> str:
        vk = virtual_key(chord, lambda ch: int(self._user32.VkKeyScanW(ch)))
        if vk is None:
            return chord.no_key()
        mods = (
            (MOD_CONTROL if chord.ctrl else 0)
            | (MOD_SHIFT if chord.shift else 0)
            | (MOD_ALT if chord.alt else 0)
            | (MOD_WIN if chord.meta else 0)
        )
        hotkey_id = self._next_id
        # MOD_NOREPEAT: a key held down fires once, not at the keyboard's repeat rate.
        if not self._user32.RegisterHotKey(None, hotkey_id, mods | MOD_NOREPEAT, vk):
            err = self._last_error()
            return (
                TAKEN
                if err == ERROR_HOTKEY_ALREADY_REGISTERED
                else (f"Windows refused it (error {err})")
            )
        self._next_id = FIRST_ID + (hotkey_id - FIRST_ID + 1) % (LAST_ID - FIRST_ID + 1)
        self._actions[hotkey_id] = callback
        return ""

    def unregister_all(self) -> None:
        for hotkey_id in self._actions:
            if not self._user32.UnregisterHotKey(None, hotkey_id):
                log.warning(
                    "could not give back hotkey %d (error %d)", hotkey_id, self._last_error()
                )
        self._actions.clear()

    def close(self) -> None:
        self.unregister_all()
        app = QCoreApplication.instance()
        if app is not None:
            app.removeNativeEventFilter(self)

    def nativeEventFilter(self, event_type: Any, message: Any) -> tuple[bool, int]:
        if bytes(event_type) != b"windows_generic_MSG":
            return False, 0
        msg = wintypes.MSG.from_address(int(message))
        if msg.message != WM_HOTKEY:
            return False, 0
        action = self._actions.get(int(msg.wParam))
        if action is None:
            return False, 0
        try:
            action()
        except Exception:
            log.exception("hotkey action failed")
        return True, 0
