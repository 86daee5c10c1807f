"""The page server: the subtitles as a web page and a live Server-Sent Events stream.

``publish`` is called from the pipeline's threads and never waits on the network: it updates
the shown lines and puts one message on each page's bounded queue; a page whose queue is full
(it does not read) is dropped, and its browser reconnects by itself. Every message is the whole
display (the last lines), so a page that reconnects or misses one is right again at the next.
The standard library's ThreadingHTTPServer is enough here: one thread per open page.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import io
import json
import logging
import queue
import select
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from subtitler import sides
from subtitler.config import DisplayConfig, WebConfig
from subtitler.display.lines import ShownLine, ShownLines
from subtitler.pipeline.events import Event, SubtitleEvent
from subtitler.web.access import lan_address, loopback_host, token_ok

log = logging.getLogger(__name__)

QUEUE_SIZE = 32  # messages waiting for one page; a page this far behind is dropped
MAX_PAGES = 32  # open event streams; more are refused (503) until some close
PING_S = 15.0  # a message at least this often, so a page notices a dead connection
GONE_CHECK_S = 1.0  # how often a quiet stream looks whether its page has closed it
IO_TIMEOUT_S = 10.0  # a request that does not arrive (or a page that stops reading) ends
# Connections open at once, pages included; one more is closed as it comes. Each holds a
# thread and a file descriptor: without a bound a device on the network (no key needed to
# connect) ran the app out of files with a thousand half-sent requests.
MAX_CONNECTIONS = MAX_PAGES + 32
# Lines of each side sent to the page (it shows each side's last DisplayConfig.lines, or ?lines=)
SEND_LINES = 6
RETRY_MS = 1000  # the browser's reconnect delay after the connection drops
SNDBUF = 64 * 1024  # kernel buffer per stream: with the queue, how far a page may lag
PING = b"event: ping\ndata: \n\n"

_SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the token is in the URL
    # No other site may show the page in a frame (to overlay it, or read what it shows);
    # frame-ancestors says the same to browsers that read CSP.
    "X-Frame-Options": "DENY",
}
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
)


class WebServerError(Exception):
    """The server could not start; the message is one line for the UI."""


def _sse(event: str, data: bytes) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"


class _Page:
    """One open event stream."""

    def __init__(self, conn: socket.socket) -> None:
        self.queue: queue.Queue[bytes | None] = queue.Queue(QUEUE_SIZE)
        self.conn = conn

    def cut(self) -> None:
        # Wakes its thread whether it waits on the queue (None) or in a blocked send (the
        # socket shut down under it raises there).
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)
        with contextlib.suppress(OSError):
            self.conn.shutdown(socket.SHUT_RDWR)


def _line(ln: ShownLine) -> dict[str, Any]:
    """One line as the page reads it."""
    out: dict[str, Any] = {
        "id": ln.segment_id,
        "text": ln.text,
        "source": ln.source,
        "final": ln.final,
        "lang": ln.lang,
        # the extra target languages' text (issue 19), in their order
        "more": [{"lang": lang, "text": text} for lang, text in ln.extra],
    }
    if ln.side:  # two inputs (issue 31): who spoke, and the name the page shows with it
        out["side"], out["who"] = ln.side, sides.label(ln.side)
    return out


class _Hub:
    """The shown lines and the open pages; every method is safe from any thread."""

    def __init__(self, display: DisplayConfig, lines: ShownLines | None = None) -> None:
        self._lock = threading.Lock()
        self._lines = lines if lines is not None else ShownLines()
        self._display = display
        self._pages: set[_Page] = set()
        self._closed = False  # its server stopped: no page attaches any more
        self._data = self._encode()
        self.dropped = 0  # pages dropped for not reading

    def _encode(self) -> bytes:
        d = self._display
        lines = self._lines.lines(d.mask_k, SEND_LINES)
        snap: dict[str, Any] = {
            "lines": [_line(ln) for ln in lines],
            "style": {
                "lines": d.lines,
                "bilingual": d.bilingual,
                "color": d.text_color,
                "outline": d.outline,
                "font_size": d.font_size,
                "font_family": d.font_family,
            },
        }
        # json.dumps escapes newlines inside strings: the data is one SSE line.
        return json.dumps(snap, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @property
    def data(self) -> bytes:
        return self._data

    def change(self, fn: Callable[[], None]) -> None:
        with self._lock:
            fn()
            data = self._encode()
            if data == self._data:
                return  # e.g. only hidden tokens of the open line changed
            self._data = data
            msg = _sse("lines", data)
            for page in list(self._pages):
                try:
                    page.queue.put_nowait(msg)
                except queue.Full:
                    log.info("a subtitle page stopped reading; dropped (it reconnects itself)")
                    self.dropped += 1
                    self._pages.discard(page)
                    page.cut()

    def publish(self, ev: Event) -> None:
        if isinstance(ev, SubtitleEvent):
            self.change(lambda: self._lines.add(ev))

    def set_display(self, display: DisplayConfig) -> None:
        def apply() -> None:
            self._display = display

        self.change(apply)

    def clear(self) -> None:
        self.change(self._lines.clear)

    def lines(self) -> ShownLines:
        """A copy of the shown lines (for the server that takes over from this one)."""
        with self._lock:
            return copy.deepcopy(self._lines)

    def attach(self, conn: socket.socket) -> _Page | None:
        """A new stream, starting with the current lines; None when too many are open or the
        server has stopped (a request that was still arriving then: its page reconnects to
        the server that took over, not to stale lines)."""
        with self._lock:
            if self._closed or len(self._pages) >= MAX_PAGES:
                return None
            page = _Page(conn)
            page.queue.put_nowait(_sse("lines", self._data))
            self._pages.add(page)
            return page

    def detach(self, page: _Page) -> None:
        with self._lock:
            self._pages.discard(page)

    def close_all(self) -> None:
        with self._lock:
            self._closed = True
            pages, self._pages = self._pages, set()
        for page in pages:
            page.cut()

    @property
    def pages(self) -> int:
        with self._lock:
            return len(self._pages)

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed


@dataclass(frozen=True)
class _Access:
    network: bool
    token: str

    def allows(self, host: str | None, token: str | None) -> bool:
        if self.network:
            return token_ok(token, self.token)
        return loopback_host(host)


class _Slots:
    """The connections being served, counted across the sockets of one page server (its IPv4
    and IPv6 loopback sockets share the bound)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = 0

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    def take(self) -> bool:
        """One more connection, if the bound allows it."""
        with self._lock:
            if self._open >= MAX_CONNECTIONS:
                return False
            self._open += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self._open -= 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # On Windows SO_REUSEADDR lets a second server bind a port already in use (silently);
    # elsewhere it only lets a restart bind while old connections linger in TIME_WAIT.
    allow_reuse_address = sys.platform != "win32"
    request_queue_size = 16

    def __init__(
        self,
        address: tuple[str, int],
        hub: _Hub,
        access: _Access,
        page_html: bytes,
        slots: _Slots,
    ) -> None:
        self.hub = hub
        self.access = access
        self.page_html = page_html
        self.slots = slots
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.take():
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: it is not served
            self.slots.give_back()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.give_back()

    def server_bind(self) -> None:
        host = self.server_address[0]
        if self.address_family == socket.AF_INET6:
            # "::" takes IPv4 as well (dual stack; the OS's default differs: BSDs and Windows
            # take IPv6 only); "::1" is this computer's IPv6 loopback alone.
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, int(host != "::"))
        # HTTPServer.server_bind looks up the host's FQDN, a DNS query that can stall for
        # seconds without a network; the name is not used here.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("web page request from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when it closes
    timeout = IO_TIMEOUT_S
    disable_nagle_algorithm = True  # small event messages go out at once

    def setup(self) -> None:
        super().setup()
        # The request line and headers must arrive within IO_TIMEOUT_S in all (the socket's
        # timeout bounds each read only: a header line every few seconds held a connection
        # for good).
        self.rfile.close()  # (the socket's own reader: the socket stays open)
        self.rfile = io.BufferedReader(_Deadline(self.connection, IO_TIMEOUT_S))

    def parse_request(self) -> bool:
        ok = super().parse_request()  # (it reads the headers)
        self.connection.settimeout(IO_TIMEOUT_S)  # each write's, as before the deadline
        return ok

    def version_string(self) -> str:
        return "subtitler"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("web %s: " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        token = parse_qs(url.query).get("token", [None])[0]
        if not self.server.access.allows(self.headers.get("Host"), token):
            self._reply(403, "text/plain; charset=utf-8", b"forbidden: open the page's full URL")
            return
        if url.path in ("/", "/index.html"):
            self._reply(200, "text/html; charset=utf-8", self.server.page_html)
        elif url.path == "/events":
            self._stream()
        elif url.path == "/lines":
            self._reply(200, "application/json", self.server.hub.data)
        else:
            self._reply(404, "text/plain; charset=utf-8", b"not found")

    def _headers(self, code: int, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        if ctype.startswith("text/html"):
            self.send_header("Content-Security-Policy", _CSP)

    def _reply(self, code: int, ctype: str, body: bytes) -> None:
        self._headers(code, ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self) -> None:
        hub = self.server.hub
        page = hub.attach(self.connection)
        if page is None and hub.closed:
            return  # stopped meanwhile: the page reconnects (to the server after it, if any)
        if page is None:
            self._reply(503, "text/plain; charset=utf-8", b"too many pages open")
            return
        try:
            # Without a bound Linux grows a loopback send buffer to megabytes: a page that
            # stopped reading would hold that much (and be noticed that late).
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
            self._headers(200, "text/event-stream; charset=utf-8")
            self.end_headers()
            self.wfile.write(f"retry: {RETRY_MS}\n\n".encode())
            sent = time.monotonic()
            while True:
                try:
                    msg = page.queue.get(timeout=GONE_CHECK_S)
                except queue.Empty:
                    if _closed_by_peer(self.connection):
                        break  # its place is free at once (with MAX_PAGES open, for a page
                        # that waits for one), not at the next write that fails
                    if time.monotonic() - sent < PING_S:
                        continue
                    msg = PING
                if msg is None:
                    break
                self.wfile.write(msg)
                sent = time.monotonic()
        except OSError:
            pass  # the page went away, or was dropped for not reading
        finally:
            hub.detach(page)


def _closed_by_peer(conn: socket.socket) -> bool:
    """Has the page closed its end? (It sends nothing after its request: anything readable
    is the end, or an error.)"""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class _Deadline(io.RawIOBase):
    """A socket's reads, all of them within ``seconds`` from now (TimeoutError after)."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self._sock = sock
        self._until = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        left = self._until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(left)
        return self._sock.recv_into(buf)


def _page_html() -> bytes:
    try:
        return resources.files("subtitler.web").joinpath("page.html").read_bytes()
    except OSError as e:
        raise WebServerError(f"Browser subtitles: the page is missing ({e})") from e


def _in_use(e: OSError) -> bool:
    return e.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1))


class WebSubtitles:
    """Serves the page while started; ``publish`` takes the pipeline's events (any thread)."""

    def __init__(
        self, cfg: WebConfig, display: DisplayConfig, after: WebSubtitles | None = None
    ) -> None:
        """``after``: the server this one replaces (new settings); its lines are shown at
        once, not only once someone speaks again."""
        self.cfg = cfg
        self._hub: _Hub = _Hub(display, after._hub.lines() if after is not None else None)
        self._servers: list[_Server] = []  # its sockets: IPv4 and IPv6 (see _listen)
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Listen on this computer's loopback addresses (share "local") or every interface
        (share "network", which needs a token), IPv6 too where the OS has it; raises
        WebServerError with a one-line reason."""
        network = self.cfg.share == "network"
        if self.cfg.share not in ("local", "network"):
            raise WebServerError(f"Browser subtitles are off (share is {self.cfg.share!r})")
        if network and not self.cfg.token:
            raise WebServerError("Browser subtitles on the network need an access token")
        access = _Access(network, self.cfg.token)
        try:
            servers = self._listen(network, access, _page_html())
        except OSError as e:
            if _in_use(e):
                raise WebServerError(
                    f"Browser subtitles: port {self.cfg.port} is in use by another program; "
                    "choose another port in Settings → Browser"
                ) from e
            raise WebServerError(
                f"Browser subtitles could not start on port {self.cfg.port}: {e.strerror or e}"
            ) from e
        self._servers = servers
        for server in servers:
            thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="web-subtitles"
            )
            thread.daemon = True
            thread.start()
            self._threads.append(thread)
        log.info("browser subtitles at %s", self.url)

    def _listen(self, network: bool, access: _Access, page: bytes) -> list[_Server]:
        """The sockets of the page: on the network one for IPv6 and IPv4 together ("::"),
        this computer only on 127.0.0.1 and ::1; IPv4 alone where the OS has no IPv6. Raises
        the OSError of the IPv4 socket (a port in use)."""
        slots = _Slots()

        def server(host: str, port: int) -> _Server:
            return _Server((host, port), self._hub, access, page, slots)

        if network:
            try:
                return [server("::", self.cfg.port)]
            except OSError as e:
                if _in_use(e):
                    raise
                log.info("browser subtitles: no IPv6 here (%s); IPv4 only", e.strerror or e)
            return [server("0.0.0.0", self.cfg.port)]
        first = server("127.0.0.1", self.cfg.port)
        try:
            # (a browser may try localhost's ::1 first: it reaches the page there too)
            return [first, server("::1", first.server_port)]
        except OSError as e:
            log.info("browser subtitles: not on ::1 (%s); 127.0.0.1 only", e.strerror or e)
            return [first]

    def stop(self) -> None:
        servers, self._servers = self._servers, []
        if not servers:
            return
        for server in servers:
            server.shutdown()  # the accept loops
        self._hub.close_all()  # the open streams
        for server in servers:
            server.server_close()
        threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout=2.0)
        log.info("browser subtitles stopped")

    @property
    def running(self) -> bool:
        return bool(self._servers)

    @property
    def port(self) -> int:
        """The port listened on (the configured one; a test may ask for 0 = any free one)."""
        return self._servers[0].server_port if self._servers else self.cfg.port

    @property
    def url(self) -> str:
        """The page's address as a user opens it (with the token on the network)."""
        if self.cfg.share == "network":
            query = "?" + urlencode({"token": self.cfg.token})
            return f"http://{lan_address()}:{self.port}/{query}"
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pages(self) -> int:
        """Pages with an open event stream."""
        return self._hub.pages

    @property
    def dropped(self) -> int:
        """Pages dropped so far because they stopped reading."""
        return self._hub.dropped

    @property
    def connections(self) -> int:
        """Connections being served now (pages and requests)."""
        return self._servers[0].slots.open if self._servers else 0

    def publish(self, ev: Event) -> None:
        self._hub.publish(ev)

    def set_display(self, display: DisplayConfig) -> None:
        """New mask-k, lines or looks: sent to every page at once."""
        self._hub.set_display(display)

    def clear(self) -> None:
        self._hub.clear()
