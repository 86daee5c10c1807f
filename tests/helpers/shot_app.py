"""The real app (``main.py``'s arguments) that saves the overlay's picture once a translation
is up: ``python -m tests.helpers.shot_app SHOT.png ARGS...``. The end-to-end test's camera,
kept out of the product."""

from __future__ import annotations

import multiprocessing
import sys

from PySide6.QtCore import QTimer

from subtitler.app import main
from subtitler.pipeline.events import SubtitleEvent
from subtitler.ui.overlay import SubtitleOverlay


def install_camera(path: str) -> None:
    """The overlay as drawn (with alpha), once, 300 ms after the first translation shows."""
    shown = SubtitleOverlay.on_subtitle
    taken = False

    def on_subtitle(self: SubtitleOverlay, ev: SubtitleEvent) -> None:
        nonlocal taken
        shown(self, ev)
        if ev.translation and not taken:
            taken = True
            QTimer.singleShot(300, lambda: self.grab().save(path))

    SubtitleOverlay.on_subtitle = on_subtitle  # type: ignore[method-assign]


if __name__ == "__main__":
    multiprocessing.freeze_support()
    install_camera(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
