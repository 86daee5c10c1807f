"""One running app per user data folder: a second start brings the first one forward.

A tray app is easy to start twice (its window is small, its icon hidden in a corner), and two
copies would caption the meeting twice and write the same settings. The first instance holds a
lock file in the data folder and listens on a local socket; a second one finds the lock taken,
tells the first to show itself, and exits. A lock left by a crashed instance is stale
(QLockFile checks the process) and is taken over.

The same socket takes ``subtitler --toggle click-through|pause``: a command for a shortcut set
in the desktop's own keyboard settings, where no app may grab keys itself (Wayland).

The socket is private to the user: on Unix it lives in a folder that only this user can write
(the session's runtime folder, the data folder, or a 0700 folder of the user's own in the temp
folder), so another local user can neither take its name first nor stand in for it; a socket
file owned by someone else is never connected to. A fixed name in the shared /tmp (as before)
let anyone listen there first, and every later start then "woke" them and quietly exited. On
Windows the pipe is created for this user only (``UserAccessOption``).

A data folder that cannot be locked for another reason (read-only, full, not a folder) is not
"another instance": ``problem`` says why in one line and the app runs without the guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

WAKE = b"show\n"
COMMANDS = ("click-through", "pause")  # what `subtitler --toggle NAME` asks of the running app
# sockaddr_un.sun_path holds 104 (macOS) or 108 (Linux) bytes with the terminator.
MAX_SOCKET_PATH = 100


def server_name(data_dir: Path) -> str:
    """A local socket name for this data folder (short: some systems limit socket paths)."""
    digest = hashlib.sha1(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"subtitler-{digest}"


def private_dir_ok(path: Path, uid: int) -> bool:
    """Whether only ``uid`` can create, remove or replace files in ``path`` (a real folder, not
    a link, owned by ``uid``, writable by nobody else)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o022


def socket_address(data_dir: Path) -> str | None:
    """Where the instance of ``data_dir`` listens: a socket path in a folder private to this
    user (Unix) or a pipe name (Windows); None if no private folder can be found."""
    name = server_name(data_dir)
    if sys.platform == "win32":
        return name
    uid = os.getuid()
    own_tmp = Path(tempfile.gettempdir()) / f"subtitler-{uid}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    try:
        # The folder itself: a link to it (the user's own spelling of it) is no private
        # folder, and a second start through the link looked for the socket elsewhere.
        real = data_dir.resolve()
    except (OSError, RuntimeError):
        real = data_dir
    candidates = ([Path(runtime)] if runtime else []) + [real, own_tmp]
    for folder in candidates:
        if folder == own_tmp and not folder.exists():
            with contextlib.suppress(OSError):
                folder.mkdir(mode=0o700)
        path = str(folder / f"{name}.sock")
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            continue
        # Writable too: a read-only data folder is private but cannot hold the socket.
        if private_dir_ok(folder, uid) and os.access(folder, os.W_OK):
            return path
        if folder.exists():
            log.warning("instance socket not put in %s: others can write there", folder)
    return None


def socket_ok(address: str) -> bool:
    """Whether a socket found at ``address`` may be talked to: on Unix it must be a socket of
    this user's, in a folder only this user can write."""
    if sys.platform == "win32":
        return True
    uid = os.getuid()
    try:
        st = os.lstat(address)
    except OSError:
        return False
    return (
        stat.S_ISSOCK(st.st_mode) and st.st_uid == uid and private_dir_ok(Path(address).parent, uid)
    )


LOCK = "subtitler.lock"
BEING_WRITTEN_S = 10.0  # a lock file younger than this may be one a start is writing now


def no_lock(path: Path) -> str:
    """Why the file at ``path`` is no lock QLockFile wrote, in a few words: a FIFO, a folder,
    a file without a process id on its first line (damaged: zeros after a power cut, a
    crash while it was written); "" when it may be one, or none is there. QLockFile waits
    for good to read a FIFO, and takes a lock it cannot read for one held by an instance
    that does not answer."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:  # none there, or none this user may read: QLockFile says
        return ""
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return "a folder"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        head = os.read(fd, 256)
    except OSError:
        return ""
    finally:
        os.close(fd)
    if head.split(b"\n", 1)[0].strip().isdigit():
        return ""
    if abs(time.time() - st.st_mtime) < BEING_WRITTEN_S:
        return ""  # (another start may be writing it this moment)
    return "no process id in it"


def folder_problem(folder: Path) -> str:
    """Why files cannot be written in ``folder`` ("Read-only file system", "No space left on
    device", ...); "" if a small test write succeeds."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder) as f:
            f.write(b"subtitler write test\n" * 4)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        return e.strerror or type(e).__name__
    return ""


class SingleInstance(QObject):
    """Owns the data folder's lock; ``activated`` fires when another start asks to be shown."""

    activated = Signal()
    command = Signal(str)  # one of COMMANDS, sent by `subtitler --toggle`

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.problem = ""  # why the folder could not be locked, when not another instance
        self._address: str | None = None  # found once the data folder exists (or cannot)
        self._lock = QLockFile(str(data_dir / LOCK))
        self._lock.setStaleLockTime(0)  # only the owner's process decides, not the lock's age
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        """True if this is the only instance (it now listens for later starts). False: another
        instance holds the folder, or (``problem`` set) the folder cannot be locked at all."""
        self.problem = ""
        reason = ""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            reason = e.strerror or type(e).__name__
        # (After the folder was made: a first start and a second one choose the same place.)
        self._address = socket_address(self.data_dir)
        if not reason:
            self._set_aside_no_lock()
            if self._lock.tryLock(100):
                self.listen()
                return True
            if self._lock.error() == QLockFile.LockError.LockFailedError:
                return False  # held by a live process: another instance
            reason = folder_problem(self.data_dir) or f"its lock file: {_lock_error(self._lock)}"
        self.problem = (
            f"The data folder {self.data_dir} cannot be written ({reason}): finished lines "
            "are kept in memory this session (export still has them)."
        )
        log.warning("%s", self.problem)
        return False

    def _set_aside_no_lock(self) -> None:
        """A lock file that is none (see :func:`no_lock`) is no instance's: moved out of the
        way, as ``subtitler.lock.broken-STAMP``, so that this start takes the lock."""
        path = self.data_dir / LOCK
        if not (why := no_lock(path)):
            return
        aside = path.with_name(f"{LOCK}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(path, aside)
        except OSError as e:
            log.warning("%s is no lock (%s) and cannot be moved: %s", path, why, e)
            return
        log.warning("%s is no lock (%s): set aside as %s", path, why, aside.name)

    def listen(self) -> None:
        """Answer later starts (also when the folder could not be locked)."""
        if self._server is not None:
            return
        if self._address is None:
            log.warning("no folder private to this user for the instance socket")
            return
        QLocalServer.removeServer(self._address)  # a socket file left by a crash (ours)
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self._address):
            log.warning("cannot listen for a second start: %s", server.errorString())
            return
        server.newConnection.connect(self._on_connection)
        self._server = server

    def wake_running(self, timeout_ms: int = 1000) -> bool:
        """Ask the running instance to show itself; False if it did not answer."""
        return self.send(WAKE, timeout_ms)

    def send(self, message: bytes, timeout_ms: int = 1000) -> bool:
        """One line to the running instance; False if none took it."""
        if self._address is None:
            self._address = socket_address(self.data_dir)
        if self._address is None:
            return False
        if not socket_ok(self._address):
            if os.path.lexists(self._address):
                log.warning("not trusting %s: not this user's socket", self._address)
            return False
        sock = QLocalSocket()
        sock.connectToServer(self._address)
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
        if self._lock.isLocked():
            self._lock.unlock()


def send_command(data_dir: Path, command: str) -> bool:
    """``subtitler --toggle COMMAND``: pass it to the instance using ``data_dir``; False if
    none is running."""
    from PySide6.QtCore import QCoreApplication

    app = QCoreApplication.instance() or QCoreApplication([])  # Qt's sockets want one
    sent = SingleInstance(data_dir).send(f"{command}\n".encode())
    del app
    return sent


def _lock_error(lock: QLockFile) -> str:
    return {
        QLockFile.LockError.PermissionError: "permission denied",
        QLockFile.LockError.UnknownError: "unknown error",
    }.get(lock.error(), "cannot be created")
