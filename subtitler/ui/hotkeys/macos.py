"""Global hotkeys on macOS: Carbon's RegisterEventHotKey through ctypes.

Still the one macOS service for this that asks for no permission (event taps need
Accessibility or Input Monitoring). Its presses arrive as Carbon events on the application
event target, which Qt's Cocoa event loop dispatches; the handler runs on the GUI thread.

RegisterEventHotKey takes a key's place on the keyboard (a virtual key code), not a
character: the current layout is read (UCKeyTranslate) to find where a letter is, so
Cmd+Shift+A is the key that types "a" on AZERTY as on QWERTY. Keys that type nothing (F1..,
arrows) have fixed codes.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt

from subtitler.ui.hotkeys.chord import F_KEYS, TAKEN, Chord

log = logging.getLogger(__name__)

CARBON = "/System/Library/Frameworks/Carbon.framework/Carbon"
NO_ERR, EVENT_NOT_HANDLED_ERR = 0, -9874
EVENT_HOTKEY_EXISTS_ERR = -9878
CMD_KEY, SHIFT_KEY, OPTION_KEY, CONTROL_KEY = 0x0100, 0x0200, 0x0800, 0x1000
K_EVENT_HOTKEY_PRESSED = 5
UC_KEY_ACTION_DISPLAY, UC_NO_DEAD_KEYS = 3, 1


def fourcc(code: str) -> int:
    return int.from_bytes(code.encode("ascii"), "big")


SIGNATURE = fourcc("sbtl")  # marks our hotkeys' ids among the app's
K_EVENT_CLASS_KEYBOARD = fourcc("keyb")
K_EVENT_PARAM_DIRECT_OBJECT = fourcc("----")
TYPE_EVENT_HOTKEY_ID = fourcc("hkid")


class EventHotKeyID(ctypes.Structure):
    _fields_ = [("signature", ctypes.c_uint32), ("id", ctypes.c_uint32)]


class EventTypeSpec(ctypes.Structure):
    _fields_ = [("eventClass", ctypes.c_uint32), ("eventKind", ctypes.c_uint32)]


# OSStatus handler(EventHandlerCallRef, EventRef, void *userData)
EVENT_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

# Virtual key codes (HIToolbox/Events.h, kVK_*): fixed keys, and the US layout's characters
# for when the current layout cannot be read.
_FIXED = {
    Qt.Key.Key_Return: 0x24,
    Qt.Key.Key_Enter: 0x4C,
    Qt.Key.Key_Tab: 0x30,
    Qt.Key.Key_Space: 0x31,
    Qt.Key.Key_Backspace: 0x33,
    Qt.Key.Key_Escape: 0x35,
    Qt.Key.Key_Delete: 0x75,
    Qt.Key.Key_Home: 0x73,
    Qt.Key.Key_End: 0x77,
    Qt.Key.Key_PageUp: 0x74,
    Qt.Key.Key_PageDown: 0x79,
    Qt.Key.Key_Left: 0x7B,
    Qt.Key.Key_Right: 0x7C,
    Qt.Key.Key_Down: 0x7D,
    Qt.Key.Key_Up: 0x7E,
}
F_KEY_CODES = (  # F1..F20
    0x7A, 0x78, 0x63, 0x76, 0x60, 0x61, 0x62, 0x64, 0x65, 0x6D,
    0x67, 0x6F, 0x69, 0x6B, 0x71, 0x6A, 0x40, 0x4F, 0x50, 0x5A,
)  # fmt: skip
US_LAYOUT = {
    "a": 0x00, "s": 0x01, "d": 0x02, "f": 0x03, "h": 0x04, "g": 0x05, "z": 0x06, "x": 0x07,
    "c": 0x08, "v": 0x09, "b": 0x0B, "q": 0x0C, "w": 0x0D, "e": 0x0E, "r": 0x0F, "y": 0x10,
    "t": 0x11, "1": 0x12, "2": 0x13, "3": 0x14, "4": 0x15, "6": 0x16, "5": 0x17, "=": 0x18,
    "9": 0x19, "7": 0x1A, "-": 0x1B, "8": 0x1C, "0": 0x1D, "]": 0x1E, "o": 0x1F, "u": 0x20,
    "[": 0x21, "i": 0x22, "p": 0x23, "l": 0x25, "j": 0x26, "'": 0x27, "k": 0x28, ";": 0x29,
    "\\": 0x2A, ",": 0x2B, "/": 0x2C, "n": 0x2D, "m": 0x2E, ".": 0x2F, "`": 0x32,
}  # fmt: skip
# Qt names a key pressed with Shift by what it types then ("Ctrl+Shift+!"): the US places.
US_LAYOUT.update(
    zip('!@#$%^&*()_+{}|:"<>?~', [US_LAYOUT[c] for c in "1234567890-=[]\\;',./`"], strict=True)
)
SHIFT_STATE = SHIFT_KEY >> 8  # UCKeyTranslate takes the modifiers shifted down by 8


def load_carbon() -> Any:
    """Carbon (with the CoreFoundation calls it re-exports), the calls used here typed."""
    lib: Any = ctypes.CDLL(CARBON)
    vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    sig: dict[str, tuple[Any, list[Any]]] = {
        "GetApplicationEventTarget": (vp, []),
        "RegisterEventHotKey": (i32, [u32, u32, EventHotKeyID, vp, u32, ctypes.POINTER(vp)]),
        "UnregisterEventHotKey": (i32, [vp]),
        "InstallEventHandler": (
            i32,
            [
                vp,
                EVENT_HANDLER,
                ctypes.c_ulong,
                ctypes.POINTER(EventTypeSpec),
                vp,
                ctypes.POINTER(vp),
            ],
        ),
        "RemoveEventHandler": (i32, [vp]),
        "GetEventParameter": (i32, [vp, u32, u32, vp, ctypes.c_ulong, vp, vp]),
        "TISCopyCurrentKeyboardLayoutInputSource": (vp, []),
        "TISGetInputSourceProperty": (vp, [vp, vp]),
        "CFDataGetBytePtr": (vp, [vp]),
        "CFRelease": (None, [vp]),
        "LMGetKbdType": (ctypes.c_uint8, []),
        "UCKeyTranslate": (
            i32,
            [
                vp,
                ctypes.c_uint16,
                ctypes.c_uint16,
                u32,
                u32,
                u32,
                ctypes.POINTER(u32),
                ctypes.c_ulong,
                ctypes.POINTER(ctypes.c_ulong),
                ctypes.POINTER(ctypes.c_uint16),
            ],
        ),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    lib.layout_data_key = ctypes.c_void_p.in_dll(lib, "kTISPropertyUnicodeKeyLayoutData").value
    return lib


def layout_keys(carbon: Any) -> dict[str, int]:
    """Character -> virtual key code on the current keyboard layout ({} if unreadable)."""
    source = carbon.TISCopyCurrentKeyboardLayoutInputSource()
    if not source:
        return {}
    try:
        data = carbon.TISGetInputSourceProperty(source, carbon.layout_data_key)
        layout = carbon.CFDataGetBytePtr(data) if data else None
        if not layout:
            return {}
        kbd = carbon.LMGetKbdType()
        out: dict[str, int] = {}
        # Unshifted first: "1" is the 1 key, "!" then where Shift types it (Qt names a key
        # pressed with Shift by that). Main keys have lower codes than the keypad: they win.
        for state in (0, SHIFT_STATE):
            for code in range(128):
                dead, length = ctypes.c_uint32(0), ctypes.c_ulong(0)
                chars = (ctypes.c_uint16 * 4)()
                status = carbon.UCKeyTranslate(
                    layout, code, UC_KEY_ACTION_DISPLAY, state, kbd, UC_NO_DEAD_KEYS,
                    ctypes.byref(dead), 4, ctypes.byref(length), chars,
                )  # fmt: skip
                if status == NO_ERR and length.value == 1:
                    out.setdefault(chr(chars[0]).lower(), code)
        return out
    finally:
        carbon.CFRelease(source)


def key_code(chord: Chord, layout: dict[str, int]) -> int | None:
    if chord.key in F_KEYS:
        n = chord.key - Qt.Key.Key_F1.value
        return F_KEY_CODES[n] if n < len(F_KEY_CODES) else None
    if chord.char:
        # A layout without the letter (Cyrillic, Greek): macOS shortcuts use the US place.
        return layout.get(chord.char, US_LAYOUT.get(chord.char))
    for k, code in _FIXED.items():
        if k.value == chord.key:
            return code
    return None


class MacHotkeys:
    """Carbon hotkeys; ``carbon`` is for tests (a table of fake functions)."""

    def __init__(self, carbon: Any = None) -> None:
        self.note = ""
        self._carbon = carbon if carbon is not None else load_carbon()
        self._refs: dict[int, ctypes.c_void_p] = {}  # our id -> EventHotKeyRef
        self._actions: dict[int, Callable[[], None]] = {}
        self._next_id = 1
        self._handler = EVENT_HANDLER(self._on_event)  # kept alive: Carbon calls it later
        self._handler_ref = ctypes.c_void_p()
        spec = EventTypeSpec(K_EVENT_CLASS_KEYBOARD, K_EVENT_HOTKEY_PRESSED)
        status = self._carbon.InstallEventHandler(
            self._carbon.GetApplicationEventTarget(), self._handler, 1, ctypes.byref(spec),
            None, ctypes.byref(self._handler_ref),
        )  # fmt: skip
        if status != NO_ERR:
            raise OSError(f"macOS refused the hotkey handler (error {status})")
        try:
            self._layout = layout_keys(self._carbon)
        except (OSError, ValueError) as e:
            log.warning("keyboard layout not readable (%s): letters as on a US keyboard", e)
            self._layout = {}
        # Qt names Command "Ctrl" and Control "Meta" on macOS, unless the app turned that off.
        swapped = not QCoreApplication.testAttribute(
            Qt.ApplicationAttribute.AA_MacDontSwapCtrlAndMeta
        )
        self._ctrl, self._meta = (CMD_KEY, CONTROL_KEY) if swapped else (CONTROL_KEY, CMD_KEY)

    def register(self, chord: Chord, callback: Callable[[], None]) -> str:
        code = key_code(chord, self._layout)
        if code is None:
            return chord.no_key()
        mods = (
            (self._ctrl if chord.ctrl else 0)
            | (SHIFT_KEY if chord.shift else 0)
            | (OPTION_KEY if chord.alt else 0)
            | (self._meta if chord.meta else 0)
        )
        hotkey_id = self._next_id
        ref = ctypes.c_void_p()
        status = self._carbon.RegisterEventHotKey(
            code, mods, EventHotKeyID(SIGNATURE, hotkey_id),
            self._carbon.GetApplicationEventTarget(), 0, ctypes.byref(ref),
        )  # fmt: skip
        if status != NO_ERR:
            return (
                TAKEN if status == EVENT_HOTKEY_EXISTS_ERR else f"macOS refused it (error {status})"
            )
        self._next_id += 1
        self._refs[hotkey_id] = ref
        self._actions[hotkey_id] = callback
        return ""

    def unregister_all(self) -> None:
        for hotkey_id, ref in self._refs.items():
            status = self._carbon.UnregisterEventHotKey(ref)
            if status != NO_ERR:
                log.warning("could not give back hotkey %d (error %d)", hotkey_id, status)
        self._refs.clear()
        self._actions.clear()

    def close(self) -> None:
        self.unregister_all()
        if self._handler_ref:
            self._carbon.RemoveEventHandler(self._handler_ref)
            self._handler_ref = ctypes.c_void_p()

    def _on_event(self, _call: Any, event: Any, _user: Any) -> int:
        hk = EventHotKeyID()
        status = self._carbon.GetEventParameter(
            event, K_EVENT_PARAM_DIRECT_OBJECT, TYPE_EVENT_HOTKEY_ID, None,
            ctypes.sizeof(hk), None, ctypes.byref(hk),
        )  # fmt: skip
        action = self._actions.get(hk.id) if hk.signature == SIGNATURE else None
        if status != NO_ERR or action is None:
            return EVENT_NOT_HANDLED_ERR  # another part of the app registered it
        try:
            action()
        except Exception:
            log.exception("hotkey action failed")
        return NO_ERR
