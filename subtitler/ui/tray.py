"""Tray icon (menu bar item on macOS): start/pause, settings, transcript, history,
click-through, quit."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon


class Tray(QObject):
    toggle_run = Signal()
    show_settings = Signal()
    show_transcript = Signal()
    export_transcript = Signal()
    show_history = Signal()
    show_models = Signal()
    show_glossary = Signal()
    show_about = Signal()
    click_through = Signal(bool)
    quit = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.menu = QMenu()
        self.run_action = self.menu.addAction("Start", self.toggle_run.emit)
        self.menu.addAction("Settings…", self.show_settings.emit)
        self.menu.addAction("Models…", self.show_models.emit)
        self.menu.addAction("Glossary…", self.show_glossary.emit)
        self.menu.addAction("Open transcripts folder", self.show_transcript.emit)
        self.menu.addAction("Export transcript…", self.export_transcript.emit)
        self.menu.addAction("Meeting history…", self.show_history.emit)
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

    def set_state(self, state: str, message: str = "") -> None:
        # While the models load there is nothing to start or pause yet: said, not offered.
        loading = state == "loading"
        names = {"loading": "Loading models…", "running": "Pause", "paused": "Resume"}
        self.run_action.setText(names.get(state, "Start"))
        self.run_action.setEnabled(not loading)
        self.icon.setToolTip(f"subtitler: {message or state}")

    def set_click_through(self, on: bool) -> None:
        if self.click_action.isChecked() != on:
            self.click_action.setChecked(on)

    def notify(self, title: str, message: str) -> None:
        if self.available:
            self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Warning, 8000)
