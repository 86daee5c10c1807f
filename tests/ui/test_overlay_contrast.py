"""Readable by default over a white slide and over a black screen (issue 17): every default text
colour of the overlay has a WCAG contrast of at least 4.5 with its box composited over either,
and the overlay paints exactly those colours and that box."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtGui import QColor

from subtitler.config import DisplayConfig
from subtitler.pipeline.events import LevelEvent
from subtitler.ui.app_state import Shown
from subtitler.ui.overlay import (
    ALERT_COLOR,
    BOX_RGB,
    NOTICE_COLOR,
    SOURCE_COLOR,
    STATUS_COLOR,
)
from tests.ui.overlay_shots import DARK, WHITE, event, over, save, shown_overlay

RGB = tuple[float, float, float]


def luminance(rgb: RGB) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0..255 channels)."""

    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def box_over(backdrop: RGB, opacity: float) -> RGB:
    """The overlay's box (BOX_RGB at ``opacity``) composited over ``backdrop``."""
    r, g, b = (opacity * c + (1 - opacity) * d for c, d in zip(BOX_RGB, backdrop, strict=True))
    return (r, g, b)


def rgb(c: QColor) -> RGB:
    return (c.red(), c.green(), c.blue())


TEXTS = {
    "translation": QColor(DisplayConfig().text_color),
    "source": SOURCE_COLOR,
    "status line": STATUS_COLOR,
    "notice": NOTICE_COLOR,
    "alert": ALERT_COLOR,
}


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize("backdrop", [(255.0, 255.0, 255.0), (0.0, 0.0, 0.0)])
def test_every_default_text_colour_reads_over_white_and_black(name: str, backdrop: RGB) -> None:
    box = box_over(backdrop, DisplayConfig().background_opacity)
    assert contrast(rgb(TEXTS[name]), box) >= 4.5, (name, backdrop, box)


def test_the_old_grey_source_line_was_below_the_mark() -> None:
    # What the issue saw: grey (200, 200, 200) over the box at 0.55 on a white slide.
    assert contrast((200, 200, 200), box_over((255, 255, 255), 0.55)) < 3.0
    assert contrast((200, 200, 200), box_over((0, 0, 0), 0.55)) > 4.5


def test_the_overlay_paints_those_colours_over_white_and_dark(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(mask_k=0, bilingual=True, status_line=True))
    o.on_subtitle(event(0, "Guten Morgen zusammen.", final=True, source="Good morning, all."))
    o.on_subtitle(event(1, "Das Budget ist gewachsen", source="The budget has grown"))
    o.set_status(LevelEvent(-26.0, 0, 1.6, 0.2))
    o.set_alert("audio input 'USB Mic' disappeared; retrying", sticky=True)
    img = over(o, WHITE)
    save(o, tmp_path, "contrast-dark", DARK)
    save(o, tmp_path, "contrast-white", WHITE)
    seen = {
        QColor(img.pixel(x, y)).rgb() for y in range(img.height()) for x in range(0, img.width())
    }
    # The box over white, as computed above (within rounding), and each text colour itself.
    box = box_over((255, 255, 255), o.display.background_opacity)
    corner_free = QColor(img.pixel(img.width() - 6, img.height() // 2))
    assert all(abs(a - b) <= 1.5 for a, b in zip(rgb(corner_free), box, strict=True))
    for name in ("translation", "source", "status line", "alert"):
        assert TEXTS[name].rgb() in seen, name
    o.set_alert("")
    o.apply_display(dataclasses.replace(o.display, status_line=False))
    o.clear()
    o.set_state(Shown("running", "Listening…"))
    img = over(o, WHITE)
    assert o.drawn == ["Listening…"]
    assert NOTICE_COLOR.rgb() in {
        QColor(img.pixel(x, y)).rgb() for y in range(img.height()) for x in range(img.width())
    }
    save(o, tmp_path, "notice-white", WHITE)
