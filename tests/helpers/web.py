"""For tests of the browser page: subtitle events masked by the real rule, and a raw SSE client."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Sequence
from typing import Any

from subtitler.display.masking import shown_by_k
from subtitler.pipeline.events import SubtitleEvent


def subtitle(
    seg: int,
    source: str,
    translation: str,
    final: bool,
    lang: str = "",
    target: int = 0,
    side: str = "",
) -> SubtitleEvent:
    """An event as the translator makes it, with words as tokens and the real mask-k rule
    (``lang``, ``target``: which target language it is in, 0 the main one; ``side``: who
    spoke it, "" with one input)."""
    words: Sequence[str] = translation.split(" ") if translation else []
    pieces = [(w if i == 0 else f" {w}").encode() for i, w in enumerate(words)]
    shown = shown_by_k(pieces, final)
    return SubtitleEvent(
        seg, source, translation, shown, final, 0.0, 0.0, lang=lang, target=target, side=side
    )


def http_get(
    port: int,
    path: str,
    host: str | None = None,
    timeout: float = 10.0,
    address: str = "127.0.0.1",
) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP/1.1 GET with a chosen Host header, to ``address``: (status, headers,
    body)."""
    with socket.create_connection((address, port), timeout=timeout) as s:
        h = host if host is not None else f"127.0.0.1:{port}"
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {h}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


class EventStream:
    """An open ``/events`` connection read by hand, as a browser would (or would not)."""

    def __init__(
        self, port: int, query: str = "", rcvbuf: int | None = None, timeout: float = 10.0
    ) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:  # before connect: it bounds the window the server may fill
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        req = f"GET /events{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        self.sock.sendall(req.encode())
        self.file = self.sock.makefile("rb")
        self.status = 0
        self.headers: dict[str, str] = {}

    def open(self) -> int:
        """Read the status line and headers; the status."""
        self.status = int(self.file.readline().split()[1])
        while (line := self.file.readline().decode("latin-1").strip()) != "":
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        return self.status

    def next(self, event: str = "lines") -> Any:
        """The data of the next event named ``event`` (others are skipped), parsed as JSON."""
        name, data = "message", ""
        while True:
            raw = self.file.readline()
            if not raw:
                raise EOFError("the stream ended")
            line = raw.decode("utf-8").rstrip("\n")
            if line == "":
                if data and name == event:
                    return json.loads(data)
                name, data = "message", ""
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]

    def texts(self) -> list[str]:
        return [ln["text"] for ln in self.next()["lines"]]

    def close(self) -> None:
        # Shut down first: a thread blocked reading the file holds its lock, and close waits.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.file.close()
        self.sock.close()
