"""Headless Chromium driven over the DevTools protocol through a pipe (standard library only).

Chromium started with ``--remote-debugging-pipe`` reads protocol messages on fd 3 and writes
them on fd 4, each a JSON object ended by a NUL byte (the transport Puppeteer uses): no
WebSocket client and no browser download are needed, only the system's ``chromium``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",  # root in a container; the page is our own
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    # Debian's /usr/bin/chromium is a shell script that adds flags of its own (extensions,
    # GPU rasterization) from /etc/chromium.d: the browser itself, where it is known.
    if os.access("/usr/lib/chromium/chromium", os.X_OK):
        return "/usr/lib/chromium/chromium"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class DevToolsError(RuntimeError):
    pass


class Chromium:
    """One headless browser; ``open(url)`` gives a Page to drive."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 360) -> None:
        import fcntl  # POSIX only, like the pipe transport: imported here so that the module
        # itself imports anywhere (the tests that use it skip off Linux)

        binary = chromium_path()
        if binary is None:
            raise FileNotFoundError("chromium is not installed")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Chromium wants its ends as fds 3 and 4: posix_spawn places them there in the child
        # (no preexec_fn, which is unsafe in a process with threads; no shell, whose
        # redirections stop at fd 9). Moved above 9 first, so that placing one cannot
        # overwrite the other.
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_child_r, from_child_w):
            os.close(fd)
        args = [*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        self.log = profile.parent / f"{profile.name}.stderr.log"
        self.pid = os.posix_spawn(
            binary,
            [binary, *args, "about:blank"],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, str(self.log), os.O_WRONLY | os.O_CREAT, 0o644),
                (os.POSIX_SPAWN_DUP2, hi_r, 3),
                (os.POSIX_SPAWN_DUP2, hi_w, 4),
            ],
            setsid=True,  # its renderer and GPU processes are in its group: ended with it
        )
        os.close(hi_r)
        os.close(hi_w)
        self._next_id = 0
        self._id_lock = threading.Lock()
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.events: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.listeners: list[Callable[[float, dict[str, Any]], None]] = []
        self._reader = threading.Thread(target=self._read, name="cdp-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                t = time.perf_counter()  # when the message arrived: timings use it
                msg = json.loads(raw)
                if "id" in msg:
                    q = self._replies.get(msg["id"])
                    if q is not None:
                        q.put(msg)
                    continue
                for fn in self.listeners:
                    fn(t, msg)
                self.events.put((t, msg))

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        with self._id_lock:
            self._next_id += 1
            mid = self._next_id
            q: queue.Queue[dict[str, Any]] = queue.Queue(1)
            self._replies[mid] = q
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        try:
            reply = q.get(timeout=timeout)
        except queue.Empty:
            raise DevToolsError(f"{method}: no answer in {timeout} s") from None
        finally:
            self._replies.pop(mid, None)
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    def open(self, url: str) -> Page:
        """A new tab showing ``url`` (bindings may be added before it loads: see Page)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        page.send("Page.enable")
        page.send("Runtime.enable")
        page.url = url
        return page

    def close(self) -> None:
        with contextlib.suppress(DevToolsError, OSError):
            self.send("Browser.close", timeout=5)
        if not self._exited(10):
            os.killpg(self.pid, signal.SIGKILL)
            self._exited(10)
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _exited(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return True
            time.sleep(0.05)
        return False

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session
        self.url = ""

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def go(self, url: str | None = None) -> None:
        self.send("Page.navigate", {"url": url or self.url})

    def evaluate(self, expr: str) -> Any:
        r = self.send(
            "Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in r:
            raise DevToolsError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expr: str, timeout: float = 20.0) -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = self.evaluate(expr)
            except DevToolsError:
                last = None  # the page is between documents
            if last:
                return last
            time.sleep(0.05)
        raise TimeoutError(f"{expr!r} still {last!r} after {timeout} s")

    def screenshot(self, transparent: bool = False) -> bytes:
        """A PNG of the viewport; ``transparent``: the page's own transparency kept."""
        import base64

        if transparent:
            self.send(
                "Emulation.setDefaultBackgroundColorOverride",
                {"color": {"r": 0, "g": 0, "b": 0, "a": 0}},
            )
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        return base64.b64decode(data)
