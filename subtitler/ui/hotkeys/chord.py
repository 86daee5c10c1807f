"""A hotkey as the OS backends take it: one key plus modifiers, parsed from Qt's key text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

# Qt numbers the keys that type nothing from 0x01000000 up; below that a key is its character.
FIRST_SPECIAL_KEY = 0x01000000
F_KEYS = range(Qt.Key.Key_F1.value, Qt.Key.Key_F35.value + 1)
_MODIFIER_KEYS = {
    Qt.Key.Key_Shift.value,
    Qt.Key.Key_Control.value,
    Qt.Key.Key_Alt.value,
    Qt.Key.Key_Meta.value,
    Qt.Key.Key_AltGr.value,
    Qt.Key.Key_Super_L.value,
    Qt.Key.Key_Super_R.value,
    Qt.Key.Key_Hyper_L.value,
    Qt.Key.Key_Hyper_R.value,
    Qt.Key.Key_CapsLock.value,
    Qt.Key.Key_NumLock.value,
}
# The modifiers as Qt's portable text writes them (any case).
_MODIFIER_WORDS = {"ctrl", "shift", "alt", "meta", "num"}


class HotkeyError(ValueError):
    """A key sequence no OS can take as a global hotkey; the message says why, in one line."""


@dataclass(frozen=True)
class Chord:
    """One key with modifiers, in Qt's terms: on macOS ``ctrl`` is Command and ``meta`` is
    Control (Qt swaps them there), elsewhere ``meta`` is the Windows / Super key."""

    key: int  # a Qt.Key value
    ctrl: bool = False
    shift: bool = False
    alt: bool = False
    meta: bool = False

    @property
    def text(self) -> str:
        """How the user's OS writes it (⌘⇧F9 on macOS, Ctrl+Shift+F9 elsewhere)."""
        mods = Qt.KeyboardModifier.NoModifier
        for on, m in (
            (self.ctrl, Qt.KeyboardModifier.ControlModifier),
            (self.shift, Qt.KeyboardModifier.ShiftModifier),
            (self.alt, Qt.KeyboardModifier.AltModifier),
            (self.meta, Qt.KeyboardModifier.MetaModifier),
        ):
            if on:
                mods |= m
        return QKeySequence(mods | Qt.Key(self.key)).toString(
            QKeySequence.SequenceFormat.NativeText
        )

    @property
    def key_name(self) -> str:
        """The key without its modifiers ("F9", "A")."""
        return QKeySequence(Qt.Key(self.key)).toString(QKeySequence.SequenceFormat.NativeText)

    def no_key(self) -> str:
        """The reason given when the keyboard has no such key."""
        return f"this keyboard has no {self.key_name} key"

    @property
    def char(self) -> str:
        """The character the key types ("" for keys that type none), lower case."""
        return chr(self.key).lower() if self.key < FIRST_SPECIAL_KEY else ""


def parse_chord(sequence: str) -> Chord:
    """``sequence`` as saved in the settings (Qt's portable text, "Ctrl+Shift+F9")."""
    ks = QKeySequence.fromString(sequence, QKeySequence.SequenceFormat.PortableText)
    if ks.count() == 0:
        raise HotkeyError(f"“{sequence}” is not a key combination")
    if ks.count() > 1:
        raise HotkeyError("a global hotkey is one key combination, not a sequence of several")
    combo = ks[0]  # type: ignore[index]  # (PySide6's stubs lack QKeySequence.__getitem__)
    key = combo.key().value
    mods = combo.keyboardModifiers()
    if key == Qt.Key.Key_unknown.value:  # (Qt reads a word it does not know as no key)
        raise HotkeyError(_not_a_key(sequence))
    if key in _MODIFIER_KEYS:
        raise HotkeyError(f"“{sequence}” has no key besides the modifiers")
    chord = Chord(
        key=key,
        ctrl=bool(mods & Qt.KeyboardModifier.ControlModifier),
        shift=bool(mods & Qt.KeyboardModifier.ShiftModifier),
        alt=bool(mods & Qt.KeyboardModifier.AltModifier),
        meta=bool(mods & Qt.KeyboardModifier.MetaModifier),
    )
    if not (chord.ctrl or chord.alt or chord.meta) and key not in F_KEYS:
        # Taken from every app, a plain letter, Enter or arrow could no longer be typed.
        raise HotkeyError(
            f"add Ctrl, Alt or {'Control' if _is_mac() else 'Meta'}: "
            f"{chord.text} alone would stop working in every other app"
        )
    return chord


def _not_a_key(sequence: str) -> str:
    """Which word of ``sequence`` names no key, said in one line."""
    for word in (w.strip() for w in sequence.split("+")):
        if not word or word.lower() in _MODIFIER_WORDS:
            continue
        known = QKeySequence.fromString(word, QKeySequence.SequenceFormat.PortableText)
        if known.count() != 1 or known[0].key() == Qt.Key.Key_unknown:  # type: ignore[index]
            where = "" if word == sequence.strip() else f" (in “{sequence}”)"
            return f"“{word}” is not a key name{where}"
    return f"“{sequence}” is not a key combination"


def _is_mac() -> bool:
    import sys

    return sys.platform == "darwin"


class Backend(Protocol):
    """One OS's way to take key combinations from the whole desktop."""

    note: str  # a sentence for the Hotkeys tab about this desktop ("" when nothing to say)

    def register(self, chord: Chord, callback: Callable[[], None]) -> str:
        """Take ``chord`` for ``callback``: "" when done, else why not (one line)."""
        ...

    def unregister_all(self) -> None: ...

    def close(self) -> None: ...


# The one-line reason the Hotkeys tab shows when the OS refuses a combination.
TAKEN = "another app already uses this combination; choose another"


class Unavailable:
    """Where no global hotkeys exist (Wayland, no display): every key is refused with ``why``."""

    def __init__(self, note: str, why: str) -> None:
        self.note = note
        self._why = why

    def register(self, chord: Chord, callback: Callable[[], None]) -> str:
        return self._why

    def unregister_all(self) -> None:
        pass

    def close(self) -> None:
        pass
