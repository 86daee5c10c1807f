"""The overlay's status line (issue 17): input level bars and the live delays, fed by the app
from LevelEvent; one small row more at the top when it is on."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from PySide6.QtGui import QColor, QFontMetricsF, QImage

from subtitler.config import DisplayConfig
from subtitler.pipeline.events import LevelEvent, StatusEvent
from subtitler.types import SILENCE_DBFS
from subtitler.ui.overlay import METER_ON, PAD, SMALL, SubtitleOverlay
from tests.ui.overlay_shots import DARK, WHITE, check_frame, event, over, save, shown_overlay


def lit_meter(img: QImage, o: SubtitleOverlay) -> int:
    """Pixels of the meter's lit colour in the status row."""
    h = math.ceil(PAD + QFontMetricsF(o.font_for(SMALL)).lineSpacing())
    return sum(
        1
        for y in range(PAD, h)
        for x in range(PAD, o.width() // 3)
        if QColor(img.pixel(x, y)).rgb() == METER_ON.rgb()
    )


def test_the_status_line_shows_level_and_delays_in_one_more_row(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(mask_k=0, bilingual=True))
    o.on_subtitle(event(0, "Guten Morgen zusammen.", final=True, source="Good morning, all."))
    o.on_subtitle(event(1, "Das Budget ist gewachsen", source="The budget has grown"))
    g = o.geometry()
    o.grab()
    assert o.status_drawn == ""
    rows_off = [pl.row.text for pl in o.placed]
    o.apply_display(dataclasses.replace(o.display, status_line=True))
    small = QFontMetricsF(o.font_for(SMALL)).lineSpacing()
    row = QFontMetricsF(o.font_for()).lineSpacing()
    assert g.height() == math.ceil(2 * (small + row) + 2 * PAD)
    assert o.height() == math.ceil(small + 2 * (small + row) + 2 * PAD)  # one small row more
    assert o.geometry().bottom() == g.bottom()
    o.set_status(LevelEvent(-30.5, 0, 1.8, 0.3))
    img = over(o, DARK)
    check_frame(o)
    assert o.status_drawn == "1.8 s speech→screen · 0.3 s behind · no audio lost"
    assert [pl.row.text for pl in o.placed] == rows_off  # the same rows, under it
    assert o.placed[0].rect.top() >= PAD + small - 0.01
    loud = lit_meter(img, o)
    save(o, tmp_path, "status-dark", DARK)
    save(o, tmp_path, "status-white", WHITE)
    o.set_status(LevelEvent(SILENCE_DBFS, 12, None, 0.0))
    img = over(o, DARK)
    assert o.status_drawn == "— speech→screen · keeping up · 12 blocks lost"
    assert lit_meter(img, o) == 0 < loud  # no bars lit in silence
    o.set_status(LevelEvent(0.0, 1, 0.46, 2.04))
    img = over(o, DARK)
    assert o.status_drawn == "0.5 s speech→screen · 2.0 s behind · 1 block lost"
    assert lit_meter(img, o) > loud
    o.apply_display(dataclasses.replace(o.display, status_line=False))
    o.grab()
    assert o.status_drawn == "" and o.geometry() == g


def test_a_narrow_window_shortens_the_status_words(qtbot) -> None:  # type: ignore[no-untyped-def]
    o = shown_overlay(qtbot, DisplayConfig(status_line=True))
    o.resize(260, o.height())
    o.set_status(LevelEvent(-26.0, 1234, 12.5, 30.0))
    o.grab()
    text = o.status_drawn
    assert text.endswith("…") and "12.5 s speech→screen".startswith(text[:-1][:20])
    fm = QFontMetricsF(o.font_for(SMALL))
    assert fm.horizontalAdvance(text) <= o.block_width()


def test_the_app_feeds_the_status_line_from_level_events(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    display = dataclasses.replace(app.config.display, status_line=True)
    app.apply_settings(dataclasses.replace(app.config, display=display))
    app.overlay.show()
    app.on_event(LevelEvent(-20.0, 3, 2.26, 0.5))
    app.overlay.grab()
    assert app.overlay.status_drawn == "2.3 s speech→screen · 0.5 s behind · 3 blocks lost"
    app.on_event(StatusEvent("paused"))
    app.overlay.grab()
    assert app.overlay.status_drawn == "not listening"
    app.quit()


def test_with_two_inputs_the_meter_shows_the_louder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.ui.test_app_state import make_app

    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.on_event(LevelEvent(-15.0, side="others"))  # the meeting speaks
    app.on_event(LevelEvent(-60.0, side="you"))  # the user is silent: the meter stays lit
    assert app.overlay._level is not None and app.overlay._level.level_dbfs == -15.0
    app.on_event(LevelEvent(-70.0, side="others"))
    assert app.overlay._level.level_dbfs == -60.0
    app.quit()
