"""Every window on a small screen (800x600 logical px: 1366x768 at 175 %, 1280x720 at 150 %
are smaller still in height): on the screen, its buttons on it too (Settings' Apply was below
the bottom edge at 800x600). Each screen size needs its own process (Qt's offscreen platform
with a screens file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint

from tests.helpers.subproc import run_json

# Opens every window as the app does and says, for each, whether its frame lies on the screen
# and which of its buttons do not (each button as its text says; one in a scroll area is
# scrolled to).
PROBE = """
import json, os, sys, tempfile
from pathlib import Path
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QApplication
qa = QApplication([])
from subtitler.paths import MODELS_DIR_ENV
tmp = Path(tempfile.mkdtemp())
os.environ[MODELS_DIR_ENV] = str(tmp / "models")
from tests.helpers.windows import make_app, settle, windows
app = make_app(tmp)
area = qa.primaryScreen().availableGeometry()
out = {}
for win in windows(app, tmp):
    settle()
    w = win.widget
    off = []
    if not area.contains(w.frameGeometry()):
        off.append(f"the window {w.frameGeometry().getRect()}")
    for b in w.findChildren(QAbstractButton):
        p = b.parentWidget()
        while p is not None and p is not w and not isinstance(p, QAbstractScrollArea):
            p = p.parentWidget()
        if isinstance(p, QAbstractScrollArea):
            continue  # (scrolled to)
        if b.isVisible() and b.text():
            at = QRect(b.mapToGlobal(b.rect().topLeft()), b.size())
            if not area.contains(at):
                off.append(b.text())
    out[win.name] = off
app.quit()
print(json.dumps(out))
"""


@pytest.mark.parametrize(("width", "height"), [(800, 600), (780, 438)])
def test_every_window_and_its_buttons_lie_on_a_small_screen(
    tmp_path: Path, width: int, height: int
) -> None:
    layout = tmp_path / "screen.json"
    screen = {"name": "Small", "x": 0, "y": 0, "width": width, "height": height}
    layout.write_text(
        json.dumps({"screens": [dict(screen, logicalDpi=96, logicalBaseDpi=96, dpr=1)]})
    )
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={layout}")
    got = run_json(["-c", PROBE], env, timeout=120)
    assert "settings-1-translation" in got and "models" in got and "first-run" in got
    off = {name: off for name, off in got.items() if off}
    assert off == {}, json.dumps(off, indent=1)


def test_tab_brings_a_setting_below_the_window_into_view(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A Settings window lower than its tab (a small screen): Tab goes through the tab's
    controls to OK, each scrolled into view as it gets focus."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QScrollArea

    from subtitler.config import AppConfig
    from subtitler.ui.settings_pane import SettingsPane

    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    pane.resize(700, 380)
    pane.show()
    qtbot.waitExposed(pane)
    area = pane.tabs.currentWidget()
    assert isinstance(area, QScrollArea)
    last = pane.widget("mt.context_sentences")  # the Translation tab's last row
    assert area.widget() is not None and area.widget().height() > area.viewport().height()
    pane.widget("asr.language").setFocus()
    ok = pane.buttons.button(pane.buttons.StandardButton.Ok)
    seen = []
    while pane.focusWidget() is not ok and len(seen) < 60:
        qtbot.keyClick(pane.focusWidget(), Qt.Key.Key_Tab)
        w = pane.focusWidget()
        seen.append(w)
        if area.isAncestorOf(w):
            top = w.mapTo(area.viewport(), QPoint(0, 0))
            assert area.viewport().rect().contains(top), (w, top)
    assert last in seen and ok in seen


def test_a_scrolled_tab_looks_as_the_tab_did(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The scroll area paints nothing of its own: the tab's lighter background shows, as on a
    tab without one (the page and the scroll area filled it with the window's grey)."""
    from PySide6.QtWidgets import QScrollArea, QTabWidget, QWidget

    from subtitler.config import AppConfig
    from subtitler.ui.settings_pane import SettingsPane

    plain = QTabWidget()
    qtbot.addWidget(plain)
    plain.addTab(QWidget(), "Plain")
    plain.resize(300, 200)
    plain.show()
    page = plain.currentWidget()
    tab_colour = plain.grab().toImage().pixelColor(page.mapTo(plain, page.rect().center()))
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    pane.tabs.setCurrentIndex(3)  # Appearance: room below its rows
    pane.resize(820, 640)
    pane.show()
    qtbot.waitExposed(pane)
    area = pane.tabs.currentWidget()
    assert isinstance(area, QScrollArea)
    below_rows = area.mapTo(pane.tabs, area.rect().center() + QPoint(0, area.height() // 3))
    assert pane.tabs.grab().toImage().pixelColor(below_rows) == tab_colour
