"""The Qt part of ``--self-test``: create the overlay offscreen, render a line, check pixels."""

from __future__ import annotations

import importlib
import sys

from PySide6.QtCore import qVersion
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from subtitler.config import DisplayConfig
from subtitler.session import SubtitleEvent
from subtitler.ui.overlay import SubtitleOverlay

TEXT = "Self-test: subtitles render"


def check_qt() -> str:
    """Render a final subtitle in the overlay; raise unless its white text reached the pixels.

    Runs without an event loop (``QWidget.grab`` paints synchronously), so it cannot hang
    waiting for a window system. Returns a one-line description of what was seen.
    """
    # Every UI module imports: a Qt module missing from a bundle (QtNetwork for the
    # single-instance guard, say) fails here rather than when the app starts.
    importlib.import_module("subtitler.ui.app")
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    overlay = SubtitleOverlay(
        DisplayConfig(mask_k=0, lines=1, text_color="#ffffff", background_opacity=1.0)
    )
    try:
        overlay.resize(640, 120)
        overlay.on_subtitle(SubtitleEvent(0, TEXT, TEXT, (TEXT,) * 11, True, 0.0, 0.0))
        shown = [ln.translation for ln in overlay.lines()]
        if shown != [TEXT]:
            raise RuntimeError(f"overlay holds {shown!r} instead of the subtitle")
        img = overlay.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
        w, h = img.width(), img.height()
        if w == 0 or h == 0:
            raise RuntimeError("the overlay rendered an empty image")
        bright = 0
        for y in range(0, h, 2):
            for x in range(0, w, 2):
                c = QColor(img.pixel(x, y))
                if c.red() > 200 and c.green() > 200 and c.blue() > 200:
                    bright += 1
        if bright < 20:
            raise RuntimeError(f"no text pixels in the rendered overlay ({w}x{h})")
    finally:
        overlay.deleteLater()
        overlay.close()
    return (
        f"Qt {qVersion()} ({app.platformName()}), overlay rendered {w}x{h} "
        f"with {bright} text pixels"
    )
