"""Windows of the app are never under the overlay (issue 27 point 5: it covered Settings' OK
and Cancel and the Glossary's header): while one is in use the overlay moves aside, and comes
back to its place after; its place (saved) is never the spot it moved to."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from subtitler import settings_store
from subtitler.ui.overlay import aside
from tests.ui.test_app_state import make_app

SCREEN = QRect(0, 0, 1366, 768)


def test_aside_finds_the_nearest_clear_spot_on_the_screen() -> None:
    overlay = QRect(344, 618, 677, 89)  # its default place at 1366x768
    settings = QRect(263, 44, 820, 600)  # Settings as it opens at 1366x768
    spot = aside(overlay, settings, SCREEN)
    assert SCREEN.contains(spot) and not spot.intersects(settings)
    assert spot.size() == overlay.size() and spot.x() == overlay.x()  # below it
    tall = QRect(700, 20, 600, 700)  # no room above or below: beside it
    spot = aside(overlay, tall, SCREEN)
    assert SCREEN.contains(spot) and not spot.intersects(tall)
    big = QRect(263, 40, 820, 700)  # no room anywhere: the edge where it covers least (top)
    spot = aside(overlay, big, SCREEN)
    assert SCREEN.contains(spot) and spot.size() == overlay.size() and spot.top() == 0


def test_the_overlay_moves_aside_while_a_window_of_the_app_is_in_use(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    o = app.overlay
    o.show()
    home = o.geometry()
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    pane.move(home.x(), home.y() - 100)  # its buttons where the overlay is
    pane.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is pane, timeout=5000)
    qtbot.waitUntil(lambda: not o.geometry().intersects(pane.frameGeometry()), timeout=5000)
    assert o.isVisible() and o.home_geometry() == home
    pane.move(pane.x(), 0)  # moved again: the overlay follows
    qtbot.waitUntil(lambda: not o.geometry().intersects(pane.frameGeometry()), timeout=5000)
    # A look previewed meanwhile refits the overlay at its own place, and it stays aside.
    pane.move(home.x(), home.y() - 100)
    qtbot.waitUntil(lambda: not o.geometry().intersects(pane.frameGeometry()), timeout=5000)
    pane.widget("display.font_size").setValue(40)
    assert not o.geometry().intersects(pane.frameGeometry())
    fitted = o.home_geometry()
    assert fitted.bottom() == home.bottom() and fitted.height() > home.height()
    pane.reject()  # Cancel
    qtbot.waitUntil(lambda: o.geometry() == o.home_geometry(), timeout=5000)
    assert o.geometry().bottom() == home.bottom()  # back at its place
    saved = settings_store.load(tmp_path / "config.toml").config.display.geometry
    assert all(QRect(*g).bottom() == home.bottom() for g in saved.values()), saved
    app.quit()
