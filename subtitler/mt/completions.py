"""A client for OpenAI-compatible servers (vLLM, SGLang, llama-cpp-python's server, llama.cpp's
llama-server, LM Studio, Ollama): the calls a translator that runs on another machine needs.

* ``tokenize``: the server's own tokenizer where it has a route for it (``/extras/tokenize`` on
  llama-cpp-python, ``/tokenize`` on vLLM, SGLang and llama-server; Ollama and LM Studio have
  none: :meth:`CompletionsClient.find_tokenizer` says so, and the translator counts by length).
* ``verify``: one ``/v1/completions`` request over prompt + draft with ``echo`` and
  ``logprobs``: the log-probability of every draft token and of the best token at its position
  (the biased rule needs nothing else), and whether the model would end right after the draft.
* ``generate``: greedy continuation (temperature 0), streamed, so an update that is superseded
  is dropped within milliseconds and the server stops computing it.
* ``chat``: the same over ``/v1/chat/completions``, for a server whose completions route cannot
  take a prompt as written (Ollama's wraps it in the model's chat template).

Prompts travel as text: llama-cpp-python's server accepts only text, and the tokens it makes of
that text are checked against ``tokenize`` (the ``usage.prompt_tokens`` of every verify).

Standard library only (``http.client``). Each request runs on a short-lived thread while the
caller watches its abort callback and a deadline, so an abort or a server that does not finish
in time ends the call at once (the connection is shut down under the request). The deadline is
for the whole answer, not for each byte: a server that sends a token every few seconds, just
under the timeout, is given up all the same; and a stream is read only up to the client's own
token budget, whatever the server does with ``max_tokens``. A connection that fails before
anything was sent back is retried a bounded number of times. Every failure is a
:class:`ServerError` with a one-line message for the user.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import logging
import math
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

log = logging.getLogger(__name__)

POLL_S = 0.005  # how often a waiting call looks at its abort callback
RETRY_BACKOFF_S = (0.2, 0.5)  # pauses before the bounded retries of a failed connection
MAX_ERROR_TEXT = 160  # characters of a server's own error message quoted in ours
# What a server may send, whatever it does: one answer of 10 MB was taken as the translation
# (a 42 MB transcript for 4 lines, the overlay frozen laying it out) and an answer without a
# line end filled 9 GB of memory.
MAX_BODY_BYTES = 32 << 20  # an answer not streamed (the draft's log-probabilities: about 1 MB)
MAX_LINE_BYTES = 1 << 20  # one line of a streamed answer (one token's event: under 1 kB)
MAX_RETRY_AFTER_S = 60.0  # the longest pause a server's Retry-After gets
MAX_TOKEN_CHARS = 256  # a token's text at most (the longest in real vocabularies: about 100)
# A verify request: the prompt's tokens echoed with their log-probabilities, and the best
# token's at each place (the draft token's own comes with the echo).
ECHO: dict[str, Any] = {"echo": True, "logprobs": 1}


class ServerError(RuntimeError):
    """The server could not be used for this call; the message is one line for the user.

    ``transient``: the server is down, unreachable, overloaded or stalled, and may well answer
    the next call; otherwise it answered something this client cannot use. ``answered``: a
    status line came back (False: the request reached no server, or none that answered).
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        status: int | None = None,
        no_route: bool = False,
        retry_after: float | None = None,
        answered: bool = True,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.answered = answered
        self.status = status  # the HTTP status, when the server answered one
        self.no_route = no_route  # the server has no such route (404, or LM Studio's 200)
        self.retry_after = retry_after  # seconds the server asked to wait (HTTP 429)


class NoPromptLogprobs(ServerError):
    """The server does not return log-probabilities for the prompt (``echo`` + ``logprobs``),
    or returns them misaligned: it cannot verify a draft."""


class DraftNotAligned(ServerError):
    """The draft does not start on a token of its own in the server's echo (a token spans the
    prompt's end and the draft's start): there is nothing to verify this time."""


class UnusableLogprobs(ServerError):
    """This answer's log-probabilities are there but unusable (NaN, missing for a draft
    token): this verify failed, the next one may well work."""


class ServerTimeout(ServerError):
    """The server did not finish an answer by the deadline (it is up: it took the
    connection, and may have sent part of the answer)."""

    def __init__(self, message: str, answered: bool = True) -> None:
        super().__init__(message, transient=True, answered=answered)


class Aborted(Exception):
    """The caller's abort callback fired; the request was dropped."""


OLLAMA_FINGERPRINT = "fp_ollama"  # every OpenAI-route answer of Ollama (openai/openai.go)


@dataclass(frozen=True)
class ServerSettings:
    """Where the server is and how long to wait for it."""

    base_url: str  # the OpenAI-style API root, e.g. http://gpu-box:8000/v1
    model: str = ""  # '' = the first model the server lists
    api_key: str = ""
    timeout_s: float = 10.0  # an update's requests, all together, are given up after this
    retries: int = 2  # further attempts when a connection fails before any answer


@dataclass
class DraftCheck:
    """What one verify request said about each draft token."""

    logprob: list[float]  # log p(draft token | prefix)
    best: list[float]  # log p of the most likely token at that position
    best_exact: list[bool]  # False: ``best`` is unknown (tokens whose texts collide)
    pieces: list[str | None]  # each draft token's text ('' for a part of a character; None:
    # not known, for a tokenizer whose parts of characters the server renders as '�')
    next_is_eos: bool  # the model ends right after the whole draft
    prompt_tokens: int  # tokens the server evaluated (prompt + draft)


@dataclass
class Generated:
    """A greedy continuation: its token texts ('' for a part of a character) and why it ended."""

    pieces: list[str] = field(default_factory=list)
    finish: str = ""  # "stop" (the model ended it), "length" (max_tokens), "" (aborted)
    chars: int = 0  # in the pieces

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def address_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be a server's address (None: it can)."""
    try:
        url = urllib.parse.urlsplit(base_url.strip())
        ok = url.scheme in ("http", "https") and bool(url.hostname)
        url.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        ok = False
    if ok:
        return None
    return f"server address {base_url!r} is not an http(s) URL (for example http://gpu-box:8000/v1)"


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_ERROR_TEXT else line[: MAX_ERROR_TEXT - 1] + "…"


class _Call:
    """One HTTP exchange on its own thread; the caller may abort it or give up on a stall."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.progress = 0.0  # the last time bytes of the answer arrived (0: none yet)
        self.status = 0
        self.body = b""
        self.error: BaseException | None = None
        self.answered = False  # a status line came back (so the request reached the server)
        self.retry_after: str | None = None  # the answer's Retry-After header


class _Enough(Exception):
    """Raised from a stream's line handler: the client has read all it wants."""


class CompletionsClient:
    """One server, one keep-alive connection, used by one thread at a time.

    Every call takes a ``deadline`` (``time.monotonic()``; None: the timeout from now): a
    caller that makes several requests for one update gives them all the same one."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        if (why := address_problem(settings.base_url)) is not None:
            raise ServerError(why)
        url = urllib.parse.urlsplit(settings.base_url.strip())
        self._https = url.scheme == "https"
        self._host = url.hostname or ""  # checked above
        self._port = url.port or (443 if self._https else 80)
        path = url.path.rstrip("/")
        self._api = path if path.endswith("/v1") else f"{path}/v1"  # the OpenAI routes
        self._root = self._api[: -len("/v1")]  # the engine's own routes (tokenize)
        self.where = f"{url.scheme}://{url.netloc}"  # for messages (never the key)
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()  # guards _conn against close() from another thread
        self._tokenize_route: tuple[str, str] | None = None  # (path, body key), found once
        self._no_tokenizer = False  # looked for, and there is none
        self.model = settings.model

    @contextlib.contextmanager
    def timeout(self, seconds: float) -> Iterator[None]:
        """The calls made inside have at most ``seconds`` each (and say so when given up)."""
        settings = self.settings
        self.settings = replace(settings, timeout_s=min(settings.timeout_s, seconds))
        try:
            yield
        finally:
            self.settings = settings
            self._drop_connection()  # (its socket's timeout was the short one)

    # -- the three calls -------------------------------------------------------------------
    def deadline(self) -> float:
        """The deadline of an update starting now."""
        return time.monotonic() + self.settings.timeout_s

    def list_models(self) -> list[dict[str, Any]]:
        """The server's models (``/v1/models``): their ids and, on vLLM, ``max_model_len``."""
        got = self._json("GET", f"{self._api}/models", None)
        data = got.get("data") if isinstance(got, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) for m in data
        ):
            raise ServerError(f"{self.where} answered /v1/models without a list of models")
        return data

    @property
    def has_tokenizer(self) -> bool | None:
        """Whether the server has a tokenize route (None: not looked for yet)."""
        if self._tokenize_route is not None:
            return True
        return False if self._no_tokenizer else None

    def find_tokenizer(self, deadline: float | None = None) -> bool:
        """Look once for the server's tokenize route; False: it has none (Ollama, LM Studio),
        and tokens are counted by length. A route is taken only when it turns a word into at
        least one token: llama-server answers a body without its ``content`` key with an empty
        list (``handle_tokenize``), and LM Studio answers any route it lacks with HTTP 200 and
        an ``error`` (lmstudio-ai/lmstudio-bug-tracker#618)."""
        if self._tokenize_route is not None or self._no_tokenizer:
            return self._tokenize_route is not None
        for path, key in (
            (f"{self._root}/extras/tokenize", "input"),  # llama-cpp-python
            (f"{self._root}/tokenize", "prompt"),  # vLLM, SGLang
            (f"{self._root}/tokenize", "content"),  # llama.cpp's llama-server
        ):
            try:
                tokens = self._tokens(path, key, "Hello", deadline)
            except ServerError as e:
                if e.transient and e.status in (None, 429, 503):
                    raise  # down, unreachable or loading: nothing learnt about the routes
                log.debug("%s: no tokenizer at %s (%s)", self.where, path, e)
                continue
            if tokens:
                self._tokenize_route = (path, key)
                return True
        self._no_tokenizer = True
        log.info("%s has no tokenize route: tokens are counted by length", self.where)
        return False

    def tokenize(self, text: str, deadline: float | None = None) -> list[int]:
        """The tokens the server makes of ``text`` as a completion prompt (BOS included where
        the model adds one). Only for a server that has a tokenize route (find_tokenizer)."""
        if not self.find_tokenizer(deadline):
            raise ServerError(f"{self.where} has no tokenize route")
        assert self._tokenize_route is not None
        return self._tokens(*self._tokenize_route, text, deadline)

    def _tokens(self, path: str, key: str, text: str, deadline: float | None) -> list[int]:
        got = self._json("POST", path, {key: text, "model": self.model}, None, deadline)
        tokens = got.get("tokens") if isinstance(got, dict) else None
        if not isinstance(tokens, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in tokens
        ):
            raise ServerError(f"{self.where} answered {path} without a list of token ids")
        return tokens

    def completion(
        self,
        prompt: str,
        max_tokens: int,
        extra: dict[str, Any] | None = None,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> Any:
        """One greedy ``/v1/completions`` answer, not streamed, as the server sent it."""
        body = {**self._greedy(max_tokens), "prompt": prompt, **(extra or {})}
        return self._json("POST", f"{self._api}/completions", body, should_abort, deadline)

    def verify(
        self,
        prompt: str,
        draft: str,
        tokens: Sequence[int] | None,
        n_draft: int | None,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> DraftCheck:
        """Score the draft: the last ``n_draft`` of ``tokens`` (what the server makes of
        ``prompt + draft``); both None for a server without a tokenize route, where the draft's
        tokens are read off the echo (parse_echo)."""
        got = self.completion(prompt + draft, 1, ECHO, should_abort, deadline)
        return parse_echo(got, tokens, n_draft, draft, self.where)

    def generate(
        self,
        text: str,
        max_tokens: int,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> Generated:
        """Continue ``text`` greedily for at most ``max_tokens`` tokens (streamed; the stream
        is left at that many, whether or not the server stops there)."""

        def text_of(choice: dict[str, Any]) -> str:
            piece = choice.get("text")
            if not isinstance(piece, str):
                raise ServerError(f"{self.where} streamed a completion without text")
            return piece

        body = {"prompt": text}
        # An empty piece without a finish is a token too (a part of a character).
        return self._stream("completions", body, max_tokens, text_of, True, should_abort, deadline)

    def chat(
        self,
        messages: Sequence[dict[str, str]],
        max_tokens: int,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Generated:
        """The assistant's answer to ``messages`` (greedy, streamed, at most ``max_tokens``
        tokens): each chunk's ``delta.content``; a thinking model's ``delta.reasoning`` (Ollama)
        or ``reasoning_content`` (vLLM, SGLang) is not part of it."""

        def content_of(choice: dict[str, Any]) -> str | None:
            delta = choice.get("delta")
            piece = delta.get("content") if isinstance(delta, dict) else None
            if piece is not None and not isinstance(piece, str):
                raise ServerError(f"{self.where} streamed a chat answer without text")
            return piece

        body = {"messages": list(messages), **(extra or {})}
        return self._stream(
            "chat/completions", body, max_tokens, content_of, False, should_abort, deadline
        )

    def _stream(
        self,
        route: str,
        fields: dict[str, Any],
        max_tokens: int,
        piece_of: Callable[[dict[str, Any]], str | None],
        empty_counts: bool,
        should_abort: Callable[[], bool] | None,
        deadline: float | None,
    ) -> Generated:
        """One streamed greedy request: the pieces ``piece_of`` reads off each chunk's first
        choice (``empty_counts``: an empty piece without a finish is a token), read up to
        ``max_tokens`` of them."""
        out = Generated()
        if max_tokens <= 0:
            out.finish = "length"
            return out
        body = {**self._greedy(max_tokens), **fields, "stream": True}
        path = f"{self._api}/{route}"

        def on_line(line: bytes) -> None:
            chunk = _event(line, self.where, path)
            if chunk is None:
                return
            choice = _first_choice(chunk, self.where)
            piece = piece_of(choice)
            finish = choice.get("finish_reason")
            if piece or (empty_counts and piece is not None and not finish):
                out.pieces.append(piece)
                out.chars += len(piece)
                if out.chars > max_tokens * MAX_TOKEN_CHARS:
                    # No model's tokens are this long: the budget, cut to what it allows.
                    extra = out.chars - max_tokens * MAX_TOKEN_CHARS
                    out.pieces[-1] = piece[: len(piece) - extra]
                    out.finish = "length"
                    raise _Enough
            if isinstance(finish, str) and finish:
                out.finish = finish
            elif len(out.pieces) >= max_tokens:
                out.finish = "length"  # the budget: read no further (the server may go on)
                raise _Enough

        status, raw = self._exchange("POST", path, body, should_abort, deadline, on_line=on_line)
        if status != 200:
            raise self._http_error(status, raw, path)
        if not out.finish:
            what = "completion" if route == "completions" else "answer"
            raise ServerError(
                f"{self.where} ended the stream before the {what} finished", transient=True
            )
        return out

    def close(self) -> None:
        self._drop_connection()

    # -- requests --------------------------------------------------------------------------
    def _greedy(self, max_tokens: int) -> dict[str, Any]:
        """Sampling fields for plain greedy decoding on every server: temperature 0, and no
        repetition penalty (llama-cpp-python's server applies 1.1 unless told otherwise)."""
        return {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "repeat_penalty": 1.0,  # llama-cpp-python
            "repetition_penalty": 1.0,  # vLLM
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
        }

    def _json(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> Any:
        status, raw = self._exchange(method, path, body, should_abort, deadline)
        if status != 200:
            raise self._http_error(status, raw, path)
        got = _loads(raw, self.where)
        if (why := _error_in_body(got)) is not None:
            # LM Studio answers a route it does not have with HTTP 200 and an error
            # (lmstudio-ai/lmstudio-bug-tracker#618): no such route, as a 404 would say.
            raise ServerError(f"{self.where} answered {path}: {why}", no_route=True)
        return got

    def _http_error(self, status: int, raw: bytes, path: str) -> ServerError:
        detail = _error_detail(raw)
        tail = f": {detail}" if detail else ""
        if status in (401, 403):
            return ServerError(
                f"{self.where} refused the API key (HTTP {status}){tail}", status=status
            )
        if status == 404:
            return ServerError(
                f"{self.where} has no {path} (HTTP 404): is the address right?",
                status=status,
                no_route=True,
            )
        return ServerError(
            f"{self.where} answered HTTP {status}{tail}", transient=status >= 500, status=status
        )

    def _busy(self, call: _Call, path: str) -> ServerError:
        """HTTP 429: a server that limits its rate (a hosted API, a proxy in front of a local
        server) answers again after a while: a pause, not a failure (ten of them in a row
        turned translation off for the meeting)."""
        wait: float | None = None
        with contextlib.suppress(TypeError, ValueError):
            wait = min(MAX_RETRY_AFTER_S, max(0.0, float(call.retry_after or "")))
        detail = _error_detail(call.body)
        return ServerError(
            f"{self.where} is busy (HTTP 429: too many requests){': ' + detail if detail else ''}",
            transient=True,
            status=429,
            retry_after=wait,
        )

    def _exchange(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        should_abort: Callable[[], bool] | None,
        deadline: float | None = None,
        on_line: Callable[[bytes], None] | None = None,
    ) -> tuple[int, bytes]:
        """Status and body (empty when streamed to ``on_line``), with bounded retries of a
        connection that failed before the server answered, all by ``deadline``."""
        if deadline is None:
            deadline = self.deadline()
        attempts = 1 + max(0, self.settings.retries)
        for attempt in range(attempts):
            call = self._start(method, path, body, on_line)
            self._wait(call, should_abort, deadline)
            if call.error is None and call.status == 429:
                raise self._busy(call, path)
            if call.error is None:
                return call.status, call.body
            if isinstance(call.error, ServerError):
                raise call.error
            why = _os_error_text(call.error)
            if call.answered or attempt == attempts - 1:
                raise ServerError(
                    f"{self.where}: {why}", transient=True, answered=call.answered
                ) from None
            log.info("server %s: %s; trying again", self.where, why)
            pause = RETRY_BACKOFF_S[min(attempt, len(RETRY_BACKOFF_S) - 1)]
            if time.monotonic() + pause >= deadline:
                raise ServerError(f"{self.where}: {why}", transient=True, answered=False) from None
            if _sleep_unless(pause, should_abort):
                raise Aborted
        raise AssertionError("unreachable")

    def _start(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        on_line: Callable[[bytes], None] | None,
    ) -> _Call:
        call = _Call()
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"

        # Taken here, not on the call's thread: a call given up (aborted, stalled) must never
        # share a connection with the next one, whose request would meet the old one's state.
        conn = self._connection()

        def run() -> None:
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                call.answered = True
                call.status = resp.status
                call.retry_after = resp.getheader("Retry-After")
                call.progress = time.monotonic()
                if on_line is None or resp.status != 200:
                    call.body = resp.read(MAX_BODY_BYTES + 1)
                    if len(call.body) > MAX_BODY_BYTES:
                        raise ServerError(
                            f"{self.where} answered {path} with more than "
                            f"{MAX_BODY_BYTES >> 20} MB: not an answer of this app's requests"
                        )
                else:
                    while line := resp.readline(MAX_LINE_BYTES + 1):
                        call.progress = time.monotonic()
                        if len(line) > MAX_LINE_BYTES:
                            raise ServerError(
                                f"{self.where} streamed a line of more than "
                                f"{MAX_LINE_BYTES >> 20} MB: not a model's answer"
                            )
                        on_line(line)
                if resp.will_close:
                    self._drop_connection(conn)
            except _Enough:
                # All the client wants: hang up, so the server stops computing the rest.
                self._drop_connection(conn)
            except BaseException as e:  # reported to the waiting caller
                call.error = e
                # Only this call's connection: after an abort or a stall the caller may have
                # opened a new one for its next request already (closing that one too broke
                # it mid-request: ResponseNotReady).
                self._drop_connection(conn)
            finally:
                call.done.set()

        threading.Thread(target=run, name="completions-http", daemon=True).start()
        return call

    def _wait(self, call: _Call, should_abort: Callable[[], bool] | None, deadline: float) -> None:
        """Until the call is done; Aborted, or ServerTimeout at the deadline (the whole
        answer's: a server that sends a byte now and then does not push it back)."""
        while not call.done.wait(POLL_S if should_abort is not None else 0.05):
            if should_abort is not None and should_abort():
                self._drop_connection()  # the server sees the disconnect and stops
                raise Aborted
            if time.monotonic() >= deadline:
                self._drop_connection()
                timeout = self.settings.timeout_s
                if call.progress:
                    raise ServerTimeout(f"{self.where} did not finish within {timeout:g} s")
                raise ServerTimeout(
                    f"{self.where} did not answer within {timeout:g} s", answered=call.answered
                )

    def _connection(self) -> http.client.HTTPConnection:
        with self._lock:
            if self._conn is None:
                timeout = self.settings.timeout_s + 1.0  # the caller's deadline goes first
                if self._https:
                    self._conn = http.client.HTTPSConnection(
                        self._host, self._port, timeout=timeout,
                        context=ssl.create_default_context(),
                    )  # fmt: skip
                else:
                    self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            return self._conn

    def _drop_connection(self, conn: http.client.HTTPConnection | None = None) -> None:
        """Close the connection (``conn``: only if it is still the current one); a request
        blocked on it in another thread fails at once."""
        with self._lock:
            if conn is not None and conn is not self._conn:
                return
            conn, self._conn = self._conn, None
        if conn is None:
            return
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed by the peer
                sock.shutdown(socket.SHUT_RDWR)
        conn.close()


def _sleep_unless(seconds: float, should_abort: Callable[[], bool] | None) -> bool:
    """Sleep; True if the abort callback fired meanwhile."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if should_abort is not None and should_abort():
            return True
        time.sleep(min(left, 0.02))
    return False


def _os_error_text(e: BaseException) -> str:
    if isinstance(e, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(e, socket.gaierror):
        return "unknown host name"
    if isinstance(e, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(e, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
        return "the connection was dropped"
    if isinstance(e, ssl.SSLError):
        return f"TLS failed ({_one_line(str(e))})"
    if isinstance(e, http.client.HTTPException | OSError | ValueError):
        return _one_line(f"{type(e).__name__}: {e}") if str(e) else type(e).__name__
    return _one_line(repr(e))


def _loads(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        shown = _one_line(raw[:80].decode("utf-8", errors="replace"))
        # Usually a proxy's error page or a server in trouble: worth asking again later.
        raise ServerError(
            f"{where} answered something that is not JSON ({shown!r})", transient=True
        ) from None


def _event(line: bytes, where: str, path: str) -> Any:
    """The JSON of one line of a stream of server-sent events (None: a blank separator, a
    ": ping" comment, an "event:" line or the closing ``[DONE]``). A line that is a whole JSON
    error instead of events (LM Studio's HTTP 200 for a route it lacks) is that error."""
    line = line.strip()
    if line.startswith(b"{"):
        try:
            got = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            got = None
        if (why := _error_in_body(got)) is not None:
            raise ServerError(f"{where} answered {path}: {why}", no_route=True)
        return None
    if line.startswith(b"<"):
        # An HTML page (a proxy's error page) where events were asked for: said as what it
        # is, not as "ended the stream before the completion finished".
        return _loads(line, where)  # (raises: it is no JSON)
    if not line.startswith(b"data:"):
        return None
    data = line[5:].strip()
    if data == b"[DONE]":
        return None
    return _loads(data, where)


def _error_in_body(got: Any) -> str | None:
    """The error a server put in a successful answer instead of what was asked for (LM Studio:
    ``{"error": "Unexpected endpoint or method. (POST /tokenize)"}`` with HTTP 200)."""
    if not isinstance(got, dict) or "error" not in got:
        return None
    if any(k in got for k in ("choices", "data", "tokens")):
        return None
    err = got["error"]
    if isinstance(err, dict):
        err = err.get("message", err)
    return _one_line(str(err))


def _error_detail(raw: bytes) -> str:
    """The server's own reason, from the usual JSON error shapes, else its text."""
    try:
        got = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return _one_line(raw[:MAX_ERROR_TEXT].decode("utf-8", errors="replace"))
    if isinstance(got, dict):
        err = got.get("error", got.get("detail", got.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if isinstance(err, list) and err and isinstance(err[0], dict):
            err = err[0].get("msg", err[0])  # FastAPI's validation errors
        if err is not None:
            return _one_line(str(err))
    return _one_line(str(got))


def _first_choice(got: Any, where: str) -> dict[str, Any]:
    choices = got.get("choices") if isinstance(got, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ServerError(f"{where} answered a completion without choices")
    return choices[0]


def _number(x: Any) -> float | None:
    if isinstance(x, int | float) and not isinstance(x, bool) and not math.isnan(x):
        return float(x)
    return None


def _ambiguous(text: str) -> bool:
    """A token text that many tokens share: part of a character ('' on llama-cpp-python, '�' on
    vLLM) or a special token rendered as nothing."""
    return text == "" or "\ufffd" in text


def parse_echo(
    got: Any, tokens: Sequence[int] | None, n_draft: int | None, draft: str, where: str
) -> DraftCheck:
    """The draft's log-probabilities from an ``echo`` + ``logprobs`` completion over
    ``tokens`` (the prompt, then ``n_draft`` tokens of the text ``draft``), ``max_tokens`` 1.

    Without the tokens (a server with no tokenize route: SGLang before its ``/tokenize``,
    sgl-project/sglang#9545) only the OpenAI layout can be read, and the draft is the run of
    last prompt entries whose texts make up the draft exactly (DraftNotAligned when none
    does: a token that spans the prompt's end and the draft's start, a character split over
    tokens).

    Entries are counted from the end: the generated token (when there is one), then the draft.
    Two layouts occur. The OpenAI one (vLLM): one entry per prompt token, then one per
    generated token. llama-cpp-python's: the first prompt token is dropped when it is the BOS
    token, and so is every later token equal to it (``if token == bos_token_id: continue``),
    and the generated token is missing when it is EOS. When the first prompt token is *not*
    its BOS token, llama-cpp-python (0.3.x, ``Llama._create_completion``) pairs each token
    with the distribution that *follows* it, one position off: that layout is refused
    (NoPromptLogprobs) rather than misread.
    """
    choice = _first_choice(got, where)
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        raise NoPromptLogprobs(
            f"{where} returned no log-probabilities with echo (it cannot verify drafts)"
        )
    labels, offsets = lp.get("tokens"), lp.get("text_offset")
    values, tops = lp.get("token_logprobs"), lp.get("top_logprobs")
    if not (isinstance(labels, list) and isinstance(values, list) and isinstance(tops, list)):
        raise NoPromptLogprobs(f"{where} returned log-probabilities without tokens or values")
    usage = got.get("usage") if isinstance(got, dict) else None
    n = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    g = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if not isinstance(n, int) or not isinstance(g, int):
        raise ServerError(f"{where} answered a completion without token counts (usage)")
    if tokens is not None and n != len(tokens):
        raise ServerError(
            f"{where} read the prompt as {n} tokens, its tokenizer said {len(tokens)}"
        )
    count = len(values)
    if not (len(labels) == len(tops) == count) or (
        isinstance(offsets, list) and len(offsets) != count
    ):
        raise ServerError(f"{where} returned log-probability lists of different lengths")
    finish = choice.get("finish_reason")
    eos_next = finish == "stop"
    if tokens is None or n_draft is None:
        if count <= n or count - n != g:
            raise NoPromptLogprobs(
                f"{where} returned prompt log-probabilities that do not line up with the "
                f"prompt ({count} for {n} tokens): it cannot verify drafts"
            )
        found = _draft_span(labels[:n], draft)
        if found is None:
            raise DraftNotAligned(f"{where}: the draft's tokens are not its own in the echo")
        return _draft_check(
            labels, values, tops, offsets, count, g, found, draft, eos_next, n, where
        )
    first = tokens[0] if tokens else None
    skipped = sum(1 for t in tokens if t == first)
    if count > n:  # the OpenAI layout: every prompt token, then the generated one(s)
        after = count - n
    elif count == n - skipped + g:  # llama-cpp-python with the BOS token first
        after = g
    else:
        after = -1
    if after >= 0 and count == n and g == 1 and after == 1:
        # llama-cpp-python with one BOS-valued token and a generated one, or its shifted
        # layout: the generated token's entry is the greedy choice, so it holds the best value.
        v, top = _number(values[-1]), tops[-1]
        gen = choice.get("text")
        best = max((x for x in (top or {}).values() if _number(x) is not None), default=None)
        ok = (
            v is not None
            and best is not None
            and v >= best - 1e-6
            and isinstance(gen, str)
            and isinstance(labels[-1], str)
            and gen.endswith(labels[-1])
        )
        after = 1 if ok else -1
    if after < 0 or count - after < n_draft:
        raise NoPromptLogprobs(
            f"{where} returned prompt log-probabilities that do not line up with the prompt "
            f"({count} for {n} tokens; llama-cpp-python does this for models whose prompt "
            "does not start with their BOS token): it cannot verify drafts"
        )
    return _draft_check(
        labels, values, tops, offsets, count, after, n_draft, draft, eos_next, n, where
    )


def _draft_check(
    labels: list[Any],
    values: list[Any],
    tops: list[Any],
    offsets: Any,
    count: int,
    after: int,
    n_draft: int,
    draft: str,
    eos_next: bool,
    n: int,
    where: str,
) -> DraftCheck:
    """The draft's ``n_draft`` entries, which end ``after`` entries before the last."""
    start = count - after - n_draft
    out = DraftCheck([], [], [], [], eos_next, n)
    labels_seen: list[str] = []
    for i in range(start, start + n_draft):
        v, top, label = _number(values[i]), tops[i], labels[i]
        if not isinstance(top, dict) or not isinstance(label, str):
            raise NoPromptLogprobs(f"{where} left out the log-probability of a draft token")
        if v is None:  # NaN or nothing where the number belongs: this answer only
            raise UnusableLogprobs(f"{where} returned an unusable log-probability ({values[i]})")
        others = [x for x in (_number(y) for y in top.values()) if x is not None]
        best = max([v, *others])
        # The draft token's own entry is written into the top dict last; when its text equals
        # the best token's, it may have overwritten a *different* token's higher value. Only
        # texts many tokens share make that possible.
        exact = len(top) > 1 or not _ambiguous(label)
        out.logprob.append(v)
        out.best.append(best)
        out.best_exact.append(exact)
        labels_seen.append(label)
    out.pieces = _draft_pieces(labels_seen, offsets, start, after, count, draft)
    return out


def _draft_span(labels: Sequence[Any], draft: str) -> int | None:
    """How many of the last ``labels`` (prompt + draft entries) are the draft: the run whose
    texts join to exactly ``draft`` (None: no run does)."""
    text = ""
    for k in range(1, len(labels) + 1):
        label = labels[-k]
        if not isinstance(label, str) or _ambiguous(label):
            return None
        text = label + text
        if text == draft:
            return k
        if len(text) >= len(draft) or not draft.endswith(text):
            return None
    return None


def _draft_pieces(
    labels: list[str], offsets: Any, start: int, after: int, count: int, draft: str
) -> list[str | None]:
    """Each draft token's text, None where it cannot be known.

    Labels lose a character split over several tokens (each part alone decodes to '' or '�');
    llama-cpp-python's text offsets, counted on the decoded prefix, put such a character on
    the token that completes it, so they are used where they agree with the draft text.
    """
    n = len(labels)
    if isinstance(offsets, list) and all(_number(o) is not None for o in offsets) and n:
        offs = [int(offsets[i]) for i in range(start, start + n)]
        end = int(offsets[count - after]) if after > 0 else offs[0] + len(draft)
        rel = [o - offs[0] for o in [*offs, end]]
        if rel[-1] == len(draft) and all(a <= b for a, b in itertools.pairwise(rel)):
            spans = [draft[rel[j] : rel[j + 1]] for j in range(n)]
            if all(_ambiguous(x) or x == y for x, y in zip(labels, spans, strict=True)):
                return list(spans)
    if "".join(labels) == draft:
        return list(labels)
    # Known up to the first token whose text is not the draft's next text.
    pieces: list[str | None] = []
    pos = 0
    for label in labels:
        if _ambiguous(label) or not draft.startswith(label, pos):
            break
        pieces.append(label)
        pos += len(label)
    return pieces + [None] * (n - len(pieces))
