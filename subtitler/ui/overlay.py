"""The subtitle overlay: a frameless, translucent, always-on-top window with roll-up captions.

Which rows it draws is subtitler.ui.captions' rule (each language's last ``display.lines`` rows
of at most ``display.line_chars`` columns, grouped by line) over the lines of
subtitler.display.lines.ShownLines (finished lines in full, the open one with display-only
mask-k), the same lines the browser page shows. The window fits those rows exactly. Events only
store data and schedule a repaint; repaints are throttled to ~30 per second. An optional status
line at the top shows the input level and the live delays.

The overlay's own texts are never cut off: the app's state (subtitler.ui.app_state) is drawn
where there are no subtitles, wrapped, and its problem as one row above running subtitles; a
passing alert takes up to two rows; a text longer than its room ends in "…" and is whole in
the tooltip (and in the tray).

With two inputs (issue 31) every line says who spoke ("You: …", "Others: …"), each side has its
own open line and its own ``display.lines`` rows (the window fits both), and the Others' open
line, in the user's own language, is the newest row at the bottom.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

from PySide6.QtCore import QElapsedTimer, QPoint, QRect, QRectF, QSize, Qt, QTimer, Signal
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
from subtitler.display.lines import KEEP, ShownLines, readers_first
from subtitler.session import LevelEvent, SubtitleEvent
from subtitler.ui import captions
from subtitler.ui.app_state import Shown
from subtitler.ui.captions import SOURCE, Row, caption_rows, columns, level_bars, status_text
from subtitler.ui.sizing import fit_inside, overlap, shown_whole

log = logging.getLogger(__name__)

MIN_FRAME_MS = 33  # at most ~30 repaints per second
ALERT_S = 12  # how long a passing problem stays above the subtitles
ALERT_ROWS = 2  # at most this many rows of a passing problem
EDGE = 10  # px from the right/bottom edge where a drag resizes instead of moving
AVOID_GAP = 8  # px between a window of the app in use and the overlay moved aside for it
PAD = 14
MIN_PAD = 4  # the padding left when a shrunk window needs the room for the newest row
SMALL = 0.6  # the source rows, the status line, notices and alerts: this much of the font size
# The colours drawn on the box (BOX_RGB at display.background_opacity). Each keeps a WCAG
# contrast of at least 4.5 with the default opacity over a white slide and over a black one
# (tests/ui/test_overlay_contrast.py).
BOX_RGB = (0, 0, 0)
SOURCE_COLOR = QColor(214, 222, 235)  # a light blue-grey: apart from the translation, readable
NOTICE_COLOR = QColor(225, 225, 225)
STATUS_COLOR = QColor(225, 225, 225)
ALERT_COLOR = QColor(255, 196, 64)  # amber: noticeable on any background, not alarming
METER_ON = QColor(110, 220, 120)
METER_OFF = QColor(255, 255, 255, 70)
METER_BARS = 5
NOTICE = "notice"  # the stream of a notice's rows (drawn when there are no captions)
# Text of about average letter widths: a column of display.line_chars is this text's mean
# advance (or half a CJK character's, if wider), which sets the width of the text block.
COLUMN_SAMPLE = "Guten Morgen, the quick brown fox jumps over the lazy dog 2026."


@dataclass
class Line:
    segment_id: int
    source: str
    translation: str
    extra: tuple[str, ...] = ()  # the extra target languages' text, in their order
    side: str = ""  # who spoke it (types.YOU / types.OTHERS; "" with one input)


@dataclass(frozen=True)
class OwnText:
    """One of the overlay's own texts as drawn in the last frame: ``rows`` of ``full``."""

    kind: str  # "state", "problem" (the state's, above subtitles), "alert" or "status"
    full: str
    rows: tuple[str, ...]

    @property
    def whole(self) -> bool:
        """Every character of ``full`` is drawn (wrapping moves only spaces)."""
        return _letters("".join(self.rows)) == _letters(self.full)


def _letters(text: str) -> str:
    return re.sub(r"\s+", "", text)


@dataclass(frozen=True)
class Placed:
    """A caption row as drawn: where, in widget pixels (its line box, not its ink)."""

    row: Row
    rect: QRectF


def wrap(text: str, fm: QFontMetricsF, width: float) -> list[str]:
    """``text`` in rows no wider than ``width`` pixels (captions.wrap's breaks)."""
    return captions.wrap(text, lambda t: fm.horizontalAdvance(t) <= width)


def fit_rows(text: str, fm: QFontMetricsF, width: float, n: int) -> list[str]:
    """``text`` wrapped in at most ``n`` rows; when it needs more, the last row ends in "…"
    (what follows is in the tooltip)."""
    rows = wrap(text, fm, width)
    if len(rows) <= n:
        return rows
    if n <= 0:
        return []
    head = rows[: n - 1]
    # The rest of the text from the first row left out, spaces and all.
    skip = len(_letters("".join(head)))
    i = 0
    while skip and i < len(text):
        if not text[i].isspace():
            skip -= 1
        i += 1
    rest = text[i:].strip()
    return [*head, fm.elidedText(rest, Qt.TextElideMode.ElideRight, width)]


def column_px(fm: QFontMetricsF, pixel_size: int) -> float:
    """The width of one column of text in a font."""
    return max(fm.horizontalAdvance(COLUMN_SAMPLE) / len(COLUMN_SAMPLE), pixel_size / 2)


def aside(home: QRect, avoid: QRect, area: QRect, gap: int = AVOID_GAP) -> QRect:
    """Where the overlay goes (its size kept) so as not to cover ``avoid`` (a window of the
    app in use): below it, above, left or right of it, whichever lies inside ``area`` and is
    nearest ``home``; where none does, along the top or bottom edge of ``area``, the one
    that covers less of it."""
    w, h = home.width(), home.height()
    spots = [
        QRect(home.x(), avoid.bottom() + 1 + gap, w, h),
        QRect(home.x(), avoid.top() - gap - h, w, h),
        QRect(avoid.left() - gap - w, home.y(), w, h),
        QRect(avoid.right() + 1 + gap, home.y(), w, h),
    ]
    clear = []
    for spot in spots:
        inside = fit_inside(spot, area)
        if inside.size() == spot.size() and not inside.intersects(avoid):
            clear.append(inside)
    if clear:
        c = home.center()
        return min(clear, key=lambda r: (r.center() - c).manhattanLength())
    edges = [
        fit_inside(QRect(home.x(), area.bottom() + 1 - h, w, h), area),
        fit_inside(QRect(home.x(), area.top(), w, h), area),
    ]

    def covered(r: QRect) -> int:
        i = r.intersected(avoid)
        return i.width() * i.height() if i.isValid() else 0

    return min(edges, key=covered)


class SubtitleOverlay(QWidget):
    geometry_saved = Signal(str, QRect)  # screen name, geometry after a move or resize
    request_settings = Signal()
    request_toggle_run = Signal()
    request_click_through = Signal(bool)
    request_quit = Signal()

    def __init__(self, display: DisplayConfig) -> None:
        super().__init__(None)
        self.setWindowTitle("subtitler")
        self.setAccessibleName("Subtitles")
        self.setWindowFlags(
            Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.Tool
        )
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        # Its tooltip (every text whole) shows although the overlay is never the active window.
        self.setAttribute(Qt.WidgetAttribute.WA_AlwaysShowToolTips)
        # macOS makes a tool window a panel that hides whenever another app is active: the
        # subtitles must stay over the meeting app, which is the active one.
        self.setAttribute(Qt.WidgetAttribute.WA_MacAlwaysShowToolWindow)
        self.setMinimumSize(QSize(240, 60))
        self.display = display
        self._shown = ShownLines()
        self.targets = 1  # target languages: each has its stream of rows
        self.sides = 1  # who may speak: 2 with the microphone and the meeting (issue 31)
        self._state = Shown("idle", "")
        self._alert = ""
        self._level: LevelEvent | None = None
        self._alert_timer = QTimer(self)
        self._alert_timer.setSingleShot(True)
        self._alert_timer.timeout.connect(self._expire_alert)
        self._drag: tuple[str, QPoint, QRect] | None = None
        # Moved aside for a window of the app in use: the place the user gave it (None: it
        # is there), and that window's frame.
        self._home: QRect | None = None
        self._avoiding: QRect | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._repaint_now)
        self._since_paint = QElapsedTimer()
        self._since_paint.start()
        # Measured row fits, by (text, small, block width): an open line is wrapped again on
        # every frame and mostly has the same words as in the last one.
        self._fits: dict[tuple[str, bool, float], bool] = {}
        self.paint_count = 0
        self.drawn: list[str] = []  # the caption (or notice) rows in the last frame, bottom first
        self.placed: list[Placed] = []  # the caption rows in the last frame, top first
        self.alert_drawn: list[str] = []  # the alert's rows in the last frame
        self.status_drawn = ""  # the status line's text in the last frame ("" if none)
        self.own_texts: list[OwnText] = []  # the state, alert and status as last drawn
        self.apply_display(display)
        gui = QGuiApplication.instance()
        if isinstance(gui, QGuiApplication):
            # A monitor unplugged (or the primary one changed) while running: the window may now
            # sit where no screen is; check once Qt has settled the new layout.
            gui.screenRemoved.connect(self._screens_changed)
            gui.primaryScreenChanged.connect(self._screens_changed)
            # A screen made smaller (its resolution or scale changed, a taskbar moved): the
            # overlay may now lie partly off it, its newest rows, at the bottom, unseen.
            gui.screenAdded.connect(self._watch_screen)
            # A monitor plugged in (again): the overlay put elsewhere when it was unplugged goes
            # back to its place there.
            gui.screenAdded.connect(self._screens_changed)
            for scr in gui.screens():
                self._watch_screen(scr)

    def _watch_screen(self, scr: QScreen) -> None:
        scr.geometryChanged.connect(self._screens_changed)
        scr.availableGeometryChanged.connect(self._screens_changed)

    def _screens_changed(self, *_: object) -> None:
        QTimer.singleShot(0, self, self.keep_on_screen)

    def keep_on_screen(self) -> None:
        """Place the overlay again if no screen shows it any more; one partly off the screens
        (or wider than the one it is on) is moved, and shrunk if need be, onto the screen
        that shows most of it. One moved or shrunk so (not saved) goes back to its saved place
        as far as the screen has room again, or once its screen is plugged in again. Moved
        aside, its own place is what is kept on screen."""
        home = self.home_geometry()
        back = self._saved_place(home)
        if back is not None and back != home:
            log.info("overlay's screen is there with room again; back to its saved place")
            self._set_home(back)
            return
        if shown_whole(home) and shown_whole(self.geometry()):
            return
        screens = QGuiApplication.screens()
        best = max(screens, key=lambda s: overlap(home, s.geometry()), default=None)
        if best is None or not overlap(home, best.geometry()):
            log.info("overlay is off every screen; placing it again")
            self.place()
            if self._avoiding is not None:
                self.avoid(self._avoiding)
            return
        log.info("overlay is partly off the screens; moved onto %s", best.name())
        self._set_home(fit_inside(home, best.availableGeometry()))

    def _saved_place(self, home: QRect) -> QRect | None:
        """The saved place of the overlay (display.geometry of display.screen), fitted inside
        that screen, when ``home`` is not that place and that screen is connected; else None
        (none saved, at its place, a drag under way, or that screen unplugged). ``home`` on
        another screen was put there when that screen was unplugged: a drag, a new look or
        *Bring subtitles here* saves the place under the screen it leaves the overlay on."""
        saved = self.display.geometry.get(self.display.screen)
        if self._drag is not None or not saved or len(saved) != 4 or QRect(*saved) == home:
            return None
        screens = QGuiApplication.screens()
        best = max(screens, key=lambda s: overlap(home, s.geometry()), default=None)
        if best is None or best.name() != self.display.screen or not overlap(home, best.geometry()):
            named = [s for s in screens if s.name() == self.display.screen]
            if len(named) != 1:  # (unplugged; or names not told apart: "" on some platforms)
                return None
            best = named[0]
        return fit_inside(QRect(*saved), best.availableGeometry())

    def _set_home(self, rect: QRect) -> None:
        """The overlay's own place is ``rect`` (not saved); moved aside, it stays aside."""
        if self._home is not None:
            self._home = rect
        else:
            self.setGeometry(rect)
        if self._avoiding is not None:  # (its new place may cover the window in use)
            self.avoid(self._avoiding)

    # -- content ---------------------------------------------------------------------------
    def on_subtitle(self, ev: SubtitleEvent) -> None:
        if ev.side:  # two inputs: room for both sides' rows, if the app did not say so yet
            self.set_sides(2)
        self._shown.add(ev)
        self.schedule_repaint()

    def set_state(self, shown: Shown) -> None:
        """The app's state: all of it where there are no subtitles to show, its problem (if
        any) in a row above them; whole in the tooltip."""
        self._state = shown
        self._update_tooltip()
        self.schedule_repaint()

    @property
    def state(self) -> Shown:
        return self._state

    def _update_tooltip(self) -> None:
        """Every text of the overlay whole, on hover (the rows may end in "…")."""
        texts = [self._state.text, self._alert]
        if self.display.status_line and self.status_drawn:
            texts.append(status_text(self._level))
        tip = "\n".join(t for t in texts if t)
        if tip != self.toolTip():
            self.setToolTip(tip)
        # For a screen reader: the subtitles as the last frame drew them, then those texts.
        shown = [p.row.text for p in self.placed if p.row.stream != NOTICE]
        described = "\n".join(t for t in (*shown, tip) if t)
        if described != self.accessibleDescription():
            self.setAccessibleDescription(described)  # (Qt says it changed)

    def set_alert(self, text: str, sticky: bool = False) -> None:
        """A problem shown above the subtitles even while they run (an unplugged input, a
        transcript that cannot be written); gone after ALERT_S unless ``sticky`` ("" clears)."""
        self._alert = text
        self._alert_timer.stop()
        if text and not sticky:
            self._alert_timer.start(int(ALERT_S * 1000))
        self._update_tooltip()
        self.schedule_repaint()

    @property
    def alert(self) -> str:
        return self._alert

    def _expire_alert(self) -> None:
        self._alert = ""
        self._update_tooltip()
        self.schedule_repaint()

    def set_status(self, level: LevelEvent | None) -> None:
        """The live input level and delays for the status line (None: not listening)."""
        self._level = level
        if self.display.status_line:
            self.schedule_repaint()

    def clear(self) -> None:
        self._shown.clear()
        self.schedule_repaint()

    def lines(self) -> list[Line]:
        """The last ``display.lines`` lines: finished ones in full, the open one masked."""
        return [
            Line(ln.segment_id, ln.source, ln.text, tuple(text for _, text in ln.extra), ln.side)
            for ln in readers_first(self._shown.lines(self.display.mask_k, self.display.lines))
        ]

    def rows(self) -> list[Row]:
        """The caption rows to draw, top to bottom (captions.caption_rows at this size)."""
        d = self.display
        block = self.block_width()
        metrics = (QFontMetricsF(self.font_for()), QFontMetricsF(self.font_for(SMALL)))

        def fits(text: str, small: bool) -> bool:
            key = (text, small, block)
            got = self._fits.get(key)
            if got is None:
                if len(self._fits) > 4096:
                    self._fits.clear()
                advance = metrics[small].horizontalAdvance(text)
                got = columns(text) <= d.line_chars and advance <= block
                self._fits[key] = got
            return got

        shown = readers_first(self._shown.lines(d.mask_k, KEEP))
        return caption_rows(shown, d.lines, fits, d.bilingual)

    # -- look ------------------------------------------------------------------------------
    def apply_display(self, display: DisplayConfig) -> None:
        """New appearance or k: takes effect at the next repaint (k at once). A new number of
        rows, row length, text size, font, bilingual mode or status line also resizes the
        window to fit them, keeping its bottom edge (and, for a new width, its centre)."""
        old, self.display = self.display, display
        self._fits.clear()
        self.set_click_through(display.click_through)
        widths = ("line_chars", "font_size", "font_family")
        heights = ("lines", "bilingual", "status_line", *widths)
        if any(getattr(old, f) != getattr(display, f) for f in heights):
            self._fit(width=any(getattr(old, f) != getattr(display, f) for f in widths))
        self.schedule_repaint()

    def set_targets(self, n: int) -> None:
        """How many target languages each line shows (the window fits them, as above)."""
        if n != self.targets:
            self.targets = max(1, n)
            self._fit()
            self.schedule_repaint()

    def set_sides(self, n: int) -> None:
        """How many sides speak (2: the microphone and the meeting): each keeps its own rows,
        and the window fits them all (as above)."""
        n = max(1, n)
        if n != self.sides:
            self.sides = n
            self._fit()
            self.schedule_repaint()

    def _fit(self, width: bool = False) -> None:
        """Resize to ``fitting_height`` (and ``fitting_width``) keeping the bottom edge and the
        centre (when shown); moved aside, its own place is what changes (and it stays aside)."""
        if self.isVisible():
            g = self.home_geometry()
            h = self.fitting_height()
            w = self.fitting_width() if width else g.width()
            rect = QRect(g.x() + (g.width() - w) // 2, g.y() + g.height() - h, w, h)
            scr = self.screen() or QGuiApplication.primaryScreen()
            if scr is not None:
                rect = fit_inside(rect, scr.availableGeometry())
            if self._home is not None:
                self._home = rect
                self.geometry_saved.emit(self.screen_name(), rect)
                self.avoid(self._avoiding)
                return
            self.setGeometry(rect)
            self.geometry_saved.emit(self.screen_name(), self.geometry())

    def home_geometry(self) -> QRect:
        """Where the user put the overlay (also while it is moved aside)."""
        return QRect(self._home) if self._home is not None else self.geometry()

    def avoid(self, window: QRect | None) -> None:
        """Keep clear of ``window`` (the frame of a window of the app in use): the overlay
        is always on top, so it would cover that window's buttons. It moves aside (its own
        place kept, not saved) and comes back when ``window`` is None or clear of it."""
        self._avoiding = QRect(window) if window is not None else None
        home = self.home_geometry()
        if window is None or not home.intersects(window):
            if self._home is not None:
                self._home = None
                self.setGeometry(home)
            return
        scr = self.screen() or QGuiApplication.primaryScreen()
        area = scr.availableGeometry() if scr is not None else home.united(window)
        self._home = home
        self.setGeometry(aside(home, window, area))

    def fitting_height(self) -> int:
        """Window height for exactly ``display.lines`` rows of each language (the source's
        small when bilingual, one stream per target language) for each side that speaks, the
        status line when it is on, and the padding."""
        d = self.display
        row = QFontMetricsF(self.font_for()).lineSpacing()
        small = QFontMetricsF(self.font_for(SMALL)).lineSpacing()
        rows = d.lines * (row * self.targets + (small if d.bilingual else 0.0)) * self.sides
        return math.ceil(rows + (small if d.status_line else 0.0) + 2 * PAD)

    def text_width(self) -> float:
        """The width of ``display.line_chars`` columns of text at the font size."""
        f = self.font_for()
        return self.display.line_chars * column_px(QFontMetricsF(f), f.pixelSize())

    def fitting_width(self) -> int:
        """Window width for rows of ``display.line_chars`` columns."""
        return math.ceil(self.text_width()) + 2 * PAD

    def block_width(self) -> float:
        """The width of the text block: ``display.line_chars`` columns, or the window's."""
        return min(self.text_width(), float(self.width() - 2 * PAD))

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
        self.drawn, self.placed, self.alert_drawn, self.status_drawn = [], [], [], ""
        self.own_texts = []
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(*BOX_RGB, round(255 * self.display.background_opacity)))
        p.drawRoundedRect(self.rect(), 12, 12)
        main, small = self.font_for(), self.font_for(SMALL)
        fm, fms = QFontMetricsF(main), QFontMetricsF(small)
        block = self.block_width()
        x = PAD + max(0.0, (self.width() - 2 * PAD - block) / 2)  # the block centred
        rows = self.rows()
        small_h = fms.lineSpacing()
        state = self._state
        # Above running subtitles: the state's problem (one row), then a passing alert.
        problem = state.problem if rows else ""
        alert_n = min(ALERT_ROWS, len(wrap(self._alert, fms, block))) if self._alert else 0
        newest = (fms if rows[-1].small else fm).lineSpacing() if rows else small_h
        status, top_n, pad = self._squeeze(
            self.display.status_line, int(bool(problem)) + alert_n, small_h, newest
        )
        problem_rows = fit_rows(problem, fms, block, 1) if problem and top_n else []
        alert = fit_rows(self._alert, fms, block, top_n - len(problem_rows)) if alert_n else []
        top = pad
        if status:
            self._draw_status(p, fms, x, top, block)
            top += small_h
        for text in problem_rows:
            self._draw_text(p, text, small, ALERT_COLOR, x, top + fms.ascent())
            top += small_h
        if problem:
            self.own_texts.append(OwnText("problem", problem, tuple(problem_rows)))
        for text in alert:
            self._draw_text(p, text, small, ALERT_COLOR, x, top + fms.ascent())
            self.alert_drawn.append(text)
            top += small_h
        if self._alert:
            self.own_texts.append(OwnText("alert", self._alert, tuple(alert)))
        notice_color = NOTICE_COLOR
        if not rows and state.text:
            # No subtitles: the whole state, in as many rows as there is room for.
            room = max(1, math.floor((self.height() - pad - top + 0.01) / small_h))
            shown = fit_rows(state.text, fms, block, room)
            rows = [Row(t, 0, NOTICE, True) for t in shown]
            self.own_texts.append(OwnText("state", state.text, tuple(shown)))
            if state.problem:
                notice_color = ALERT_COLOR
        # Newest at the bottom; a row that does not fit whole is left out with all above it.
        color = QColor(self.display.text_color)
        y = self.height() - pad
        for i, row in enumerate(reversed(rows)):
            m = fms if row.small else fm
            h = m.lineSpacing()
            if i > 0 and y - h < top - 0.01:
                break
            col = color
            if row.stream == SOURCE:
                col = SOURCE_COLOR
            elif row.stream == NOTICE:
                col = notice_color
            self._draw_text(p, row.text, small if row.small else main, col, x, y - m.descent())
            self.drawn.append(row.text)
            self.placed.append(Placed(row, QRectF(x, y - h, m.horizontalAdvance(row.text), h)))
            y -= h
        self.placed.reverse()
        p.end()
        self._update_tooltip()

    def cut_texts(self) -> list[str]:
        """The overlay's own texts (state, alert, status line) that the last frame cut off:
        a row wider than the text block, or a text not drawn whole whose rows do not end in
        "…" with the whole text in the tooltip."""
        out = []
        fms = QFontMetricsF(self.font_for(SMALL))
        block = self.block_width()
        for t in self.own_texts:
            wide = [r for r in t.rows if fms.horizontalAdvance(r) > block + 0.5]
            if wide:
                out.append(f"{t.kind} {t.full[:40]!r}: a row wider than the window")
            elif not t.whole and not (
                t.rows and t.rows[-1].endswith("…") and t.full in self.toolTip()
            ):
                drawn = " / ".join(t.rows)
                out.append(f"{t.kind} {t.full[:40]!r}: drawn as {drawn!r}, the rest nowhere")
        return out

    def _squeeze(
        self, status: bool, top_n: int, small_h: float, newest: float
    ) -> tuple[bool, int, float]:
        """Whether the status line shows, how many rows the texts above the subtitles keep
        (of ``top_n``), and the padding: the newest caption row (or a row of the state)
        always shows, so a window shrunk below its fitting height gives up its padding
        first, then the status line, then those rows from the last."""
        while True:
            pad = min(float(PAD), (self.height() - small_h * (status + top_n) - newest) / 2)
            if pad >= MIN_PAD or not (status or top_n):
                return status, top_n, max(pad, 0.0)
            if status:
                status = False
            else:
                top_n -= 1

    def _draw_status(self, p: QPainter, fms: QFontMetricsF, x: float, top: float, w: float) -> None:
        """The level meter (bars, lit by the input level), then the delays in words."""
        base = top + fms.ascent()
        bar_w = max(3.0, fms.height() * 0.16)
        tall = fms.ascent() * 0.85
        lit = level_bars(self._level.level_dbfs, METER_BARS) if self._level is not None else 0
        for i in range(METER_BARS):
            h = tall * (0.4 + 0.6 * i / (METER_BARS - 1))
            p.setBrush(METER_ON if i < lit else METER_OFF)
            p.drawRect(QRectF(x + i * bar_w * 1.7, base - h, bar_w, h))
        left = x + METER_BARS * bar_w * 1.7 + fms.height() * 0.4
        full = status_text(self._level)
        text = fms.elidedText(full, Qt.TextElideMode.ElideRight, x + w - left)
        self._draw_text(p, text, self.font_for(SMALL), STATUS_COLOR, left, base)
        self.status_drawn = text
        self.own_texts.append(OwnText("status", full, (text,)))

    def _draw_text(
        self, p: QPainter, text: str, font: QFont, color: QColor, x: float, baseline: float
    ) -> None:
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
            self._home = None  # where the user put it is its place now
            self.geometry_saved.emit(self.screen_name(), self.geometry())

    def screen_name(self) -> str:
        scr = self.screen() or QGuiApplication.primaryScreen()
        return scr.name() if scr is not None else ""

    def place(self) -> None:
        """Restore the saved geometry for the last screen, else bottom-centre of the primary,
        as wide as rows of ``display.line_chars`` columns (or the screen)."""
        self._home = None
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
            self.resize(self.fitting_width(), self.fitting_height())
            return
        self.setGeometry(self._first_place(scr))

    def _first_place(self, scr: QScreen) -> QRect:
        """Bottom-centre of ``scr``, as wide as rows of ``display.line_chars`` columns (or the
        screen) and as high as its rows."""
        avail = scr.availableGeometry()
        h = self.fitting_height()
        w = min(self.fitting_width(), avail.width())
        # (A look larger than the screen, 6 rows of 120 columns at 120 px, was placed with its
        # top above the screen's, and the notices drawn there unseen.)
        x, y = avail.x() + (avail.width() - w) // 2, avail.bottom() - h - 60
        return fit_inside(QRect(x, y, w, h), avail)

    def bring_to(self, scr: QScreen) -> None:
        """Where it goes the first time, on ``scr``, saved as its place there: the way back
        for an overlay on a screen no one looks at, or shrunk out of the way."""
        self._home = None
        rect = self._first_place(scr)
        self.setGeometry(rect)
        self.geometry_saved.emit(scr.name(), rect)
        if self._avoiding is not None:
            self.avoid(self._avoiding)

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
