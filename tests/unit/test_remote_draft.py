"""The server translator keeps an aborted decode as the next draft, as the local one does
(issue 29): what the server verified before a newer update stopped the decode is not thrown
away, and the next update starts from it rather than from the older, longer draft."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from subtitler.mt.completions import Aborted, CompletionsClient, DraftCheck, Generated
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.remote import RemoteTranslator
from subtitler.mt.ssbd import DecodeOptions, Method

FIRST = [" Ein", " Mann", " fährt", " Rad", "."]


class ServerClient:
    """A completions server as the translator sees it (the client's calls): the first
    continuation writes FIRST; verifying it, the server keeps two tokens and rejects the
    third; a continuation asked while ``stop`` is set is aborted as the real client aborts."""

    where = "test server"

    def __init__(self) -> None:
        self.stop = False
        self.verified: list[str] = []  # the drafts the server was asked to verify

    def deadline(self) -> float:
        return time.monotonic() + 5.0

    def find_tokenizer(self, deadline: float | None = None) -> bool:
        return False  # the draft's tokens are read off the echo (the pieces as streamed)

    def verify(
        self,
        prompt: str,
        draft: str,
        tokens: Sequence[int] | None,
        n_draft: int | None,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> DraftCheck:
        self.verified.append(draft)
        # The drafts are prefixes of FIRST: the server's tokens are its pieces.
        (n,) = [n for n in range(len(FIRST) + 1) if "".join(FIRST[:n]) == draft]
        pieces: list[str | None] = list(FIRST[:n])
        logprob = [0.0, 0.0, -20.0, *([0.0] * max(0, n - 3))][:n]
        return DraftCheck(logprob, [0.0] * n, [True] * n, pieces, False, 40 + n)

    def generate(
        self,
        text: str,
        max_tokens: int,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> Generated:
        if self.stop or (should_abort is not None and should_abort()):
            raise Aborted()
        return Generated(list(FIRST)[:max_tokens], "stop")


def test_an_aborted_server_decode_is_the_next_draft() -> None:
    client = ServerClient()
    tr = RemoteTranslator(
        cast(CompletionsClient, cast(Any, client)),
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(method=Method.SSBD, beta=0.2, max_new_tokens=50),
    )
    first = tr.update(0, "A man rides a bike.", False)
    assert "".join(first.pieces) == "".join(FIRST)
    # A newer update comes while the continuation after the verified prefix runs: aborted.
    client.stop = True
    second = tr.update(0, "A man rides a bicycle", False, should_abort=lambda: True)
    assert second.stats.aborted and list(second.pieces) == FIRST[:2]
    # The next update verifies what the aborted one kept, not the older whole translation.
    client.stop = False
    tr.update(0, "A man rides a bicycle home.", False)
    assert client.verified[-1] == "".join(FIRST[:2])
