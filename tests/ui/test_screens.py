"""The overlay over two monitors, and after one is unplugged: real QScreens from Qt's offscreen
platform configured with a screens file (each layout needs its own process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import QRect

from subtitler.ui.overlay import fit_inside
from tests.helpers.subproc import run_json

LAPTOP = {"name": "Laptop", "x": 0, "y": 0, "width": 1280, "height": 800}
MONITOR = {"name": "Monitor", "x": 1280, "y": 0, "width": 1920, "height": 1080}

# Places the overlay from a saved DisplayConfig, then (optionally) moves it, and reports what the
# app would save: the screen it is on and its geometry.
PROBE = """
import json, sys
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication
from subtitler.config import DisplayConfig
from subtitler.ui.overlay import SubtitleOverlay

args = json.loads(sys.argv[1])
app = QApplication([])
o = SubtitleOverlay(DisplayConfig(screen=args["screen"], geometry=args["geometry"]))
o.place()
o.show()
app.processEvents()
out = {"placed": [o.x(), o.y(), o.width(), o.height()], "placed_on": o.screen_name()}
out["fitting"] = [o.fitting_width(), o.fitting_height()]
if args.get("move"):
    o.setGeometry(QRect(*args["move"]))
    app.processEvents()
    out["moved_on"] = o.screen_name()
out["screens"] = [s.name() for s in app.screens()]
print(json.dumps(out))
"""


def probe(tmp_path: Path, screens: list[dict[str, object]], **args: object) -> dict:  # type: ignore[type-arg]
    layout = tmp_path / f"screens-{len(screens)}.json"
    layout.write_text(
        json.dumps({"screens": [dict(s, logicalDpi=96, logicalBaseDpi=96, dpr=1) for s in screens]})
    )
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={layout}")
    return run_json(["-c", PROBE, json.dumps(args)], env, timeout=60)  # type: ignore[no-any-return]


def test_overlay_comes_back_on_the_second_monitor(tmp_path: Path) -> None:
    saved = {"Laptop": [100, 600, 900, 120], "Monitor": [1600, 900, 1000, 140]}
    got = probe(
        tmp_path, [LAPTOP, MONITOR], screen="Monitor", geometry=saved, move=[200, 500, 800, 100]
    )
    assert got["screens"] == ["Laptop", "Monitor"]
    assert got["placed"] == [1600, 900, 1000, 140] and got["placed_on"] == "Monitor"
    # Dragged back to the laptop screen, the app would save it under that screen's name.
    assert got["moved_on"] == "Laptop"


def test_monitor_unplugged_brings_it_back_where_it_was_on_the_laptop(tmp_path: Path) -> None:
    saved = {"Laptop": [100, 600, 900, 120], "Monitor": [1600, 900, 1000, 140]}
    got = probe(tmp_path, [LAPTOP], screen="Monitor", geometry=saved)
    assert got["screens"] == ["Laptop"]
    assert got["placed"] == [100, 600, 900, 120] and got["placed_on"] == "Laptop"


def test_monitor_unplugged_and_never_on_the_laptop_goes_bottom_centre(tmp_path: Path) -> None:
    got = probe(tmp_path, [LAPTOP], screen="Monitor", geometry={"Monitor": [1600, 900, 1000, 140]})
    x, y, w, h = got["placed"]
    assert got["placed_on"] == "Laptop"
    # As wide as rows of line_chars columns (not 70% of the screen), as high as its rows.
    assert [w, h] == got["fitting"] and 400 < w < 1280 * 0.7
    assert x == (1280 - w) // 2 and y + h == 800 - 1 - 60


def test_smaller_resolution_keeps_the_whole_overlay_on_screen(tmp_path: Path) -> None:
    # Saved at 1920x1080, the monitor now runs at 1280x720: same size, moved fully inside.
    small = dict(MONITOR, width=1280, height=720)
    got = probe(
        tmp_path, [LAPTOP, small], screen="Monitor", geometry={"Monitor": [2000, 900, 1000, 140]}
    )
    assert got["placed_on"] == "Monitor"
    assert got["placed"] == [1280 + 1280 - 1000, 720 - 140, 1000, 140]


def test_fit_inside() -> None:
    area = QRect(1280, 0, 1280, 720)
    assert fit_inside(QRect(1300, 10, 500, 100), area) == QRect(1300, 10, 500, 100)  # untouched
    assert fit_inside(QRect(2400, 700, 500, 100), area) == QRect(2060, 620, 500, 100)
    assert fit_inside(QRect(1000, -50, 500, 100), area) == QRect(1280, 0, 500, 100)
    assert fit_inside(QRect(1300, 0, 3000, 900), area) == area  # larger than the screen


def _placed_overlay(qtbot):  # type: ignore[no-untyped-def]
    """An overlay with the default look, where it goes the first time, shown."""
    from subtitler.config import DisplayConfig
    from subtitler.ui.overlay import SubtitleOverlay

    o = SubtitleOverlay(DisplayConfig())
    qtbot.addWidget(o)
    o.place()
    o.show()
    return o


def test_overlay_left_off_every_screen_is_placed_again(qtbot) -> None:  # type: ignore[no-untyped-def]
    # What Qt leaves behind when the monitor the overlay was on is unplugged while running: a
    # window at coordinates no screen covers. The overlay reacts to the screen-removed signal.
    from PySide6.QtGui import QGuiApplication

    o = _placed_overlay(qtbot)
    home = o.geometry()
    o.setGeometry(QRect(9000, 9000, 700, 120))
    gui = QGuiApplication.instance()
    assert isinstance(gui, QGuiApplication)
    gui.screenRemoved.emit(gui.primaryScreen())
    qtbot.waitUntil(lambda: o.geometry() == home, timeout=2000)
    # Still on some screen: a removal elsewhere does not move it.
    o.setGeometry(QRect(10, 10, 700, 120))
    gui.screenRemoved.emit(gui.primaryScreen())
    qtbot.wait(50)
    assert o.geometry() == QRect(10, 10, 700, 120)


def _gui():  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QGuiApplication

    gui = QGuiApplication.instance()
    assert isinstance(gui, QGuiApplication)
    return gui


def test_screen_made_smaller_keeps_the_overlay_wholly_on_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    # A resolution or scale change while running (1920x1080 to 1280x720, or 100% to 150%) makes
    # the screen smaller under the overlay: left where it was, its bottom rows (the newest
    # subtitles) were off the screen, or all of it. Qt says so with the screen's geometryChanged;
    # the offscreen screen cannot shrink, so the overlay is put where the old size left it.
    o = _placed_overlay(qtbot)
    area = _gui().primaryScreen().availableGeometry()

    def changed(available: bool = False) -> None:
        # The screen asked for each time: in one full run of the suite the QScreen held
        # from the start of this test was already deleted (by an emission of screenRemoved
        # in an earlier test of the worker, most likely) when its signal was sent again.
        scr = _gui().primaryScreen()
        if available:
            scr.availableGeometryChanged.emit(scr.availableGeometry())
        else:
            scr.geometryChanged.emit(scr.geometry())

    # 40 px of it still on the screen: "on some screen", but its newest row is not.
    o.setGeometry(QRect(area.right() - 500, area.bottom() - 40, 700, 120))
    changed()
    want = fit_inside(QRect(area.right() - 500, area.bottom() - 40, 700, 120), area)
    qtbot.waitUntil(lambda: o.geometry() == want, timeout=2000)
    assert area.contains(o.geometry())
    # Wider than the screen now: as wide as the screen, on it.
    o.setGeometry(QRect(area.x() - 100, area.y() + 10, area.width() + 300, 120))
    changed(available=True)
    qtbot.waitUntil(lambda: o.geometry() == QRect(area.x(), area.y() + 10, area.width(), 120))
    # Wholly on the screen: a change elsewhere leaves it where the user put it.
    o.setGeometry(QRect(area.x() + 10, area.y() + 10, 700, 120))
    changed()
    qtbot.wait(50)
    assert o.geometry() == QRect(area.x() + 10, area.y() + 10, 700, 120)


def test_screen_made_smaller_while_moved_aside_keeps_its_place_on_screen(qtbot) -> None:  # type: ignore[no-untyped-def]
    # Moved aside for a window of the app, its own place (where it comes back to) is kept on
    # the smaller screen too, and it stays clear of that window.
    o = _placed_overlay(qtbot)
    scr = _gui().primaryScreen()
    area = scr.availableGeometry()
    home = QRect(area.x() + 50, area.bottom() - 20, 500, 100)  # as the larger screen left it
    o.setGeometry(home)
    window = QRect(area.x() + 40, area.bottom() - 250, 600, 250)
    o.avoid(window)
    assert o.home_geometry() == home and o.geometry() != home  # aside
    scr.geometryChanged.emit(scr.geometry())
    qtbot.waitUntil(lambda: o.home_geometry() == fit_inside(home, area), timeout=2000)
    assert area.contains(o.geometry()) and not o.geometry().intersects(window)
    o.avoid(None)  # the window closed: back at its place, on the screen
    assert o.geometry() == fit_inside(home, area)
    # A window in use clear of the old place but not of the new one: moved aside for it.
    o.setGeometry(home)
    window = QRect(area.x() + 40, area.bottom() - 300, 600, 250)
    o.avoid(window)
    assert o.geometry() == home  # (not in its way yet)
    scr.geometryChanged.emit(scr.geometry())
    qtbot.waitUntil(lambda: o.home_geometry() == fit_inside(home, area), timeout=2000)
    assert area.contains(o.geometry()) and not o.geometry().intersects(window)


def test_a_window_opened_again_after_its_screen_went_is_on_a_screen(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Settings, History, Models, Glossary and About are hidden when closed and shown again
    # where they were: on a monitor unplugged since (a laptop undocked) that is where no screen
    # is, and Qt shows them there (seen under Xvfb: a dialog moved to x=2500 on a 1280 px
    # screen came back at x=2500). The offscreen screen cannot be unplugged: the window is put
    # where the unplugged monitor leaves it. On a screen made smaller it is made smaller too.
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    area = _gui().primaryScreen().availableGeometry()

    def on_screen(frame: QRect) -> bool:
        # Wholly, or as much of it as the screen has room for (Settings' least width is
        # wider than the offscreen screen's 800 px): its top left corner on it.
        seen = frame.intersected(area)
        room = (min(frame.width(), area.width()), min(frame.height(), area.height()))
        return area.contains(frame.topLeft()) and (seen.width(), seen.height()) == room

    opens = {
        "settings": app.open_settings,
        "history": app.open_history,
        "glossary": app.open_glossary,
        "about": app.open_about,
        "models": app.open_models,
    }
    for name, open_it in opens.items():
        open_it()
        w = getattr(app, "glossary_dialog" if name == "glossary" else name)
        assert w is not None and w.isVisible(), name
        qtbot.addWidget(w)
        w.close()
        w.move(area.right() + 1200, area.y() + 100)  # on the monitor unplugged since
        open_it()
        qtbot.waitUntil(w.isVisible)
        assert on_screen(w.frameGeometry()), (name, w.frameGeometry())
        w.close()
        w.move(area.right() - 100, area.bottom() - 100)  # its corner on the screen only
        open_it()
        assert on_screen(w.frameGeometry()), (name, w.frameGeometry())
        w.close()
        w.setGeometry(QRect(area.x(), area.y(), area.width() + 400, area.height() + 300))
        open_it()  # the screen's resolution made smaller since
        assert on_screen(w.frameGeometry()), (name, w.frameGeometry())
        w.close()


def test_the_tray_brings_the_subtitles_to_the_screen_in_use(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Where no screen change can be told (a projector switched off but still connected, the
    # overlay left on a screen no one looks at, shrunk into a corner), the tray has the way
    # back: the overlay at the bottom of the screen the pointer is on, at its first size,
    # that place saved. Before, only editing the settings file brought it back.
    from PySide6.QtGui import QCursor

    from subtitler import settings_store
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    o = app.overlay
    qtbot.addWidget(o)
    labels = [a.text() for a in app.tray.menu.actions()]
    action = next(a for a in app.tray.menu.actions() if a.text() == "Bring subtitles here")
    assert labels.index("Bring subtitles here") < labels.index("Click-through")
    scr = _gui().screenAt(QCursor.pos()) or _gui().primaryScreen()
    area = scr.availableGeometry()
    o.hide()
    o.setGeometry(QRect(area.right() - 250, area.y(), 240, 60))  # shrunk into a corner
    app.remember_geometry(scr.name(), o.geometry())
    action.trigger()
    w, h = o.fitting_width(), o.fitting_height()
    assert o.isVisible()
    assert o.geometry() == QRect(area.x() + (area.width() - w) // 2, area.bottom() - h - 60, w, h)
    saved = settings_store.load(tmp_path / "config.toml").config.display
    assert saved.screen == scr.name()
    assert saved.geometry[scr.name()] == [o.x(), o.y(), w, h]


# The overlay put somewhere on two screens, then a screen's geometryChanged: where it is then.
PROBE_CHANGE = """
import json, sys
from PySide6.QtCore import QRect, QTimer
from PySide6.QtWidgets import QApplication
from subtitler.config import DisplayConfig
from subtitler.ui.overlay import SubtitleOverlay

app = QApplication([])
o = SubtitleOverlay(DisplayConfig())
o.place()
o.show()
out = []
for rect in json.loads(sys.argv[1]):
    o.setGeometry(QRect(*rect))
    app.screens()[0].geometryChanged.emit(app.screens()[0].geometry())
    QTimer.singleShot(0, app.quit)  # (after the overlay's own check, queued before it)
    app.exec()
    out.append([o.x(), o.y(), o.width(), o.height()])
print(json.dumps(out))
"""


def test_two_screens_of_different_heights(tmp_path: Path) -> None:
    layout = tmp_path / "screens.json"
    screens = [LAPTOP, MONITOR]
    layout.write_text(
        json.dumps({"screens": [dict(s, logicalDpi=96, logicalBaseDpi=96, dpr=1) for s in screens]})
    )
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={layout}")
    rects = [
        [1000, 300, 600, 120],  # across both screens, wholly on them: left as it is
        [1100, 760, 600, 120],  # across both, its lower left below the laptop's 800 px
        [1500, 1000, 600, 120],  # on the monitor, its bottom below it
    ]
    got = run_json(["-c", PROBE_CHANGE, json.dumps(rects)], env, timeout=60)
    assert got[0] == [1000, 300, 600, 120]
    assert got[1] == [1280, 760, 600, 120]  # onto the monitor, which showed most of it
    assert got[2] == [1500, 1080 - 120, 600, 120]


def test_an_open_window_on_a_screen_unplugged_comes_onto_a_screen(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Settings open on the monitor when it is unplugged (or the screen made smaller): the
    # window stays where no screen is, unseen, and the overlay keeps clear of it there.
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.open_settings()
    w = app.settings
    assert w is not None
    qtbot.addWidget(w)
    gui = _gui()
    area = gui.primaryScreen().availableGeometry()
    w.move(area.right() + 1200, area.y() + 100)  # where the unplugged monitor was
    gui.screenRemoved.emit(gui.primaryScreen())
    qtbot.waitUntil(lambda: area.contains(w.frameGeometry().topLeft()), timeout=2000)
    assert w.isVisible()
    # A screen made smaller under it: its lower right corner off the screen.
    w.move(area.right() - 300, area.bottom() - 200)
    gui.primaryScreen().geometryChanged.emit(gui.primaryScreen().geometry())

    def on_screen() -> bool:  # wholly, or as wide as the screen (Settings' least width)
        frame = w.frameGeometry()
        seen = frame.intersected(area)
        room = (min(frame.width(), area.width()), frame.height())
        return area.contains(frame.topLeft()) and (seen.width(), seen.height()) == room

    qtbot.waitUntil(on_screen, timeout=2000)


def test_screen_grown_back_gives_the_overlay_its_saved_width_again(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A resolution or scale change made the screen narrower: the overlay was narrowed to stay
    # on it (not saved: the settings keep the width the user gave it). When the screen grows
    # back, it had stayed narrow for good. The offscreen screen cannot change size: the overlay
    # is put where the smaller screen left it, and the screen says its geometry changed.
    from PySide6.QtCore import QPoint, Qt

    from subtitler import settings_store
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    o = app.overlay
    qtbot.addWidget(o)
    area = _gui().primaryScreen().availableGeometry()
    saved = QRect(area.x() + 40, area.bottom() - 200, 700, 120)
    name = _gui().primaryScreen().name()

    def screen_changed() -> None:  # (the screen asked for again: a test's wrapper goes stale)
        scr = _gui().primaryScreen()
        scr.geometryChanged.emit(scr.geometry())

    app.remember_geometry(name, saved)
    o.place()
    o.show()
    assert o.geometry() == saved
    narrowed = QRect(area.x(), area.bottom() - 200, 500, 120)  # as a 500 px screen left it
    o.setGeometry(narrowed)
    screen_changed()
    qtbot.waitUntil(lambda: o.geometry() == saved, timeout=2000)
    kept = settings_store.load(tmp_path / "config.toml").config.display.geometry[name]
    assert kept == [saved.x(), saved.y(), 700, 120]  # (the narrow width was never saved)
    # Moved aside for a window of the app in use when the screen grows: its own place is
    # given the width back, and it stays clear of that window.
    o.setGeometry(narrowed)
    window = QRect(area.x(), area.bottom() - 250, 760, 250)
    o.avoid(window)
    assert o.home_geometry() == narrowed and o.geometry() != narrowed
    _gui().primaryScreen().availableGeometryChanged.emit(area)
    qtbot.waitUntil(lambda: o.home_geometry() == saved, timeout=2000)
    assert not o.geometry().intersects(window)
    o.avoid(None)
    assert o.geometry() == saved
    # Made narrower by the user (dragging its right edge): that width is theirs, kept.
    edge = QPoint(o.width() - 3, o.height() // 2)
    qtbot.mousePress(o, Qt.MouseButton.LeftButton, pos=edge)
    qtbot.mouseMove(o, edge - QPoint(200, 0))
    qtbot.mouseRelease(o, Qt.MouseButton.LeftButton, pos=edge - QPoint(200, 0))
    assert o.width() == 500
    screen_changed()
    qtbot.wait(50)
    assert o.width() == 500


# The app on two screens, the overlay saved on the monitor; the monitor unplugged (the overlay
# put where that left it: on the laptop), then plugged in again. The offscreen platform cannot
# unplug a screen: the overlay is put on the laptop as keep_on_screen put it there, and Qt's
# screenAdded says the monitor is back.
PROBE_REPLUG = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from subtitler import settings_store
from tests.ui.test_app_state import make_app

gui = QApplication([])
app = make_app(Path(sys.argv[1]))
o = app.overlay
monitor = next(s for s in gui.screens() if s.name() == "Monitor")
app.remember_geometry("Monitor", QRect(1600, 900, 1000, 140))
o.place()
o.show()


def settle():
    QTimer.singleShot(0, gui.quit)  # (after the overlay's own check, queued before it)
    gui.exec()


def where():
    return [o.x(), o.y(), o.width(), o.height()]


out = {"placed": where()}
o.setGeometry(QRect(100, 600, 1000, 140))  # unplugged: onto the laptop
settle()
gui.screenAdded.emit(monitor)
settle()
out["plugged_in"] = where()
out["saved"] = settings_store.load(Path(sys.argv[1]) / "config.toml").config.display.screen
o.setGeometry(QRect(100, 600, 1000, 140))  # unplugged again; the user drags it on the laptop
settle()
QTest.mousePress(o, Qt.MouseButton.LeftButton, pos=QPoint(50, 50))
QTest.mouseMove(o, QPoint(90, 20))
QTest.mouseRelease(o, Qt.MouseButton.LeftButton, pos=QPoint(90, 20))
out["dragged"] = where()
gui.screenAdded.emit(monitor)
settle()
out["plugged_in_after_drag"] = where()
app.shut_down()
print(json.dumps(out))
"""


def test_monitor_plugged_in_again_takes_the_overlay_back_to_its_place_there(tmp_path: Path) -> None:
    # Unplugged, the monitor the overlay was on left it on the laptop (not saved: the settings
    # keep its place on the monitor). Plugged in again, the overlay stayed on the laptop for
    # good. Moved by the user meanwhile, where they put it is their choice, and stays.
    layout = tmp_path / "screens.json"
    screens = [LAPTOP, MONITOR]
    layout.write_text(
        json.dumps({"screens": [dict(s, logicalDpi=96, logicalBaseDpi=96, dpr=1) for s in screens]})
    )
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={layout}")
    got = run_json(["-c", PROBE_REPLUG, str(tmp_path)], env, timeout=60)
    assert got["placed"] == [1600, 900, 1000, 140]
    assert got["plugged_in"] == [1600, 900, 1000, 140]
    assert got["saved"] == "Monitor"
    assert got["dragged"] == [140, 570, 1000, 140]
    assert got["plugged_in_after_drag"] == [140, 570, 1000, 140]
