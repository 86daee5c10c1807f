"""One running app per user data folder: a second start brings the first one forward.

A tray app is easy to start twice (its window is small, its icon hidden in a corner), and two
copies would caption the meeting twice and write the same settings. The first instance holds a
lock file in the data folder and listens on a local socket; a second one finds the lock taken,
tells the first to show itself, and exits. A lock left by a crashed instance is stale
(QLockFile checks the process) and is taken over.

The same socket takes ``subtitler --toggle click-through|pause``: a command for a shortcut set
in the desktop's own keyboard settings, where no app may grab keys itself (Wayland).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

WAKE = b"show\n"
COMMANDS = ("click-through", "pause")  # what `subtitler --toggle NAME` asks of the running app


def server_name(data_dir: Path) -> str:
    """A local socket name for this data folder (short: some systems limit socket paths)."""
    digest = hashlib.sha1(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"subtitler-{digest}"


class SingleInstance(QObject):
    """Owns the data folder's lock; ``activated`` fires when another start asks to be shown."""

    activated = Signal()
    command = Signal(str)  # one of COMMANDS, sent by `subtitler --toggle`

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        data_dir.mkdir(parents=True, exist_ok=True)
        self._name = server_name(data_dir)
        self._lock = QLockFile(str(data_dir / "subtitler.lock"))
        self._lock.setStaleLockTime(0)  # only the owner's process decides, not the lock's age
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        """True if this is the only instance (it now listens for later starts)."""
        if not self._lock.tryLock(100):
            return False
        QLocalServer.removeServer(self._name)  # a socket file left by a crash
        server = QLocalServer(self)
        if not server.listen(self._name):
            log.warning("cannot listen for a second start: %s", server.errorString())
        server.newConnection.connect(self._on_connection)
        self._server = server
        return True

    def wake_running(self, timeout_ms: int = 1000) -> bool:
        """Ask the running instance to show itself; False if it did not answer."""
        return self.send(WAKE, timeout_ms)

    def send(self, message: bytes, timeout_ms: int = 1000) -> bool:
        """One line to the running instance; False if none took it."""
        sock = QLocalSocket()
        sock.connectToServer(self._name)
        if not sock.waitForConnected(timeout_ms):
            return False
        sock.write(message)
        ok = sock.waitForBytesWritten(timeout_ms)
        sock.disconnectFromServer()
        return ok

    def _on_connection(self) -> None:
        assert self._server is not None
        while (conn := self._server.nextPendingConnection()) is not None:
            # The message is one short line sent right after connecting: read it here (a
            # moment at most) rather than keep the socket around.
            ready = conn.bytesAvailable() or conn.waitForReadyRead(500)
            line = bytes(conn.readAll().data()).split(b"\n")[0].decode(errors="replace")
            if ready and line == WAKE.decode().strip():
                log.info("a second start asked this instance to show itself")
                self.activated.emit()
            elif ready and line in COMMANDS:
                log.info("subtitler --toggle %s", line)
                self.command.emit(line)
            conn.disconnectFromServer()
            conn.deleteLater()

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        self._lock.unlock()


def send_command(data_dir: Path, command: str) -> bool:
    """``subtitler --toggle COMMAND``: pass it to the instance using ``data_dir``; False if
    none is running."""
    from PySide6.QtCore import QCoreApplication

    app = QCoreApplication.instance() or QCoreApplication([])  # Qt's sockets want one
    sent = SingleInstance(data_dir).send(f"{command}\n".encode())
    del app
    return sent
