"""A translation server that never finishes, drips, has a tiny context or sends unusable
log-probabilities: each update ends within the timeout with one line, and the next update asks
again (a scripted server on 127.0.0.1: these are timing rules, not a model's output)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from subtitler.config import MtConfig
from subtitler.mt.completions import CompletionsClient, ServerError, ServerSettings
from subtitler.mt.engine import EngineUnavailable
from subtitler.mt.remote import RemoteEngine
from tests.helpers.bounded import run_bounded
from tests.helpers.scripted_server import ScriptedServer

TIMEOUT_S = 1.0


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


def mt_for(server: ScriptedServer, **kw: object) -> MtConfig:
    args: dict[str, object] = dict(
        backend="server",
        server_url=server.url,
        template="chatml",
        method="SSBD",
        beta=0.2,
        max_new_tokens=200,
        len_ratio=20.0,
        server_timeout_s=TIMEOUT_S,
    )
    args.update(kw)
    return MtConfig(**args)  # type: ignore[arg-type]


def test_the_client_stops_a_stream_at_its_own_token_budget(server: ScriptedServer) -> None:
    """A server that ignores max_tokens and never ends the stream: the client stops reading
    at its budget (it read on until the server stopped, that is never)."""
    server.script.endless, server.script.every_s = True, 0.005
    client = CompletionsClient(ServerSettings(server.url, timeout_s=30.0))
    try:
        t0 = time.monotonic()
        got = run_bounded(lambda: client.generate("Hello", 12))
        assert got.finish == "length" and len(got.pieces) == 12
        assert time.monotonic() - t0 < 5.0
    finally:
        client.close()


def test_a_dripping_stream_is_given_up_at_the_deadline_not_per_byte(
    server: ScriptedServer,
) -> None:
    """A token every 0.3 s, under the 1 s timeout each time: the request as a whole has 1 s
    (the timer restarted at every byte, so the call went on for as long as the server did)."""
    server.script.every_s = 0.3
    server.script.output = "x" * 100
    client = CompletionsClient(ServerSettings(server.url, timeout_s=TIMEOUT_S))
    try:
        t0 = time.monotonic()
        with pytest.raises(ServerError) as e:
            run_bounded(lambda: client.generate("Hello", 100))
        took = time.monotonic() - t0
        assert e.value.transient and "did not finish within 1 s" in str(e.value)
        assert TIMEOUT_S <= took < TIMEOUT_S + 1.0
    finally:
        client.close()


def test_a_stalled_update_is_said_within_the_timeout_and_the_next_update_asks_again(
    server: ScriptedServer,
) -> None:
    mt = mt_for(server, method="RT")
    engine = RemoteEngine(mt)
    try:
        first = engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert first.text == "Hallo Welt."
        server.script.every_s, server.script.output = 0.3, "x" * 100  # now it drips
        t0 = time.monotonic()
        with pytest.raises(EngineUnavailable) as e:
            run_bounded(lambda: engine.translate(0, "Hello world again.", False, mt.tgt_lang, "en"))
        assert time.monotonic() - t0 < 2 * TIMEOUT_S + 1.0  # (one update: one request here)
        assert "did not finish within 1 s" in str(e.value) and "\n" not in str(e.value)
        server.script.every_s, server.script.output = 0.0, "Hallo Welt, wieder."
        streams = server.streams()
        # The server answers again: the very next update asks it (no pause for a server that
        # is up but slow: a pause is for one that cannot be reached).
        again = engine.translate(0, "Hello world again.", False, mt.tgt_lang, "en")
        assert again.text == "Hallo Welt, wieder." and server.streams() == streams + 1
    finally:
        engine.close()


def test_verify_and_continuation_share_one_deadline_per_update(server: ScriptedServer) -> None:
    """SSBD's two requests: a continuation that drips after a verify does not get a timeout
    of its own: the update as a whole ends within the timeout."""
    mt = mt_for(server)
    engine = RemoteEngine(mt)
    try:
        engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")  # a draft for the next update
        # A verify that takes 0.8 s, then a continuation that drips: with a timeout per
        # request the update would take 1.8 s or more.
        server.script.verify_s, server.script.verify_ends = 0.8, False
        server.script.every_s, server.script.output = 0.15, "y" * 100
        t0 = time.monotonic()
        with pytest.raises(EngineUnavailable, match="did not finish within 1 s"):
            run_bounded(
                lambda: engine.translate(0, "Hello world, friends.", False, mt.tgt_lang, "en")
            )
        assert time.monotonic() - t0 < TIMEOUT_S + 0.6
        kinds = ["echo" if r.get("echo") else "stream" for r in server.script.requests[-2:]]
        assert kinds == ["echo", "stream"]  # it verified, then continued
    finally:
        engine.close()


def test_a_context_too_small_for_one_update_is_said_not_an_empty_translation(
    server: ScriptedServer,
) -> None:
    """vLLM reports max_model_len; 3 tokens hold no prompt: every update failed silently with
    an empty translation."""
    server.script.max_model_len = 3
    mt = mt_for(server)
    engine = RemoteEngine(mt)
    try:
        with pytest.raises(EngineUnavailable) as e:
            engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        msg = str(e.value)
        assert "context of 3 tokens" in msg and "too small" in msg and "\n" not in msg
        assert not e.value.announced  # the stage says it (once, until a line translates)
        assert server.streams() == 0  # nothing was asked that cannot fit
    finally:
        engine.close()


def test_unusable_logprobs_cost_ssbd_for_that_update_only(server: ScriptedServer) -> None:
    """A burst of NaN log-probabilities: those updates are translated with RT, later ones are
    verified again (the burst switched the session to RT for good)."""
    mt = mt_for(server)
    engine = RemoteEngine(mt)
    try:
        engine.translate(0, "Hello.", False, mt.tgt_lang, "en")
        server.script.nan_verifies = 3
        methods = []
        for i, text in enumerate(("Hello w.", "Hello wo.", "Hello wor.", "Hello worl.")):
            r = engine.translate(0, text, i == 3, mt.tgt_lang, "en")
            assert r.text == "Hallo Welt." and r.problem == ""
            methods.append(r.stats.method)
        assert methods == ["RT", "RT", "RT", "SSBD"]
        assert engine.notice == ""  # nothing lasting to say
    finally:
        engine.close()


def test_a_rate_limit_is_a_pause_of_the_time_the_server_asks_not_a_failure(
    server: ScriptedServer,
) -> None:
    """HTTP 429 counted as a server's failure: ten in a row turned translation off for the
    rest of the meeting, and one at the start turned it off at once."""
    mt = mt_for(server, method="RT")
    server.script.busy, server.script.retry_after = 1, "2"
    before = time.monotonic()
    engine = RemoteEngine(mt, connect_later=True)  # (the app's way: a server may come later)
    after = time.monotonic()
    try:
        assert "is busy (HTTP 429: too many requests): Rate limit reached" in engine.notice
        server.script.busy = 3
        # The server's 2 s from the moment it answered (inside the start), not the first
        # pause of 1 s.
        assert before + 2.0 <= engine._retry_at <= after + 2.0
        with pytest.raises(EngineUnavailable) as e:  # waiting as asked: no request made
            engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert "trying again in" in str(e.value) and server.script.busy == 3
        while time.monotonic() < engine._retry_at:
            time.sleep(0.05)
        with pytest.raises(EngineUnavailable) as e:
            engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert "is busy (HTTP 429: too many requests)" in str(e.value)
        assert server.script.busy == 2
        server.script.busy = 0
        while time.monotonic() < engine._retry_at:
            time.sleep(0.05)
        got = engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert got.text == "Hallo Welt."
    finally:
        engine.close()


def test_a_server_that_answers_nothing_twice_in_a_row_is_paused_for(server: ScriptedServer) -> None:
    """A stalled server cost every update the whole timeout: the lines reached the screen
    that late, one after the other. Twice in a row, and the next updates are shown as said at
    once until the pause is over."""
    mt = mt_for(server, method="RT")
    engine = RemoteEngine(mt)
    try:
        server.script.every_s, server.script.output = 0.3, "x" * 100  # it drips
        for _ in range(2):
            with pytest.raises(EngineUnavailable) as e:
                run_bounded(lambda: engine.translate(0, "Hello world.", False, mt.tgt_lang, "en"))
            assert "did not finish within 1 s" in str(e.value)
        streams = server.streams()
        with pytest.raises(EngineUnavailable) as e:
            engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert server.streams() == streams  # not asked: said at once
        assert "did not answer; trying again in" in str(e.value)
        server.script.every_s, server.script.output = 0.0, "Hallo Welt."
        while time.monotonic() < engine._retry_at:
            time.sleep(0.05)
        assert engine.translate(0, "Hello world.", False, mt.tgt_lang, "en").text == "Hallo Welt."
    finally:
        engine.close()


def test_a_start_waits_for_a_hanging_server_a_short_while_only(server: ScriptedServer) -> None:
    """The app's start (nothing heard until the models are in) waited for a server that took
    the connection and answered nothing for the whole timeout: up to two minutes in
    Settings. It waits 5 s, and the server is asked again at the first update."""
    server.script.verify_s = 60.0  # its answer to the start's question never comes
    mt = mt_for(server, method="RT", server_timeout_s=30.0)
    engine = run_bounded(lambda: RemoteEngine(mt, connect_later=True), seconds=25)
    try:
        assert engine.notice.endswith("did not answer within 5 s; translating once it answers")
        server.released.set()  # (the hung request ends)
        server.script.verify_s = 0.0
        while time.monotonic() < engine._retry_at:
            time.sleep(0.05)
        got = engine.translate(0, "Hello world.", False, mt.tgt_lang, "en")
        assert got.text == "Hallo Welt."
        assert engine.client.settings.timeout_s == 30.0  # an update has its whole timeout
    finally:
        engine.close()


def test_a_server_gone_is_told_apart_from_one_that_failed_an_update(
    server: ScriptedServer,
) -> None:
    """The translation stage asks a server that is away again while the meeting is quiet,
    for the lines it missed; not one that answered and failed on a line (asked over and over,
    each failure lengthened its pause, and the next line said found it refused). The engine
    says which, in its pauses too."""
    mt = mt_for(server, method="RT")
    engine = RemoteEngine(mt)
    try:
        server.script.every_s, server.script.output = 0.3, "x" * 100  # it drips
        with pytest.raises(EngineUnavailable) as e:
            run_bounded(lambda: engine.translate(0, "Hello world.", True, mt.tgt_lang, "en"))
        assert "did not finish within 1 s" in str(e.value) and not e.value.unreachable
        server.close()  # gone
        while time.monotonic() < engine._retry_at:
            time.sleep(0.05)
        with pytest.raises(EngineUnavailable) as e:
            run_bounded(lambda: engine.translate(1, "Good morning.", True, mt.tgt_lang, "en"))
        assert "connection refused" in str(e.value) and e.value.unreachable
        assert e.value.retry_in > 0  # (when it asks again)
        with pytest.raises(EngineUnavailable) as e:  # in the pause: said at once
            engine.translate(1, "Good morning.", True, mt.tgt_lang, "en")
        assert "trying again in" in str(e.value) and e.value.unreachable
    finally:
        engine.close()
