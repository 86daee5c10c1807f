"""A screen reader names every control of every window (tests/helpers/windows.py opens them as
the app does): by its own text, a label it is the buddy of, or an accessible name."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

from subtitler.config import AppConfig
from subtitler.paths import MODELS_DIR_ENV
from subtitler.ui.settings_pane import SettingsPane
from tests.helpers.windows import make_app, settle, unnamed, windows


def said(widget: QWidget) -> str:
    """The name a screen reader says for ``widget``, as Qt's accessibility names a widget: its
    accessible name, else the text of the label it is the buddy of, else a button's own text.
    (Not through QAccessible.queryAccessibleInterface: with it, a later test of the same
    worker crashed in a widget's constructor now and then.)"""
    if widget.accessibleName():
        return widget.accessibleName()
    for label in widget.window().findChildren(QLabel):
        if label.buddy() is widget:
            return label.text().replace("&", "")
    return widget.text() if isinstance(widget, QAbstractButton) else ""


def test_every_control_of_every_window_has_a_name(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    nameless = {}
    for win in windows(app, tmp_path):
        qtbot.addWidget(win.widget)
        settle()
        if found := unnamed(win.widget):
            nameless[win.name] = found
    assert nameless == {}
    app.quit()


def test_a_setting_is_said_with_its_label(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert said(pane.widget("display.mask_k")) == "Hide the last words of an unfinished line"
    assert said(pane.widget("mt.extra_targets")) == "Also translate into"
    assert said(pane.widget("display.font_size")) == "Size"
    assert said(pane.web.url) == "Address"


def test_the_overlay_gives_a_screen_reader_the_subtitles_it_shows(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Its name says what it is; its description is every text it draws: the subtitles as
    shown (a screen reader read 'subtitler, Listening…' over a meeting's subtitles), the
    state and an alert."""
    from subtitler.config import DisplayConfig
    from subtitler.session import SubtitleEvent
    from subtitler.ui.app_state import Shown
    from subtitler.ui.overlay import SubtitleOverlay

    o = SubtitleOverlay(DisplayConfig(mask_k=0))
    qtbot.addWidget(o)
    o.place()
    o.show()
    o.set_state(Shown("running", "Listening…"))
    words = ("Guten", " Morgen", " zusammen.")
    o.on_subtitle(SubtitleEvent(1, "Good morning, all.", "".join(words), words, True, 0, 0))
    qtbot.waitUntil(lambda: o.drawn != [], timeout=2000)
    assert said(o) == "Subtitles"
    assert "Guten Morgen zusammen." in o.accessibleDescription()
    o.set_alert("the microphone was unplugged")
    o.grab()
    described = o.accessibleDescription()
    assert "the microphone was unplugged" in described and "Guten Morgen" in described
    o.clear()
    o.grab()
    assert "Guten" not in o.accessibleDescription()


def test_about_names_its_pages(qtbot) -> None:  # type: ignore[no-untyped-def]
    from subtitler.ui.about import AboutDialog

    about = AboutDialog()
    qtbot.addWidget(about)
    about.show()
    for i in range(about.tabs.count()):
        about.tabs.setCurrentIndex(i)
        settle()
        assert unnamed(about) == []
    assert said(about.third_party) == "Third-party software"


def test_about_pages_are_read_line_by_line_with_the_keyboard(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The licence texts have a caret the arrows move (a screen reader reads the line it is
    on; they only scrolled), and Tab still goes on to the next control."""
    from PySide6.QtCore import Qt

    from subtitler.ui.about import AboutDialog

    about = AboutDialog()
    qtbot.addWidget(about)
    about.show()
    page = about.licence
    page.setFocus()
    qtbot.keyClick(page, Qt.Key.Key_Down)
    qtbot.keyClick(page, Qt.Key.Key_Down)
    assert page.textCursor().blockNumber() == 2
    qtbot.keyClick(page, Qt.Key.Key_Tab)
    assert about.focusWidget() is not page


def test_the_colour_button_says_what_colour_it_picks(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Its text is the colour's code alone: a screen reader said '#ffffff, button'."""
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    pane.show_setting("display.text_color", "#ffcc00")
    assert said(pane.widget("display.text_color")) == "Subtitle colour: #ffcc00"


def test_a_button_that_says_little_alone_is_named_with_what_it_acts_on(qtbot) -> None:  # type: ignore[no-untyped-def]
    """'Check' and 'Copy' heard alone (a screen reader does not read the row's label for a
    button): check what, copy what."""
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert said(pane.server_check) == "Check what the server can do"
    assert said(pane.web.copy) == "Copy the address"
