"""Settings says in plain words what the translation server at its address can do (the
terms in the tooltip): asked when the user clicks Check, off the GUI thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from subtitler.config import AppConfig, with_settings
from subtitler.mt.remote import ROUTE_WORDS, ServerRoute
from subtitler.ui.settings_pane import SettingsPane
from tests.helpers.scripted_server import Script, ScriptedServer


@pytest.fixture
def llama_server() -> Iterator[ScriptedServer]:
    s = ScriptedServer(Script(kind="llama-server"))
    yield s
    s.close()


def pane_for(qtbot, url: str, backend: str = "server") -> SettingsPane:  # type: ignore[no-untyped-def]
    cfg = with_settings(
        AppConfig(),
        {"mt.backend": backend, "mt.server_url": url, "mt.template": "chatml"},
    )
    pane = SettingsPane(cfg)
    qtbot.addWidget(pane)
    return pane


def test_check_says_what_the_server_can_do_in_plain_words(qtbot, llama_server) -> None:  # type: ignore[no-untyped-def]
    pane = pane_for(qtbot, llama_server.url)
    assert pane.server_check.isEnabled() and pane.server_found.text() == "Not checked yet."
    pane.server_check.click()
    plain, terms = ROUTE_WORDS[ServerRoute.COMPLETIONS]
    qtbot.waitUntil(lambda: pane.server_found.text() == plain, timeout=10_000)
    assert terms in pane.server_found.toolTip() and "Only no echo" in pane.server_found.toolTip()
    assert pane.server_check.isEnabled()  # it may be asked again


def test_a_server_that_cannot_be_reached_is_one_line(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = pane_for(qtbot, "http://127.0.0.1:9/v1")  # the discard port: nothing listens
    pane.server_check.click()
    qtbot.waitUntil(lambda: pane.server_found.text().startswith("Cannot use it"), timeout=10_000)
    assert "connection refused" in pane.server_found.text()
    assert "\n" not in pane.server_found.text()


def test_check_is_for_a_server_only(qtbot) -> None:  # type: ignore[no-untyped-def]
    pane = pane_for(qtbot, "", backend="local")
    assert not pane.server_check.isEnabled()
