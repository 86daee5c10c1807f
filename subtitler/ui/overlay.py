"""The subtitle overlay: a frameless, translucent, always-on-top window with the last lines.

Finished lines are shown in full, the open line with display-only mask-k. Events only store
data and schedule a repaint; repaints are throttled to ~30 per second. With several target
languages each line shows the extra targets' translations under the first one's, masked alike.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

from PySide6.QtCore import QElapsedTimer, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QScreen,
)
from PySide6.QtWidgets import QMenu, QWidget

from subtitler.config import DisplayConfig
from subtitler.pipeline.events import SubtitleEvent
from subtitler.web.lines import ExtraTargets

log = logging.getLogger(__name__)

MIN_FRAME_MS = 33  # at most ~30 repaints per second
ALERT_S = 12  # how long a passing problem stays above the subtitles
ALERT_COLOR = QColor(255, 196, 64)  # amber: noticeable on any background, not alarming
EDGE = 10  # px from the right/bottom edge where a drag resizes instead of moving
PAD = 14


@dataclass
class Line:
    segment_id: int
    source: str
    translation: str
    extra: tuple[str, ...] = ()  # the extra target languages' text, in their order


def wrap(text: str, fm: QFontMetricsF, width: float) -> list[str]:
    """Greedy word wrap; text without spaces (Chinese, Japanese) wraps between characters, and
    so does any word wider than a line (a long CJK run between spaces, a file path)."""
    if not text:
        return []
    spaced = " " in text.strip()
    tokens = text.split(" ") if spaced else list(text)
    sep = " " if spaced else ""
    lines: list[str] = []
    cur = ""
    for tok in tokens:
        cand = f"{cur}{sep}{tok}" if cur else tok
        if fm.horizontalAdvance(cand) <= width:
            cur = cand
            continue
        if cur:
            lines.append(cur)
        while len(tok) > 1 and fm.horizontalAdvance(tok) > width:
            n = _fitting_prefix(tok, fm, width)
            lines.append(tok[:n])
            tok = tok[n:]
        cur = tok
    if cur:
        lines.append(cur)
    return lines


def _fitting_prefix(text: str, fm: QFontMetricsF, width: float) -> int:
    """Length of the longest prefix of ``text`` that fits ``width`` (at least 1)."""
    lo, hi = 1, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fm.horizontalAdvance(text[:mid]) <= width:
            lo = mid
        else:
            hi = mid - 1
    return lo


def fit_inside(rect: QRect, area: QRect) -> QRect:
    """``rect`` moved (and shrunk if needed) to lie wholly inside ``area``: a window saved on a
    larger or differently arranged screen must not come back half off-screen."""
    w, h = min(rect.width(), area.width()), min(rect.height(), area.height())
    x = max(area.x(), min(rect.x(), area.x() + area.width() - w))
    y = max(area.y(), min(rect.y(), area.y() + area.height() - h))
    return QRect(x, y, w, h)


class SubtitleOverlay(QWidget):
    geometry_saved = Signal(str, QRect)  # screen name, geometry after a move or resize
    request_settings = Signal()
    request_toggle_run = Signal()
    request_click_through = Signal(bool)
    request_quit = Signal()

    def __init__(self, display: DisplayConfig) -> None:
        super().__init__(None)
        self.setWindowTitle("subtitler")
        self.setWindowFlags(
            Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.Tool
        )
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        # macOS makes a tool window a panel that hides whenever another app is active: the
        # subtitles must stay over the meeting app, which is the active one.
        self.setAttribute(Qt.WidgetAttribute.WA_MacAlwaysShowToolWindow)
        self.setMinimumSize(QSize(240, 60))
        self.display = display
        self._done: deque[Line] = deque(maxlen=12)
        self._open: SubtitleEvent | None = None
        self._extra = ExtraTargets()
        self.targets = 1  # target languages: each line has a row block for each
        self._notice = ""
        self._alert = ""
        self._alert_timer = QTimer(self)
        self._alert_timer.setSingleShot(True)
        self._alert_timer.timeout.connect(self._expire_alert)
        self._drag: tuple[str, QPoint, QRect] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._repaint_now)
        self._since_paint = QElapsedTimer()
        self._since_paint.start()
        self.paint_count = 0
        self.drawn: list[str] = []  # the rows of text in the last frame, top row last
        self.apply_display(display)
        gui = QGuiApplication.instance()
        if isinstance(gui, QGuiApplication):
            # A monitor unplugged (or the primary one changed) while running: the window may now
            # sit where no screen is; check once Qt has settled the new layout.
            gui.screenRemoved.connect(self._screens_changed)
            gui.primaryScreenChanged.connect(self._screens_changed)

    def _screens_changed(self, _screen: QScreen) -> None:
        QTimer.singleShot(0, self, self.keep_on_screen)

    def keep_on_screen(self) -> None:
        """Place the overlay again if no screen shows it any more."""
        rect = self.geometry()
        if not any(s.availableGeometry().intersects(rect) for s in QGuiApplication.screens()):
            log.info("overlay is off every screen; placing it again")
            self.place()

    # -- content ---------------------------------------------------------------------------
    def on_subtitle(self, ev: SubtitleEvent) -> None:
        if ev.extra:
            self._extra.add(ev)
        elif ev.final:
            self._done.append(Line(ev.segment_id, ev.source, ev.translation or ev.source))
            if self._open is not None and self._open.segment_id == ev.segment_id:
                self._open = None
        else:
            self._open = ev
        self.schedule_repaint()

    def set_notice(self, text: str) -> None:
        """A status line (loading, errors) shown when there are no subtitles to show."""
        self._notice = text
        self.schedule_repaint()

    def set_alert(self, text: str, sticky: bool = False) -> None:
        """A problem shown above the subtitles even while they run (an unplugged input, a
        transcript that cannot be written); gone after ALERT_S unless ``sticky`` ("" clears)."""
        self._alert = text
        self._alert_timer.stop()
        if text and not sticky:
            self._alert_timer.start(int(ALERT_S * 1000))
        self.schedule_repaint()

    @property
    def alert(self) -> str:
        return self._alert

    def _expire_alert(self) -> None:
        self._alert = ""
        self.schedule_repaint()

    def clear(self) -> None:
        self._done.clear()
        self._open = None
        self._extra.clear()
        self.schedule_repaint()

    def lines(self) -> list[Line]:
        """The lines on screen: the last ones, finished in full, the open one masked."""
        n = self.display.lines
        out = list(self._done)
        if self._open is not None:
            ev = self._open
            shown = ev.shown(self.display.mask_k) if ev.translation else ev.source
            out.append(Line(ev.segment_id, ev.source, shown))
        k = self.display.mask_k
        for line in out[-n:]:
            line.extra = tuple(text for _, text in self._extra.shown(line.segment_id, k))
        return out[-n:]

    # -- look ------------------------------------------------------------------------------
    def apply_display(self, display: DisplayConfig) -> None:
        """New appearance or k: takes effect at the next repaint (k at once). A new number of
        lines, text size, font or bilingual mode also resizes the window to fit them, keeping
        its bottom edge where it is."""
        old, self.display = self.display, display
        self.set_click_through(display.click_through)
        sizing = ("lines", "font_size", "font_family", "bilingual")
        if any(getattr(old, f) != getattr(display, f) for f in sizing):
            self._fit()
        self.schedule_repaint()

    def set_targets(self, n: int) -> None:
        """How many target languages each line shows (the window fits them, as above)."""
        if n != self.targets:
            self.targets = max(1, n)
            self._fit()
            self.schedule_repaint()

    def _fit(self) -> None:
        """Resize to ``fitting_height`` keeping the bottom edge (when shown)."""
        if self.isVisible():
            g = self.geometry()
            h = self.fitting_height()
            rect = QRect(g.x(), g.y() + g.height() - h, g.width(), h)
            scr = self.screen() or QGuiApplication.primaryScreen()
            if scr is not None:
                rect = fit_inside(rect, scr.availableGeometry())
            self.setGeometry(rect)
            self.geometry_saved.emit(self.screen_name(), self.geometry())

    def fitting_height(self) -> int:
        """Window height for ``display.lines`` lines of text (with their source lines when
        bilingual, and a row block per target language) and a little room for wrapping."""
        rows = self.targets + (0.6 if self.display.bilingual else 0.0)
        return round(self.display.font_size * 1.6 * self.display.lines * rows) + 2 * PAD

    def font_for(self, scale: float = 1.0) -> QFont:
        f = QFont(self.display.font_family)
        f.setPixelSize(max(6, round(self.display.font_size * scale)))
        f.setWeight(QFont.Weight.DemiBold)
        return f

    def set_click_through(self, on: bool) -> None:
        if bool(self.windowFlags() & Qt.WindowType.WindowTransparentForInput) == on:
            return
        visible = self.isVisible()
        self.setWindowFlag(Qt.WindowType.WindowTransparentForInput, on)
        if visible:
            self.show()  # changing window flags hides the window

    @property
    def click_through(self) -> bool:
        return bool(self.windowFlags() & Qt.WindowType.WindowTransparentForInput)

    # -- painting --------------------------------------------------------------------------
    def schedule_repaint(self) -> None:
        if self._timer.isActive():
            return
        wait = max(0, MIN_FRAME_MS - self._since_paint.elapsed())
        self._timer.start(wait)

    def _repaint_now(self) -> None:
        # update() only posts a request; the frame clock starts here so that a burst of events
        # between the request and the paint cannot queue a second frame.
        self._since_paint.restart()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paint_count += 1
        self.drawn = []
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        bg = QColor(0, 0, 0, round(255 * self.display.background_opacity))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(bg)
        p.drawRoundedRect(self.rect(), 12, 12)
        width = self.width() - 2 * PAD
        main, small = self.font_for(), self.font_for(0.6)
        fm, fms = QFontMetricsF(main), QFontMetricsF(small)
        Row = tuple[str, QFont, QColor]
        color = QColor(self.display.text_color)
        blocks: list[list[Row]] = []  # one per subtitle line: its rows, drawn together
        lines = self.lines()
        if not lines and self._notice:
            blocks.append(
                [(t, small, QColor(220, 220, 220)) for t in wrap(self._notice, fms, width)]
            )
        for line in lines:
            rows: list[Row] = []
            if self.display.bilingual and line.source and line.translation != line.source:
                rows += [(t, small, QColor(200, 200, 200)) for t in wrap(line.source, fms, width)]
            rows += [(t, main, color) for t in wrap(line.translation, fm, width)]
            for text in line.extra:  # the extra target languages, under the first
                rows += [(t, main, color) for t in wrap(text, fm, width)]
            blocks.append(rows)
        # An alert keeps the top row(s); subtitles get the rest.
        top = 0.0
        if self._alert:
            for text in wrap(self._alert, fms, width)[:2]:
                self._draw_text(p, text, small, ALERT_COLOR, PAD, top + PAD / 2 + fms.ascent())
                top += fms.height()
        # Newest text at the bottom. An older line that does not fit whole is left out rather
        # than shown from its middle; only the newest may lose its first rows.
        y = float(self.height() - PAD)
        for i, rows in enumerate(reversed(blocks)):
            need = sum(QFontMetricsF(font).height() for _, font, _ in rows)
            if i > 0 and y - need < top:
                break
            for text, font, col in reversed(rows):
                m = QFontMetricsF(font)
                if y - m.height() < top:
                    break
                self._draw_text(p, text, font, col, PAD, y - m.descent())
                y -= m.height()
        p.end()

    def _draw_text(
        self, p: QPainter, text: str, font: QFont, color: QColor, x: float, baseline: float
    ) -> None:
        self.drawn.append(text)
        path = QPainterPath()
        path.addText(x, baseline, font, text)
        if self.display.outline:
            pen = QPen(QColor(0, 0, 0, 230), max(2.0, font.pixelSize() / 9))
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            p.strokePath(path, pen)
        p.fillPath(path, color)

    # -- move, resize, menu ----------------------------------------------------------------
    def _edge(self, pos: QPoint) -> bool:
        return pos.x() >= self.width() - EDGE or pos.y() >= self.height() - EDGE

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            pos = e.position().toPoint()
            mode = "resize" if self._edge(pos) else "move"
            self._drag = (mode, e.globalPosition().toPoint(), self.geometry())

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        if self._drag is None:
            cursor = (
                Qt.CursorShape.SizeFDiagCursor
                if self._edge(e.position().toPoint())
                else (Qt.CursorShape.OpenHandCursor)
            )
            self.setCursor(cursor)
            return
        mode, start, geo = self._drag
        d = e.globalPosition().toPoint() - start
        if mode == "move":
            self.move(geo.topLeft() + d)
        else:
            self.resize(
                max(self.minimumWidth(), geo.width() + d.x()),
                max(self.minimumHeight(), geo.height() + d.y()),
            )

    def mouseReleaseEvent(self, e: QMouseEvent) -> None:
        if self._drag is not None:
            self._drag = None
            self.geometry_saved.emit(self.screen_name(), self.geometry())

    def screen_name(self) -> str:
        scr = self.screen() or QGuiApplication.primaryScreen()
        return scr.name() if scr is not None else ""

    def place(self) -> None:
        """Restore the saved geometry for the last screen, else bottom-centre of the primary."""
        screens = {s.name(): s for s in QGuiApplication.screens()}
        primary = QGuiApplication.primaryScreen()
        name = self.display.screen
        if name not in screens:
            # The screen it was last on is unplugged: where it was on the primary screen, if it
            # ever was there (names can be "" on some platforms).
            name = primary.name() if primary is not None else ""
        scr = screens.get(name, primary)
        saved = self.display.geometry.get(name)
        if saved and len(saved) == 4 and scr is not None:
            # Its size and place on that screen, kept wholly visible if the screen shrank.
            self.setGeometry(fit_inside(QRect(*saved), scr.availableGeometry()))
            return
        if scr is None:
            self.resize(900, 160)
            return
        avail = scr.availableGeometry()
        h = self.fitting_height()
        w = round(avail.width() * 0.7)
        self.setGeometry(avail.x() + (avail.width() - w) // 2, avail.bottom() - h - 60, w, h)

    def contextMenuEvent(self, e: QContextMenuEvent) -> None:
        menu = QMenu(self)
        menu.addAction("Start / pause", self.request_toggle_run.emit)
        menu.addAction("Settings…", self.request_settings.emit)
        act = menu.addAction("Click-through")
        act.setCheckable(True)
        act.setChecked(self.click_through)
        act.toggled.connect(self.request_click_through.emit)
        menu.addSeparator()
        menu.addAction("Quit", self.request_quit.emit)
        menu.exec(e.globalPos())
