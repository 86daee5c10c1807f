"""Windows opened at a comfortable size, but never larger than the screen they open on, and
wholly on a screen when they are shown again."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
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


def overlap(a: QRect, b: QRect) -> int:
    """The area ``a`` and ``b`` share."""
    i = a.intersected(b)
    return i.width() * i.height() if i.isValid() else 0


def shown_whole(rect: QRect) -> bool:
    """Every pixel of ``rect`` is on some screen (one, or two side by side)."""
    covered = sum(overlap(rect, s.geometry()) for s in QGuiApplication.screens())
    return covered >= rect.width() * rect.height()


def fit_inside(rect: QRect, area: QRect) -> QRect:
    """``rect`` moved (and shrunk if needed) to lie wholly inside ``area``: a window saved on a
    larger or differently arranged screen must not come back half off-screen."""
    w, h = min(rect.width(), area.width()), min(rect.height(), area.height())
    x = max(area.x(), min(rect.x(), area.x() + area.width() - w))
    y = max(area.y(), min(rect.y(), area.y() + area.height() - h))
    return QRect(x, y, w, h)


def back_on_screen(widget: QWidget) -> None:
    """A window shown before (open, or closed and about to be shown again where it was): if
    part of it is where no screen is now (its monitor unplugged, a screen made smaller), it is
    moved, and shrunk if need be, onto the screen that shows most of it, or into the middle of
    the primary one (Qt shows it where it was, unseen)."""
    if not widget.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide):
        return  # (never shown: Qt places it on a screen)
    layout = widget.layout()
    if layout is not None:
        layout.activate()  # (contents changed while it was closed: the size they take now)
    frame = widget.frameGeometry()
    if shown_whole(frame):
        return
    screens = QGuiApplication.screens()
    best = max(screens, key=lambda s: overlap(frame, s.geometry()), default=None)
    if best is None or not overlap(frame, best.geometry()):
        best = QGuiApplication.primaryScreen()
        if best is None:
            return
        area = best.availableGeometry()
        frame.moveCenter(area.center())
    else:
        area = best.availableGeometry()
    inside = fit_inside(frame, area)
    extra = frame.size() - widget.size()  # the window's frame, around its contents
    widget.resize(inside.width() - extra.width(), inside.height() - extra.height())
    widget.move(inside.topLeft())
