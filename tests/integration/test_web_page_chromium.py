"""The browser page end to end in headless Chromium: the masked lines appear as the overlay shows
them, readable over video on a transparent background, and the page outlives the app's restart."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.config import DisplayConfig, WebConfig
from subtitler.web.server import WebSubtitles
from tests.helpers.chromium import Chromium, Page
from tests.helpers.system import needs_programs
from tests.helpers.web import subtitle

pytestmark = needs_programs("chromium", why="headless Chromium")

WIDTH, HEIGHT = 1280, 360
TEXTS = "JSON.stringify([...document.querySelectorAll('#lines .text')].map(e => e.textContent))"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    with Chromium(tmp_path_factory.mktemp("chromium") / "profile", WIDTH, HEIGHT) as b:
        yield b


def open_page(browser: Chromium, url: str) -> Page:
    page = browser.open(url)
    page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
    )
    page.go()
    return page


def wait_texts(page: Page, expected: list[str]) -> None:
    page.wait_for(
        f"{TEXTS} === {json.dumps(json.dumps(expected, ensure_ascii=False, separators=(',', ':')))}"
    )


def test_page_shows_the_masked_lines_readable_on_transparent(
    browser: Chromium, tmp_path: Path
) -> None:
    from PySide6.QtGui import QImage

    server = WebSubtitles(
        WebConfig(share="local", port=0), DisplayConfig(mask_k=2, lines=2, font_size=40)
    )
    server.start()
    try:
        page = open_page(browser, server.url + "?bg=transparent")
        page.wait_for("document.body.dataset.state === 'live'")  # open before any subtitle
        assert page.evaluate(TEXTS) == "[]"
        server.publish(subtitle(1, "Good morning.", "Guten Morgen allerseits.", True))
        server.publish(subtitle(2, "How are you", "Wie geht es euch heute", False))
        # Finished in full; the open line without its last k = 2 words, as on the overlay.
        wait_texts(page, ["Guten Morgen allerseits.", "Wie geht es"])
        assert "heute" not in page.evaluate("document.body.innerText")
        server.publish(subtitle(2, "How are you all?", "Wie geht es euch allen?", True))
        server.publish(subtitle(3, "Fine", "Gut", False))
        wait_texts(page, ["Wie geht es euch allen?", ""])  # 2 lines; "Gut" still hidden
        server.publish(subtitle(3, "Fine, thanks.", "Gut, danke. Und selbst? Schön.", False))
        wait_texts(page, ["Wie geht es euch allen?", "Gut, danke. Und"])
        shot = page.screenshot(transparent=True)
        (tmp_path / "page.png").write_bytes(shot)
        if os.environ.get("SUBTITLER_WEB_SHOT"):  # to look at it
            shutil.copy(tmp_path / "page.png", os.environ["SUBTITLER_WEB_SHOT"])
        img = QImage.fromData(shot, "PNG")
        assert (img.width(), img.height()) == (WIDTH, HEIGHT) and img.hasAlphaChannel()
        assert img.pixelColor(5, 5).alpha() == 0  # transparent: the video shows through
        white = dark = 0
        for y in range(HEIGHT // 2, HEIGHT, 2):
            for x in range(0, WIDTH, 2):
                c = img.pixelColor(x, y)
                if c.alpha() > 240 and min(c.red(), c.green(), c.blue()) > 230:
                    white += 1
                elif c.alpha() > 200 and max(c.red(), c.green(), c.blue()) < 40:
                    dark += 1
        # White letters with a dark outline around them: readable over bright and dark video.
        assert white > 500 and dark > 500, (white, dark)
        rows = page.evaluate(
            "[...document.querySelectorAll('#lines .text')].map(e => "
            "{const r = e.getBoundingClientRect(); return [r.top, r.bottom]})"
        )
        assert rows[0][1] <= rows[1][0] + 1 and rows[1][1] <= HEIGHT  # newest at the bottom
        assert all(top >= HEIGHT // 2 for top, _ in rows)

        # Options in the address: more lines, the original above, a black page.
        page.go(server.url + "?lines=3&bilingual=1")
        wait_texts(page, ["Guten Morgen allerseits.", "Wie geht es euch allen?", "Gut, danke. Und"])
        sources = page.evaluate("[...document.querySelectorAll('#lines .source')].length")
        assert sources == 3
        black = QImage.fromData(page.screenshot(transparent=True), "PNG").pixelColor(5, 5)
        assert (black.alpha(), black.red(), black.green(), black.blue()) == (255, 0, 0, 0)
    finally:
        server.stop()


def test_page_outlives_a_restart_of_the_app(browser: Chromium) -> None:
    first = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=0))
    first.start()
    port = first.port
    page = open_page(browser, first.url)
    page.wait_for("document.body.dataset.state === 'live'")
    first.publish(subtitle(1, "before", "vorher.", True))
    wait_texts(page, ["vorher."])
    page.evaluate("window.sameDocument = true")
    first.stop()  # the app quits
    page.wait_for("document.body.dataset.state !== 'live'")
    assert page.evaluate(TEXTS) == '["vorher."]'  # the last lines stay while it is away
    second = WebSubtitles(WebConfig(share="local", port=port), DisplayConfig(mask_k=0))
    second.start()  # the app starts again: same address, a new run
    try:
        page.wait_for("document.body.dataset.state === 'live'", timeout=30)
        second.publish(subtitle(1, "after", "nachher.", True))
        wait_texts(page, ["nachher."])
        assert page.evaluate("window.sameDocument") is True  # not reloaded: reconnected
    finally:
        second.stop()


def test_a_renewed_key_tells_the_open_page(browser: Chromium) -> None:
    old = WebSubtitles(WebConfig(share="network", port=0, token="old-key"), DisplayConfig())
    old.start()
    port = old.port
    page = open_page(browser, f"http://127.0.0.1:{port}/?token=old-key")
    page.wait_for("document.body.dataset.state === 'live'")
    old.stop()
    new = WebSubtitles(WebConfig(share="network", port=port, token="new-key"), DisplayConfig())
    new.start()
    try:
        page.wait_for("document.body.dataset.state === 'denied'", timeout=30)
        assert "not valid" in page.evaluate("document.getElementById('status').textContent")
    finally:
        new.stop()


def test_page_shows_each_target_language_or_the_one_asked_for(
    browser: Chromium, tmp_path: Path
) -> None:
    """Two target languages (issue 19): each line's translations one under the other, masked
    alike; ``?lang=ja`` shows the Japanese alone (an OBS source per language)."""
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=1, lines=2))
    server.start()
    try:
        page = open_page(browser, server.url + "?bilingual=1")
        page.wait_for("document.body.dataset.state === 'live'")
        server.publish(subtitle(1, "Good morning.", "Guten Morgen.", True, "de"))
        server.publish(subtitle(1, "Good morning.", "おはよう 。", True, "ja", 1))
        server.publish(subtitle(2, "How are you", "Wie geht es", False, "de"))
        server.publish(subtitle(2, "How are you", "お元気 です か", False, "ja", 1))
        wait_texts(page, ["Guten Morgen.", "おはよう 。", "Wie geht", "お元気 です"])
        assert page.evaluate("document.querySelectorAll('#lines .source').length") == 2
        shot = page.screenshot()
        if os.environ.get("SUBTITLER_WEB_SHOT"):
            Path(os.environ["SUBTITLER_WEB_SHOT"]).with_suffix(".two.png").write_bytes(shot)
        page.go(server.url + "?lang=ja")
        wait_texts(page, ["おはよう 。", "お元気 です"])
        page.go(server.url + "?lang=de")
        wait_texts(page, ["Guten Morgen.", "Wie geht"])
        server.publish(subtitle(2, "How are you?", "Wie geht es dir?", True, "de"))
        server.publish(subtitle(2, "How are you?", "お元気 です か？", True, "ja", 1))
        server.publish(subtitle(3, "Thanks a lot", "Vielen Dank", False, "de"))  # no ja yet
        page.go(server.url + "?lang=ja&lines=3")
        wait_texts(page, ["おはよう 。", "お元気 です か？"])
    finally:
        server.stop()


STATUS = "document.getElementById('status').textContent"


def test_page_says_its_state_until_the_first_line(browser: Chromium, tmp_path: Path) -> None:
    """Issue 27 point 9: the page was black and silent while the app was idle or before the
    first line. It says, in small text, that it is connected and waits for words, or that it
    reconnects; nothing once lines show (nor over an OBS scene: bg=transparent)."""
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=0))
    server.start()
    try:
        page = open_page(browser, server.url)
        page.wait_for("document.body.dataset.state === 'live'")
        waiting = "Connected to subtitler · waiting for the first words"
        page.wait_for(f"{STATUS} === {json.dumps(waiting)}")
        shot = tmp_path / "waiting.png"
        shot.write_bytes(page.screenshot())
        if os.environ.get("SUBTITLER_WEB_SHOT"):  # to look at it
            shutil.copy(shot, Path(os.environ["SUBTITLER_WEB_SHOT"]).with_name("page-waiting.png"))
        server.publish(subtitle(1, "Good morning.", "Guten Morgen.", True))
        wait_texts(page, ["Guten Morgen."])
        assert page.evaluate(STATUS) == ""
        server.clear()  # a new run of the app: no lines yet
        page.wait_for(f"{STATUS} === {json.dumps(waiting)}")
        quiet = open_page(browser, server.url + "?bg=transparent")
        quiet.wait_for("document.body.dataset.state === 'live'")
        assert quiet.evaluate(STATUS) == ""
    finally:
        server.stop()
    page.wait_for("document.body.dataset.state !== 'live'")
    said = page.evaluate(STATUS)
    assert said in ("Reconnecting to subtitler…", "Waiting for subtitler (is it running?)…")


def test_side_in_the_address_picks_who_spoke(browser: Chromium) -> None:
    """Issue 31: both sides named by default; ?side=you only the user's lines (an OBS source of
    their own translated speech), unnamed; an unknown side is ignored; with one input (lines
    without a side) ?side= changes nothing."""
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=0, lines=2))
    server.start()
    try:
        server.publish(subtitle(1, "Guten Tag.", "Good day.", True, "en", side="others"))
        server.publish(subtitle(2, "Hello.", "Hallo.", True, "de", side="you"))
        server.publish(subtitle(3, "Wie geht", "How are", False, "en", side="others"))
        server.publish(subtitle(4, "Fine", "Gut", False, "de", side="you"))
        both = ["Others: Good day.", "You: Hallo.", "You: Gut", "Others: How are"]
        page = open_page(browser, server.url)
        wait_texts(page, both)
        page.go(server.url + "?side=you")
        wait_texts(page, ["Hallo.", "Gut"])
        page.go(server.url + "?side=OTHERS&bilingual=1")
        wait_texts(page, ["Good day.", "How are"])
        sources = "[...document.querySelectorAll('#lines .source')].map(e => e.textContent)"
        assert json.loads(page.evaluate(f"JSON.stringify({sources})")) == [
            "Guten Tag.",
            "Wie geht",
        ]
        page.go(server.url + "?side=everyone")  # not a side: as without it
        wait_texts(page, both)
        # Each side keeps its own last lines, as on the overlay.
        server.publish(subtitle(5, "Gut.", "Good.", True, "en", side="others"))
        server.publish(subtitle(6, "Und?", "And?", True, "en", side="others"))
        wait_texts(page, ["You: Hallo.", "Others: Good.", "Others: And?", "You: Gut"])
        page.wait_for("document.querySelectorAll('#lines .side-you').length === 2")
        server.clear()  # one input: no side, so every address shows every line
        server.publish(subtitle(7, "Ja.", "Yes.", True, "en"))
        page.go(server.url + "?side=you")
        wait_texts(page, ["Yes."])
    finally:
        server.stop()


def test_a_page_past_the_server_limit_shows_the_lines_and_says_why(
    browser: Chromium, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page the server took no more live pages for said "Waiting for subtitler (is it
    running?)" while it ran: now it says why and shows the lines as they are, and goes live
    when a place is free."""
    from subtitler.web import server as web_server

    monkeypatch.setattr(web_server, "MAX_PAGES", 1)
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=0))
    server.start()
    try:
        server.publish(subtitle(1, "Good morning.", "Guten Morgen.", True))
        first = open_page(browser, server.url)
        wait_texts(first, ["Guten Morgen."])
        second = open_page(browser, server.url)
        second.wait_for("document.body.dataset.state === 'full'")
        wait_texts(second, ["Guten Morgen."])
        assert second.evaluate(STATUS).startswith("Too many subtitle pages are open: ")
        first.go("about:blank")  # a place is free
        second.wait_for("document.body.dataset.state === 'live'")
        server.publish(subtitle(2, "Hello.", "Hallo.", True))
        wait_texts(second, ["Guten Morgen.", "Hallo."])
    finally:
        server.stop()


def test_each_line_reads_in_its_own_direction_and_language(browser: Chromium) -> None:
    """A Hebrew line ending in "?" was laid out left to right (the mark at its start for its
    reader), and a Chinese line was drawn with Japanese glyph forms (no language on it)."""
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=0, lines=3))
    server.start()
    try:
        page = open_page(browser, server.url)
        server.publish(subtitle(1, "How are you?", "מה שלומך?", True, lang="he"))
        server.publish(subtitle(2, "Good morning.", "早上好。", True, lang="zh"))
        server.publish(subtitle(3, "Good morning.", "Good morning.", True, lang="de"))
        wait_texts(page, ["מה שלומך?", "早上好。", "Good morning."])
        seen = page.evaluate(
            "JSON.stringify([...document.querySelectorAll('#lines .text')].map(e =>"
            " [getComputedStyle(e).direction, e.lang]))"
        )
        # (the last line was not translated: shown as said, in no language of the target's)
        assert json.loads(seen) == [["rtl", "he"], ["ltr", "zh"], ["ltr", ""]]
    finally:
        server.stop()
