"""Settings → Browser: the subtitles as a web page, for OBS or a second screen."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from subtitler.config import WebConfig, spec_of
from subtitler.web.access import new_token

SHARE_LABELS = {
    "off": "Off",
    "local": "This computer",
    "network": "Local network (address with an access key)",
}


def with_option(url: str, option: str) -> str:
    """``url`` with one more query option."""
    return f"{url}{'&' if '?' in url else '?'}{option}" if url else ""


class WebSettings(QWidget):
    """``status()`` gives the running page's address and the problem, if any, from the app."""

    def __init__(
        self, status: Callable[[], tuple[str, str]], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._status = status
        self._token = ""
        self._base_url = ""
        f = QFormLayout(self)
        self.share = QComboBox()
        for value in spec_of(WebConfig, "share").choices or ():
            self.share.addItem(SHARE_LABELS[value], value)
        self.share.setToolTip(
            "Serve the subtitles as a web page. This computer: only browsers and OBS on this "
            "computer can open it. Local network: other devices too, with the access key that "
            "is part of the address"
        )
        self.port = QSpinBox()
        lo, hi = spec_of(WebConfig, "port").range or (1024, 65535)
        self.port.setRange(int(lo), int(hi))
        self.port.setToolTip("Change it when another program uses this port")
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        self.url.setPlaceholderText("not running")
        self.copy = QPushButton("Copy")
        self.copy.setAccessibleName("Copy the address")  # ("Copy" alone, to a screen reader)
        self.copy.clicked.connect(self._copy)
        url_row = QHBoxLayout()
        url_row.addWidget(self.url, 1)
        url_row.addWidget(self.copy)
        self.transparent = QCheckBox("Transparent background (for an OBS browser source)")
        self.transparent.toggled.connect(lambda _on: self._show_url())
        self.renew = QPushButton("New access key")
        self.renew.setToolTip("Pages opened with the old address stop showing subtitles")
        self.renew.clicked.connect(self._renew)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #c62828")
        self.problem.setWordWrap(True)
        hint = QLabel(
            "Open the address in a browser (a projector, a second screen) or add it to OBS as a "
            "Browser source. Options after the address: lines=3, size=48, bilingual=1, "
            "bg=box, side=you (only what you said, when the microphone and the meeting are "
            "both heard)."
        )
        hint.setWordWrap(True)
        f.addRow("Show subtitles in a browser", self.share)
        f.addRow("Port", self.port)
        address = QLabel("Address")
        address.setBuddy(self.url)
        f.addRow(address, url_row)
        f.addRow("", self.transparent)
        f.addRow("", self.renew)
        f.addRow(self.note)
        f.addRow(self.problem)
        f.addRow(hint)
        self.share.currentIndexChanged.connect(lambda _i: self._update_buttons())

    def load(self, web: WebConfig) -> None:
        i = self.share.findData(web.share)
        self.share.setCurrentIndex(max(0, i))
        self.port.setValue(web.port)
        self._token = web.token
        self._say(self.note, "")
        self.refresh()

    def values(self) -> WebConfig:
        share = str(self.share.currentData())
        if share == "network" and not self._token:
            self._token = new_token()  # made once, then kept: the address stays the same
        return WebConfig(share=share, port=self.port.value(), token=self._token)

    def refresh(self) -> None:
        """Show the running page's address and problem (after the app applied the settings)."""
        self._base_url, problem = self._status()
        self._say(self.problem, problem)
        self._show_url()
        self._update_buttons()

    def _show_url(self) -> None:
        url = self._base_url
        self.url.setText(
            with_option(url, "bg=transparent") if self.transparent.isChecked() else url
        )
        self.url.setCursorPosition(0)  # the start of a long address is what tells it apart

    def _update_buttons(self) -> None:
        self.copy.setEnabled(bool(self.url.text()))
        self.renew.setEnabled(self.share.currentData() == "network")

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.url.text())

    def _renew(self) -> None:
        self._token = new_token()
        self._say(
            self.note,
            "A new address is made when you press Apply or OK; pages open with the old one "
            "stop showing subtitles.",
        )

    @staticmethod
    def _say(label: QLabel, text: str) -> None:
        """A line that takes no room while it has nothing to say."""
        label.setText(text)
        label.setVisible(bool(text))
