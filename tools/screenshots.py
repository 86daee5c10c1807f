"""Pictures of every window and dialog, as a user sees them, under a real X server.

    xvfb-run -a -s "-screen 0 1366x768x24" python tools/screenshots.py OUT
    QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 2560x1440x24" python tools/screenshots.py OUT

Each window is opened as the app opens it (tests/helpers/windows.py: a fake pipeline, sample
meetings, a glossary, the real model catalog), then taken from the screen: OUT/NAME.png. The
message boxes (modal) are taken while they wait for an answer, and the tray menu while it is
open. One line per picture says its size, whether it lies on the screen and which texts are
cut off (the overlay's own too: its state, alerts and status line); then each window of the
app is made active over the overlay, which must move aside (screen-settings-and-overlay.png).
Research tooling (not shipped); the tests do not run it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QPoint, QRect, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget  # noqa: E402


def main(out: Path) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    out.mkdir(parents=True, exist_ok=True)
    qapp = QApplication(sys.argv[:1])
    qapp.setQuitOnLastWindowClosed(False)
    from subtitler.ui.app import SubtitlerApp
    from tests.helpers.windows import clipped, make_app, out_of_order, settle, windows

    problems = 0

    def shoot(name: str, w: QWidget) -> None:
        nonlocal problems
        settle(300)
        screen = w.screen()
        area = screen.availableGeometry()
        frame = w.frameGeometry()
        if w.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground):
            pix = w.grab()  # (the overlay: with its see-through corners, as a compositor shows it)
        else:
            pix = screen.grabWindow(w.winId())
        pix.save(str(out / f"{name}.png"))
        on = "on screen" if area.contains(frame) else f"NOT INSIDE the screen {_rect(area)}"
        cut = clipped(w)
        problems += bool(cut) + (not area.contains(frame))
        print(f"{name}.png: {_rect(frame)} ({pix.width()}x{pix.height()} px), {on}")
        for c in cut:
            print(f"    cut off: {c}")
        order = out_of_order(w)
        problems += bool(order)
        for o in order:
            print(f"    tab order: {o}")

    def not_under_overlay(app: SubtitlerApp) -> None:
        """Each window of the app, active over the shown overlay: the overlay must have moved
        aside (it stays on top of everything). One screen-wide picture, with Settings."""
        nonlocal problems
        app.overlay.show()
        opened: tuple[tuple[str, Callable[[], object], str], ...] = (
            ("settings", app.open_settings, "settings"),
            ("models", app.open_models, "models"),
            ("glossary", app.open_glossary, "glossary_dialog"),
            ("history", app.open_history, "history"),
        )
        for name, open_it, attr in opened:
            open_it()
            w = getattr(app, attr)
            w.activateWindow()
            settle(400)
            clear = not app.overlay.geometry().intersects(w.frameGeometry())
            ok = QApplication.activeWindow() is w and clear
            where = _rect(app.overlay.geometry())
            print(f"{name} in use: the overlay at {where}, {'clear of it' if ok else 'OVER IT'}")
            problems += not ok
            if name == "settings":
                shot = qapp.primaryScreen().grabWindow(0)
                shot.save(str(out / "screen-settings-and-overlay.png"))
            w.close()
            settle(200)
        app.overlay.hide()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SUBTITLER_MODELS_DIR"] = str(Path(tmp) / "models")  # none downloaded
        app = make_app(Path(tmp))
        for win in windows(app, Path(tmp)):
            shoot(win.name, win.widget)
        app.overlay.hide()
        not_under_overlay(app)

        # The tray's menu, open where a tray icon would be (the top right corner).
        menu = app.tray.menu
        area = qapp.primaryScreen().availableGeometry()
        menu.popup(QPoint(area.right() - menu.sizeHint().width(), area.top() + 4))
        shoot("tray-menu", menu)
        menu.close()

        # The message boxes, taken while they wait for an answer.
        def modal(name: str, ask: Callable[[], object]) -> None:
            def take() -> None:
                box = QApplication.activeModalWidget()
                if box is None:
                    QTimer.singleShot(100, take)
                    return
                shoot(name, box)
                box.close()

            QTimer.singleShot(200, take)
            ask()

        modal("message-nothing-to-export", app.export_dialog)
        app.open_models()
        models = app.models
        assert models is not None
        models.select(models.entries[0].id)
        # (A model in use or not downloaded is not removed: ask as for one that can be.)
        modal(
            "message-remove-model",
            lambda: QMessageBox.question(
                models, "Remove model", f"Delete {models.entries[0].name} from disk?"
            ),
        )
        models.close()
        data_dir = Path(tmp) / "data"
        modal(
            "message-already-running",
            lambda: QMessageBox.warning(
                None,
                "subtitler",
                f"subtitler is already running but does not answer. If it is stuck, end it "
                f"(or remove {data_dir / 'subtitler.lock'}) and start again.",
            ),
        )
        app.quit()
    print(f"{problems} window(s) with problems")
    return 1 if problems else 0


def _rect(r: QRect) -> str:
    return f"{r.width()}x{r.height()} at {r.x()},{r.y()}"


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("screenshots")))
