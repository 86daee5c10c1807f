"""One declaration per setting: a field added to a section is validated, shown in the settings
pane and accepted on the command line with no other edit; the pane's hand-made rows are the
declared ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtWidgets import QSpinBox

from subtitler import config, settings_store
from subtitler.app import parser
from subtitler.config import (
    SECTIONS,
    AppConfig,
    MtConfig,
    given_settings,
    pane_fields,
    reload_fields,
    setting,
    with_settings,
)
from subtitler.ui.settings_pane import HANDMADE, SettingsPane


@dataclass(frozen=True)
class MtWithHint(MtConfig):
    """MtConfig and one field more, declared the way every setting is."""

    speed_hint: int = setting(
        3, "Speed hint", "a setting added for this test", range=(1, 9), tab="advanced", reload=True
    )


@pytest.fixture()
def added(monkeypatch: pytest.MonkeyPatch) -> AppConfig:
    monkeypatch.setitem(SECTIONS, "mt", MtWithHint)
    return AppConfig(mt=MtWithHint())


def test_an_added_setting_is_validated(added: AppConfig, tmp_path: Path) -> None:
    bad = with_settings(added, {"mt.speed_hint": 12})
    assert settings_store.validate(bad) == ["Speed hint must be 1..9 (is 12)"]
    path = tmp_path / "config.toml"
    path.write_text("[mt]\nspeed_hint = 12\n", encoding="utf-8")
    loaded = settings_store.load(path)
    assert loaded.config.mt.speed_hint == 9  # type: ignore[attr-defined]
    assert "mt.speed_hint = 12 (allowed: 1..9): 9 used" in loaded.notice
    assert "speed_hint" in reload_fields(MtWithHint)


def test_an_added_setting_is_shown_in_the_pane(qtbot, added: AppConfig) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(added)
    qtbot.addWidget(pane)
    row = pane.declared_rows["mt.speed_hint"]
    assert isinstance(row.widget, QSpinBox)
    assert (row.widget.minimum(), row.widget.maximum(), row.widget.value()) == (1, 9, 3)
    advanced = next(i for i in range(pane.tabs.count()) if pane.tabs.tabText(i) == "Advanced")
    assert pane.tabs.widget(advanced).isAncestorOf(row.widget)
    row.widget.setValue(7)
    assert pane.values().mt.speed_hint == 7  # type: ignore[attr-defined]


def test_an_added_setting_is_accepted_on_the_command_line(
    added: AppConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    given = given_settings(parser().parse_args(["--mt-speed-hint", "5"]))
    assert given == {"mt.speed_hint": 5}
    assert with_settings(added, given).mt.speed_hint == 5  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):
        parser().parse_args(["--mt-speed-hint", "10"])
    assert "Speed hint must be 1..9 (is 10)" in capsys.readouterr().err


GENERATED = {"mt.extra_targets"}  # the declared settings whose rows the pane makes itself


def test_the_hand_made_rows_are_the_declared_ones(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Every declared setting but GENERATED has a hand-made row, and no hand-made row shows
    a setting its declaration does not put on that tab."""
    for tab, keys in HANDMADE.items():
        declared = {f"{section}.{f.name}" for section, f, _ in pane_fields(tab)}
        assert set(keys) == declared - GENERATED, tab
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    assert set(pane.declared_rows) == GENERATED
    assert config.SECTIONS is SECTIONS


def test_extra_target_languages_have_a_row_made_from_their_declaration(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    pane = SettingsPane(with_settings(AppConfig(), {"mt.extra_targets": "ja"}))
    qtbot.addWidget(pane)
    row = pane.declared_rows["mt.extra_targets"]
    assert isinstance(row.widget, QLineEdit) and row.widget.text() == "ja"
    assert "e.g. ja, fr" in row.widget.placeholderText()
    translation = next(i for i in range(pane.tabs.count()) if pane.tabs.tabText(i) == "Translation")
    assert pane.tabs.widget(translation).isAncestorOf(row.widget)
    applied: list[AppConfig] = []
    pane.applied.connect(applied.append)
    row.widget.setText("JA, fr")
    assert pane.apply() and applied[-1].mt.targets == ("de", "ja", "fr")
    row.widget.setText("fr, de")  # the main target again: refused, with the reason
    assert not pane.apply() and "'de' is already the language to translate into" in (
        pane.error.text()
    )
    row.widget.setText("ja, xx")
    assert not pane.apply() and "unknown language 'xx'" in pane.error.text()
    assert applied[-1].mt.extra_targets == "ja, fr"  # (what was last accepted, as codes)
