"""Native engines in a supervised child process: a crash there is a message here.

llama.cpp and CTranslate2 end the whole process on some bad inputs (a GGML_ASSERT on a corrupt
vocabulary or layer count, a division by zero on a one-frame window). Each loaded model
therefore lives in its own process, started with multiprocessing's "spawn" method (the same on
Linux, macOS and Windows, and inside the PyInstaller bundle: ``freeze_support`` in main.py).

The protocol is small: the parent sends ``(seq, op, args)`` over a pipe and waits for
``(seq, "ok", value, seconds in the handler)`` or ``(seq, "err", kind, message)``, after any
number of ``(seq, "progress", value)`` reports (a slow decode's prefix); only plain values
cross (text, token ids, stats, audio samples). A running call is aborted through a counter in
shared memory that the child's decoder reads between two steps (``seq`` is aborted once the
counter reaches it), so a newer update reaches a running decode within a few milliseconds.
If the child dies, the waiting call raises :class:`WorkerCrashed` with the exit
signal and the engine's last complaint (its GGML_ASSERT line, say).

The child's stdout and stderr (fd 1 and 2, which native code writes to) go to a temporary file
that the parent reads line by line into ``logging`` (so into subtitler.log); the child's own
Python log records travel the same way with their level and logger name.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import re
import select
import signal
import stat
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from subtitler.types import EngineGone

log = logging.getLogger(__name__)
native_log = logging.getLogger("subtitler.engine")

SPAWN = multiprocessing.get_context("spawn")
ABORT_POLL_S = 0.005  # how often a waiting call asks its abort callback
IDLE_POLL_S = 0.1  # how often a call without one checks that the child is alive
ABORT_GRACE_S = 1.0  # an aborted call that does not answer by then is left behind
# An abandoned call that has still not answered this long after its abort is a hung engine (a
# native deadlock, a driver that stopped): ended, and said as a crash. Generous: a decode
# stops at its next step, and one step of a long prompt on a slow machine may take seconds.
HUNG_S = 60.0
_MARK, _SEP, _NL = "\x1e", "\x1f", "\x1d"  # a forwarded log record: MARK level SEP name SEP text
# A worker's log in the temporary folder: named after the app's process (remove_dead_logs).
LOG_PREFIX = "subtitler-engine-"
_LOG_NAME = re.compile(re.escape(LOG_PREFIX) + r"([0-9]+)-[A-Za-z0-9_]+\.log")


class WorkerCrashed(EngineGone):
    """The child process died during a call; ``reason`` is its last complaint or exit status."""

    def __init__(self, reason: str, exitcode: int | None) -> None:
        super().__init__(reason)
        self.reason, self.exitcode = reason, exitcode


class WorkerClosed(EngineGone):
    """The worker was closed (from another thread) while a call waited."""


class CallAbandoned(Exception):
    """An aborted call did not answer within the grace period; its reply is read and dropped
    before the next call."""


class RemoteError(RuntimeError):
    """The call raised in the child; ``kind`` is the exception's type name there."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def exit_status(code: int | None) -> str:
    """ "signal SIGABRT", "exit code 3", "exit code 0xc0000005" (a Windows exception)."""
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code:#x}" if code > 255 else f"exit code {code}"


# What a native engine prints before it aborts, most telling first.
_COMPLAINTS = (
    re.compile(r"GGML_ASSERT|GGML_ABORT|Assertion .* failed|assert", re.I),
    re.compile(r"terminate called|what\(\)|exception|fault|abort", re.I),
    re.compile(r"error|failed|invalid", re.I),
)
_SOURCE_PATH = re.compile(r"(?:[A-Za-z]:)?[^\s:()]*[/\\]([^/\\\s:]+:\d+)")


def complaint(lines: list[str]) -> str:
    """The line of an engine's output that best says why it stopped ("" if none does)."""
    for pattern in _COMPLAINTS:
        for line in reversed(lines):
            if pattern.search(line):
                text = _SOURCE_PATH.sub(r"\1", line.strip())  # build paths say nothing
                return text if len(text) <= 200 else text[:199] + "…"
    return ""


class _LogTail(threading.Thread):
    """Reads the child's output file into logging as it grows; keeps the recent engine lines."""

    def __init__(self, path: str) -> None:
        super().__init__(name="engine-log", daemon=True)
        self.path = path
        self._f = open(path, "rb")  # noqa: SIM115 - read until close()
        self._rest = b""
        self._lock = threading.Lock()
        self._stop_ev = threading.Event()
        self.recent: deque[str] = deque(maxlen=60)

    def run(self) -> None:
        while not self._stop_ev.wait(0.25):
            self.pump()

    def pump(self) -> None:
        with self._lock:
            if self._f.closed:
                return
            data = self._rest + self._f.read()
            *lines, self._rest = data.split(b"\n")
        for raw in lines:
            self._dispatch(raw.decode("utf-8", errors="replace").rstrip("\r"))

    def _dispatch(self, line: str) -> None:
        if line.startswith(_MARK) and line.count(_SEP) >= 2:
            level, name, text = line[1:].split(_SEP, 2)
            text = text.replace(_NL, "\n")
            if name in ("llama.cpp", "ctranslate2"):
                self.recent.append(text)
            with contextlib.suppress(ValueError):
                logging.getLogger(name).log(int(level), "%s", text)
        elif line.strip():
            # Written straight to fd 2 by native code: an abort message, a backtrace.
            self.recent.append(line)
            native_log.info("%s", line)

    def close(self) -> None:
        self._stop_ev.set()
        if self.is_alive() and self is not threading.current_thread():
            self.join(1.0)
        self.pump()
        with self._lock:
            self._f.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def remove_dead_logs(folder: str | None = None) -> list[str]:
    """Remove the engine logs of apps that are gone from the temporary folder; returns them.

    A worker's log is named after the app that started it (``subtitler-engine-PID-….log``):
    the app removes it when it closes the engine, the engine on its way out, but an engine
    killed with its app (a kill of the process group, the OOM killer) does neither, and each
    such pair left a log for good. Only this user's plain files of that name whose app no
    longer runs go: a running app's logs stay (its engines may write them), as does anything
    else (a link, another user's file, a name of older versions, which says no process)."""
    import psutil  # (light, but only needed here)

    folder = folder or tempfile.gettempdir()
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _LOG_NAME.fullmatch(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            if psutil.pid_exists(int(m.group(1))):
                continue  # (a pid used again by another process keeps the log: harmless)
            os.unlink(entry.path)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
        removed.append(entry.path)
    if removed:
        log.info("removed %d engine log(s) of apps that are gone", len(removed))
    return removed


class _Readable:
    """Waits until the pipe has data (or its end), cheaply: Connection.poll builds a new
    selector at every call, which at a few hundred waits a second costs the parent several
    percent of a core while the worker decodes."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._poll: Any = None
        if hasattr(select, "poll"):  # POSIX; Windows pipes are no sockets: Connection.poll
            self._poll = select.poll()
            self._poll.register(conn.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR)

    def __call__(self, timeout: float) -> bool:
        if self._poll is None:
            return bool(self._conn.poll(timeout))
        return bool(self._poll.poll(timeout * 1000))


def _shutdown(proc: Any, conn: Any, tail: _LogTail) -> None:
    """End the child (politely if it is idle: ``conn`` is None while a call runs)."""
    if proc.is_alive():
        if conn is not None:
            with contextlib.suppress(OSError, ValueError):
                conn.send((0, "exit", ()))
            proc.join(2.0)
        if proc.is_alive():
            proc.terminate()
            proc.join(2.0)
        if proc.is_alive():
            proc.kill()
            proc.join(2.0)
    tail.close()


class WorkerProcess:
    """One child process hosting one service (a loaded model); calls are made one at a time."""

    def __init__(self, service: str) -> None:
        """``service``: "package.module:Class", the host the child imports and runs (with
        ``OPS``, the calls it answers; ``init`` first)."""
        module, sep, cls = service.partition(":")
        if not (module and sep and cls):
            raise ValueError(f"an engine service is 'module:Class', not {service!r}")
        self.service = service
        self._lock = threading.Lock()  # one call at a time
        self._abort = SPAWN.RawValue("q", 0)
        self._seq = 0
        self._pending = 0  # an abandoned call whose reply has not been read yet
        self._abandoned_at = 0.0  # (monotonic) when that call was asked to stop
        self._closed = False
        self._proc: Any = None
        self._conn: Any = None
        self._tail: _LogTail | None = None
        self._finalizer: weakref.finalize[Any, WorkerProcess] | None = None
        self.crashed: WorkerCrashed | None = None
        self.handler_s = 0.0  # how long the last call ran in the child (the rest is transport)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self, *init_args: Any) -> Any:
        """Start the child and call the service's ``init`` (loading the model)."""
        remove_dead_logs()
        fd, path = tempfile.mkstemp(prefix=f"{LOG_PREFIX}{os.getpid()}-", suffix=".log")
        os.close(fd)
        here, there = SPAWN.Pipe()
        level = logging.getLogger().getEffectiveLevel()
        self._proc = SPAWN.Process(
            target=child_main,
            args=(there, self._abort, self.service, path, level),
            name=f"subtitler-{self.service}",
            daemon=True,
        )
        self._tail = _LogTail(path)
        self._tail.start()
        self._proc.start()
        there.close()
        self._conn = here
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, here, self._tail)
        return self.call("init", *init_args)

    def call(
        self,
        op: str,
        *args: Any,
        abort: Callable[[], bool] | None = None,
        grace: float = ABORT_GRACE_S,
        progress: Callable[[Any], None] | None = None,
        deadline_s: float | None = None,
    ) -> Any:
        """Run ``op`` in the child and return its value; what the child reports on the way
        (``report`` in the service) goes to ``progress``, in this thread.

        Raises RemoteError (it raised there), WorkerCrashed (the child died, or gave no
        answer within ``deadline_s``: it is ended then), WorkerClosed (closed meanwhile) or
        CallAbandoned (``abort`` said so and the child did not answer within ``grace``
        seconds)."""
        with self._lock:
            if self._closed:
                raise WorkerClosed("the engine was closed")
            if self.crashed is not None:
                raise self.crashed
            if self._pending:
                self._wait(self._pending, None, grace, hung_at=self._abandoned_at + HUNG_S)
            self._seq += 1
            seq = self._seq
            try:
                self._conn.send((seq, op, args))
            except (OSError, ValueError):
                raise self._died() from None
            hung_at = time.monotonic() + deadline_s if deadline_s is not None else None
            return self._wait(seq, abort, grace, progress, hung_at)

    def _wait(
        self,
        seq: int,
        abort: Callable[[], bool] | None,
        grace: float,
        progress: Callable[[Any], None] | None = None,
        hung_at: float | None = None,
    ) -> Any:
        aborted_at: float | None = None
        step = ABORT_POLL_S if abort is not None else IDLE_POLL_S
        check_alive = time.monotonic() + IDLE_POLL_S
        readable = _Readable(self._conn)
        while True:
            try:
                ready = readable(step)
            except (OSError, EOFError, ValueError):
                ready = True
            if ready:
                try:
                    reply = self._conn.recv()
                except (OSError, EOFError, ValueError):
                    raise self._died() from None
                if reply[0] != seq:
                    continue  # the late answer (or report) of an abandoned call
                if reply[1] == "progress":
                    if progress is not None:
                        progress(reply[2])
                    continue
                self._pending = 0
                if reply[1] == "ok":
                    self.handler_s = reply[3]
                    return reply[2]
                raise RemoteError(reply[2], reply[3])
            if self._closed:
                raise WorkerClosed("the engine was closed")
            now = time.monotonic()
            if now >= check_alive:  # (a dead child also shows as the pipe's end, above)
                if not self._proc.is_alive():
                    raise self._died()
                check_alive = now + IDLE_POLL_S
            if hung_at is not None and now > hung_at:
                raise self._hung(seq != self._pending)
            if abort is None:
                continue
            if aborted_at is None:
                if abort():
                    self._abort.value = seq
                    aborted_at = now
            elif now - aborted_at > grace:
                self._pending, self._abandoned_at = seq, aborted_at
                raise CallAbandoned(f"no answer {grace:.1f} s after the abort")

    def _died(self) -> EngineGone:
        if self._closed:
            return WorkerClosed("the engine was closed")
        self._proc.join(2.0)
        code = self._proc.exitcode
        assert self._tail is not None
        self._tail.pump()
        why = complaint(list(self._tail.recent)) or exit_status(code)
        if code is not None and why != exit_status(code):
            why = f"{why}; {exit_status(code)}"
        log.info("engine process %s (pid %s) ended: %s", self.service, self.pid, why)
        self.crashed = WorkerCrashed(why, code)
        return self.crashed

    def _hung(self, deadline: bool) -> WorkerCrashed:
        """The child answered nothing long after it was asked to stop (or by a call's
        deadline): ended, as a crash."""
        why = (
            "hung: no answer by its deadline"
            if deadline
            else f"hung: no answer {HUNG_S:.0f} s after it was asked to stop"
        )
        log.warning("engine process %s (pid %s) %s; ending it", self.service, self.pid, why)
        self._proc.kill()
        self._proc.join(2.0)
        self.crashed = WorkerCrashed(why, self._proc.exitcode)
        return self.crashed

    def close(self) -> None:
        """End the child; safe from any thread (a call waiting elsewhere gets WorkerClosed)."""
        if self._closed:
            return
        self._closed = True
        if self._finalizer is None:
            return
        idle = self._lock.acquire(blocking=False)
        try:
            if not idle:  # a call is running: no polite goodbye, the child is busy
                self._finalizer.detach()
                _shutdown(self._proc, None, self._tail)  # type: ignore[arg-type]
            else:
                self._finalizer()
        finally:
            if idle:
                self._lock.release()
        with contextlib.suppress(OSError):
            self._conn.close()


# -- the child -------------------------------------------------------------------------------


class _ForwardHandler(logging.Handler):
    """Writes log records to fd 2 (the output file) for the parent to re-log."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record).replace("\n", _NL)
            line = f"{_MARK}{record.levelno}{_SEP}{record.name}{_SEP}{text}\n"
            os.write(2, line.encode("utf-8", errors="replace"))
        except Exception:  # a log line must never take the engine down
            self.handleError(record)


class _OutputLogger:
    """sys.stdout / sys.stderr of the child: Python-level prints become DEBUG records."""

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(name)
        self._buf = ""

    def write(self, s: str) -> int:
        self._buf += s
        *lines, self._buf = self._buf.split("\n")
        for line in lines:
            if line.strip():
                self._log.debug("%s", line)
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _redirect_output(path: str, level: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    root = logging.getLogger()
    root.handlers[:] = [_ForwardHandler()]
    root.setLevel(level)
    sys.stdout = _OutputLogger("subtitler.engine.stdout")
    sys.stderr = _OutputLogger("subtitler.engine.stderr")


def _one_line(e: BaseException) -> str:
    lines = [x.strip() for x in str(e).splitlines() if x.strip()]
    return lines[0] if lines else type(e).__name__


def child_main(conn: Any, abort: Any, service: str, log_path: str, level: int) -> None:
    """The child's loop: answer calls until told to exit or the parent goes away."""
    # ggml's abort handler would otherwise attach gdb for a backtrace (seconds, pages of it).
    os.environ.setdefault("GGML_NO_BACKTRACE", "1")
    _redirect_output(log_path, level)
    clog = logging.getLogger("subtitler.engine.worker")
    module, cls = service.split(":")
    host = getattr(importlib.import_module(module), cls)()
    current = 0
    host.should_abort = lambda: abort.value >= current

    def report(value: Any) -> None:
        """A running call's progress, to the parent (the answer comes after it)."""
        with contextlib.suppress(OSError, ValueError):
            conn.send((current, "progress", value))

    host.report = report
    while True:
        try:
            seq, op, args = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            break  # the parent is gone
        if op == "exit":
            break
        current = seq
        t0 = time.perf_counter()
        try:
            if op.startswith("_") or op not in host.OPS:
                raise ValueError(f"unknown operation {op!r}")
            value = getattr(host, op)(*args)
        except Exception as e:
            clog.info("%s failed", op, exc_info=True)
            reply: tuple[Any, ...] = (seq, "err", type(e).__name__, _one_line(e))
        else:
            reply = (seq, "ok", value, time.perf_counter() - t0)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            break
    with contextlib.suppress(Exception):
        host.close()
    _drop_log(log_path)


def _drop_log(path: str) -> None:
    """Remove the child's log on its way out: the parent removes it when it closes the
    engine, but a parent that was killed (a crash, an ended task, a test's terminate) never
    does, and each left one in the temporary folder."""
    with contextlib.suppress(OSError):
        # Windows does not remove a file this process still writes to (fd 1 and 2); while
        # the parent still reads it, the removal fails there and the parent's close does it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
    with contextlib.suppress(OSError):
        os.unlink(path)
