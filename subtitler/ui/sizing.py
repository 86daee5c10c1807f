"""Windows opened at a comfortable size, but never larger than the screen they open on."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

SHARE = 0.9  # of the screen's free area, at most


def room(widget: QWidget) -> QSize:
    """The most a window of ``widget`` may take on the screen it opens on."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    area = screen.availableGeometry()
    return QSize(int(area.width() * SHARE), int(area.height() * SHARE))


def open_at(widget: QWidget, width: int, height: int) -> None:
    """Resize to ``width`` x ``height``, or less where the screen is smaller."""
    most = room(widget)
    widget.resize(min(width, most.width()), min(height, most.height()))
