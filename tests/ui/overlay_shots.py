"""Helpers for the overlay's screenshot tests: a real overlay (offscreen, real fonts), its
frames over a backdrop, saved as PNGs, and the checks every caption frame must pass.

PNGs go to pytest's tmp_path, or to $SUBTITLER_SHOTS when set (to look at them)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter

from subtitler.config import DisplayConfig
from subtitler.pipeline.events import SubtitleEvent
from subtitler.ui import captions
from subtitler.ui.captions import CLOSING, columns
from subtitler.ui.overlay import PAD, SMALL, SubtitleOverlay

WHITE = QColor(255, 255, 255)  # a white slide
DARK = QColor(28, 32, 40)  # a dark video call


def event(
    seg: int, text: str, final: bool = False, source: str = "", k_words: bool = True
) -> SubtitleEvent:
    """A translation event whose mask-k hides its last k words (``k_words``) or shows it all."""
    words = text.split(" ")
    shown = tuple(
        text if final or not k_words else " ".join(words[: max(0, len(words) - k)])
        for k in range(11)
    )
    return SubtitleEvent(seg, source or f"source {seg}", text, shown, final, 0.0, 0.0)


def shown_overlay(qtbot, display: DisplayConfig) -> SubtitleOverlay:  # type: ignore[no-untyped-def]
    """The overlay placed as a new window is (default size for its settings) and shown."""
    o = SubtitleOverlay(display)
    qtbot.addWidget(o)
    o.place()
    o.show()
    return o


def fits_for(o: SubtitleOverlay, small: bool = False) -> Callable[[str], bool]:
    """What a row of the overlay may hold: line_chars columns, the text block's width."""
    fm = QFontMetricsF(o.font_for(SMALL if small else 1.0))
    return lambda text: (
        columns(text) <= o.display.line_chars and fm.horizontalAdvance(text) <= o.block_width()
    )


def rows_of(o: SubtitleOverlay, text: str, small: bool = False) -> list[str]:
    """``text`` wrapped as the overlay wraps it."""
    return captions.wrap(text, fits_for(o, small))


def over(o: SubtitleOverlay, backdrop: QColor) -> QImage:
    """A frame of the overlay (painted now) composited with its alpha over ``backdrop``."""
    pix = o.grab()
    img = QImage(pix.size(), QImage.Format.Format_ARGB32)
    img.fill(backdrop)
    p = QPainter(img)
    p.drawPixmap(0, 0, pix)
    p.end()
    return img


def shots_dir(tmp_path: Path) -> Path:
    out = Path(os.environ.get("SUBTITLER_SHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def save(o: SubtitleOverlay, tmp_path: Path, name: str, backdrop: QColor = DARK) -> QImage:
    img = over(o, backdrop)
    assert img.save(str(shots_dir(tmp_path) / f"{name}.png"))
    return img


def bright_rows(img: QImage) -> set[int]:
    """The pixel rows with near-white (text) pixels."""
    return {
        y
        for y in range(img.height())
        for x in range(0, img.width(), 2)
        if min((c := QColor(img.pixel(x, y))).red(), c.green(), c.blue()) > 200
    }


def check_frame(o: SubtitleOverlay) -> None:
    """What every frame of captions keeps to: each row whole inside the window and inside the
    text block, at most line_chars columns, never starting with closing punctuation, at most
    ``display.lines`` rows per language, each line's rows together (its source first)."""
    for pl in o.placed:
        r = pl.rect
        assert r.top() >= 0 and r.bottom() <= o.height(), (pl.row.text, r, o.height())
        assert r.left() >= PAD and r.right() <= o.width() - PAD + 0.01, (pl.row.text, r)
        assert columns(pl.row.text) <= o.display.line_chars, pl.row.text
        text = pl.row.text
        if pl.row.stream == captions.SOURCE:  # (a source continued from rows rolled out)
            text = text.removeprefix(getattr(captions, "CONTINUED", "… "))
        assert text[:1] not in CLOSING, pl.row.text
    per_stream = Counter(pl.row.stream for pl in o.placed)
    assert all(n <= o.display.lines for n in per_stream.values()), per_stream
    segs = [pl.row.segment_id for pl in o.placed]
    assert segs == sorted(segs)  # grouped by line, oldest on top
    for a, b in zip(o.placed, o.placed[1:], strict=False):
        if b.row.stream == captions.SOURCE:  # a source row: the first of its line, or a source
            assert a.row.segment_id != b.row.segment_id or a.row.stream == captions.SOURCE
        assert a.rect.bottom() <= b.rect.top() + 0.01  # no overlap, top to bottom
