"""One declaration per setting: a field added to a section is validated, shown in the settings
pane and accepted on the command line with no other edit; the pane's table of tabs agrees with
the declarations."""

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
from subtitler.ui.settings_pane import ON_THEIR_PAGE, TABS, SettingsPane


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
    row = pane.rows["mt.speed_hint"]
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


def test_extra_target_languages_have_a_row_made_from_their_declaration(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QLineEdit

    pane = SettingsPane(with_settings(AppConfig(), {"mt.extra_targets": "ja"}))
    qtbot.addWidget(pane)
    edit = pane.widget("mt.extra_targets")
    assert isinstance(edit, QLineEdit) and edit.text() == "ja"
    assert "e.g. ja, fr" in edit.placeholderText()
    translation = next(i for i, (tab, _t, _k) in enumerate(TABS) if tab == "translation")
    assert pane.tabs.widget(translation).isAncestorOf(edit)
    applied: list[AppConfig] = []
    pane.applied.connect(applied.append)
    edit.setText("JA, fr")
    assert pane.apply() and applied[-1].mt.targets == ("de", "ja", "fr")
    edit.setText("fr, de")  # the main target again: refused, with the reason
    assert not pane.apply() and "'de' is already the language to translate into" in (
        pane.error.text()
    )
    edit.setText("ja, xx")
    assert not pane.apply() and "unknown language 'xx'" in pane.error.text()
    assert applied[-1].mt.extra_targets == "ja, fr"  # (what was last accepted, as codes)


def test_the_tabs_table_lists_each_setting_on_its_declared_tab(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The pane's table of tabs names a setting once, on the tab its declaration gives; every
    tab a declaration names is in it; and every setting declared on a tab has its row on that
    tab (the Browser page shows its own), and only those have rows."""
    from PySide6.QtWidgets import QWidget

    tabs = [tab for tab, _title, _keys in TABS]
    listed = [key for _tab, _title, keys in TABS for key in keys if "." in key]
    assert len(listed) == len(set(listed))
    for tab, _title, keys in TABS:
        declared = {f"{section}.{f.name}" for section, f, _ in pane_fields(tab)}
        assert {k for k in keys if "." in k} <= declared, tab
    for section, cls in SECTIONS.items():
        for f, spec in config.specs(cls):
            assert spec.tab in ("", *tabs), (section, f.name, spec.tab)
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    shown: set[str] = set()
    for i, tab in enumerate(tabs):
        page: QWidget = pane.tabs.widget(i)
        for section, f, _ in pane_fields(tab):
            key = f"{section}.{f.name}"
            widget = getattr(pane.web, f.name) if key in ON_THEIR_PAGE else pane.widget(key)
            assert widget is page or page.isAncestorOf(widget), key
            shown.add(key)
    assert set(pane.rows) == shown - ON_THEIR_PAGE


def test_an_added_plain_setting_comes_at_the_end_of_its_tab(qtbot, added: AppConfig) -> None:  # type: ignore[no-untyped-def]
    """Declared on a tab and not in the table: its row comes last there, after the rows the
    table orders."""
    from PySide6.QtWidgets import QFormLayout

    pane = SettingsPane(added)
    qtbot.addWidget(pane)
    advanced = next(i for i, (tab, _t, _k) in enumerate(TABS) if tab == "advanced")
    form = pane.pages[advanced].layout()
    assert isinstance(form, QFormLayout)
    fields = [form.itemAt(r, QFormLayout.ItemRole.FieldRole) for r in range(form.rowCount())]
    assert [item.widget() for item in fields[-2:] if item is not None] == [
        pane.widget("mt.tau"),
        pane.widget("mt.speed_hint"),
    ]
