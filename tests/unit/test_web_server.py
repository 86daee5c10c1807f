"""The browser page's server, over real sockets on 127.0.0.1: what it shows, who may see it, and
that no page (gone, slow, garbage, too many) can hold up the pipeline's thread."""

from __future__ import annotations

import errno
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from subtitler.config import AppConfig, DisplayConfig, WebConfig
from subtitler.display.lines import ShownLines
from subtitler.pipeline.events import StatusEvent
from subtitler.pipeline.fanout import Fanout
from subtitler.settings_store import validate
from subtitler.web import server as web_server
from subtitler.web.access import host_name, loopback_host, new_token, token_ok
from subtitler.web.server import WebServerError, WebSubtitles
from tests.helpers.web import EventStream, http_get, subtitle


def wait_until(cond, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


@pytest.fixture
def local() -> Iterator[WebSubtitles]:
    s = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=2, lines=2))
    s.start()
    yield s
    s.stop()


TOKEN = "k3y-for-tests_0123456789"


@pytest.fixture
def network() -> Iterator[WebSubtitles]:
    s = WebSubtitles(WebConfig(share="network", port=0, token=TOKEN), DisplayConfig())
    s.start()
    yield s
    s.stop()


# -- what is shown ---------------------------------------------------------------------------


def test_shown_lines_follow_the_overlay_rule() -> None:
    lines = ShownLines()
    lines.add(subtitle(1, "one", "eins zwei drei vier", False))
    assert [ln.text for ln in lines.lines(k=2, n=2)] == ["eins zwei"]
    assert [ln.text for ln in lines.lines(k=0, n=2)] == ["eins zwei drei vier"]
    lines.add(subtitle(1, "one.", "eins zwei drei vier fünf.", True))  # final: in full
    lines.add(subtitle(2, "two", "", False))  # not translated yet: the source
    lines.add(subtitle(3, "x", "a b", False))  # a newer open line replaces it
    assert [(ln.text, ln.final) for ln in lines.lines(k=1, n=2)] == [
        ("eins zwei drei vier fünf.", True),
        ("a", False),
    ]
    lines.add(subtitle(3, "x y", "", False))
    # Not translated yet: its source, the last word hidden as the translation's would be
    # (the recogniser may still change it, or it may be cut: issue 27).
    assert lines.lines(k=1, n=1)[0].text == "x" and lines.lines(k=0, n=1)[0].text == "x y"
    lines.add(subtitle(3, "x y.", "", True))  # final without translation: the source
    assert [ln.text for ln in lines.lines(k=5, n=3)] == ["eins zwei drei vier fünf.", "x y."]
    lines.clear()
    assert lines.lines(k=0, n=6) == []


def test_stream_sends_the_masked_lines_then_each_change(local: WebSubtitles) -> None:
    page = EventStream(local.port)
    assert page.open() == 200
    assert page.headers["content-type"] == "text/event-stream; charset=utf-8"
    first = page.next()
    assert first["lines"] == []  # opened before any subtitle: empty, and waiting
    assert first["style"]["lines"] == 2 and first["style"]["outline"] is True
    local.publish(StatusEvent("running"))  # not a subtitle: nothing is sent
    local.publish(subtitle(1, "good morning", "guten Morgen zusammen heute", False))
    assert page.texts() == ["guten Morgen"]  # mask_k = 2
    local.publish(subtitle(1, "good morning all", "guten Morgen zusammen heute alle", False))
    assert page.texts() == ["guten Morgen zusammen"]
    local.publish(subtitle(1, "good morning all.", "Guten Morgen allerseits.", True))
    local.publish(subtitle(2, "how", "wie", False))  # one word, k = 2: nothing shown yet
    assert page.texts() == ["Guten Morgen allerseits."]
    assert [{k: v for k, v in ln.items() if k in KEYS} for ln in page.next()["lines"]] == [
        {"id": 1, "text": "Guten Morgen allerseits.", "source": "good morning all.", "final": True},
        {"id": 2, "text": "", "source": "", "final": False},  # its one word hidden too
    ]
    page.close()


KEYS = ("id", "text", "source", "final")


def test_shown_lines_carry_the_extra_targets_under_the_same_rule() -> None:
    lines = ShownLines()
    lines.add(subtitle(1, "one", "eins zwei drei", False, "de"))
    lines.add(subtitle(1, "one", "ichi ni san", False, "ja", 1))
    lines.add(subtitle(1, "one", "un deux trois", False, "fr", 2))
    (ln,) = lines.lines(k=1, n=2)
    assert (ln.text, ln.lang, ln.extra) == (
        "eins zwei",
        "de",
        (("ja", "ichi ni"), ("fr", "un deux")),
    )
    lines.add(subtitle(1, "one.", "eins zwei drei vier.", True, "de"))
    lines.add(subtitle(1, "one.", "ichi ni san shi.", True, "ja", 1))
    lines.add(subtitle(2, "two", "zwei", False, "de"))  # its extra targets come later
    lines.add(subtitle(1, "one.", "", True, "fr", 2))  # fr failed: nothing shown for it
    assert [(ln.text, ln.extra) for ln in lines.lines(k=0, n=2)] == [
        ("eins zwei drei vier.", (("ja", "ichi ni san shi."),)),
        ("zwei", ()),
    ]
    lines.add(subtitle(2, "two", "ni", False, "ja", 1))
    assert lines.lines(k=0, n=1)[0].extra == (("ja", "ni"),)
    lines.clear()
    lines.add(subtitle(1, "x", "y", True, "de"))
    assert lines.lines(k=0, n=2)[0].extra == ()  # a new run: the old extras are gone


def test_the_page_gets_every_target_language(local: WebSubtitles) -> None:
    local.publish(subtitle(1, "yes.", "ja.", True, "de"))
    local.publish(subtitle(1, "yes.", "はい。", True, "ja", 1))
    snap = json.loads(http_get(local.port, "/lines")[2])
    assert snap["lines"] == [
        {
            "id": 1,
            "text": "ja.",
            "source": "yes.",
            "final": True,
            "lang": "de",
            "more": [{"lang": "ja", "text": "はい。"}],
        }
    ]


def test_the_page_gets_who_spoke(local: WebSubtitles) -> None:
    # Issue 31: with two inputs each line carries its side and the name to show; a line heard
    # on the only input is sent exactly as before (no side, no name).
    local.publish(subtitle(1, "Hallo.", "Hello.", True, "en", side="others"))
    local.publish(subtitle(2, "Yes", "Ja", False, "de", side="you"))
    local.publish(subtitle(3, "Eh.", "Äh.", True, "de"))
    snap = json.loads(http_get(local.port, "/lines")[2])
    assert [(ln["id"], ln.get("side"), ln.get("who")) for ln in snap["lines"]] == [
        (1, "others", "Others"),
        (3, None, None),
        (2, "you", "You"),
    ]
    assert snap["lines"][1] == {
        "id": 3, "text": "Äh.", "source": "Eh.", "final": True, "lang": "de", "more": []
    }  # fmt: skip


def test_a_change_only_to_hidden_words_sends_nothing(local: WebSubtitles) -> None:
    page = EventStream(local.port)
    page.open()
    page.next()
    local.publish(subtitle(1, "a", "eins zwei drei vier", False))
    assert page.texts() == ["eins zwei"]
    local.publish(subtitle(1, "a", "eins zwei neun zehn", False))  # same shown text
    local.publish(subtitle(1, "a", "eins zwei drei vier fünf", False))
    assert page.texts() == ["eins zwei drei"]  # the next message is this one
    page.close()


def test_new_display_settings_reach_open_pages(local: WebSubtitles) -> None:
    page = EventStream(local.port)
    page.open()
    page.next()
    local.publish(subtitle(1, "a", "eins zwei drei vier", False))
    assert page.texts() == ["eins zwei"]
    local.set_display(DisplayConfig(mask_k=0, lines=3, bilingual=True, text_color="#ffee00"))
    snap = page.next()
    assert [ln["text"] for ln in snap["lines"]] == ["eins zwei drei vier"]
    assert snap["style"]["lines"] == 3 and snap["style"]["bilingual"] is True
    assert snap["style"]["color"] == "#ffee00"
    local.clear()  # a new run
    assert page.next()["lines"] == []
    page.close()


def test_page_and_snapshot_are_served(local: WebSubtitles) -> None:
    local.publish(subtitle(4, "yes", "ja", True))
    status, headers, body = http_get(local.port, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b'<div id="lines"' in body and b"EventSource" in body
    assert "connect-src 'self'" in headers["content-security-policy"]
    # No other site may frame it (clickjacking; a page that reads what it shows).
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer" and headers["cache-control"] == "no-store"
    status, headers, body = http_get(local.port, "/lines")
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body)["lines"] == [
        {"id": 4, "text": "ja", "source": "yes", "final": True, "lang": "", "more": []}
    ]
    assert http_get(local.port, "/nothing-here")[0] == 404


# -- who may see it --------------------------------------------------------------------------


def test_loopback_only_by_default(local: WebSubtitles) -> None:
    assert WebConfig().share == "off"  # nothing is served unless the user turns it on
    assert str(local._servers[0].server_address[0]) == "127.0.0.1"
    assert local.url == f"http://127.0.0.1:{local.port}/"
    assert http_get(local.port, "/", host=f"localhost:{local.port}")[0] == 200
    assert http_get(local.port, "/", host=f"[::1]:{local.port}")[0] == 200
    # A site that points its own name at 127.0.0.1 (DNS rebinding) is refused.
    assert http_get(local.port, "/lines", host=f"evil.example:{local.port}")[0] == 403
    assert http_get(local.port, "/events", host="evil.example")[0] == 403
    assert http_get(local.port, "/", host="")[0] == 403
    # A Host with user information, or any other shape no browser sends for this page.
    for host in (
        f"127.0.0.1:{local.port}@evil.example",
        "127.0.0.1@evil.example",
        f"evil.example@127.0.0.1:{local.port}",
        "127.0.0.1:80:81",
        "127.0.0.1:x",
        "127.0.0.1 evil.example",
        "[::1]evil",
    ):
        assert http_get(local.port, "/", host=host)[0] == 403, host


def test_network_needs_the_token(network: WebSubtitles) -> None:
    assert [str(s.server_address[0]) for s in network._servers] in (["::"], ["0.0.0.0"])
    assert network.url.endswith(f":{network.port}/?token={TOKEN}")
    assert not network.url.startswith("http://0.0.0.0")
    for path in ("/", "/lines", "/events"):
        assert http_get(network.port, path)[0] == 403, path  # no token
        assert http_get(network.port, f"{path}?token=wrong")[0] == 403, path
        assert http_get(network.port, f"{path}?token={TOKEN[:-1]}")[0] == 403, path
        assert http_get(network.port, f"{path}?token={TOKEN}x")[0] == 403, path
        assert http_get(network.port, f"{path}?token=")[0] == 403, path
    assert http_get(network.port, f"/?token={TOKEN}")[0] == 200
    assert http_get(network.port, f"/lines?token={TOKEN}", host="any.name")[0] == 200
    page = EventStream(network.port, f"?token={TOKEN}")
    assert page.open() == 200 and page.next()["lines"] == []
    page.close()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")


@needs_ipv6
def test_a_page_over_ipv6_is_served(local: WebSubtitles, network: WebSubtitles) -> None:
    """The server listened on IPv4 only: a device reaching the computer over IPv6, or a
    browser whose `localhost` is ::1 first, could not connect."""
    assert http_get(local.port, "/", host=f"localhost:{local.port}", address="::1")[0] == 200
    assert http_get(local.port, "/", host=f"[::1]:{local.port}", address="::1")[0] == 200
    assert http_get(local.port, "/", host="evil.example", address="::1")[0] == 403
    for address in ("::1", "127.0.0.1"):  # one socket, both families (dual stack)
        assert http_get(network.port, f"/?token={TOKEN}", address=address)[0] == 200, address
        assert http_get(network.port, "/", address=address)[0] == 403, address


@needs_ipv6
def test_this_computer_only_stays_on_its_loopback_addresses(local: WebSubtitles) -> None:
    bound = sorted(str(s.server_address[0]) for s in local._servers)
    assert bound == ["127.0.0.1", "::1"]


@needs_ipv6
def test_the_connection_bound_counts_both_families(
    local: WebSubtitles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_server, "MAX_CONNECTIONS", 4)
    idle = [
        socket.create_connection((address, local.port), timeout=10)
        for address in ("127.0.0.1", "::1", "127.0.0.1", "::1")
    ]
    for s in idle:
        s.sendall(b"GET /lines HTTP/1.1\r\n")
    wait_until(lambda: local.connections == 4)
    for address in ("::1", "127.0.0.1"):
        with socket.create_connection((address, local.port), timeout=10) as extra:
            assert extra.recv(100) == b"", address  # closed at once, nothing served
    for s in idle:
        s.sendall(b"Host: localhost\r\n\r\n")
        assert s.recv(12).startswith(b"HTTP/1.0 200")
        s.close()
    wait_until(lambda: local.connections == 0)


def test_without_ipv6_the_page_is_served_over_ipv4(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the OS has no IPv6 the page is served as before, on IPv4."""
    real = socket.socket

    def no_ipv6(family: int = socket.AF_INET, *args: object, **kw: object) -> socket.socket:
        if family == socket.AF_INET6:
            raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")
        return real(family, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "socket", no_ipv6)
    for cfg in (WebConfig(share="network", port=0, token=TOKEN), WebConfig(share="local", port=0)):
        s = WebSubtitles(cfg, DisplayConfig())
        s.start()
        try:
            assert [str(x.server_address[0]) for x in s._servers] == [
                "0.0.0.0" if cfg.share == "network" else "127.0.0.1"
            ]
            assert http_get(s.port, f"/?token={TOKEN}")[0] == 200
        finally:
            s.stop()


def test_token_rules() -> None:
    a, b = new_token(), new_token()
    assert a != b and len(a) >= 22 and a.replace("-", "").replace("_", "").isalnum()
    assert token_ok(a, a) and not token_ok(b, a) and not token_ok(None, a)
    assert not token_ok("", "")  # an empty token admits no one
    assert not token_ok("ü", a)  # any text is compared, none raises
    assert host_name("LocalHost:8642") == "localhost" and host_name("[::1]:80") == "[::1]"
    assert host_name("127.0.0.1") == "127.0.0.1" and host_name(None) == ""
    assert not loopback_host("127.0.0.1.evil.example:80") and not loopback_host("[::1")
    assert host_name("127.0.0.1:8642@evil.example") == "" and host_name("a b") == ""


def test_settings_file_checks_the_page_settings() -> None:
    assert validate(AppConfig()) == []
    errs = validate(AppConfig(web=WebConfig(share="everyone", port=80)))
    assert len(errs) == 2 and "one of off, local, network" in errs[0] and "1024..65535" in errs[1]


def test_network_without_a_token_does_not_start() -> None:
    s = WebSubtitles(WebConfig(share="network", port=0, token=""), DisplayConfig())
    with pytest.raises(WebServerError, match="access token"):
        s.start()
    assert not s.running


def test_port_in_use_is_one_clear_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        s = WebSubtitles(WebConfig(share="local", port=port), DisplayConfig())
        with pytest.raises(WebServerError) as e:
            s.start()
    msg = str(e.value)
    assert f"port {port} is in use" in msg and "\n" not in msg
    assert not s.running


def test_restart_on_the_same_port_right_after_stop(local: WebSubtitles) -> None:
    page = EventStream(local.port)
    page.open()
    page.next()
    port = local.port
    local.stop()
    with pytest.raises(EOFError):  # the open stream ends with the server
        page.next()
    page.close()
    again = WebSubtitles(WebConfig(share="local", port=port), DisplayConfig())
    again.start()  # the page reconnects to the same address
    try:
        assert http_get(port, "/lines")[0] == 200
    finally:
        again.stop()


# -- no page can hold up the pipeline ----------------------------------------------------------


def test_a_page_that_stops_reading_is_dropped_and_publish_never_waits(
    local: WebSubtitles,
) -> None:
    slow = EventStream(local.port, rcvbuf=4096)  # never read after the headers
    slow.open()
    good = EventStream(local.port)
    good.open()
    good.next()
    wait_until(lambda: local.pages == 2)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(_drain(good)), daemon=True)
    reader.start()
    long_text = " ".join(f"Wort{i:04d}" for i in range(400))  # ~4 kB per message
    done = threading.Event()

    def pipeline_thread() -> None:
        for i in range(300):  # ~1.2 MB: far more than the slow page's buffers hold
            local.publish(subtitle(1, "s", f"{i} {long_text} end", False))
            time.sleep(0.004)  # a brisk pipeline, but one a reading page keeps up with
        local.publish(subtitle(1, "s.", "zuletzt.", True))
        done.set()

    threading.Thread(target=pipeline_thread, daemon=True).start()
    assert done.wait(30), "publish waited on a page that does not read"
    wait_until(lambda: local.dropped == 1 and local.pages == 1)
    wait_until(lambda: "zuletzt." in seen)  # the reading page got everything, to the end
    slow.close()
    good.close()


def _drain(page: EventStream) -> Iterator[str]:
    try:
        while True:
            yield from page.texts()
    except (EOFError, OSError):
        return


def test_a_page_that_goes_away_is_forgotten(local: WebSubtitles) -> None:
    page = EventStream(local.port)
    page.open()
    page.next()
    wait_until(lambda: local.pages == 1)
    page.close()
    i = 0

    def gone() -> bool:
        nonlocal i
        i += 1  # the server notices when a write to the closed connection fails
        local.publish(subtitle(1, "s", f"Zeile {i}", True))
        return local.pages == 0

    wait_until(gone)
    assert local.dropped == 0  # it left; it was not dropped


def test_garbage_and_unfinished_requests_do_not_stop_the_server(
    local: WebSubtitles,
) -> None:
    stuck = socket.create_connection(("127.0.0.1", local.port))
    stuck.sendall(b"GET / HTTP/1.1\r\nHost: 127.0")  # and never more
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as bad:
        bad.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n\r\n")  # TLS hello
        reply = b"".join(iter(lambda: bad.recv(4096), b""))
    assert b"Error code: 400" in reply  # (answered as HTTP/0.9: the request named no version)
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as post:
        post.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc")
        assert post.recv(4096).startswith(b"HTTP/1.0 501")
    long_line = b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n"
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as huge:
        huge.sendall(long_line)
        assert huge.recv(4096).startswith(b"HTTP/1.0 414")
    page = EventStream(local.port)
    assert page.open() == 200  # still serving, with a request stuck half-way
    local.publish(subtitle(1, "s", "noch da", True))
    page.next()
    assert page.texts() == ["noch da"]
    page.close()
    stuck.close()


def test_a_request_sent_a_line_at_a_time_is_ended_at_its_deadline(
    local: WebSubtitles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeout bounded each read only: a header line every few seconds (a device on the
    network needs no key to do that) held a thread and a file for good."""
    monkeypatch.setattr(web_server, "IO_TIMEOUT_S", 1.0)
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as slow:
        slow.sendall(b"GET /events HTTP/1.1\r\n")
        t0 = time.monotonic()
        with pytest.raises(OSError):  # closed by the server while it still sends
            for i in range(50):
                time.sleep(0.2)
                slow.sendall(b"X-Slow-%d: 1\r\n" % i)
        assert time.monotonic() - t0 < 5
    page = EventStream(local.port)
    assert page.open() == 200  # a page sent at once is served
    page.close()


def test_more_connections_than_the_bound_are_closed_as_they_come(
    local: WebSubtitles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand connections ran the app out of files (and the accept loop spun)."""
    monkeypatch.setattr(web_server, "MAX_CONNECTIONS", 4)
    idle = [socket.create_connection(("127.0.0.1", local.port), timeout=10) for _ in range(4)]
    for s in idle:
        s.sendall(b"GET /lines HTTP/1.1\r\n")  # and no more, for now
    wait_until(lambda: local.connections == 4)
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as extra:
        assert extra.recv(100) == b""  # closed at once, nothing served
    for s in idle:  # the requests end: their connections are served and let go
        s.sendall(b"Host: 127.0.0.1\r\n\r\n")
        assert s.recv(12).startswith(b"HTTP/1.0 200")
        s.close()
    wait_until(lambda: http_get(local.port, "/lines")[0] == 200)


def test_a_page_still_arriving_when_the_server_stops_gets_no_stale_stream(
    local: WebSubtitles,
) -> None:
    """A request half-sent when the page was stopped (a setting changed) was answered by the
    stopped server with its old lines and pinged for good: the page never reconnected."""
    local.publish(subtitle(1, "s", "alt", True))
    late = socket.create_connection(("127.0.0.1", local.port), timeout=10)
    late.sendall(b"GET /events HTTP/1.1\r\n")
    wait_until(lambda: local.connections == 1)  # being read
    local.stop()
    late.sendall(b"Host: 127.0.0.1\r\n\r\n")
    assert late.recv(4096) == b""  # closed: the browser reconnects to whatever serves now
    late.close()


def test_a_server_that_takes_over_shows_the_lines_at_once(local: WebSubtitles) -> None:
    local.publish(subtitle(1, "s", "schon gesagt", True))
    local.stop()
    after = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(), after=local)
    after.start()
    try:
        assert [ln["text"] for ln in json.loads(http_get(after.port, "/lines")[2])["lines"]] == [
            "schon gesagt"
        ]
    finally:
        after.stop()


def test_many_pages_at_once_and_one_too_many(
    local: WebSubtitles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_server, "MAX_PAGES", 24)
    pages = [EventStream(local.port) for _ in range(24)]
    for p in pages:
        assert p.open() == 200
        p.next()
    wait_until(lambda: local.pages == 24)
    extra = EventStream(local.port)
    assert extra.open() == 503
    extra.close()
    local.publish(subtitle(1, "s", "für alle", True))
    for p in pages:
        assert p.texts() == ["für alle"]
        p.close()


def test_fanout_keeps_going_past_a_failing_subscriber(caplog: pytest.LogCaptureFixture) -> None:
    got: list[object] = []

    def broken(_ev: object) -> None:
        raise RuntimeError("boom")

    fan = Fanout(broken, got.append)
    caplog.set_level(logging.ERROR)
    for i in range(3):
        fan(StatusEvent("running", str(i)))
    assert [e.message for e in got] == ["0", "1", "2"]  # type: ignore[attr-defined]
    assert sum("failed" in r.message for r in caplog.records) == 1  # logged once, not per event
    fan.remove(broken)
    extra: list[object] = []
    fan.add(extra.append)
    fan(StatusEvent("paused"))
    assert len(got) == 4 and len(extra) == 1 and len(fan.subscribers) == 2
