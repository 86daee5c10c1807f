"""The macOS hotkeys through their API seam: a Carbon table that behaves as Carbon does
(RegisterEventHotKey refuses a combination another app holds with eventHotKeyExistsErr; a
press calls the installed handler with an event whose direct object is the hotkey's id), on an
AZERTY keyboard layout read through UCKeyTranslate. Arguments arrive as ctypes passes them."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from subtitler.config import AppConfig, DisplayConfig, MtConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.ui import app as app_module
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.hotkeys import GlobalHotkeys
from subtitler.ui.hotkeys.chord import TAKEN
from subtitler.ui.hotkeys.macos import (
    CMD_KEY,
    EVENT_HOTKEY_EXISTS_ERR,
    EVENT_NOT_HANDLED_ERR,
    K_EVENT_CLASS_KEYBOARD,
    K_EVENT_HOTKEY_PRESSED,
    K_EVENT_PARAM_DIRECT_OBJECT,
    NO_ERR,
    OPTION_KEY,
    SHIFT_KEY,
    SIGNATURE,
    TYPE_EVENT_HOTKEY_ID,
    EventHotKeyID,
    EventTypeSpec,
    MacHotkeys,
)
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for

KVK_F9, KVK_F10, KVK_F11 = 0x65, 0x6D, 0x67
APP_TARGET = 0x5000
# The AZERTY layout's letters where they differ from the US places (virtual key -> character).
AZERTY = {0x0C: "a", 0x00: "q", 0x0D: "z", 0x06: "w", 0x29: "m", 0x2E: ",", 0x12: "&"}
US = {0x00: "a", 0x0C: "q", 0x0D: "w", 0x06: "z", 0x2E: "m", 0x2B: ",", 0x65: "", 0x31: " "}


class Carbon:
    def __init__(self, held_elsewhere: set[tuple[int, int]]) -> None:
        self.held_elsewhere = held_elsewhere
        self.hotkeys: dict[int, tuple[int, int, int, int]] = {}  # ref -> code, mods, sig, id
        self.handlers: dict[int, Any] = {}
        self.unregistered: list[int] = []
        self.events: dict[int, EventHotKeyID] = {}
        self.released_sources = 0
        self.layout_data_key = 0x7001
        self._next = 0x9000

    def _ref(self) -> int:
        self._next += 0x10
        return self._next

    def GetApplicationEventTarget(self) -> int:
        return APP_TARGET

    def InstallEventHandler(self, target, handler, count, specs, user, out_ref) -> int:  # type: ignore[no-untyped-def]
        spec = ctypes.cast(specs, ctypes.POINTER(EventTypeSpec)).contents
        assert target == APP_TARGET and count == 1
        assert (spec.eventClass, spec.eventKind) == (K_EVENT_CLASS_KEYBOARD, K_EVENT_HOTKEY_PRESSED)
        ref = self._ref()
        self.handlers[ref] = handler
        ctypes.cast(out_ref, ctypes.POINTER(ctypes.c_void_p)).contents.value = ref
        return NO_ERR

    def RemoveEventHandler(self, ref: ctypes.c_void_p) -> int:
        del self.handlers[ref.value or 0]
        return NO_ERR

    def RegisterEventHotKey(self, code, mods, hk_id, target, options, out_ref) -> int:  # type: ignore[no-untyped-def]
        assert target == APP_TARGET and options == 0
        taken = {(c, m) for c, m, _, _ in self.hotkeys.values()} | self.held_elsewhere
        if (code, mods) in taken:
            return EVENT_HOTKEY_EXISTS_ERR
        ref = self._ref()
        self.hotkeys[ref] = (code, mods, hk_id.signature, hk_id.id)
        ctypes.cast(out_ref, ctypes.POINTER(ctypes.c_void_p)).contents.value = ref
        return NO_ERR

    def UnregisterEventHotKey(self, ref: ctypes.c_void_p) -> int:
        self.unregistered.append(ref.value or 0)
        del self.hotkeys[ref.value or 0]
        return NO_ERR

    def GetEventParameter(self, event, name, kind, out_type, size, out_size, out) -> int:  # type: ignore[no-untyped-def]
        assert (name, kind, size) == (
            K_EVENT_PARAM_DIRECT_OBJECT,
            TYPE_EVENT_HOTKEY_ID,
            ctypes.sizeof(EventHotKeyID),
        )
        ctypes.cast(out, ctypes.POINTER(EventHotKeyID))[0] = self.events[event]
        return NO_ERR

    def press(self, code: int, mods: int) -> int | None:
        """A press of a registered combination: Carbon calls the app target's handlers."""
        for c, m, sig, hk in self.hotkeys.values():
            if (c, m) == (code, mods):
                event = 0xE000 + len(self.events)
                self.events[event] = EventHotKeyID(sig, hk)
                (handler,) = self.handlers.values()
                return int(handler(None, event, None))
        return None

    # The keyboard layout, read through the Text Input Sources API.
    def TISCopyCurrentKeyboardLayoutInputSource(self) -> int:
        return 0x7000

    def TISGetInputSourceProperty(self, source: int, key: int) -> int:
        assert (source, key) == (0x7000, self.layout_data_key)
        return 0x7100

    def CFDataGetBytePtr(self, data: int) -> int:
        return 0x7200

    def CFRelease(self, obj: int) -> None:
        self.released_sources += 1

    def LMGetKbdType(self) -> int:
        return 40

    def UCKeyTranslate(
        self, layout, code, action, mods, kbd, options, dead, max_len, length, chars
    ) -> int:  # type: ignore[no-untyped-def]
        assert (layout, action, kbd, options, max_len) == (0x7200, 3, 40, 1, 4)
        ch = AZERTY.get(code, US.get(code, ""))
        if mods == SHIFT_KEY >> 8:
            ch = {"&": "1", ",": "?"}.get(ch, ch.upper())  # AZERTY types 1 with Shift
        else:
            assert mods == 0
        ctypes.cast(length, ctypes.POINTER(ctypes.c_ulong)).contents.value = len(ch)
        for i, c in enumerate(ch):
            chars[i] = ord(c)
        return NO_ERR


def test_register_on_the_layout_dispatch_and_conflict(qapp) -> None:  # type: ignore[no-untyped-def]
    carbon = Carbon(held_elsewhere={(KVK_F10, CMD_KEY | SHIFT_KEY)})
    backend = MacHotkeys(carbon)
    assert len(carbon.handlers) == 1 and carbon.released_sources == 1
    hotkeys = GlobalHotkeys(backend)
    hits: list[str] = []
    # Qt's "Ctrl" is Command on macOS; "A" is where AZERTY has it (the US "Q" place).
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("click")) == ""
    assert hotkeys.register("Ctrl+Shift+F10", lambda: hits.append("pause")) == TAKEN
    assert hotkeys.register("Ctrl+Alt+A", lambda: hits.append("a")) == ""
    # Qt names Shift+the AZERTY "&" key by what it types: "1" (the key left of "é").
    assert hotkeys.register("Ctrl+Shift+1", lambda: hits.append("1")) == ""
    assert sorted((c, m, s) for c, m, s, _ in carbon.hotkeys.values()) == [
        (0x0C, CMD_KEY | OPTION_KEY, SIGNATURE),
        (0x12, CMD_KEY | SHIFT_KEY, SIGNATURE),
        (KVK_F9, CMD_KEY | SHIFT_KEY, SIGNATURE),
    ]
    assert len({hk for *_, hk in carbon.hotkeys.values()}) == 3  # distinct ids
    assert carbon.press(KVK_F9, CMD_KEY | SHIFT_KEY) == NO_ERR
    assert carbon.press(0x0C, CMD_KEY | OPTION_KEY) == NO_ERR
    assert hits == ["click", "a"]
    # Another part of the app's hotkey (another signature) is left to its own handler.
    carbon.hotkeys[0x1] = (KVK_F11, CMD_KEY, 0x41424344, 1)
    assert carbon.press(KVK_F11, CMD_KEY) == EVENT_NOT_HANDLED_ERR
    del carbon.hotkeys[0x1]
    assert hits == ["click", "a"]
    hotkeys.close()
    assert carbon.hotkeys == {} and len(carbon.unregistered) == 3 and carbon.handlers == {}


def test_app_rebinds_reports_and_gives_keys_back_at_quit(
    qtbot, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    carbon = Carbon(held_elsewhere={(KVK_F10, CMD_KEY | SHIFT_KEY)})
    cfg = AppConfig(mt=MtConfig(model_path="x"), display=DisplayConfig(click_through=True))
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path,
        hotkeys=GlobalHotkeys(MacHotkeys(carbon)),
    )  # fmt: skip
    qtbot.addWidget(app.overlay)
    assert app.hotkey_problems == {"hotkey_click_through": "", "hotkey_pause": TAKEN}
    assert "another app already uses" in app.overlay.alert
    (first_ref,) = carbon.hotkeys
    assert carbon.press(KVK_F9, CMD_KEY | SHIFT_KEY) == NO_ERR
    assert not app.overlay.click_through
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    assert "Another app already uses" in pane.key_problems["hotkey_pause"].text()
    pane.key_pause.setKeySequence("Ctrl+Shift+F11")
    assert pane.apply()
    assert first_ref in carbon.unregistered
    assert sorted((c, m) for c, m, _, _ in carbon.hotkeys.values()) == [
        (KVK_F9, CMD_KEY | SHIFT_KEY),
        (KVK_F11, CMD_KEY | SHIFT_KEY),
    ]
    assert pane.key_problems["hotkey_pause"].isHidden()
    assert carbon.press(KVK_F11, CMD_KEY | SHIFT_KEY) == NO_ERR  # start / pause now
    monkeypatch.setattr(app_module.QApplication, "quit", staticmethod(lambda: None))
    app.quit()
    assert carbon.hotkeys == {} and carbon.handlers == {}
