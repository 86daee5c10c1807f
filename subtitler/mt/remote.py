"""Streaming translation on a shared inference server: RT, SSBD and CD over an
OpenAI-compatible API (see :mod:`subtitler.mt.completions`).

What a server can do is found once, when the app connects (:func:`probe_server`), and said in
Settings in plain words (:data:`ROUTE_WORDS`):

* prompt log-probabilities come back with ``echo`` on ``/v1/completions`` (vLLM, SGLang,
  llama-cpp-python's server): SSBD, RT and CD;
* ``/v1/completions`` takes the prompt as written but returns no prompt log-probabilities
  (llama.cpp's llama-server, LM Studio): RT and CD; SSBD below beta 0.5 is translated with RT
  (what beta = 0 would give), from 0.5 on it keeps every draft token without looking, as CD;
* only ``/v1/chat/completions`` can be used (Ollama: its completions route puts the prompt in
  the model's chat template, ``openai.FromCompleteRequest`` builds a GenerateRequest without
  ``raw``): RT, the prompt's lines sent as chat messages.

No tokenize route is needed: where the server has none (Ollama, LM Studio, SGLang before its
``/tokenize``) tokens are counted by length (:func:`estimate_tokens`) and a draft's tokens are
read off the verify request's echo.

The LM protocol (full logits rows, one token at a time) does not fit a server, so the update
is decoded at a higher level, in at most two completion requests:

* SSBD: one verify request over prompt + draft with ``echo`` and ``logprobs`` gives each draft
  token's log-probability and the best one's, and the biased rule
  (:func:`~subtitler.mt.ssbd.accepted_by_logprobs`) keeps a prefix of the draft; a second,
  streamed request continues greedily after that prefix (the first token it writes is the
  correction), relying on the server's prefix cache for the shared prompt. A draft the model
  accepts whole and would end right after costs the verify request alone. beta >= 0.5 keeps
  every token without looking (as locally), so it needs no verify request.
* RT: one streamed greedy request after the prompt.
* CD: one streamed request after prompt + draft.

The draft is the previous translation's *text*; the tokens verified are what the server's
tokenizer makes of prompt + draft (asked of the server, and checked against the token count
the verify request reports). With the same model and the bit-exact llama.cpp settings
(README, "Exactness of beta = 0"), beta = 0 reproduces local RT token for token.

Output is kept as token texts ("pieces"), which is all display-only and output mask-k need.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from subtitler.config import MtConfig
from subtitler.models.templates import FEWSHOT, TemplateError, detect_template
from subtitler.mt.completions import (
    ECHO,
    OLLAMA_FINGERPRINT,
    Aborted,
    CompletionsClient,
    DraftNotAligned,
    NoPromptLogprobs,
    ServerError,
    ServerSettings,
    ServerTimeout,
    UnusableLogprobs,
    parse_echo,
)
from subtitler.mt.engine import EngineResult, EngineUnavailable, Progress, shown_result
from subtitler.mt.glossary import Glossary
from subtitler.mt.output_rules import problem, text_cut
from subtitler.mt.prompts import BUILTIN, PromptBuilder, for_server
from subtitler.mt.ssbd import DecodeOptions, Method, accepted_by_logprobs
from subtitler.mt.streaming import Decoded, LengthCap, Retranslator
from subtitler.mt.terms import present
from subtitler.mt.translator import apply_settings
from subtitler.types import UpdateStats

log = logging.getLogger(__name__)

TOKENIZE_CACHE = 64  # texts whose server tokens are remembered (a final repeats its partial)
START_CONNECT_S = 5.0  # the longest a start waits for a server (connect_later)
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0)  # after a failed call, later calls wait this long


class ContextTooSmall(ServerError):
    """The server's context cannot hold one update's prompt (and one token of answer)."""


class ServerRoute(enum.StrEnum):
    """How a server is asked, the best it supports (found once: probe_server)."""

    VERIFY = "verify"  # /v1/completions with prompt log-probabilities: SSBD, RT and CD
    COMPLETIONS = "completions"  # /v1/completions without them: RT and CD
    CHAT = "chat"  # /v1/chat/completions only: RT


# What each route means for the user (Settings), in plain words, and in the terms (tooltip).
ROUTE_WORDS: dict[ServerRoute, tuple[str, str]] = {
    ServerRoute.VERIFY: (
        "Checks each update against the words shown: every way of updating works.",
        "SSBD, RT and CD: /v1/completions returns prompt log-probabilities with echo",
    ),
    ServerRoute.COMPLETIONS: (
        "Cannot check an update against the words shown: “keeping what is shown” translates "
        "the line again at every update; “only add words” works.",
        "RT and CD through /v1/completions; SSBD below β 0.5 is translated with RT: the "
        "server returns no prompt log-probabilities",
    ),
    ServerRoute.CHAT: (
        "Answers chat requests only: every update translates the whole line again.",
        "RT through /v1/chat/completions (the server's completions route puts a prompt in the "
        "model's chat template, or it has none)",
    ),
}


@dataclass(frozen=True)
class ServerAbilities:
    """What a server can do for the translator, found once when it connects."""

    route: ServerRoute
    tokenizer: bool  # it has a tokenize route (else tokens are counted by length)
    why: str = ""  # why not SSBD, as the server showed it ("" for VERIFY)
    chat_extra: tuple[tuple[str, str], ...] = ()  # fields every chat request carries

    @property
    def plain(self) -> str:
        """One line for Settings, in plain words."""
        return ROUTE_WORDS[self.route][0]

    @property
    def terms(self) -> str:
        """The same in the terms (a tooltip), with how tokens are counted."""
        count = "tokens counted by the server" if self.tokenizer else "tokens counted by length"
        why = f" ({self.why})" if self.why else ""
        return f"{ROUTE_WORDS[self.route][1]}{why}; {count}"


_WORD = re.compile(r"\w+|[^\w\s]")
# Scripts written without spaces, where a model's tokens are about one character each.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
LETTERS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """About how many tokens a model makes of ``text``, for a server that cannot say (no
    tokenize route): a word one per 4 letters begun, a Chinese, Japanese or Korean character
    one each, a punctuation mark one. Rather more than a BPE tokenizer makes of common words
    ("translation" is one token to most, three here): it sets the length cap, which a
    translation that ends by itself never reaches."""
    n = 0
    for m in _WORD.finditer(text):
        word = m.group()
        cjk = len(_CJK.findall(word))
        n += cjk + math.ceil((len(word) - cjk) / LETTERS_PER_TOKEN)
    return n


@dataclass(frozen=True)
class RemoteTranslation:
    """One translation of a segment's current source text, as token texts."""

    segment_id: int
    source: str
    pieces: tuple[str, ...]
    final: bool
    stats: UpdateStats
    problem: str = ""  # why the output is no translation (mt/output_rules.py); "" if it is one

    @property
    def text(self) -> str:
        return "".join(self.pieces).strip()

    @property
    def utf8_pieces(self) -> tuple[bytes, ...]:
        """The token texts as UTF-8, as a display masks them (``EngineResult.pieces``)."""
        return tuple(p.encode("utf-8") for p in self.pieces)


class RemoteTranslator(Retranslator[str]):
    """Translates growing source text on a server (the shared part:
    :class:`~subtitler.mt.streaming.Retranslator`): a verify request over the draft, then a
    streamed continuation; its tokens are their texts."""

    def __init__(
        self,
        client: CompletionsClient,
        prompts: PromptBuilder,
        options: DecodeOptions,
        *,
        output_mask_k: int = 0,
        cap: LengthCap | None = None,
        n_ctx: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        route: ServerRoute = ServerRoute.VERIFY,
        chat_extra: dict[str, str] | None = None,
    ) -> None:
        super().__init__(prompts, options, output_mask_k=output_mask_k, cap=cap)
        self.client = client
        self.route = route  # how the server is asked (probe_server)
        self.chat_extra = dict(chat_extra or {})  # fields every chat request carries
        self.n_ctx = n_ctx  # the server's context length, where it says (vLLM)
        self._clock = clock
        self._tokens: OrderedDict[str, list[int]] = OrderedDict()
        self._bos: int | None = None  # tokens the server adds to any text (a BOS token)

    def tokenize(self, text: str, deadline: float | None = None) -> list[int]:
        got = self._tokens.get(text)
        if got is None:
            got = self._tokens[text] = self.client.tokenize(text, deadline)
            while len(self._tokens) > TOKENIZE_CACHE:
                self._tokens.popitem(last=False)
        else:
            self._tokens.move_to_end(text)
        return got

    def count_tokens(self, text: str, deadline: float | None = None) -> int:
        """Tokens of ``text`` as a prompt: the server's count where it has a tokenize route,
        else an estimate by length."""
        if self.client.find_tokenizer(deadline):
            return len(self.tokenize(text, deadline))
        return estimate_tokens(text)

    def _source_tokens(self, source: str, deadline: float | None) -> int:
        """As locally: the source alone, without the BOS token the server may add."""
        source = " ".join(source.split())
        if not self.client.find_tokenizer(deadline):
            return estimate_tokens(source)
        if self._bos is None:
            self._bos = len(self.tokenize("", deadline))
        return max(0, len(self.tokenize(source, deadline)) - self._bos)

    def decode(
        self,
        source: str,
        draft: Sequence[str],
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> tuple[list[str], UpdateStats]:
        """Translate ``source`` once with the token texts ``draft``; (pieces, stats). Every
        request of the update ends by ``deadline`` (None: the timeout from now)."""
        if deadline is None:
            deadline = self.client.deadline()
        opts = self.options
        clock = self._clock
        st = UpdateStats(method=str(opts.method))
        t0 = clock()
        cap = self.output_cap(self._source_tokens(source, deadline))
        if self.route is ServerRoute.CHAT:
            st.method = str(Method.RT)  # a chat answer cannot continue a draft
            st.prompt_s = clock() - t0
            return self._chat(source, cap, st, should_abort, deadline)
        prompt, room = self.prompt_within(
            source, cap, self.n_ctx, for_server, lambda text: self.count_tokens(text, deadline)
        )
        if room is not None:
            if room <= 0:
                assert self.n_ctx is not None
                raise ContextTooSmall(
                    f"{self.client.where}: the server's context of {self.n_ctx} tokens is too "
                    f"small for one update (its prompt alone is {self.n_ctx - 1 - room} "
                    "tokens); lines are shown as said until the server has a longer one "
                    "(vLLM: --max-model-len)"
                )
            cap = min(cap, room)
        text = "".join(draft)
        if opts.method is Method.RT or not text.strip() or cap == 0:
            st.prompt_s = clock() - t0
            return self._continue(prompt, [], cap, st, should_abort, deadline)
        ids: list[int] | None = None
        if self.client.find_tokenizer(deadline):
            ids_p = self.tokenize(prompt, deadline)
            ids = self.tokenize(prompt + text, deadline)
            m = len(ids) - len(ids_p)
            st.prompt_tokens = len(ids_p)
            if m <= 0 or ids[: len(ids_p)] != ids_p:
                # The draft's first token would merge with the prompt's last: nothing to verify.
                log.debug("draft does not start on a token boundary; decoding without it")
                st.prompt_s = clock() - t0
                return self._continue(prompt, [], cap, st, should_abort, deadline)
        else:
            m = len(draft)  # the draft's pieces: the server's tokens as it streamed them
        st.draft_len = m
        if opts.method is Method.CD or opts.beta >= 0.5:
            # Every draft token is kept (beta >= 0.5 accepts any distribution's token).
            kept = list(draft)
            if m > cap:
                kept = kept[:cap]
            st.accepted = min(m, cap)
            st.prompt_s = clock() - t0
            return self._continue(prompt, kept, cap, st, should_abort, deadline)
        st.prompt_s = clock() - t0
        t1 = clock()
        try:
            chk = self.client.verify(
                prompt, text, ids, None if ids is None else m, should_abort, deadline
            )
        except DraftNotAligned:
            log.debug("draft does not start on a token of its own; decoding without it")
            st.draft_len = 0
            return self._continue(prompt, [], cap, st, should_abort, deadline)
        st.verify_s = clock() - t1
        m = st.draft_len = st.verified_tokens = len(chk.logprob)
        if ids is None:
            st.prompt_tokens = chk.prompt_tokens - m
        d = min(accepted_by_logprobs(chk.logprob, chk.best, chk.best_exact, opts.beta), cap)
        # Only tokens whose text is known can be sent back, and a kept part of a character
        # is not text yet: the continuation writes it again.
        known = next((j for j, p in enumerate(chk.pieces) if p is None), m)
        d = min(d, known)
        while d > 0 and chk.pieces[d - 1] == "":
            d -= 1
        kept = [p or "" for p in chk.pieces[:d]]
        st.accepted = d
        if d == m and chk.next_is_eos:
            st.ended_by_eos = True
            st.output_len = d
            return kept, st
        return self._continue(prompt, kept, cap, st, should_abort, deadline)

    def _chat(
        self,
        source: str,
        cap: int,
        st: UpdateStats,
        should_abort: Callable[[], bool] | None,
        deadline: float,
    ) -> tuple[list[str], UpdateStats]:
        """RT as a chat request: the prompt's lines as messages, the answer streamed."""
        t0 = self._clock()
        messages = self.prompts.chat_messages(source, self.context)
        try:
            gen = self.client.chat(messages, cap, should_abort, deadline, self.chat_extra)
        except Aborted:
            st.aborted = True
            st.decode_s = self._clock() - t0
            return [], st
        st.decode_s = self._clock() - t0
        # The completions prompts end in the target's label ("German:"); a chat answer may
        # start with it.
        pieces = _without_prefix(gen.pieces, self.prompts.target_label)
        st.decode_steps = len(gen.pieces)
        st.output_len = len(pieces)
        st.ended_by_eos = gen.finish == "stop"
        st.hit_cap = not st.ended_by_eos
        return pieces, st

    def _continue(
        self,
        prompt: str,
        kept: list[str],
        cap: int,
        st: UpdateStats,
        should_abort: Callable[[], bool] | None,
        deadline: float,
    ) -> tuple[list[str], UpdateStats]:
        """Greedy continuation after prompt + kept tokens, up to ``cap`` tokens in all."""
        t0 = self._clock()
        try:
            gen = self.client.generate(
                prompt + "".join(kept), cap - len(kept), should_abort, deadline
            )
        except Aborted:
            st.aborted = True
            st.decode_s = self._clock() - t0
            return kept, st
        st.decode_s = self._clock() - t0
        st.decode_steps = len(gen.pieces)
        out = kept + gen.pieces
        st.output_len = len(out)
        st.ended_by_eos = gen.finish == "stop"
        st.hit_cap = not st.ended_by_eos
        return out, st

    def update(
        self,
        segment_id: int,
        source: str,
        final: bool,
        should_abort: Callable[[], bool] | None = None,
        deadline: float | None = None,
    ) -> RemoteTranslation:
        """Translate the newest source text of a segment, drafting from its last translation
        (its requests all end by ``deadline``; None: the timeout from now)."""

        def decode(draft: list[str]) -> Decoded[str]:
            try:
                pieces, st = self.decode(source, draft, should_abort, deadline)
            except Aborted:
                pieces, st = [], UpdateStats(method=str(self.options.method), aborted=True)
            # As locally: one line of text, without a chat template's markers.
            cut = text_cut(pieces)
            if cut != pieces:
                pieces = cut
                st.ended_by_eos, st.hit_cap = True, False
            if st.aborted:
                return Decoded(pieces, st)
            p = self.prompts
            kept = present(source, p.terms) if p.terms else ()
            text = "".join(pieces)
            why = problem(source, text, pieces, p.src_lang, p.tgt_lang, st.hit_cap, kept)
            return Decoded(pieces, st, why)

        got = self._next(segment_id, source, final, decode)
        return RemoteTranslation(segment_id, source, tuple(got.out), final, got.stats, got.problem)


def _without_prefix(pieces: Sequence[str], label: str) -> list[str]:
    """``pieces`` without a leading ``label`` (and the spaces around it), if they start so."""
    text = "".join(pieces)
    stripped = text.lstrip()
    if not stripped.startswith(label):
        return list(pieces)
    cut = len(text) - len(stripped) + len(label)
    cut += len(text[cut:]) - len(text[cut:].lstrip())
    out, at = [], 0
    for piece in pieces:
        if at + len(piece) > cut:
            out.append(piece[max(0, cut - at) :])
        at += len(piece)
    return out


def resolve_server_template(requested: str, model: str) -> str:
    """The prompt template for a server's model: a builtin one, or "auto" by its name."""
    if requested in (*BUILTIN, FEWSHOT):
        return requested
    if requested == "auto":
        try:
            found = detect_template({"general.name": model})
        except TemplateError:
            found = ""
        if found in BUILTIN:
            return found
        raise TemplateError(
            f"server model {model!r}: choose its prompt template in Settings "
            "(auto knows Tower and Qwen3 by name; chatml for ChatML models, fewshot for base "
            "models)"
        )
    raise TemplateError(
        f"the {requested!r} prompt template needs the model file; for a server model choose "
        "tower, qwen3, chatml or fewshot"
    )


def probe_server(client: CompletionsClient, prompts: PromptBuilder) -> ServerAbilities:
    """Find once what the server can do, with the requests an update would make (the prompt
    of a short line, a two-letter draft): prompt log-probabilities with ``echo`` (SSBD), a
    completions route that takes the prompt as written (RT, CD), or chat only (RT).

    What each server answers (tests/helpers/scripted_server.py acts them out): vLLM and
    SGLang return the echo's log-probabilities; llama.cpp's llama-server refuses ``echo``
    with HTTP 500 "Only no echo is supported" (tools/server/server-common.cpp,
    ``oaicompat_completion_params_parse``; newer builds accept it and return the generated
    token's log-probability only, ggml-org/llama.cpp#27174); LM Studio ignores both fields
    (lmstudio-ai/lms#60); Ollama ignores ``echo`` and marks every answer "fp_ollama"."""
    tokenizer = client.find_tokenizer()
    prompt, draft = prompts.build("Hello."), "OK"
    try:
        got = client.completion(prompt + draft, 1, ECHO)
    except ServerError as e:
        if e.no_route:
            return _chat_only(client, prompts, tokenizer, f"it has no /v1/completions ({e})")
        if e.status in (401, 403) or (e.transient and e.status in (None, 429, 503)):
            raise  # down, loading, or the key: nothing learnt about the server
        # Refused with a reason (llama-server: "Only no echo is supported"): ask once
        # without echo, as an update without a draft would.
        said = str(e).removeprefix(client.where).strip()
        why = f"{client.where} returns no prompt log-probabilities (asked for them, it {said})"
        try:
            got = client.completion(prompt, 1)
        except ServerError as e2:
            if e2.no_route:
                return _chat_only(client, prompts, tokenizer, why)
            raise
        if _is_ollama(got):
            return _chat_only(client, prompts, tokenizer, _OLLAMA_WHY, ollama=True)
        return ServerAbilities(ServerRoute.COMPLETIONS, tokenizer, why)
    if _is_ollama(got):
        return _chat_only(client, prompts, tokenizer, _OLLAMA_WHY, ollama=True)
    try:
        ids: list[int] | None = None
        m: int | None = None
        if tokenizer:
            ids_p, ids = client.tokenize(prompt), client.tokenize(prompt + draft)
            m = len(ids) - len(ids_p)
            if m <= 0:
                return ServerAbilities(ServerRoute.VERIFY, tokenizer)  # updates will tell
        parse_echo(got, ids, m, draft, client.where)
    except (UnusableLogprobs, DraftNotAligned) as e:
        # The layout is right; these values or this draft could not be used this once.
        log.info("%s", e)
    except ServerError as e:
        if e.transient:
            raise
        return ServerAbilities(ServerRoute.COMPLETIONS, tokenizer, str(e))
    return ServerAbilities(ServerRoute.VERIFY, tokenizer)


_OLLAMA_WHY = "Ollama puts a completions prompt in the model's chat template"


def _is_ollama(got: Any) -> bool:
    return isinstance(got, dict) and got.get("system_fingerprint") == OLLAMA_FINGERPRINT


def _chat_only(
    client: CompletionsClient,
    prompts: PromptBuilder,
    tokenizer: bool,
    why: str,
    *,
    ollama: bool = False,
) -> ServerAbilities:
    """RT through the chat route, if the server answers there. Ollama is told not to think
    (``reasoning_effort: none`` is its ``think: false``, openai/openai.go): a thinking model's
    reasoning would spend the line's token budget."""
    extra = (("reasoning_effort", "none"),) if ollama else ()
    try:
        messages = prompts.chat_messages("Hello.")
    except TemplateError as e:
        raise ServerError(f"{client.where}: {why}; {e}") from None
    client.chat(messages, 1, extra=dict(extra))
    return ServerAbilities(ServerRoute.CHAT, tokenizer, why, extra)


def check_server(mt: MtConfig) -> tuple[str, str]:
    """What the server of ``mt`` can do, asked now (Settings' Check): (plain words, terms).
    A server that cannot be used raises its one-line ServerError or TemplateError."""
    engine = RemoteEngine(mt)
    try:
        ab = engine.abilities
        assert ab is not None  # connected (no connect_later)
        return ab.plain, f"{engine.name}: {ab.terms}"
    finally:
        engine.close()


def server_settings(mt: MtConfig) -> ServerSettings:
    return ServerSettings(
        base_url=mt.server_url.strip(),
        model=mt.server_model.strip(),
        api_key=mt.server_api_key.strip(),
        timeout_s=mt.server_timeout_s,
    )


def _of_server(e: ServerError) -> ServerError:
    """``e`` said as the translation server's, what it says of the server kept (whether it
    may answer later, its status, the pause it asked for)."""
    return ServerError(
        f"translation server: {e}",
        transient=e.transient,
        status=e.status,
        retry_after=e.retry_after,
        answered=e.answered,
    )


class RemoteEngine:
    """The translation stage's ``Engine`` over a server: no native code runs here, so it needs
    no worker process; a failed call costs one update, and a server that is down or stalls is
    asked again later (with a growing pause), never set aside.

    ``connect_later``: a server that is down or unreachable at start is not an error; the
    notice says so once, and each later update (with a growing pause) tries to connect, so
    translation starts when the server does (the app may well start first)."""

    def __init__(
        self, mt: MtConfig, client: CompletionsClient | None = None, *, connect_later: bool = False
    ) -> None:
        self.client = client or CompletionsClient(server_settings(mt))
        self.mt = mt
        self.name = f"translation server {self.client.where}"
        self.notice = ""
        self.template = ""
        self.n_ctx: int | None = None
        self._trs: dict[str, RemoteTranslator] = {}  # per target language: its own draft
        self.glossary = Glossary()
        self._failures = 0
        self._timeouts = 0  # updates in a row the server did not answer in time
        self._retry_at = 0.0
        self._unreachable = False  # the last failure reached no server (EngineUnavailable)
        self.abilities: ServerAbilities | None = None  # what the server can do (once known)
        self._connected = False
        try:
            if connect_later:
                # The app's start waits for this (nothing is heard until the models are in):
                # a server that hangs is asked again at the first update, not waited for for
                # the whole timeout (up to two minutes in Settings).
                with self.client.timeout(START_CONNECT_S):
                    self._connect(mt)
            else:
                self._connect(mt)
        except ServerError as e:
            if not (connect_later and e.transient):
                self.client.close()
                raise
            self.notice = f"{e}; translating once it answers"
            self._backoff(e.retry_after)
            self._unavailable(e)  # (whether it answered at all, for the refusals meanwhile)
            log.info("%s", self.notice)
        except BaseException:
            self.client.close()
            raise

    def _connect(self, mt: MtConfig) -> None:
        """Ask the server for its models, check the chosen one and whether it can verify."""
        self.notice = ""
        try:
            models = self.client.list_models()
        except ServerError as e:
            raise _of_server(e) from None
        ids = [str(m["id"]) for m in models]
        want = mt.server_model.strip()
        if want and want not in ids:
            raise ServerError(
                f"translation server {self.client.where} serves no model {want!r} "
                f"(it serves: {', '.join(ids) or 'none'})"
            )
        if not ids and not want:
            raise ServerError(f"translation server {self.client.where} serves no model")
        model = want or ids[0]
        self.client.model = model
        info = models[ids.index(model)] if model in ids else {}
        limit = info.get("max_model_len")
        self.n_ctx = limit if isinstance(limit, int) and limit > 0 else None
        self.template = resolve_server_template(mt.template, model)
        self.name = f"{model} on {self.client.where}"
        prompts = PromptBuilder(self.template, mt.src_lang, mt.tgt_lang)
        try:
            self.abilities = probe_server(self.client, prompts)
        except ServerError as e:
            raise _of_server(e) from None
        self.notice = self._route_notice(mt)
        if self.notice:
            log.warning("%s", self.notice)
        self._connected = True
        log.info(
            "translating on %s with the %r prompt: %s",
            self.name,
            self.template,
            self.abilities.terms,
        )

    def describe(self) -> str:
        """What this server can do, in plain words (Settings), "" before it connected."""
        return self.abilities.plain if self.abilities is not None else ""

    def _route_notice(self, mt: MtConfig) -> str:
        """Said once when the server cannot update the way the settings ask."""
        ab = self.abilities
        if ab is None:
            return ""
        if ab.route is ServerRoute.CHAT and mt.method != "RT":
            return (
                f"{self.client.where} answers chat requests only ({ab.why}): every update "
                "translates the whole line again (RT)"
            )
        if ab.route is ServerRoute.COMPLETIONS and mt.method == "SSBD" and mt.beta < 0.5:
            return f"{ab.why}; translating with RT instead of SSBD"
        return ""

    def _backoff(self, asked: float | None = None) -> None:
        """The pause before the next call to a server that did not answer (``asked``: the
        seconds it asked for, if longer)."""
        self._failures += 1
        pause = max(BACKOFF_S[min(self._failures, len(BACKOFF_S)) - 1], asked or 0.0)
        self._retry_at = time.monotonic() + pause

    def _unavailable(self, e: ServerError, announced: bool = False) -> EngineUnavailable:
        """What the stage is told of a server that could not translate this time: when it is
        asked again, and whether it answered at all (down, unreachable or loading; or busy:
        HTTP 429) or failed on this update (HTTP 500, an answer cut off, one not JSON)."""
        self._unreachable = not e.answered or e.status in (429, 503)
        return EngineUnavailable(
            str(e),
            announced=announced,
            retry_in=max(0.0, self._retry_at - time.monotonic()),
            unreachable=self._unreachable,
        )

    def set_glossary(self, glossary: Glossary) -> None:
        """Fixed translations from the next update on. On a server they reach the model only
        through the prompt (instruction templates say them there); the decoder's bias that
        keeps them with any model (mt/terms.py) needs the logits, which stay on the server."""
        self.glossary = glossary

    def _configure(self, src_lang: str, mt: MtConfig) -> RemoteTranslator:
        terms = self.glossary.translations(src_lang, mt.tgt_lang)
        prompts = PromptBuilder(self.template, src_lang, mt.tgt_lang, terms=terms)
        for gone in [t for t in self._trs if t not in mt.targets]:
            del self._trs[gone]  # a target no longer chosen
        tgt = mt.targets[0]
        ab = self.abilities or ServerAbilities(ServerRoute.VERIFY, True)
        tr = self._trs.get(tgt)
        if tr is None:
            tr = self._trs[tgt] = RemoteTranslator(
                self.client, prompts, DecodeOptions(), n_ctx=self.n_ctx
            )
        tr.prompts = prompts
        tr.route, tr.chat_extra = ab.route, dict(ab.chat_extra)
        # The local translator's mapping (the server decodes by method, beta and the caps).
        apply_settings(tr, mt, draft_model=False)
        method, beta = tr.options.method, tr.options.beta
        if ab.route is ServerRoute.CHAT or (
            ab.route is ServerRoute.COMPLETIONS and method is Method.SSBD and beta < 0.5
        ):
            # Without prompt log-probabilities SSBD below 0.5 is what beta = 0 gives: RT; at
            # 0.5 and above it verifies nothing anyway. A chat answer continues no draft.
            tr.options = dataclasses.replace(tr.options, method=Method.RT)
        return tr

    def configure(self, mt: MtConfig) -> None:
        self.mt = mt  # each target's translator takes what it needs at its next update

    def translate(
        self,
        segment_id: int,
        source: str,
        final: bool,
        target: str,
        src_lang: str,
        should_abort: Callable[[], bool] | None = None,
        progress: Progress | None = None,
    ) -> EngineResult:
        """One update (``progress`` is not called: a server answers a decode as a whole)."""
        mt = self.mt.for_target(target)
        wait = self._retry_at - time.monotonic()
        if wait > 0:
            raise EngineUnavailable(
                f"translation server {self.client.where} did not answer; "
                f"trying again in {wait:.0f} s",
                announced=not self._connected,
                retry_in=wait,
                unreachable=self._unreachable,
            )
        if not self._connected:
            try:
                self._connect(mt)
            except ServerError as e:
                if not e.transient:
                    raise
                self._backoff(e.retry_after)
                raise self._unavailable(e, announced=True) from None
            self._failures = 0
        tr = self._configure(src_lang, mt)
        # One deadline for the whole update (a verify, a continuation, an RT fall-back).
        deadline = time.monotonic() + mt.server_timeout_s
        try:
            try:
                t = tr.update(segment_id, source, final, should_abort, deadline)
            except NoPromptLogprobs as e:
                # SSBD cannot run here; RT can, and gives what beta = 0 would.
                tokenizer = self.abilities.tokenizer if self.abilities else True
                self.abilities = ServerAbilities(ServerRoute.COMPLETIONS, tokenizer, str(e))
                self.notice = f"{e}; translating with RT instead of SSBD"
                log.warning("%s", self.notice)
                tr.options = dataclasses.replace(tr.options, method=Method.RT)
                t = tr.update(segment_id, source, final, should_abort, deadline)
            except UnusableLogprobs as e:
                # This answer's values only (a burst of NaN): RT for this update, SSBD again
                # from the next one.
                log.info("%s; this update is translated with RT", e)
                ssbd, tr.options = tr.options, dataclasses.replace(tr.options, method=Method.RT)
                try:
                    t = tr.update(segment_id, source, final, should_abort, deadline)
                finally:
                    tr.options = ssbd
        except ContextTooSmall as e:
            raise EngineUnavailable(str(e)) from None  # nothing to wait for: no pause
        except ServerTimeout as e:
            # The server is up but slow: the next update asks again at once (each costs the
            # timeout at most); the pause is for a server that cannot be reached, or that
            # answers nothing twice in a row (stalled: each update waited the whole timeout,
            # and the lines reached the screen that late).
            self._timeouts += 1
            if self._timeouts >= 2:
                self._backoff()
            raise self._unavailable(e) from None
        except ServerError as e:
            if not e.transient:
                raise
            self._backoff(e.retry_after)
            raise self._unavailable(e) from None
        self._failures = 0
        if t.stats.aborted:
            return EngineResult("", (), (), t.stats)
        self._timeouts = 0  # (an update given up for a newer one says nothing of a stall)
        return shown_result(t.text, (), t.utf8_pieces, t.stats, t.problem)

    def close(self) -> None:
        self._trs.clear()
        self.client.close()
