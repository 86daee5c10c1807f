"""Global hotkeys on a real X server (Xvfb): another client's window has the focus and that
client presses the keys (XTEST), as a user does while a meeting app is in front."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler import settings_store
from subtitler.config import AppConfig, DisplayConfig, MtConfig, with_settings
from subtitler.pipeline.pipeline import Factories
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.hotkeys import XWAYLAND_NOTE, GlobalHotkeys, platform_backend
from subtitler.ui.hotkeys.chord import TAKEN
from subtitler.ui.hotkeys.x11 import X11Hotkeys
from subtitler_research.asr.tiny_model import build_tiny_whisper
from subtitler_research.bench.random_model import PRESETS, build_random_llama
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for
from tests.helpers.system import SYSTEM_CHECKED_ENV, needs_programs
from tests.helpers.x11_client import OtherApp, xvfb

ROOT = Path(__file__).resolve().parents[2]
CLIP = ROOT / "tests" / "data" / "LJ001-0008.flac"
CTRL_SHIFT = "Control_L+Shift_L"

pytestmark = [
    needs_programs("Xvfb", why="a real X server"),
    pytest.mark.skipif(
        ctypes.util.find_library("Xtst") is None and os.environ.get(SYSTEM_CHECKED_ENV) != "1",
        reason="libXtst not installed: `python tools/dev.py test` installs it",
    ),
]


@pytest.fixture()
def display() -> Iterator[str]:
    with xvfb() as name:
        yield name


@pytest.fixture()
def other_app(display: str) -> Iterator[OtherApp]:
    app = OtherApp(display)
    assert app.has_focus()
    yield app
    app.close()


def test_hotkey_reaches_subtitler_while_another_app_has_focus(
    qtbot, display: str, other_app: OtherApp
) -> None:  # type: ignore[no-untyped-def]
    hotkeys = GlobalHotkeys(X11Hotkeys(display))
    hits: list[str] = []
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("click")) == ""
    assert hotkeys.register("Ctrl+Alt+A", lambda: hits.append("pause")) == ""
    # The app in front keeps the focus and gets the modifiers, but not the grabbed key.
    assert other_app.press(CTRL_SHIFT, "F9") == ["Control_L", "Shift_L"]
    qtbot.waitUntil(lambda: hits == ["click"], timeout=3000)
    assert other_app.has_focus()
    other_app.press("Control_L+Alt_L", "a")
    qtbot.waitUntil(lambda: hits == ["click", "pause"], timeout=3000)
    # Qt names Shift+1 by what it types on this layout; the grab is on the 1 key with Shift.
    assert hotkeys.register("Ctrl+Shift+!", lambda: hits.append("bang")) == ""
    assert other_app.press(CTRL_SHIFT, "1") == ["Control_L", "Shift_L"]
    qtbot.waitUntil(lambda: hits == ["click", "pause", "bang"], timeout=3000)
    hits.remove("bang")
    # With NumLock or CapsLock on, the same keys still count.
    for lock in ("Num_Lock", "Caps_Lock"):
        assert other_app.ask(f"lock {lock}") == "ok"
        other_app.press(CTRL_SHIFT, "F9")
        qtbot.waitUntil(lambda: hits.count("click") == 2, timeout=3000)
        assert other_app.ask(f"lock {lock}") == "ok"  # off again
        hits.remove("click")
    # Other modifiers are another combination: the app in front gets it.
    assert other_app.press("Control_L", "F9") == ["Control_L", "F9"]
    # A key held down repeats; the action runs once per press.
    other_app.ask("hold Control_L+Shift_L F9 4")
    qtbot.waitUntil(lambda: hits.count("click") == 2, timeout=3000)
    qtbot.wait(300)
    assert hits.count("click") == 2
    hotkeys.unregister_all()  # given back: the app in front gets the keys again
    assert other_app.press(CTRL_SHIFT, "F9") == ["Control_L", "Shift_L", "F9"]
    qtbot.wait(200)
    assert hits.count("click") == 2
    hotkeys.close()


def test_a_press_while_the_grabs_are_checked_again_is_not_lost(
    qtbot, display: str, other_app: OtherApp, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """After a change of keyboard map the grabs are checked again. xcb queues the events that
    come while it waits for the server's answers, and the socket then has nothing more to say:
    a press in that moment was never read (the real app under load missed Ctrl+Shift+F9)."""
    backend = X11Hotkeys(display)
    hotkeys = GlobalHotkeys(backend)
    hits: list[str] = []
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("click")) == ""
    read, pressed = backend._read_modifiers, []

    def pressed_meanwhile() -> None:
        if not pressed:  # the press reaches our connection before the answer read next
            pressed.append(other_app.press(CTRL_SHIFT, "F9"))
        read()

    monkeypatch.setattr(backend, "_read_modifiers", pressed_meanwhile)
    assert other_app.ask("remap F9") == "ok"
    qtbot.waitUntil(lambda: pressed == [["Control_L", "Shift_L"]], timeout=3000)
    qtbot.waitUntil(lambda: hits == ["click"], timeout=3000)
    hotkeys.close()


def test_a_combination_another_client_holds_is_reported_and_the_rest_work(
    qtbot, display: str, other_app: OtherApp
) -> None:  # type: ignore[no-untyped-def]
    assert other_app.grab(CTRL_SHIFT, "F10") == "ok"  # like another app's hotkey
    hotkeys = GlobalHotkeys(X11Hotkeys(display))
    hits: list[str] = []
    assert hotkeys.register("Ctrl+Shift+F10", lambda: hits.append("pause")) == TAKEN
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("click")) == ""
    assert hotkeys.register("Ctrl+Shift+F9", lambda: hits.append("again")) == (
        "already used by another subtitler hotkey"
    )
    other_app.press(CTRL_SHIFT, "F9")
    qtbot.waitUntil(lambda: hits == ["click"], timeout=3000)
    other_app.press(CTRL_SHIFT, "F10")  # goes to its holder, not to subtitler
    qtbot.wait(300)
    assert hits == ["click"]
    hotkeys.close()


def test_app_hotkeys_switch_click_through_and_show_a_refusal_in_the_tab(
    qtbot, display: str, other_app: OtherApp, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert other_app.grab(CTRL_SHIFT, "F10") == "ok"  # another app holds the pause default
    cfg = AppConfig(mt=MtConfig(model_path="x"), display=DisplayConfig(click_through=True))
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        cfg,
        f,
        config_path=tmp_path / "config.toml",
        data_dir=tmp_path,
        hotkeys=GlobalHotkeys(X11Hotkeys(display)),
    )
    qtbot.addWidget(app.overlay)
    assert app.overlay.click_through
    assert "Hotkey Ctrl+Shift+F10: another app already uses" in app.overlay.alert
    other_app.press(CTRL_SHIFT, "F9")
    qtbot.waitUntil(lambda: not app.overlay.click_through, timeout=3000)
    assert not settings_store.load(tmp_path / "config.toml").config.display.click_through
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    pause, click = pane.key_problems["hotkey_pause"], pane.key_problems["hotkey_click_through"]
    assert not pause.isHidden() and "Another app already uses" in pause.text()
    assert click.isHidden()
    # Rebinding in the tab: the refused key moves, the old grab is given back.
    pane.key_pause.setKeySequence("Ctrl+Shift+F11")
    assert pause.isHidden()  # changed, not tried yet
    assert pane.apply()
    assert pause.isHidden() and app.hotkey_problems["hotkey_pause"] == ""
    pane.key_click.setKeySequence("Ctrl+Shift+F8")
    assert pane.apply()
    assert other_app.press(CTRL_SHIFT, "F9") == ["Control_L", "Shift_L", "F9"]  # given back
    other_app.press(CTRL_SHIFT, "F8")
    qtbot.waitUntil(lambda: app.overlay.click_through, timeout=3000)
    app.hotkeys.close()


def test_real_app_turns_click_through_off_by_hotkey(display: str, tmp_path: Path) -> None:
    """main.py on the X server (Qt's xcb platform picks the X11 hotkeys by itself):
    click-through on, another app in front, Ctrl+Shift+F9 switches it off."""
    whisper = build_tiny_whisper(tmp_path / "whisper")
    gguf = build_random_llama(tmp_path / "mt.gguf", PRESETS["tiny"], seed=5)
    config = tmp_path / "config.toml"
    cfg = with_settings(
        AppConfig(),
        {
            "asr.model": str(whisper),
            "mt.model_path": str(gguf),
            "audio.source": "file",
            "audio.file_path": str(CLIP),
            "display.click_through": True,
        },
    )
    settings_store.save(cfg, config)
    data = tmp_path / "data"
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    holder = OtherApp(display)
    assert holder.grab(CTRL_SHIFT, "F10") == "ok"
    cmd = [sys.executable, str(ROOT / "main.py"), "--data-dir", str(data), "--config", str(config)]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    front = OtherApp(display)  # started after the app: its window is in front, focused
    try:
        log = data / "subtitler.log"
        deadline = time.monotonic() + 60
        while "hotkey Ctrl+Shift+F10 not available" not in (
            log.read_text(encoding="utf-8") if log.exists() else ""
        ):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the app did not bind its hotkeys"
            time.sleep(0.2)
        assert front.has_focus()
        assert front.press(CTRL_SHIFT, "F9") == ["Control_L", "Shift_L"]
        deadline = time.monotonic() + 10
        while settings_store.load(config).config.display.click_through:
            assert time.monotonic() < deadline, log.read_text(encoding="utf-8")[-2000:]
            time.sleep(0.1)
    finally:
        front.close()
        holder.close()
        proc.terminate()
        proc.communicate(timeout=10)


def test_under_xwayland_the_x11_grabs_are_used_and_the_tab_says_where_they_fail(
    qapp, display: str, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DISPLAY", display)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")  # Qt on xcb inside a Wayland session
    backend = platform_backend("xcb")
    assert isinstance(backend, X11Hotkeys) and backend.note == XWAYLAND_NOTE
    backend.close()
