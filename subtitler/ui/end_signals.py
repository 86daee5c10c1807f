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
from collections.abc import Callable, Iterator

from PySide6.QtCore import QSocketNotifier, QTimer

log = logging.getLogger(__name__)

SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


@contextlib.contextmanager
def quit_on_end_signals(quit: Callable[[], None]) -> Iterator[None]:
    """While inside, one of SIGNALS calls ``quit`` once, in the event loop; the handlers
    before are put back on the way out."""
    if sys.platform == "win32":
        yield
        return
    asked: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        if not asked:
            asked.append(signum)
            log.info("%s: quitting", signal.Signals(signum).name)
            QTimer.singleShot(0, quit)  # in the loop, not inside whatever was interrupted

    r, w = socket.socketpair()
    for s in (r, w):
        s.setblocking(False)
    notifier = QSocketNotifier(r.fileno(), QSocketNotifier.Type.Read)
    # The handler has run by the time this slot does: only the wake-up bytes are left.
    notifier.activated.connect(lambda *_: _drain(r))
    old_fd = signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    old = {name: signal.signal(getattr(signal, name), on_signal) for name in SIGNALS}
    try:
        yield
    finally:
        for name, handler in old.items():
            signal.signal(getattr(signal, name), handler)
        signal.set_wakeup_fd(old_fd)
        notifier.setEnabled(False)
        r.close()
        w.close()


def _drain(r: socket.socket) -> None:
    with contextlib.suppress(OSError):
        r.recv(4096)
