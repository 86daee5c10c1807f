"""About (tray menu): the app's version and licence, and the third-party notices."""

from __future__ import annotations

from subtitler import __version__
from subtitler.ui.about import AboutDialog
from subtitler.ui.tray import Tray


def test_about_shows_the_licence_and_the_third_party_notices(qtbot) -> None:  # type: ignore[no-untyped-def]
    about = AboutDialog()
    qtbot.addWidget(about)
    assert about.tabs.tabText(0) == "Licence" and about.tabs.tabText(1) == "Third-party software"
    assert about.licence.toPlainText().startswith("MIT License")
    third = about.third_party.toPlainText()
    assert third.startswith("Third-party software in subtitler")
    assert "PySide6_Essentials" in third and "GNU LESSER GENERAL PUBLIC LICENSE" in third
    from PySide6.QtWidgets import QLabel

    heads = [w.text() for w in about.findChildren(QLabel)]
    assert any(f"subtitler {__version__}" in h and "MIT licence" in h for h in heads)


def test_the_tray_menu_opens_about(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QIcon

    tray = Tray(QIcon())
    action = next(a for a in tray.menu.actions() if a.text() == "About subtitler…")
    with qtbot.waitSignal(tray.show_about, timeout=1000):
        action.trigger()
