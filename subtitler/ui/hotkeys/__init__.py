"""Global hotkeys: key combinations that reach subtitler while another app has focus.

One interface over each OS's own service: RegisterHotKey on Windows, RegisterEventHotKey
(Carbon; no permission prompt, unlike event taps) on macOS, key grabs on X11. Wayland lets no
app see keys meant for another, so there the Hotkeys tab says the tray menu is the way.

Written here rather than taken from a library: pynput watches keys without taking them (the
browser would still reopen a tab on the same keys) and needs the Accessibility permission on
macOS; pyqtkeybind and system-hotkey have no macOS side and are unmaintained.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from collections.abc import Callable

from PySide6.QtGui import QGuiApplication

from subtitler.config import DisplayConfig
from subtitler.ui.hotkeys.chord import Backend, Chord, HotkeyError, Unavailable, parse_chord

__all__ = [
    "Backend",
    "Chord",
    "GlobalHotkeys",
    "HotkeyError",
    "platform_backend",
    "replace_old_defaults",
]

log = logging.getLogger(__name__)

WAYLAND_NOTE = (
    "Global hotkeys are not available on Wayland: it lets no app see keys pressed while "
    "another app has focus. Use the tray icon's menu (or right-click the subtitles when "
    "click-through is off), or add shortcuts in your desktop's keyboard settings that run:\n"
    "    subtitler --toggle click-through\n"
    "    subtitler --toggle pause"
)
WAYLAND_REASON = "Wayland has no global hotkeys"
XWAYLAND_NOTE = (
    "This desktop runs Wayland; subtitler takes these keys through its X11 compatibility, "
    "where some desktops pass them on only while an X11 app has focus. The tray menu "
    "always works."
)

# Today's defaults (config.DisplayConfig): Ctrl+Shift+F9 toggles click-through, Ctrl+Shift+F10
# starts / pauses (Cmd+Shift+F9 / F10 on macOS, where Qt's "Ctrl" is Command). A global
# hotkey takes its keys from every app, and nearly every Ctrl+Shift+letter is already one's:
# browsers (T reopen tab, P private window, N, W, Q, R, B, O, I, J, K, A, D, Y, M, S, H, G,
# V paste as text, Z redo), Teams (M mute, O camera, E share, K raise hand, A/S accept, D
# decline, H hang up, C/U call, P blur), Slack (A, K, L, M, S, T, Y, E, D, U, X, C, and
# Space: huddle mute), Zoom on macOS (Cmd+Shift+A mute, V, S, T, R, H, W, N, M, F).
# Ctrl+Alt+letter is AltGr+letter on Windows, which types @, €, ą, ł... on many European
# layouts, and Meet uses Ctrl+D, Ctrl+E and Ctrl+Alt+letters. Function keys type nothing and
# sit in the same place on every layout; with Ctrl+Shift none of those apps nor Windows,
# GNOME, KDE, Xfce or macOS use F9 / F10 (theirs: Ctrl+Alt+F1.. consoles, Ctrl+F1..
# workspaces, Alt+F1/F2/F4 Zoom's views, GNOME and closing windows, Cmd+F1..F5 and
# Ctrl+F1..F8 on macOS). Laptops whose F-keys set volume or brightness need Fn as well.
#
# The defaults before hotkeys were global. They worked only while subtitler had focus; taken
# from the whole desktop they would break every browser's Ctrl+Shift+T (reopen the closed
# tab) and Ctrl+Shift+P (private window, command palette).
OLD_DEFAULTS = {"hotkey_click_through": "Ctrl+Shift+T", "hotkey_pause": "Ctrl+Shift+P"}


def replace_old_defaults(display: DisplayConfig) -> DisplayConfig | None:
    """Settings saved with both old defaults get today's (the new settings; None when they
    stay). Only the untouched pair is replaced: one key changed means the user chose them."""
    if any(getattr(display, name) != old for name, old in OLD_DEFAULTS.items()):
        return None
    new = DisplayConfig()
    log.info("hotkeys moved off the browsers' Ctrl+Shift+T / Ctrl+Shift+P")
    return dataclasses.replace(display, **{name: getattr(new, name) for name in OLD_DEFAULTS})


def platform_backend(platform: str | None = None) -> Backend:
    """This desktop's hotkey service, or an ``Unavailable`` that says why there is none.
    ``platform``: Qt's platform plugin on Linux and BSD (default: the running one's)."""
    try:
        if sys.platform == "win32":
            from subtitler.ui.hotkeys.windows import WindowsHotkeys

            return WindowsHotkeys()
        if sys.platform == "darwin":
            from subtitler.ui.hotkeys.macos import MacHotkeys

            return MacHotkeys()
        platform = QGuiApplication.platformName() if platform is None else platform
        if platform == "xcb":
            from subtitler.ui.hotkeys.x11 import X11Hotkeys

            return X11Hotkeys(note=XWAYLAND_NOTE if os.environ.get("WAYLAND_DISPLAY") else "")
        if platform.startswith("wayland"):
            return Unavailable(WAYLAND_NOTE, WAYLAND_REASON)
        why = f"no global hotkeys on this display ({platform or 'none'})"
    except (OSError, AttributeError) as e:  # a library or a display that is not there
        why = f"global hotkeys are unavailable: {e}"
    log.warning("%s", why)
    return Unavailable(why[0].upper() + why[1:] + ". The tray menu works.", why)


class GlobalHotkeys:
    """Key combinations (Qt's portable text, as saved in the settings) bound to actions."""

    def __init__(self, backend: Backend | None = None) -> None:
        self.backend = backend if backend is not None else platform_backend()
        self._taken: set[Chord] = set()

    @property
    def available(self) -> bool:
        """False where this desktop has no global hotkeys at all (Wayland)."""
        return not isinstance(self.backend, Unavailable)

    @property
    def note(self) -> str:
        """What the Hotkeys tab should say about this desktop ("" when nothing)."""
        return self.backend.note

    def register(self, sequence: str, callback: Callable[[], None]) -> str:
        """Bind ``sequence`` to ``callback``: "" when it works, else why not, in one line.
        An empty sequence binds nothing and is fine."""
        if not sequence.strip():
            return ""
        try:
            chord = parse_chord(sequence)
        except HotkeyError as e:
            return str(e)
        if chord in self._taken:
            return "already used by another subtitler hotkey"
        reason = self.backend.register(chord, callback)
        if reason:
            log.warning("hotkey %s not available: %s", chord.text, reason)
        else:
            self._taken.add(chord)
        return reason

    def unregister_all(self) -> None:
        self.backend.unregister_all()
        self._taken.clear()

    def close(self) -> None:
        self.backend.close()
        self._taken.clear()
