"""A request to end (SIGTERM from a logout, ``kill`` or a service manager; SIGHUP from a
closed terminal; Ctrl-C) ends the app as its own Quit does: the pipeline stops, the finished
lines are written, the settings saved. Python's default for SIGTERM ends the process at once.

Python runs a signal handler only between two of its own bytecodes, and Qt's event loop is
C++: the signal's number is written to a socket (``signal.set_wakeup_fd``) that a
QSocketNotifier watches, so the loop wakes and the handler runs there. Windows has no such
signals for a windowed app (it ends one with a window message, which Qt handles).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer

log = logging.getLogger(__name__)

SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


class EndSignals(QObject):
    """Calls ``quit`` once, in the event loop, when one of SIGNALS arrives."""

    def __init__(self, quit: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._quit = quit
        self._asked = False
        self._notifier: QSocketNotifier | None = None
        if sys.platform == "win32":
            return
        self._r, self._w = socket.socketpair()
        for s in (self._r, self._w):
            s.setblocking(False)
        signal.set_wakeup_fd(self._w.fileno(), warn_on_full_buffer=False)
        for name in SIGNALS:
            signal.signal(getattr(signal, name), self._on_signal)
        self._notifier = QSocketNotifier(self._r.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)

    def _drain(self) -> None:
        # The Python handler has run (or runs right here, before these lines): only the
        # wake-up bytes are left to read.
        with contextlib.suppress(OSError):
            self._r.recv(4096)

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self._asked:
            return
        self._asked = True
        log.info("%s: quitting", signal.Signals(signum).name)
        QTimer.singleShot(0, self._quit)  # in the loop, not inside whatever was interrupted
