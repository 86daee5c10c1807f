"""Tray icon (menu bar item on macOS): the app's state, start/pause, settings, transcript,
history, the subtitles brought back to the screen in use, click-through, quit."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from subtitler.ui.app_state import Shown

STATE_CHARS = 60  # the menu's state item: longer ones end in "…" (whole in its tooltip)
RUN_ACTIONS = {"loading": "Loading models…", "running": "Pause", "paused": "Resume"}


class Tray(QObject):
    toggle_run = Signal()
    show_settings = Signal()
    show_transcript = Signal()
    export_transcript = Signal()
    show_history = Signal()
    show_models = Signal()
    show_glossary = Signal()
    show_about = Signal()
    bring_here = Signal()
    click_through = Signal(bool)
    quit = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)
        # The app's state, read-only: what the overlay says, also while it is hidden.
        self.state_action: QAction = self.menu.addAction("Not started")
        self.state_action.setEnabled(False)
        self.menu.addSeparator()
        self.run_action = self.menu.addAction("Start", self.toggle_run.emit)
        self.menu.addAction("Settings…", self.show_settings.emit)
        self.menu.addAction("Models…", self.show_models.emit)
        self.menu.addAction("Glossary…", self.show_glossary.emit)
        self.menu.addAction("Open transcripts folder", self.show_transcript.emit)
        self.menu.addAction("Export transcript…", self.export_transcript.emit)
        self.menu.addAction("Meeting history…", self.show_history.emit)
        # The overlay lost from sight (a screen no one looks at, shrunk into a corner): back
        # at the bottom of the screen in use.
        self.menu.addAction("Bring subtitles here", self.bring_here.emit)
        self.click_action: QAction = self.menu.addAction("Click-through")
        self.click_action.setCheckable(True)
        self.click_action.toggled.connect(self.click_through.emit)
        self.menu.addSeparator()
        self.menu.addAction("About subtitler…", self.show_about.emit)
        self.menu.addAction("Quit subtitler", self.quit.emit)
        self.icon = QSystemTrayIcon(icon)
        self.icon.setContextMenu(self.menu)
        self.icon.setToolTip("subtitler")
        self.available = QSystemTrayIcon.isSystemTrayAvailable()
        if self.available:
            self.icon.show()

    def set_state(self, shown: Shown) -> None:
        """The app's state in the menu's first item and the icon's tooltip; Start / Pause /
        Resume as it allows (while the models load there is nothing to start or pause yet:
        said, not offered)."""
        text = shown.text
        short = text if len(text) <= STATE_CHARS else text[: STATE_CHARS - 1].rstrip() + "…"
        self.state_action.setText(short)
        self.state_action.setToolTip(text)
        self.run_action.setText(RUN_ACTIONS.get(shown.run, "Start"))
        self.run_action.setEnabled(shown.can_toggle)
        self.icon.setToolTip(f"subtitler: {text}")

    def set_click_through(self, on: bool) -> None:
        if self.click_action.isChecked() != on:
            self.click_action.setChecked(on)

    def notify(self, title: str, message: str) -> None:
        if self.available:
            self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Warning, 8000)
