"""Overlay and settings pane under pytest-qt (offscreen)."""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import QComboBox

from subtitler.config import AppConfig, DisplayConfig, with_settings
from subtitler.pipeline.events import SubtitleEvent
from subtitler.ui.overlay import SubtitleOverlay, wrap
from subtitler.ui.settings_pane import Choices, SettingsPane, meeting_audio_hint


def sub(seg: int, words: list[str], final: bool = False, source: str = "src") -> SubtitleEvent:
    """An event whose k-masked text drops the last k words (one token per word)."""
    shown = tuple(
        " ".join(words[: max(0, len(words) - k)]) if not final else " ".join(words)
        for k in range(11)
    )
    return SubtitleEvent(seg, source, " ".join(words), shown, final, 0.0, 0.0)


@pytest.fixture()
def overlay(qtbot):  # type: ignore[no-untyped-def]
    o = SubtitleOverlay(DisplayConfig(mask_k=2, lines=2))
    qtbot.addWidget(o)
    o.resize(800, 140)
    o.show()
    return o


def test_overlay_shows_exactly_the_masked_text(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    stream = [
        sub(0, ["Guten"]),
        sub(0, ["Guten", "Morgen", "zusammen"]),
        sub(0, ["Guten", "Morgen", "zusammen", "heute"]),
        sub(0, ["Guten", "Morgen", "zusammen."], final=True),
        sub(1, ["Das", "Budget", "ist", "gewachsen"]),
    ]
    expected = [
        [""],
        ["Guten"],
        ["Guten Morgen"],
        ["Guten Morgen zusammen."],
        ["Guten Morgen zusammen.", "Das Budget"],
    ]
    for ev, exp in zip(stream, expected, strict=True):
        overlay.on_subtitle(ev)
        assert [ln.translation for ln in overlay.lines()] == exp
    # k changes take effect at once, on the open line only.
    overlay.apply_display(DisplayConfig(mask_k=0, lines=2))
    assert [ln.translation for ln in overlay.lines()] == [
        "Guten Morgen zusammen.",
        "Das Budget ist gewachsen",
    ]
    overlay.apply_display(DisplayConfig(mask_k=0, lines=1))
    assert [ln.translation for ln in overlay.lines()] == ["Das Budget ist gewachsen"]


def test_untranslated_line_falls_back_to_source(overlay) -> None:  # type: ignore[no-untyped-def]
    overlay.on_subtitle(SubtitleEvent(3, "hello there", "", ("",) * 11, True, 0.0, 0.0))
    assert overlay.lines()[-1].translation == "hello there"


def test_repaints_are_throttled(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: overlay.paint_count > 0, timeout=2000)
    overlay.paint_count = 0
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < 0.5:
        overlay.on_subtitle(sub(0, ["w"] * (n % 9 + 1)))
        n += 1
        qtbot.wait(1)
    qtbot.wait(100)
    elapsed = time.monotonic() - t0
    assert n > 100  # many more events than frames
    assert 1 <= overlay.paint_count <= 30 * elapsed + 3


def test_rendering_draws_text_on_translucent_background(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    overlay.apply_display(DisplayConfig(mask_k=0, background_opacity=0.5, text_color="#ffff00"))
    overlay.on_subtitle(sub(0, ["Hallo", "Welt"], final=True))
    qtbot.wait(60)
    img = overlay.grab().toImage()
    corner = QColor(img.pixel(overlay.width() // 2, 3))
    assert 100 <= QColor.fromRgba(img.pixel(overlay.width() // 2, 3)).alpha() <= 160, corner
    yellow = sum(
        1
        for x in range(0, img.width(), 2)
        for y in range(0, img.height(), 2)
        if (c := QColor.fromRgba(img.pixel(x, y))).red() > 200 and c.green() > 200 and c.blue() < 80
    )
    assert yellow > 50  # the text is drawn


def test_an_alert_is_drawn_above_running_subtitles(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    overlay.apply_display(DisplayConfig(mask_k=0, lines=2, text_color="#ffffff"))
    overlay.on_subtitle(sub(0, ["Guten", "Morgen", "zusammen."], final=True))
    overlay.on_subtitle(sub(1, ["Das", "Budget", "ist", "gewachsen"], final=True))

    def amber_rows() -> set[int]:
        img = overlay.grab().toImage()
        return {
            y
            for x in range(0, img.width(), 2)
            for y in range(img.height())
            if (c := QColor.fromRgba(img.pixel(x, y))).red() > 200
            and 120 < c.green() < 230
            and c.blue() < 110
        }

    assert not amber_rows()
    overlay.set_alert("audio input 'USB Mic' disappeared; retrying", sticky=True)
    qtbot.wait(60)
    rows = amber_rows()
    assert rows and max(rows) < overlay.height() // 3  # in the top third, above the text
    assert [ln.translation for ln in overlay.lines()][-1] == "Das Budget ist gewachsen"
    overlay.set_alert("")
    qtbot.wait(60)
    assert not amber_rows()


def test_bilingual_shows_source_small_above(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    overlay.apply_display(DisplayConfig(mask_k=0, bilingual=True))
    overlay.on_subtitle(sub(0, ["Hallo"], final=True, source="Hello"))
    qtbot.wait(60)
    assert overlay.lines()[0].source == "Hello"


def test_click_through_toggle(overlay) -> None:  # type: ignore[no-untyped-def]
    overlay.set_click_through(True)
    assert overlay.click_through and overlay.isVisible()
    overlay.set_click_through(False)
    assert not overlay.click_through


def test_drag_moves_and_edge_resizes(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    saved = []
    overlay.geometry_saved.connect(lambda name, rect: saved.append(rect))
    overlay.move(100, 100)
    g0 = overlay.geometry()
    qtbot.mousePress(overlay, Qt.MouseButton.LeftButton, pos=QPoint(50, 50))
    qtbot.mouseMove(overlay, QPoint(80, 70))
    qtbot.mouseRelease(overlay, Qt.MouseButton.LeftButton, pos=QPoint(80, 70))
    assert saved and saved[-1].size() == g0.size()
    w0 = overlay.width()
    edge = QPoint(overlay.width() - 3, overlay.height() // 2)
    qtbot.mousePress(overlay, Qt.MouseButton.LeftButton, pos=edge)
    qtbot.mouseMove(overlay, edge + QPoint(40, 0))
    qtbot.mouseRelease(overlay, Qt.MouseButton.LeftButton, pos=edge + QPoint(40, 0))
    assert overlay.width() > w0


def row_height(overlay: SubtitleOverlay) -> float:
    """The overlay's row pitch at its font now."""
    return QFontMetricsF(overlay.font_for()).lineSpacing()


def pick(pane: SettingsPane, key: str, value: object) -> None:
    """Choose ``value`` in the list of the setting ``key``."""
    combo = pane.widget(key)
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData(value))


def test_settings_round_trip(qtbot) -> None:  # type: ignore[no-untyped-def]
    cfg = with_settings(
        AppConfig(),
        {
            "mt.tgt_lang": "ja",
            "mt.beta": 0.35,
            "mt.method": "SSBD",
            "mt.model_path": "/models/x.gguf",
            "asr.language": "en",
            "asr.model": "base",
            "display.mask_k": 5,
            "display.lines": 3,
            "display.bilingual": True,
            "display.text_color": "#ffcc00",
            "display.background_opacity": 0.4,
        },
    )
    pane = SettingsPane(cfg, Choices(input_devices=lambda: [("Mic A", "Mic A")]))
    qtbot.addWidget(pane)
    out = pane.values()
    assert out.mt == cfg.mt
    assert out.asr == cfg.asr
    for f in (
        "mask_k",
        "lines",
        "bilingual",
        "text_color",
        "background_opacity",
        "outline",
        "click_through",
        "font_size",
        "hotkey_click_through",
        "hotkey_pause",
    ):
        assert getattr(out.display, f) == getattr(cfg.display, f), f
    got = []
    pane.applied.connect(got.append)
    pane.widget("mt.beta").setValue(60)
    pane.widget("display.mask_k").setValue(7)
    assert pane.apply() and got[-1].mt.beta == 0.6 and got[-1].display.mask_k == 7


def test_settings_reject_invalid_values(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    got = []
    pane.applied.connect(got.append)
    pane.asr_model.setEditText("")
    assert not pane.apply()
    assert "choose a speech model" in pane.error.text() and not got


def test_every_user_setting_has_a_widget(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The pane and the config dataclasses stay in sync: changing any user-facing field
    through its widget changes exactly that field."""
    base = AppConfig()
    pane = SettingsPane(base)
    qtbot.addWidget(pane)
    edits = {
        ("mt", "tgt_lang"): lambda: pane.tgt_lang.setCurrentIndex(pane.tgt_lang.findData("fr")),
        ("mt", "method"): lambda: pick(pane, "mt.method", "RT"),
        ("mt", "beta"): lambda: pane.widget("mt.beta").setValue(50),
        ("mt", "model_path"): lambda: pane.mt_model.setEditText("/x.gguf"),
        ("mt", "template"): lambda: pick(pane, "mt.template", "tower"),
        ("mt", "threads"): lambda: pane.widget("mt.threads").setValue(3),
        ("mt", "gpu_layers"): lambda: pane.widget("mt.gpu_layers").setValue(20),
        ("mt", "context_sentences"): lambda: pane.widget("mt.context_sentences").setValue(1),
        ("mt", "backend"): lambda: pick(pane, "mt.backend", "server"),
        ("mt", "server_url"): lambda: pane.widget("mt.server_url").setText(
            "http://gpu-box:8000/v1"
        ),
        ("mt", "server_model"): lambda: pane.widget("mt.server_model").setText("tower-plus-9b"),
        ("mt", "server_api_key"): lambda: pane.widget("mt.server_api_key").setText("sk-team"),
        ("mt", "server_timeout_s"): lambda: pane.widget("mt.server_timeout_s").setValue(30.0),
        ("mt", "lookahead"): lambda: pane.widget("mt.lookahead").setValue(8),
        ("mt", "resync"): lambda: pane.widget("mt.resync").setChecked(True),
        ("mt", "verify"): lambda: pick(pane, "mt.verify", "specdec"),
        ("mt", "top_b"): lambda: pane.widget("mt.top_b").setValue(5),
        ("mt", "tau"): lambda: pane.widget("mt.tau").setValue(2.5),
        ("mt", "draft_model_path"): lambda: pane.draft_model.setText("/small.gguf"),
        ("mt", "draft_tokens"): lambda: pane.widget("mt.draft_tokens").setValue(6),
        ("mt", "adaptive_guessing"): lambda: pane.widget("mt.adaptive_guessing").setChecked(False),
        ("asr", "model"): lambda: pane.asr_model.setEditText("medium"),
        ("asr", "device"): lambda: pick(pane, "asr.device", "cpu"),
        ("asr", "threads"): lambda: pane.widget("asr.threads").setValue(3),
        ("asr", "silence_end_s"): lambda: pane.widget("asr.silence_end_s").setValue(1.5),
        ("display", "mask_k"): lambda: pane.widget("display.mask_k").setValue(9),
        ("display", "font_size"): lambda: pane.widget("display.font_size").setValue(40),
        ("display", "outline"): lambda: pane.widget("display.outline").setChecked(False),
        ("display", "background_opacity"): lambda: pane.widget(
            "display.background_opacity"
        ).setValue(90),
        ("display", "lines"): lambda: pane.widget("display.lines").setValue(4),
        ("display", "line_chars"): lambda: pane.widget("display.line_chars").setValue(32),
        ("display", "status_line"): lambda: pane.widget("display.status_line").setChecked(True),
        ("display", "bilingual"): lambda: pane.widget("display.bilingual").setChecked(True),
        ("display", "click_through"): lambda: pane.widget("display.click_through").setChecked(True),
    }
    for (section, name), edit in edits.items():
        pane.load(base)
        edit()
        out = pane.values()
        changed = [
            (s, f)
            for s in ("mt", "asr", "display", "audio")
            for f in vars(getattr(base, s))
            if getattr(getattr(out, s), f) != getattr(getattr(base, s), f)
        ]
        assert changed == [(section, name)], (section, name, changed)
    pane.load(copy.deepcopy(base))


# Every setting with a declared range or choices (the Browser page's own: web.*).
LIMITED = (
    "mt.beta", "display.mask_k", "mt.threads", "mt.gpu_layers", "mt.context_sentences",
    "asr.threads", "asr.silence_end_s", "display.font_size", "display.background_opacity",
    "display.lines", "display.line_chars", "mt.lookahead", "mt.top_b", "mt.tau",
    "mt.draft_tokens", "mt.method", "mt.template", "asr.device", "mt.verify", "mt.backend",
    "mt.server_timeout_s", "web.port", "web.share",
)  # fmt: skip


def limited_widget(pane: SettingsPane, key: str) -> Any:
    section, name = key.split(".")
    return getattr(pane.web, name) if section == "web" else pane.widget(key)


def test_pane_limits_are_the_declared_ones(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The pane, the file and the command line accept the same values: each bound of each
    declared range loads into its widget and comes back unchanged (a narrower widget would
    clamp it), each widget's own extremes pass the file's validation (a wider one would
    not), and each choice list is the declared one."""
    from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QSlider, QSpinBox

    from subtitler.config import SECTIONS, spec_of
    from subtitler.settings_store import validate

    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    for attr in LIMITED:
        section, name = attr.split(".")
        spec = spec_of(SECTIONS[section], name)
        widget = limited_widget(pane, attr)
        if isinstance(widget, QComboBox):
            assert tuple(widget.itemData(i) for i in range(widget.count())) == spec.choices
            continue
        assert spec.range is not None, (section, name)
        for bound in spec.range:
            pane.load(with_settings(AppConfig(), {f"{section}.{name}": bound}))
            got = getattr(getattr(pane.values(), section), name)
            want = None if (section, name) == ("mt", "gpu_layers") and bound == -1 else bound
            assert got == want, (attr, bound, got)
        assert isinstance(widget, QSpinBox | QDoubleSpinBox | QSlider), attr
        for extreme in (widget.minimum(), widget.maximum()):
            pane.load(AppConfig())
            widget.setValue(extreme)
            assert validate(pane.values()) == [], (attr, extreme)
    # Every range-limited widget of the pane is in the table above.
    known = {id(limited_widget(pane, a)) for a in LIMITED}
    for kind in (QSpinBox, QDoubleSpinBox, QSlider):
        assert [b for b in pane.findChildren(kind) if id(b) not in known] == [], kind


def test_translation_server_rows(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Address, model, API key and timeout of a shared server: usable when it is chosen (the
    model file's rows are not), the key hidden on screen, kept in a file only its owner
    reads, and an address that cannot work refused with one line."""
    from PySide6.QtWidgets import QLineEdit

    from subtitler.settings_store import load, save

    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    got = []
    pane.applied.connect(got.append)
    assert not pane.widget("mt.server_url").isEnabled() and pane.mt_model.isEnabled()
    pick(pane, "mt.backend", "server")
    assert pane.widget("mt.server_url").isEnabled() and pane.widget("mt.server_api_key").isEnabled()
    assert not pane.mt_model.isEnabled() and not pane.widget("mt.threads").isEnabled()
    assert pane.widget("mt.server_api_key").echoMode() == QLineEdit.EchoMode.Password
    assert not pane.apply() and "translation server's address" in pane.error.text()
    pane.widget("mt.server_url").setText("gpu-box:8000")
    assert not pane.apply() and "is not an http(s) URL" in pane.error.text() and not got
    pane.widget("mt.server_url").setText(" http://gpu-box:8000/v1 ")
    pane.widget("mt.server_api_key").setText("sk-team-19")
    pane.widget("mt.server_timeout_s").setValue(4.5)
    assert pane.apply() and pane.error.text() == ""
    mt = got[-1].mt
    assert (mt.backend, mt.server_url, mt.server_api_key, mt.server_timeout_s) == (
        "server", "http://gpu-box:8000/v1", "sk-team-19", 4.5
    )  # fmt: skip
    path = save(got[-1], tmp_path / "config.toml")
    assert path.stat().st_mode & 0o077 == 0  # the key is not readable by other users
    assert load(path).config.mt == mt
    pane.load(load(path).config)
    assert (
        pane.widget("mt.server_api_key").text() == "sk-team-19"
        and pane.widget("mt.server_url").isEnabled()
    )


def test_specdec_fields_follow_the_verification_rule(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert not pane.widget("mt.top_b").isEnabled() and not pane.widget("mt.tau").isEnabled()
    pick(pane, "mt.verify", "specdec")
    assert pane.widget("mt.top_b").isEnabled() and pane.widget("mt.tau").isEnabled()


def test_draft_tokens_follow_the_draft_model_field(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert (
        not pane.widget("mt.draft_tokens").isEnabled() and pane.widget("mt.lookahead").isEnabled()
    )
    pane.draft_model.setText("/models/small.gguf")
    assert (
        pane.widget("mt.draft_tokens").isEnabled() and not pane.widget("mt.lookahead").isEnabled()
    )
    assert pane.values().mt.draft_model_path == "/models/small.gguf"
    pane.draft_model.setText("  ")
    assert (
        not pane.widget("mt.draft_tokens").isEnabled() and pane.values().mt.draft_model_path == ""
    )


def test_gpu_layers_auto_is_none(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert pane.widget("mt.gpu_layers").text() == "all that fit"
    assert pane.values().mt.gpu_layers is None
    pane.widget("mt.gpu_layers").setValue(0)
    assert pane.values().mt.gpu_layers == 0  # CPU only
    pane.load(with_settings(AppConfig(), {"mt.gpu_layers": 12}))
    assert pane.widget("mt.gpu_layers").value() == 12 and pane.values().mt.gpu_layers == 12


def test_device_list_is_fresh_and_an_unplugged_choice_is_kept(qtbot) -> None:  # type: ignore[no-untyped-def]
    present = [("Mic A (ALSA)", "Mic A")]
    cfg = with_settings(AppConfig(), {"audio.device": "USB Headset"})
    pane = SettingsPane(cfg, Choices(input_devices=lambda: list(present)))
    qtbot.addWidget(pane)
    items = [(pane.device.itemText(i), pane.device.itemData(i)) for i in range(pane.device.count())]
    assert items == [
        ("System default microphone", None),
        ("Mic A (ALSA)", "Mic A"),
        ("USB Headset (not connected)", "USB Headset"),
    ]
    assert pane.device.currentData() == "USB Headset"
    assert pane.values().audio.device == "USB Headset"  # saving keeps the user's choice
    present.append(("USB Headset (ALSA)", "USB Headset"))  # plugged in; the pane opens again
    pane.load(cfg)
    assert [pane.device.itemText(i) for i in range(pane.device.count())] == [
        "System default microphone",
        "Mic A (ALSA)",
        "USB Headset (ALSA)",
    ]
    assert pane.device.currentText() == "USB Headset (ALSA)"
    pane.load(with_settings(cfg, {"audio.device": None}))
    assert pane.device.currentIndex() == 0 and pane.values().audio.device is None


def test_more_lines_or_bigger_text_resize_the_window_from_the_bottom(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    overlay.setGeometry(100, 300, 500, 140)  # (the offscreen screen is 800 x 600)
    saved = []
    overlay.geometry_saved.connect(lambda name, rect: saved.append(rect))
    bottom = overlay.geometry().bottom()
    overlay.apply_display(DisplayConfig(mask_k=2, lines=4))
    g = overlay.geometry()
    assert g.height() == math.ceil(4 * row_height(overlay) + 2 * 14) and g.bottom() == bottom
    assert (g.x(), g.width()) == (100, 500) and saved == [g]  # remembered like a drag
    # Bigger text: also as wide as its rows of line_chars columns, around the same centre.
    overlay.apply_display(DisplayConfig(mask_k=2, lines=4, font_size=36, line_chars=30))
    g = overlay.geometry()
    assert g.height() == math.ceil(4 * row_height(overlay) + 2 * 14) and g.bottom() == bottom
    assert g.width() == overlay.fitting_width() > 500 and g.center().x() in (349, 350)
    assert saved[-1] == g and len(saved) == 2
    overlay.apply_display(DisplayConfig(mask_k=5, lines=4, font_size=36, line_chars=30))  # k only
    assert overlay.geometry() == g and len(saved) == 2


@pytest.mark.parametrize(
    "text",
    [
        "Das Budget ist im letzten Jahr um zwölf Prozent gewachsen.",
        "東京 二〇二〇年のオリンピックは一年延期されて二〇二一年に開催されました",  # one space
        "model not found: /home/someone/.cache/subtitler/models/tower-plus-2b/Tower.gguf here",
        "会議は午後三時に始まります",
    ],
)
def test_wrap_keeps_every_row_inside_and_loses_nothing(overlay, text: str) -> None:  # type: ignore[no-untyped-def]
    fm = QFontMetricsF(overlay.font_for())
    width = 260.0
    rows = wrap(text, fm, width)
    assert len(rows) > 1 and all(fm.horizontalAdvance(r) <= width for r in rows)
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")  # nothing dropped


def test_text_colour_shows_as_a_swatch_on_a_normal_button(qtbot) -> None:  # type: ignore[no-untyped-def]
    # dark: text drawn on it would not be readable
    cfg = with_settings(AppConfig(), {"display.text_color": "#1a1a1a"})
    pane = SettingsPane(cfg)
    qtbot.addWidget(pane)
    btn = pane.color_btn
    assert btn.text() == "#1a1a1a" and btn.styleSheet() == ""
    img = btn.icon().pixmap(28, 16).toImage()
    assert QColor(img.pixel(14, 8)).name() == "#1a1a1a"
    assert pane.values().display.text_color == "#1a1a1a"


def test_models_show_by_name_and_save_their_value(qtbot) -> None:  # type: ignore[no-untyped-def]
    cfg = with_settings(
        AppConfig(),
        {"mt.model_path": "/models/qwen3-4b/Qwen3-4B-Q4_K_M.gguf", "asr.model": "small"},
    )  # (as the first run writes them)
    choices = Choices(
        translation_models=[
            ("Qwen3 4B (Q4_K_M) · 2.5 GB", "/models/qwen3-4b/Qwen3-4B-Q4_K_M.gguf"),
            ("Qwen3 8B (Q4_K_M), larger · 5.0 GB · not downloaded", "qwen3-8b-q4_k_m"),
        ],
        asr_models=[("Whisper small · 480 MB · not downloaded", "small")],
    )
    pane = SettingsPane(cfg, choices)
    qtbot.addWidget(pane)
    assert pane.mt_model.currentText() == "Qwen3 4B (Q4_K_M) · 2.5 GB"
    assert pane.asr_model.currentText() == "Whisper small · 480 MB · not downloaded"
    out = pane.values()
    assert out.mt.model_path == cfg.mt.model_path and out.asr.model == "small"
    pane.asr_model.setEditText("/models/my-whisper")  # a folder typed by hand
    pane.mt_model.setCurrentIndex(1)
    out = pane.values()
    assert out.asr.model == "/models/my-whisper" and out.mt.model_path == "qwen3-8b-q4_k_m"


def test_an_older_line_rolls_up_by_whole_rows(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Roll-up (issue 17): the older line's last row stays above the new line while there is
    room for it (it used to vanish whole), and only whole rows are drawn."""
    overlay.apply_display(DisplayConfig(mask_k=0, lines=2, font_size=26))
    overlay.resize(420, 2 * 14 + 2 * 31)  # room for two rows of text
    long = "Wir werden heute auf die Ergebnisse des letzten Quartals eingehen."
    overlay.on_subtitle(sub(0, long.split(), final=True))  # wraps to 3+ rows
    overlay.on_subtitle(sub(1, ["Guten", "Tag."], final=True))
    overlay.grab()
    rows = wrap(long, QFontMetricsF(overlay.font_for()), overlay.block_width())
    assert len(rows) >= 3 and overlay.drawn == ["Guten Tag.", rows[-1]]
    overlay.resize(420, 2 * 14 + 6 * 31)  # a taller window: still two rows of each language
    overlay.grab()
    assert overlay.drawn == ["Guten Tag.", rows[-1]]
    overlay.apply_display(DisplayConfig(mask_k=0, lines=6, font_size=26))
    overlay.grab()
    assert overlay.drawn[0] == "Guten Tag." and " ".join(reversed(overlay.drawn[1:])) == long


def test_overlay_window_kind(overlay) -> None:  # type: ignore[no-untyped-def]
    flags = overlay.windowFlags()
    assert flags & Qt.WindowType.FramelessWindowHint and flags & Qt.WindowType.WindowStaysOnTopHint
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    # macOS would hide a tool window while the meeting app (another app) is active.
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_MacAlwaysShowToolWindow)


# Engine words a meeting user should not have to know; they belong in the tooltips.
JARGON = ("β", "τ", "GPU", "thread", "template", "SpecDec", "token", "n-gram", "Whisper", "draft")


def test_settings_speak_plain_words_with_the_exact_term_in_a_tooltip(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFormLayout, QLabel

    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    rows: dict[str, str] = {}
    for i in range(pane.tabs.count()):
        form = pane.pages[i].layout()
        if not isinstance(form, QFormLayout):
            continue
        for r in range(form.rowCount()):
            item = form.itemAt(r, QFormLayout.ItemRole.LabelRole)
            label = item.widget() if item is not None else None
            if isinstance(label, QLabel) and label.text():
                rows[label.text()] = label.toolTip()
    used = [t for t in rows if any(j.lower() in t.lower() for j in JARGON)]
    assert used == [], used
    assert rows["Keep what is shown"].startswith("bias β: SSBD's bias towards the translation")
    assert rows["Hide the last words of an unfinished line"].startswith("mask-k: the last k")
    assert rows["Model parts on the graphics card"].startswith("GPU layers (n_gpu_layers): ")
    assert rows["Processor cores for translation"].startswith("translation threads: ")
    assert rows["How the model is asked"].startswith("prompt template: ")
    assert rows["Accept a guess among the most likely"].startswith("SpecDec top-b: ")
    # The hover text of the control itself says the same as its label's.
    assert pane.widget("mt.beta").toolTip() == rows["Keep what is shown"]
    assert (
        pane.widget("display.mask_k").toolTip() == rows["Hide the last words of an unfinished line"]
    )


def test_every_text_the_settings_show_is_in_plain_words(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Issue 27 point 7: the labels were plain, but not the choices and values a user reads:
    "SSBD (fast, stable)", "Stability 0.20", "By stability (SSBD's β)", SpecDec, "Layers on
    the graphics card". Every label, choice, check box, button and readout (the model, input
    and font lists name things, and are left out)."""
    from PySide6.QtWidgets import QAbstractButton, QComboBox, QFontComboBox, QLabel

    jargon = (*JARGON, "SSBD", "CTranslate2", "llama", "layers", "(RT)", "(CD)", "beta", "0.20")
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    named = {pane.mt_model, pane.asr_model, pane.device}
    texts: list[str] = []
    for w in pane.findChildren(QLabel):
        if w.text() and w is not pane.keys_note:  # (the hotkeys note names keys)
            texts.append(w.text())
    for b in pane.findChildren(QAbstractButton):
        texts.append(b.text())
    for c in pane.findChildren(QComboBox):
        if c not in named and not isinstance(c, QFontComboBox):
            texts += [c.itemText(i) for i in range(c.count())]
    import re

    words = re.compile("|".join(rf"(?<!\w){re.escape(j)}(?!\w)" for j in jargon), re.I)
    used = sorted({t for t in texts if words.search(t)})
    assert used == [], used
    assert "small changes are ignored" in texts  # the stability's readout, at 0.2


def test_each_target_language_has_a_row_block_under_the_source(overlay, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Two target languages (issue 19): each line shows the main translation, then the extra
    one's under it, masked alike while the line is open; the window grows to fit both."""
    import dataclasses

    def extra(ev: SubtitleEvent) -> SubtitleEvent:
        return dataclasses.replace(ev, lang="ja", target=1)

    overlay.setGeometry(100, 300, 600, 140)
    bottom = overlay.geometry().bottom()
    overlay.set_targets(2)
    g = overlay.geometry()
    assert g.height() == math.ceil(2 * 2 * row_height(overlay) + 2 * 14) and g.bottom() == bottom
    overlay.apply_display(DisplayConfig(mask_k=1, lines=2, bilingual=True))
    overlay.on_subtitle(sub(0, ["Guten", "Morgen."], final=True, source="Good morning."))
    overlay.on_subtitle(extra(sub(0, ["おはよう", "ございます。"], final=True)))
    overlay.on_subtitle(sub(1, ["Wie", "geht", "es"], source="How are you"))
    overlay.on_subtitle(extra(sub(1, ["お元気", "です", "か"])))
    assert [(ln.translation, ln.extra) for ln in overlay.lines()] == [
        ("Guten Morgen.", ("おはよう ございます。",)),
        ("Wie geht", ("お元気 です",)),  # k = 1: the last word of each hidden
    ]
    qtbot.waitUntil(lambda: "お元気 です" in overlay.drawn)
    # Painted bottom up: for each line its translations under its (small) source line.
    assert overlay.drawn[::-1] == [
        "Good morning.",
        "Guten Morgen.",
        "おはよう ございます。",
        "How are",  # (the source of a line still spoken: its last word hidden too)
        "Wie geht",
        "お元気 です",
    ]
    overlay.on_subtitle(sub(2, ["Danke"], source="Thanks"))  # its Japanese not there yet
    assert overlay.lines()[-1].extra == ()
    overlay.clear()
    overlay.on_subtitle(sub(1, ["x."], final=True))  # a new run: the old extras are gone
    assert overlay.lines()[-1].extra == ()


def test_macos_meeting_audio_hint_offers_system_audio_then_blackhole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from subtitler.audio.macos_capture import NAME

    monkeypatch.setattr("sys.platform", "darwin")
    hint = meeting_audio_hint()
    assert f"“{NAME}”" in hint and "Screen Recording" in hint and "macOS 13" in hint
    assert hint.index(NAME) < hint.index("BlackHole")  # the fallback comes second
