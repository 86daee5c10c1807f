"""What a translation server may send, whatever it does: an answer of any size or shape is
read up to a bound (one 10 MB token was taken as the translation, and a line without an end
filled 9 GB of memory)."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from subtitler.mt import completions
from subtitler.mt.completions import CompletionsClient, ServerError, ServerSettings
from tests.helpers.bounded import run_bounded

Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], str]]:
    """A server on 127.0.0.1 whose every POST is answered by the test's function."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with contextlib.suppress(OSError):  # the client hung up: it read what it wanted
                    answer(self)

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _stream_head(h: http.server.BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.end_headers()


def _event(text: str, finish: str | None = None) -> bytes:
    choice = {"text": text, "index": 0, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


def test_a_token_of_megabytes_is_cut_to_what_the_budget_allows(serve: Any) -> None:
    def huge_token(h: http.server.BaseHTTPRequestHandler) -> None:
        _stream_head(h)
        h.wfile.write(_event("Hallo "))
        h.wfile.write(_event("x" * 500_000))  # half a megabyte "token", line after line
        h.wfile.write(_event("y" * 500_000, "stop"))

    client = CompletionsClient(ServerSettings(serve(huge_token), timeout_s=10.0))
    try:
        got = run_bounded(lambda: client.generate("Hello", 12))
    finally:
        client.close()
    assert got.finish == "length"
    assert got.text == "Hallo " + "x" * (12 * completions.MAX_TOKEN_CHARS - len("Hallo "))


def test_a_line_without_an_end_is_read_up_to_a_bound(serve: Any) -> None:
    sent: list[int] = []

    def endless_line(h: http.server.BaseHTTPRequestHandler) -> None:
        _stream_head(h)
        h.wfile.write(b'data: {"choices": [{"text": "')
        for _ in range(64):  # 64 MB, no line end
            h.wfile.write(b"z" * (1 << 20))
            sent.append(1)

    client = CompletionsClient(ServerSettings(serve(endless_line), timeout_s=10.0))
    try:
        t0 = time.monotonic()
        with pytest.raises(ServerError) as e:
            run_bounded(lambda: client.generate("Hello", 12))
    finally:
        client.close()
    assert str(e.value).endswith("streamed a line of more than 1 MB: not a model's answer")
    assert time.monotonic() - t0 < 5.0
    assert len(sent) < 64  # it hung up instead of reading on


def test_an_answer_of_too_many_megabytes_is_refused(serve: Any) -> None:
    def huge_answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        h.wfile.write(b'{"choices": [{"text": "' + b"x" * (completions.MAX_BODY_BYTES + 10))
        h.wfile.write(b'"}]}')

    client = CompletionsClient(ServerSettings(serve(huge_answer), timeout_s=10.0))
    try:
        with pytest.raises(ServerError) as e:
            run_bounded(lambda: client.completion("Hello", 1, {"echo": True}))
    finally:
        client.close()
    assert str(e.value).endswith(
        "/v1/completions with more than 32 MB: not an answer of this app's requests"
    )


def test_a_page_where_events_were_asked_for_is_said_to_be_no_json(serve: Any) -> None:
    """A proxy's HTML page answered to a streamed request was said as "ended the stream
    before the completion finished"."""

    def page(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        h.wfile.write(b"<html><body>upstream connect error</body></html>\n")

    client = CompletionsClient(ServerSettings(serve(page), timeout_s=10.0))
    try:
        with pytest.raises(ServerError) as e:
            run_bounded(lambda: client.generate("Hello", 12))
    finally:
        client.close()
    assert e.value.transient
    assert str(e.value).endswith(
        "answered something that is not JSON ('<html><body>upstream connect error</body></html>')"
    )
