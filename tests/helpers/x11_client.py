"""Another X client for hotkey tests: its own window with the keyboard focus, and a keyboard.

Run as a separate process (``python -m tests.helpers.x11_client``, DISPLAY set), so that
the hotkeys are grabbed by one client and pressed while another one has the focus, as when
a meeting app is in front. It talks in lines over stdin / stdout:

    focus                 -> "focus 1" when its own window has the keyboard focus
    grab MODS KEY         -> "ok" or "error N": grab like another app holding that hotkey
    press MODS KEY        -> "got K1 K2 ...": keys pressed through XTEST (modifiers first,
                             released in reverse), then the keysyms its window received
    hold MODS KEY N       -> "got ...": KEY pressed N times before its release (a held key)
    lock KEY              -> "ok": tap a lock key (Num_Lock, Caps_Lock) to switch it
    remap KEY             -> "ok": KEY's map written back unchanged (every client is told)
    quit

MODS are keysym names joined with "+" ("Control_L+Shift_L") or "-" for none. Key presses go
through the XTEST extension (libXtst), which makes them real input to the server: passive
grabs see them, unlike events sent with XSendEvent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

KEY_PRESS = 2
KEY_PRESS_MASK, KEY_RELEASE_MASK = 1, 2
MODIFIERS = {"Shift_L": 1, "Control_L": 4, "Alt_L": 8, "Super_L": 64}


class XKeyEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("root", ctypes.c_ulong),
        ("subwindow", ctypes.c_ulong),
        ("time", ctypes.c_ulong),
        ("x", ctypes.c_int),
        ("y", ctypes.c_int),
        ("x_root", ctypes.c_int),
        ("y_root", ctypes.c_int),
        ("state", ctypes.c_uint),
        ("keycode", ctypes.c_uint),
        ("same_screen", ctypes.c_int),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xkey", XKeyEvent), ("pad", ctypes.c_long * 24)]


class XErrorEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(XErrorEvent))


def _lib(name: str) -> Any:
    path = ctypes.util.find_library(name)
    if path is None:
        raise OSError(f"lib{name} not found")
    return ctypes.CDLL(path)


class Client:
    def __init__(self) -> None:
        x = self.x = _lib("X11")
        self.xtst = _lib("Xtst")
        vp, ul = ctypes.c_void_p, ctypes.c_ulong
        x.XOpenDisplay.restype, x.XOpenDisplay.argtypes = vp, [ctypes.c_char_p]
        x.XDefaultRootWindow.restype, x.XDefaultRootWindow.argtypes = ul, [vp]
        x.XCreateSimpleWindow.restype = ul
        x.XCreateSimpleWindow.argtypes = (
            [vp, ul, ctypes.c_int, ctypes.c_int] + [ctypes.c_uint] * 3 + [ul, ul]
        )
        x.XSelectInput.argtypes = [vp, ul, ctypes.c_long]
        x.XMapRaised.argtypes = [vp, ul]
        x.XSync.argtypes = [vp, ctypes.c_int]
        x.XSetInputFocus.argtypes = [vp, ul, ctypes.c_int, ul]
        x.XGetInputFocus.argtypes = [vp, ctypes.POINTER(ul), ctypes.POINTER(ctypes.c_int)]
        x.XStringToKeysym.restype, x.XStringToKeysym.argtypes = ul, [ctypes.c_char_p]
        x.XKeysymToKeycode.restype, x.XKeysymToKeycode.argtypes = ctypes.c_ubyte, [vp, ul]
        x.XLookupKeysym.restype = ul
        x.XLookupKeysym.argtypes = [ctypes.POINTER(XKeyEvent), ctypes.c_int]
        x.XKeysymToString.restype, x.XKeysymToString.argtypes = ctypes.c_char_p, [ul]
        x.XPending.argtypes = [vp]
        x.XNextEvent.argtypes = [vp, ctypes.POINTER(XEvent)]
        x.XGrabKey.argtypes = [vp, ctypes.c_int, ctypes.c_uint, ul, ctypes.c_int] + [
            ctypes.c_int
        ] * 2
        x.XGetKeyboardMapping.restype = ctypes.POINTER(ul)
        x.XGetKeyboardMapping.argtypes = [vp, ctypes.c_ubyte, ctypes.c_int, ctypes.c_void_p]
        x.XChangeKeyboardMapping.argtypes = [vp, ctypes.c_int, ctypes.c_int, vp, ctypes.c_int]
        x.XFree.argtypes = [vp]
        self.xtst.XTestFakeKeyEvent.argtypes = [vp, ctypes.c_uint, ctypes.c_int, ul]
        self.errors: list[int] = []
        self._on_error = ERROR_HANDLER(self._record_error)  # kept: X calls it later
        x.XSetErrorHandler(self._on_error)
        self.dpy = x.XOpenDisplay(None)
        if not self.dpy:
            raise OSError("cannot open the display")
        self.root = x.XDefaultRootWindow(self.dpy)
        self.win = x.XCreateSimpleWindow(self.dpy, self.root, 10, 10, 300, 200, 0, 0, 0)
        x.XSelectInput(self.dpy, self.win, KEY_PRESS_MASK | KEY_RELEASE_MASK)
        x.XMapRaised(self.dpy, self.win)
        x.XSync(self.dpy, 0)
        x.XSetInputFocus(self.dpy, self.win, 2, 0)  # RevertToParent, CurrentTime
        x.XSync(self.dpy, 0)

    def _record_error(self, _dpy: int, ev: Any) -> int:
        self.errors.append(ev.contents.error_code)
        return 0

    def keycode(self, name: str) -> int:
        sym = self.x.XStringToKeysym(name.encode())
        code = int(self.x.XKeysymToKeycode(self.dpy, sym))
        if not code:
            raise ValueError(f"no key {name}")
        return code

    def focus(self) -> bool:
        w, revert = ctypes.c_ulong(), ctypes.c_int()
        self.x.XGetInputFocus(self.dpy, ctypes.byref(w), ctypes.byref(revert))
        return w.value == self.win

    def grab(self, mods: list[str], key: str) -> str:
        mask = sum(MODIFIERS[m] for m in mods)
        self.errors.clear()
        self.x.XGrabKey(self.dpy, self.keycode(key), mask, self.root, 1, 1, 1)
        self.x.XSync(self.dpy, 0)
        return f"error {self.errors[0]}" if self.errors else "ok"

    def tap(self, names: list[str]) -> None:
        codes = [self.keycode(n) for n in names]
        for c in codes:
            self.xtst.XTestFakeKeyEvent(self.dpy, c, 1, 0)
        for c in reversed(codes):
            self.xtst.XTestFakeKeyEvent(self.dpy, c, 0, 0)
        self.x.XSync(self.dpy, 0)

    def hold(self, mods: list[str], key: str, presses: int) -> None:
        """Modifiers down, ``key`` pressed ``presses`` times without a release (as the
        keyboard repeats a held key), then everything up."""
        codes = [self.keycode(n) for n in mods]
        k = self.keycode(key)
        for c in codes:
            self.xtst.XTestFakeKeyEvent(self.dpy, c, 1, 0)
        for _ in range(presses):
            self.xtst.XTestFakeKeyEvent(self.dpy, k, 1, 0)
        for c in [k, *reversed(codes)]:
            self.xtst.XTestFakeKeyEvent(self.dpy, c, 0, 0)
        self.x.XSync(self.dpy, 0)

    def remap(self, key: str) -> None:
        """Write one key's keysyms back unchanged: the server tells every client that the
        keyboard map changed (MappingNotify), as after a switch of layout."""
        code, per = self.keycode(key), ctypes.c_int()
        syms = self.x.XGetKeyboardMapping(self.dpy, code, 1, ctypes.byref(per))
        self.x.XChangeKeyboardMapping(self.dpy, code, per.value, syms, 1)
        self.x.XFree(syms)
        self.x.XSync(self.dpy, 0)

    def received(self) -> list[str]:
        """Keysyms of the key presses this client's window got since the last call."""
        self.x.XSync(self.dpy, 0)
        out = []
        ev = XEvent()
        while self.x.XPending(self.dpy):
            self.x.XNextEvent(self.dpy, ctypes.byref(ev))
            if ev.type == KEY_PRESS:
                sym = self.x.XLookupKeysym(ctypes.byref(ev.xkey), 0)
                out.append((self.x.XKeysymToString(sym) or b"?").decode())
        return out


@contextmanager
def xvfb() -> Iterator[str]:
    """A private X server; yields its DISPLAY name."""
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x800x24"],
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    with os.fdopen(r) as f:
        display = f.readline().strip()
    try:
        yield f":{display}"
    finally:
        proc.terminate()
        proc.wait(10)


class OtherApp:
    """This module run as its own process on ``display``: an app in front, with a keyboard."""

    def __init__(self, display: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.x11_client"],
            cwd=ROOT,
            env=dict(os.environ, DISPLAY=display, PYTHONPATH=str(ROOT)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.read() == "ready"

    def read(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def has_focus(self) -> bool:
        return self.ask("focus") == "focus 1"

    def grab(self, mods: str, key: str) -> str:
        return self.ask(f"grab {mods} {key}")

    def press(self, mods: str, key: str) -> list[str]:
        """Press the keys; the keysyms this app's focused window received."""
        answer = self.ask(f"press {mods} {key}")
        assert answer.startswith("got"), answer
        return answer.split()[1:]

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc.stdout.close()


def main() -> int:
    c = Client()
    print("ready", flush=True)
    for line in sys.stdin:
        cmd, *args = line.split()
        mods = [] if not args or args[0] == "-" else args[0].split("+")
        if cmd == "focus":
            print(f"focus {int(c.focus())}", flush=True)
        elif cmd == "grab":
            print(c.grab(mods, args[1]), flush=True)
        elif cmd == "press":
            c.tap([*mods, args[1]])
            print("got " + " ".join(c.received()), flush=True)
        elif cmd == "hold":
            c.hold([*mods], args[1], int(args[2]))
            print("got " + " ".join(c.received()), flush=True)
        elif cmd == "lock":
            c.tap([args[0]])
            c.received()
            print("ok", flush=True)
        elif cmd == "remap":
            c.remap(args[0])
            print("ok", flush=True)
        elif cmd == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
