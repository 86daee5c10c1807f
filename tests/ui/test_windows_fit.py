"""Every window and dialog as the app opens it (tests/helpers/windows.py, the same ones
tools/screenshots.py takes pictures of): it lies on its screen, no text in it is cut off,
and Tab goes through it in reading order."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from subtitler.paths import MODELS_DIR_ENV
from tests.helpers.windows import clipped, make_app, out_of_order, settle, windows


def test_the_checks_see_a_cut_text_and_a_wrong_tab_order(qtbot) -> None:  # type: ignore[no-untyped-def]
    w = QWidget()
    qtbot.addWidget(w)
    lay = QVBoxLayout(w)
    first, second, third = (QPushButton(t) for t in ("First", "Second", "Third"))
    label = QLabel("A label much longer than the room it is given")
    label.setFixedWidth(40)
    for x in (first, second, third, label):
        lay.addWidget(x)
    QWidget.setTabOrder(first, third)
    QWidget.setTabOrder(third, second)
    w.show()
    settle()
    assert [c.split(":")[0] for c in clipped(w)] == [
        "QLabel 'A label much longer than the room it is '"
    ]
    assert out_of_order(w) == ["QPushButton('Third') -> QPushButton('Second')"]


def test_the_checks_see_a_text_the_overlay_cut_off(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Issue 27 point 10: the screenshots reported no problem while the overlay's alert was
    cut off (the checks looked at labels and buttons only)."""
    from subtitler.config import DisplayConfig
    from subtitler.ui.overlay import OwnText, SubtitleOverlay

    o = SubtitleOverlay(DisplayConfig())
    qtbot.addWidget(o)
    o.place()
    o.show()
    o.set_alert("choose a prompt template explicitly in Settings")
    settle()
    o.grab()
    assert clipped(o) == []
    o.own_texts = [OwnText("alert", "Qwen3); choose a prompt template", ("Qwen3); choose a",))]
    assert clipped(o) == [
        "SubtitleOverlay alert 'Qwen3); choose a prompt template': drawn as 'Qwen3); "
        "choose a', the rest nowhere"
    ]


def test_the_largest_look_is_placed_on_the_screen_with_its_notice_seen(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Six rows of 120 columns at 120 px (all allowed in Settings): the overlay was placed
    with its top above the screen's, and a notice drawn there was never seen."""
    from PySide6.QtGui import QGuiApplication

    from subtitler.config import DisplayConfig
    from subtitler.ui.overlay import SubtitleOverlay

    o = SubtitleOverlay(DisplayConfig(font_size=120, lines=6, line_chars=120, bilingual=True))
    qtbot.addWidget(o)
    o.place()
    o.show()
    o.set_alert("the hotkey Ctrl+Alt+S is in use by another program")
    settle()
    avail = QGuiApplication.primaryScreen().availableGeometry()
    assert o.fitting_height() > avail.height()  # (the look is larger than the screen)
    assert avail.contains(o.geometry())
    o.grab()
    # Drawn at its top, on the screen now (at 120 px in an 800 px screen: its first words).
    (alert,) = [t for t in o.own_texts if t.kind == "alert"]
    assert alert.rows[0] == "the hotkey"


def test_every_window_fits_shows_its_texts_whole_and_tabs_in_reading_order(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    seen = []
    for win in windows(app, tmp_path):
        qtbot.addWidget(win.widget)
        settle()
        w = win.widget
        area = w.screen().availableGeometry()
        assert area.contains(w.frameGeometry()), (win.name, w.frameGeometry(), area)
        assert clipped(w) == [], win.name
        assert out_of_order(w) == [], win.name
        seen.append(win.name)
    assert len(seen) == 23 and "settings-7-browser" in seen and "first-run-offline" in seen
    assert {"overlay-alert-long", "overlay-translation-off", "overlay-state"} <= set(seen)
    assert {"first-run-languages", "first-run", "first-run-files"} <= set(seen)
    app.quit()
