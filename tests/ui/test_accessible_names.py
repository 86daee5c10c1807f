"""A screen reader names every control of every window (tests/helpers/windows.py opens them as
the app does): by its own text, a label it is the buddy of, or an accessible name."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QAccessible

from subtitler.config import AppConfig
from subtitler.paths import MODELS_DIR_ENV
from subtitler.ui.settings_pane import SettingsPane
from tests.helpers.windows import make_app, settle, unnamed, windows


def said(widget: object) -> str:
    """The name a screen reader says for ``widget``, through Qt's accessibility API."""
    face = QAccessible.queryAccessibleInterface(widget)
    assert face is not None
    return face.text(QAccessible.Text.Name)


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
