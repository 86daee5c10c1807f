"""The streaming re-translation core the local and the server translator share (mt/streaming.py):
one segment at a time, whose last translation is the next update's draft, an aborted decode's
prefix kept as that draft, and the finished sentences before it given as context."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from subtitler.mt.completions import Aborted, DraftCheck, Generated
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.remote import RemoteTranslator
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.translator import StreamTranslator
from tests.helpers.fake_pipeline import echo_lm

ANSWER = [" Guten", " Morgen", " alle"]


class DraftServer:
    """Enough of CompletionsClient for a RemoteTranslator: no tokenize route (the draft's
    tokens are its pieces); a verify keeps the draft's first two tokens; a continuation writes
    ``ANSWER`` after what was kept, or is aborted when the caller says so."""

    where = "127.0.0.1:1"

    def __init__(self) -> None:
        self.verified: list[str] = []  # the draft text of each verify request

    def deadline(self) -> float:
        return time.monotonic() + 10.0

    def find_tokenizer(self, deadline: float | None = None) -> bool:
        return False

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
        pieces: list[str | None] = list(re.findall(r"\s*\S+", draft))
        m = len(pieces)
        logprob = [0.0 if i < 2 else -5.0 for i in range(m)]  # the third is not the best
        return DraftCheck(logprob, [0.0] * m, [True] * m, pieces, False, 10 + m)

    def generate(
        self,
        text: str,
        max_tokens: int,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> Generated:
        if should_abort is not None and should_abort():
            raise Aborted()
        written = "".join(p for p in ANSWER if p in text)
        return Generated([p for p in ANSWER if p not in written], "stop")


def test_an_aborted_server_decode_is_the_next_draft_as_locally() -> None:
    """The named fix of issue 29: an update given up mid-decode (a newer one arrived) keeps
    what it decoded as the next draft, on a server as locally (before, the server translator
    kept the older, longer draft, whose rejected tail the next update verified again)."""
    server = DraftServer()
    tr = RemoteTranslator(
        server,  # type: ignore[arg-type]
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(Method.SSBD, 0.0),
    )
    first = tr.update(0, "Good morning all", False)
    assert first.pieces == tuple(ANSWER) and server.verified == []
    aborted = tr.update(0, "Good morning all of", False, should_abort=lambda: True)
    assert aborted.stats.aborted and aborted.pieces == (" Guten", " Morgen")
    assert server.verified == [" Guten Morgen alle"]
    tr.update(0, "Good morning all of you", False)
    assert server.verified[-1] == " Guten Morgen"  # the aborted decode's prefix


def test_an_aborted_local_decode_is_the_next_draft() -> None:
    tr = StreamTranslator(echo_lm(), PromptBuilder("chatml", "en", "de"), DecodeOptions())
    first = tr.update(0, "Good morning everyone", False)
    # Given up after the first token past what it kept of the draft.
    aborted = tr.update(0, "Hello there", False, should_abort=lambda: True)
    assert aborted.stats.aborted and aborted.tokens[:-1] == first.tokens
    assert tr.draft == list(aborted.tokens)


def test_a_new_segment_starts_without_a_draft_and_a_final_becomes_context() -> None:
    server = DraftServer()
    tr = RemoteTranslator(
        server,  # type: ignore[arg-type]
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(Method.SSBD, 0.0),
    )
    tr.context_sentences = 1
    tr.update(0, "Good morning all", True)
    assert tr.context == "Good morning all"
    tr.update(1, "Thanks", False)
    assert server.verified == []  # segment 1 had no draft: nothing to verify
