"""Global hotkeys on X11: passive key grabs on the root window (XGrabKey in xcb's terms).

Through ctypes on libxcb and libxcb-keysyms, the libraries Qt's own X11 plugin loads (so
nothing new to install), on a connection of our own:

- xcb answers each checked request with its own error, so a grab another client holds
  (BadAccess) is seen for that one key; Xlib would report it through one process-wide error
  handler, which Qt's GLX code also sets.
- Our grabs' key events arrive on our connection only. A native event filter on Qt's
  connection would run Python for every X event the app gets (each mouse move); here Python
  runs for hotkey presses alone, read when a QSocketNotifier sees the connection's socket
  readable (no thread, no polling).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSocketNotifier, Qt

from subtitler.ui.hotkeys.chord import F_KEYS, FIRST_SPECIAL_KEY, TAKEN, Chord

log = logging.getLogger(__name__)

# X11 core protocol numbers
KEY_PRESS, KEY_RELEASE, MAPPING_NOTIFY = 2, 3, 34
BAD_ACCESS = 10
MAPPING_MODIFIER, MAPPING_KEYBOARD = 0, 1
SHIFT_MASK, LOCK_MASK, CONTROL_MASK = 1, 2, 4
GRAB_MODE_ASYNC = 1
MOD_MASKS = (SHIFT_MASK, LOCK_MASK, CONTROL_MASK, 8, 16, 32, 64, 128)  # Shift..Mod5

# Keysyms (X11/keysymdef.h) of the keys Qt names; characters are mapped by rule in keysym().
_KEYSYMS = {
    Qt.Key.Key_Escape: 0xFF1B,
    Qt.Key.Key_Tab: 0xFF09,
    Qt.Key.Key_Backspace: 0xFF08,
    Qt.Key.Key_Return: 0xFF0D,
    Qt.Key.Key_Enter: 0xFF8D,
    Qt.Key.Key_Insert: 0xFF63,
    Qt.Key.Key_Delete: 0xFFFF,
    Qt.Key.Key_Pause: 0xFF13,
    Qt.Key.Key_Print: 0xFF61,
    Qt.Key.Key_ScrollLock: 0xFF14,
    Qt.Key.Key_Home: 0xFF50,
    Qt.Key.Key_End: 0xFF57,
    Qt.Key.Key_Left: 0xFF51,
    Qt.Key.Key_Up: 0xFF52,
    Qt.Key.Key_Right: 0xFF53,
    Qt.Key.Key_Down: 0xFF54,
    Qt.Key.Key_PageUp: 0xFF55,
    Qt.Key.Key_PageDown: 0xFF56,
    Qt.Key.Key_Menu: 0xFF67,
}
KEYSYM_NUM_LOCK = 0xFF7F
KEYSYMS_ALT = (0xFFE9, 0xFFEA)  # Alt_L, Alt_R
KEYSYMS_SUPER = (0xFFEB, 0xFFEC)  # Super_L, Super_R
KEYSYMS_META = (0xFFE7, 0xFFE8)  # Meta_L, Meta_R: Alt on most layouts, looked up second


def keysym(key: int) -> int | None:
    """The X keysym of a Qt key, or None when X has none."""
    if key in F_KEYS:
        return 0xFFBE + key - Qt.Key.Key_F1.value
    if key < FIRST_SPECIAL_KEY:
        ch = chr(key).lower()  # Qt names letters by their capital; X grabs the key itself
        code = ord(ch)
        return code if 0x20 <= code <= 0xFF else 0x01000000 | code
    for k, sym in _KEYSYMS.items():
        if k.value == key:
            return sym
    return None


class _Cookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class _GenericError(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("error_code", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("resource_id", ctypes.c_uint32),
        ("minor_code", ctypes.c_uint16),
        ("major_code", ctypes.c_uint8),
    ]


class _KeyEvent(ctypes.Structure):
    """xcb_key_press_event_t (a release has the same layout)."""

    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("detail", ctypes.c_uint8),  # the keycode
        ("sequence", ctypes.c_uint16),
        ("time", ctypes.c_uint32),
        ("root", ctypes.c_uint32),
        ("event", ctypes.c_uint32),
        ("child", ctypes.c_uint32),
        ("root_x", ctypes.c_int16),
        ("root_y", ctypes.c_int16),
        ("event_x", ctypes.c_int16),
        ("event_y", ctypes.c_int16),
        ("state", ctypes.c_uint16),
        ("same_screen", ctypes.c_uint8),
    ]


class _MappingNotify(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("pad0", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("request", ctypes.c_uint8),
        ("first_keycode", ctypes.c_uint8),
        ("count", ctypes.c_uint8),
    ]


class _ScreenIterator(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("rem", ctypes.c_int), ("index", ctypes.c_int)]


class _ModMapReply(ctypes.Structure):
    _fields_ = [
        ("response_type", ctypes.c_uint8),
        ("keycodes_per_modifier", ctypes.c_uint8),
        ("sequence", ctypes.c_uint16),
        ("length", ctypes.c_uint32),
        ("pad0", ctypes.c_uint8 * 24),
    ]


def _load(name: str, soname: str) -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library(name) or soname)


class _Xcb:
    """The few libxcb / libxcb-keysyms calls used here, typed."""

    def __init__(self) -> None:
        x = _load("xcb", "libxcb.so.1")
        k = _load("xcb-keysyms", "libxcb-keysyms.so.1")
        c = _load("c", "libc.so.6")
        vp, u8, u16, u32 = ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32
        sig: dict[str, tuple[Any, Any, list[Any]]] = {
            "xcb_connect": (x, vp, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
            "xcb_connection_has_error": (x, ctypes.c_int, [vp]),
            "xcb_disconnect": (x, None, [vp]),
            "xcb_get_file_descriptor": (x, ctypes.c_int, [vp]),
            "xcb_get_setup": (x, vp, [vp]),
            "xcb_setup_roots_iterator": (x, _ScreenIterator, [vp]),
            "xcb_screen_next": (x, None, [ctypes.POINTER(_ScreenIterator)]),
            "xcb_grab_key_checked": (x, _Cookie, [vp, u8, u32, u16, u8, u8, u8]),
            "xcb_ungrab_key_checked": (x, _Cookie, [vp, u8, u32, u16]),
            "xcb_request_check": (x, ctypes.POINTER(_GenericError), [vp, _Cookie]),
            "xcb_poll_for_event": (x, vp, [vp]),
            "xcb_flush": (x, ctypes.c_int, [vp]),
            "xcb_get_modifier_mapping": (x, _Cookie, [vp]),
            "xcb_get_modifier_mapping_reply": (x, ctypes.POINTER(_ModMapReply), [vp, _Cookie, vp]),
            "xcb_get_modifier_mapping_keycodes": (x, ctypes.POINTER(u8), [vp]),
            "xcb_key_symbols_alloc": (k, vp, [vp]),
            "xcb_key_symbols_free": (k, None, [vp]),
            "xcb_key_symbols_get_keycode": (k, ctypes.POINTER(u8), [vp, u32]),
            "free": (c, None, [vp]),
        }
        for name, (lib, restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:  # for mypy: set in __init__
        raise AttributeError(name)


@dataclass(frozen=True)
class _Grab:
    keycode: int
    mods: int  # without the lock modifiers


class X11Hotkeys:
    """Key grabs on the root window of ``display`` (default: $DISPLAY)."""

    def __init__(self, display: str | None = None, note: str = "") -> None:
        self.note = note
        self._x = _Xcb()
        screen = ctypes.c_int(0)
        name = display if display is not None else os.environ.get("DISPLAY", "")
        self._conn = self._x.xcb_connect(name.encode() or None, ctypes.byref(screen))
        if not self._conn or self._x.xcb_connection_has_error(self._conn):
            if self._conn:
                self._x.xcb_disconnect(self._conn)
            self._conn = None
            raise OSError(f"cannot connect to the X display {name!r}")
        it = self._x.xcb_setup_roots_iterator(self._x.xcb_get_setup(self._conn))
        for _ in range(screen.value):
            self._x.xcb_screen_next(ctypes.byref(it))
        self._root = ctypes.c_uint32.from_address(it.data).value  # xcb_screen_t.root
        self._syms = self._x.xcb_key_symbols_alloc(self._conn)
        self._read_modifiers()
        self._wanted: list[tuple[Chord, Callable[[], None]]] = []
        self._grabs: dict[_Grab, Callable[[], None]] = {}
        self._down: set[int] = set()  # keycodes of grabbed keys held down
        self._released_at: dict[int, int] = {}  # keycode -> time of its last release
        self._notifier = QSocketNotifier(
            self._x.xcb_get_file_descriptor(self._conn), QSocketNotifier.Type.Read
        )
        self._notifier.activated.connect(self._drain)

    # -- keyboard map ----------------------------------------------------------------------
    def _keycodes(self, sym: int) -> list[int]:
        ptr = self._x.xcb_key_symbols_get_keycode(self._syms, sym)
        if not ptr:
            return []
        out: list[int] = []
        while ptr[len(out)]:  # XCB_NO_SYMBOL (0) ends the list
            out.append(ptr[len(out)])
        self._x.free(ptr)
        return sorted(set(out))

    def _read_modifiers(self) -> None:
        """Which of Mod1..Mod5 are Alt, Super and NumLock on this keyboard."""
        reply = self._x.xcb_get_modifier_mapping_reply(
            self._conn, self._x.xcb_get_modifier_mapping(self._conn), None
        )
        by_keycode: dict[int, int] = {}
        if reply:
            per = reply.contents.keycodes_per_modifier
            codes = self._x.xcb_get_modifier_mapping_keycodes(reply)
            for i in range(8 * per):
                if codes[i]:
                    by_keycode.setdefault(codes[i], MOD_MASKS[i // per])
            self._x.free(reply)

        def mask(syms: tuple[int, ...], default: int) -> int:
            for s in syms:
                for kc in self._keycodes(s):
                    if kc in by_keycode:
                        return by_keycode[kc]
            return default

        self._alt = mask(KEYSYMS_ALT + KEYSYMS_META, 8)  # Mod1 on nearly every layout
        self._super = mask(KEYSYMS_SUPER, 64)  # Mod4
        num_lock = mask((KEYSYM_NUM_LOCK,), 16)  # Mod2
        # A grab matches its modifiers exactly: also take the key with CapsLock / NumLock on.
        self._locks = (0, LOCK_MASK, num_lock, LOCK_MASK | num_lock)
        self._lock_bits = LOCK_MASK | num_lock

    def _mods(self, chord: Chord) -> int:
        return (
            (SHIFT_MASK if chord.shift else 0)
            | (CONTROL_MASK if chord.ctrl else 0)
            | (self._alt if chord.alt else 0)
            | (self._super if chord.meta else 0)
        )

    # -- grabs -----------------------------------------------------------------------------
    def register(self, chord: Chord, callback: Callable[[], None]) -> str:
        if self._conn is None or self._x.xcb_connection_has_error(self._conn):
            return "the connection to the X display is lost"
        reason = self._grab(chord, callback)
        if not reason:
            self._wanted.append((chord, callback))
        self._drain()  # events read while waiting for the answers are queued, unseen
        return reason

    def _grab(self, chord: Chord, callback: Callable[[], None]) -> str:
        sym = keysym(chord.key)
        keycodes = self._keycodes(sym) if sym is not None else []
        if not keycodes:
            return chord.no_key()
        mods = self._mods(chord)
        done: list[_Grab] = []
        for kc in keycodes:
            errors = [self._grab_key(kc, mods | lock) for lock in self._locks]
            grab = _Grab(kc, mods)
            if any(errors):
                self._ungrab(grab)  # the variants that did succeed
                for g in done:
                    self._ungrab(g)
                    del self._grabs[g]
                code = next(e for e in errors if e)
                return TAKEN if code == BAD_ACCESS else f"the X server refused it (error {code})"
            self._grabs[grab] = callback
            done.append(grab)
        return ""

    def _check(self, cookie: _Cookie) -> int:
        """Wait for a request's answer: 0, or the X error code."""
        err = self._x.xcb_request_check(self._conn, cookie)
        if not err:
            return 0
        code = int(err.contents.error_code)
        self._x.free(err)
        return code

    def _grab_key(self, keycode: int, mods: int) -> int:
        a = GRAB_MODE_ASYNC
        return self._check(
            self._x.xcb_grab_key_checked(self._conn, 1, self._root, mods, keycode, a, a)
        )

    def _ungrab(self, grab: _Grab) -> None:
        for lock in self._locks:
            self._check(
                self._x.xcb_ungrab_key_checked(
                    self._conn, grab.keycode, self._root, grab.mods | lock
                )
            )

    def unregister_all(self) -> None:
        if self._conn is None:
            return
        for g in self._grabs:
            self._ungrab(g)
        self._grabs.clear()
        self._down.clear()
        self._wanted.clear()
        self._x.xcb_flush(self._conn)

    def _regrab(self) -> None:
        """After a keyboard map change: the same keys may now have other keycodes or
        modifiers. (X also says so when input switches between keyboards, mapping
        unchanged: then nothing is done, so no press slips past between ungrab and grab.)"""
        self._x.xcb_key_symbols_free(self._syms)
        self._syms = self._x.xcb_key_symbols_alloc(self._conn)
        old_locks = self._locks
        self._read_modifiers()
        wanted = {
            _Grab(kc, self._mods(chord))
            for chord, _ in self._wanted
            for kc in self._keycodes(keysym(chord.key) or 0)
        }
        if wanted == set(self._grabs) and self._locks == old_locks:
            return
        new_locks, self._locks = self._locks, old_locks
        for g in self._grabs:
            self._ungrab(g)
        self._grabs.clear()
        self._locks = new_locks
        for chord, callback in self._wanted:
            if reason := self._grab(chord, callback):
                log.warning("hotkey %s lost after a keyboard change: %s", chord.text, reason)

    def close(self) -> None:
        if self._conn is None:
            return
        self.unregister_all()
        self._notifier.setEnabled(False)
        self._x.xcb_key_symbols_free(self._syms)
        self._x.xcb_disconnect(self._conn)
        self._conn = None

    # -- events ----------------------------------------------------------------------------
    def _drain(self) -> None:
        if self._conn is None:
            return
        if self._x.xcb_connection_has_error(self._conn):
            log.warning("the X display closed the hotkey connection; hotkeys are off")
            self._notifier.setEnabled(False)
            return
        while True:
            remap = False
            while ev := self._x.xcb_poll_for_event(self._conn):
                kind = ctypes.c_uint8.from_address(ev).value & 0x7F
                if kind in (KEY_PRESS, KEY_RELEASE):
                    k = _KeyEvent.from_address(ev)
                    self._on_key(kind == KEY_PRESS, k.detail, k.state, k.time)
                elif kind == MAPPING_NOTIFY:
                    remap |= _MappingNotify.from_address(ev).request != 2  # not the pointer's
                self._x.free(ev)
            if not remap:
                return
            # Grabbing again waits for the server's answers, and xcb queues the events that
            # come meanwhile: the socket has nothing more to say then, so they are read here
            # (a press right after a switch of keyboard was lost).
            self._regrab()

    def _on_key(self, press: bool, keycode: int, state: int, time: int) -> None:
        if not press:
            # (The modifiers may be up already: the release is matched by its key alone.)
            self._down.discard(keycode)
            self._released_at[keycode] = time
            return
        callback = self._grabs.get(_Grab(keycode, state & 0xFF & ~self._lock_bits))
        if callback is None:
            return
        # Held down, the key repeats: as presses alone (detectable auto-repeat) or as a
        # release and a press with the same time stamp. The action runs once per press.
        repeat = keycode in self._down or self._released_at.get(keycode) == time
        self._down.add(keycode)
        if repeat:
            return
        try:
            callback()
        except Exception:
            log.exception("hotkey action failed")
