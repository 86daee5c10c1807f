"""About subtitler: its version and licence, and the third-party software it runs on with
each one's licence text (subtitler/notices.py; the installers ship the file)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from subtitler import __version__, notices
from subtitler.ui.sizing import open_at


def _text_page(text: str) -> QPlainTextEdit:
    page = QPlainTextEdit()
    page.setReadOnly(True)
    # A caret the arrows move: a screen reader reads the line it is on (it only scrolled).
    page.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    page.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    page.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    page.setPlainText(text)
    return page


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About subtitler")
        head = QLabel(
            f"<b>subtitler {__version__}</b><br>Live, translated subtitles over any meeting."
            "<br>Free software under the MIT licence. It runs on the software listed under "
            "“Third-party software”, each under its own licence."
        )
        head.setWordWrap(True)
        self.tabs = QTabWidget()
        self.licence = _text_page(notices.project_licence())
        self.third_party = _text_page(notices.for_about())
        for page, title in ((self.licence, "Licence"), (self.third_party, "Third-party software")):
            page.setAccessibleName(title)  # (a screen reader said "text" alone)
            self.tabs.addTab(page, title)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(buttons)
        open_at(self, 760, 560)
