"""The browser page from the app's side: it shows what the overlay shows, Settings → Browser
turns it on and gives its address, and a port in use is one line while the app goes on."""

from __future__ import annotations

import json
import random
import socket
from pathlib import Path

from PySide6.QtGui import QGuiApplication

from subtitler import settings_store
from subtitler.config import AppConfig, DisplayConfig, MtConfig, WebConfig, with_settings
from subtitler.display.lines import ShownLines
from subtitler.pipeline.events import SubtitleEvent
from subtitler.pipeline.pipeline import Factories
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.overlay import SubtitleOverlay
from subtitler.ui.settings_pane import Choices, SettingsPane
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for
from tests.helpers.web import http_get, subtitle


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_app(tmp_path: Path, web: WebConfig) -> SubtitlerApp:
    cfg = AppConfig(mt=MtConfig(model_path="x"), web=web)
    f = Factories(
        lambda a, c: FakeSource(2.0, speed=5.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    return SubtitlerApp(cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path)


def page_texts(port: int) -> list[str]:
    status, _h, body = http_get(port, "/lines")
    assert status == 200
    return [ln["text"] for ln in json.loads(body)["lines"]]


def test_page_lines_equal_the_overlay_lines(qtbot) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(19)
    vocab = "der die das Haus ist groß und klein heute 会议 开始 了。".split()
    events: list[SubtitleEvent] = []
    for seg in range(8):
        words: list[str] = []
        for _ in range(rng.randint(1, 6)):
            words = words[: rng.randint(0, len(words))] + rng.sample(vocab, rng.randint(1, 3))
            events.append(subtitle(seg, f"src {seg}", " ".join(words), False))
        events.append(subtitle(seg, f"src {seg}.", " ".join(words) if seg % 3 else "", True))
    for k in (0, 1, 3, 10):
        for n in (1, 2, 6):
            overlay = SubtitleOverlay(DisplayConfig(mask_k=k, lines=n))
            qtbot.addWidget(overlay)
            shown = ShownLines()
            for ev in events:
                overlay.on_subtitle(ev)
                shown.add(ev)
                want = [(ln.segment_id, ln.source, ln.translation) for ln in overlay.lines()]
                got = [(ln.segment_id, ln.source, ln.text) for ln in shown.lines(k, n)]
                assert got == want, (k, n, ev)


def test_browser_tab_values_and_address(qtbot) -> None:  # type: ignore[no-untyped-def]
    status = ["", ""]
    pane = SettingsPane(AppConfig(), Choices(web_status=lambda: (status[0], status[1])))
    qtbot.addWidget(pane)
    web = pane.web
    assert pane.values().web == WebConfig()  # off, the default port, no key
    assert web.url.text() == "" and not web.copy.isEnabled() and not web.renew.isEnabled()
    assert web.note.isHidden() and web.problem.isHidden()  # (empty lines took room)
    web.share.setCurrentIndex(web.share.findData("network"))
    web.port.setValue(9123)
    first = pane.values().web
    assert first.share == "network" and first.port == 9123 and len(first.token) >= 22
    assert pane.values().web.token == first.token  # made once: the address stays
    assert web.renew.isEnabled()
    web.renew.click()
    renewed = pane.values().web.token
    assert renewed != first.token and "Apply" in web.note.text() and not web.note.isHidden()
    status[:] = [f"http://192.168.1.20:9123/?token={renewed}", ""]
    assert pane.apply()
    assert web.url.text() == status[0] and web.copy.isEnabled()
    web.transparent.setChecked(True)
    assert web.url.text() == status[0] + "&bg=transparent"
    web.copy.click()
    assert QGuiApplication.clipboard().text() == status[0] + "&bg=transparent"
    status[:] = ["", "Browser subtitles: port 9123 is in use by another program; choose …"]
    web.refresh()
    assert web.url.text() == "" and "in use" in web.problem.text()
    assert not web.problem.isHidden()
    pane.load(AppConfig())
    assert web.values() == WebConfig() and web.note.isHidden()


def test_app_serves_the_pipeline_lines_and_shows_the_address(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    port = free_port()
    app = make_app(tmp_path, WebConfig(share="local", port=port))
    qtbot.addWidget(app.overlay)
    try:
        assert app.web is not None and app.web_status() == (f"http://127.0.0.1:{port}/", "")
        app.start()
        # The fan-out hands the pipeline's events to the page as well as to the overlay.
        qtbot.waitUntil(lambda: any(ln.translation for ln in app.overlay.lines()), timeout=10_000)
        assert app.pipeline is not None
        qtbot.waitUntil(lambda: app.pipeline is not None and app.pipeline.state == "finished")
        shown = [ln.translation for ln in app.overlay.lines()]
        qtbot.waitUntil(lambda: page_texts(port) == shown and shown != [""])
        app.open_settings()
        assert app.settings is not None
        assert app.settings.web.url.text() == f"http://127.0.0.1:{port}/"
        # New looks reach the page without a restart; turning it off closes the port.
        app.apply_settings(with_settings(app.settings.values(), {"display.lines": 4}))
        assert json.loads(http_get(port, "/lines")[2])["style"]["lines"] == 4
        # A new port (or share, or key) is a new server: it shows the lines at once (it was
        # blank until someone spoke again).
        port = free_port()
        app.apply_settings(with_settings(app.settings.values(), {"web.port": port}))
        assert page_texts(port) == shown
        app.apply_settings(with_settings(app.settings.values(), {"web.share": "off"}))
        assert app.web is None and app.web_status() == ("", "")
        with socket.socket() as s:  # nothing listens there any more
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (closed ones linger)
            s.bind(("127.0.0.1", port))
            s.listen()
    finally:
        if app.pipeline is not None:
            app.pipeline.stop()
        app.stop_web()


def test_network_key_is_made_once_and_kept(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path, WebConfig(share="network", port=free_port()))
    qtbot.addWidget(app.overlay)
    try:
        token = app.config.web.token
        assert len(token) >= 22 and app.web is not None and app.web.url.endswith(token)
        saved = settings_store.load(tmp_path / "config.toml").config.web
        assert saved.token == token  # an OBS scene saved with this address keeps working
        assert http_get(app.web.port, "/lines")[0] == 403
        assert http_get(app.web.port, f"/lines?token={token}")[0] == 200
    finally:
        app.stop_web()


def test_port_in_use_is_one_line_and_the_app_goes_on(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        app = make_app(tmp_path, WebConfig(share="local", port=port))
        qtbot.addWidget(app.overlay)
        assert app.web is None
        problem = app.web_status()[1]
        assert f"port {port} is in use" in problem and "\n" not in problem
        assert app.overlay.alert == problem  # shown above the subtitles, as other problems
        app.start()  # the subtitles themselves work as ever
        qtbot.waitUntil(lambda: any(ln.translation for ln in app.overlay.lines()), timeout=10_000)
        assert app.pipeline is not None and app.pipeline.stop()
    # Another port in Settings: it starts.
    cfg = app.config
    web = WebConfig(share="local", port=free_port())
    app.apply_settings(AppConfig(mt=cfg.mt, display=cfg.display, web=web))
    try:
        assert app.web is not None and app.web_status()[1] == ""
    finally:
        app.stop_web()


def test_an_empty_key_applied_is_a_new_key_kept(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Settings applied with the network share and an empty key (a settings file's `token =
    ""`, not the pane) served the page with a key made then, but saved the empty one: the
    address in use stopped working at the next start."""
    app = make_app(tmp_path, WebConfig(share="local", port=free_port()))
    qtbot.addWidget(app.overlay)
    try:
        old = ""
        for _ in ("from local", "from network with a key"):
            web = {"web.share": "network", "web.port": free_port(), "web.token": ""}
            app.apply_settings(with_settings(app.config, web))
            token = app.config.web.token
            assert len(token) >= 22 and token != old
            assert app.web is not None and app.web.url.endswith(token)
            saved = settings_store.load(tmp_path / "config.toml").config.web
            assert (saved.share, saved.token) == ("network", token)
            assert http_get(app.web.port, "/lines")[0] == 403  # access control stays on
            assert http_get(app.web.port, f"/lines?token={token}")[0] == 200
            old = token
    finally:
        app.stop_web()
