"""A scripted OpenAI-compatible server on 127.0.0.1, for the remote translator's rules: no
model, a character tokenizer, answers the tests choose (a stream that drips a token now and
then and never ends, log-probabilities that are NaN, a tiny context).

``Script.kind`` makes it answer as one of the servers people run, as their documentation or
source says they do (the citations are beside each behaviour below):

* "openai" (the default): the layouts of ``mt.completions`` (one log-probability entry per
  prompt token, then the generated one), ``/tokenize`` with ``input``.
* "vllm": ``/tokenize`` with ``prompt`` (vllm-project/vllm#5054), ``max_model_len`` in
  ``/v1/models``, the echo's log-probabilities with text offsets (the answer quoted in
  ggml-org/llama.cpp#15189 from vLLM 0.16.0: ``token_logprobs`` and ``top_logprobs`` start
  with null, then one entry per prompt token and the generated one), FastAPI's
  ``{"detail": "Not Found"}`` for a route it lacks.
* "sglang": before its ``/tokenize`` (added by sgl-project/sglang#9545): no tokenize route;
  the echo's log-probabilities as ``to_openai_style_logprobs`` builds them (prompt entries,
  then the generated ones; ``text_offset`` -1 everywhere, "Not supported yet"; each
  ``top_logprobs`` dict holds the top tokens only, not the prompt's own).
* "llama-server" (llama.cpp's): ``/tokenize`` reads ``content`` and answers an empty list
  without it, adding no BOS by default (``handle_tokenize``: ``add_special`` false);
  ``/v1/completions`` refuses ``echo`` with HTTP 500 (``oaicompat_completion_params_parse``
  throws std::runtime_error "Only no echo is supported", which ``ex_wrapper`` answers as a
  server error); a missing route is a 404.
* "llama-server-echo": a build that accepts ``echo`` and returns the generated token's
  log-probability only (ggml-org/llama.cpp#27174), in its ``content`` layout.
* "lmstudio": any route it lacks answers HTTP 200 with ``{"error": "Unexpected endpoint or
  method. (POST /tokenize)"}`` (lmstudio-ai/lmstudio-bug-tracker#618); ``/v1/completions``
  applies no prompt template (its docs, "Completions (Legacy)") and returns no
  log-probabilities, ``echo`` or not (lmstudio-ai/lms#60: "no error are thrown when
  logprobs=True is passed").
* "ollama": ``/v1/completions`` ignores ``echo`` and wraps the prompt in the model's chat
  template (``openai.FromCompleteRequest`` builds a GenerateRequest without ``raw``: the
  app's own prompt would be wrapped again; here it answers as if it were not); every answer
  carries ``system_fingerprint: "fp_ollama"``; ``/v1/chat/completions`` streams
  ``delta.content``, and a thinking model streams ``delta.reasoning`` first unless
  ``reasoning_effort`` is "none" (``thinkFromReasoningEffort``); no tokenize route
  (ollama/ollama#3582); gin's plain-text 404 for a route it lacks.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

BOS = 1
KINDS = (
    "openai",
    "vllm",
    "sglang",
    "llama-server",
    "llama-server-echo",
    "lmstudio",
    "ollama",
)


def tokens_of(text: str, bos: bool = True) -> list[int]:
    """One token per character, after a BOS token."""
    return [BOS, *(ord(c) + 10 for c in text)] if bos else [ord(c) + 10 for c in text]


@dataclass
class Script:
    """How the server behaves; tests change it while it runs."""

    output: str = "Hallo Welt."  # what a greedy continuation writes, one character a token
    every_s: float = 0.0  # pause before each streamed token
    endless: bool = False  # never finish the stream (keep writing ``output`` again)
    nan_verifies: int = 0  # the next this many verify requests get NaN log-probabilities
    verify_s: float = 0.0  # how long a verify request takes
    verify_ends: bool = True  # the model would end right after the draft
    max_model_len: int | None = None  # what /v1/models reports (vLLM does)
    kind: str = "openai"  # which server it answers as (see the module's docstring)
    thinks: bool = False  # ollama: the model thinks before it answers unless told not to
    model: str = "scripted"
    busy: int = 0  # the next this many requests are answered HTTP 429 (a rate limit)
    retry_after: str | None = None  # the Retry-After header of those answers
    requests: list[dict[str, Any]] = field(default_factory=list)


class ScriptedServer:
    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        assert self.script.kind in KINDS, self.script.kind
        self.released = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection, ended by closing

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                s = owner.script
                if self.path.rstrip("/") not in ("/v1/models", "/models"):
                    return self._missing()
                model: dict[str, Any] = {"id": s.model, "object": "model"}
                if s.kind == "vllm":
                    model.update(owned_by="vllm", max_model_len=s.max_model_len or 4096)
                elif s.kind.startswith("llama-server"):
                    model.update(owned_by="llamacpp", meta={"n_ctx_train": 4096})
                elif s.kind == "lmstudio":
                    model["owned_by"] = "organization_owner"
                elif s.kind == "ollama":
                    model.update(created=1700000000, owned_by="library")
                if s.max_model_len is not None and s.kind in ("openai", "sglang"):
                    model["max_model_len"] = s.max_model_len
                self._json({"object": "list", "data": [model]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                owner.script.requests.append({"path": self.path, **body})
                kind = owner.script.kind
                if owner.script.busy > 0:
                    owner.script.busy -= 1
                    return self._busy()
                if self.path.endswith("/tokenize"):
                    return self._tokenize(body)
                if self.path == "/v1/chat/completions":
                    return self._chat(body)
                if self.path != "/v1/completions":
                    return self._missing()
                prompt = str(body["prompt"])
                echo = bool(body.get("echo"))
                if echo and kind == "llama-server":
                    return self._json(
                        {
                            "error": {
                                "code": 500,
                                "message": "Only no echo is supported",
                                "type": "server_error",
                            }
                        },
                        500,
                    )
                if body.get("stream"):
                    return self._stream(int(body["max_tokens"]), fingerprint=kind == "ollama")
                if echo and kind in ("openai", "vllm", "sglang"):
                    return self._verify(prompt)
                return self._once(prompt, body)

            # -- routes ----------------------------------------------------------------------
            def _missing(self) -> None:
                kind = owner.script.kind
                if kind == "lmstudio":
                    msg = f"Unexpected endpoint or method. ({self.command} {self.path})"
                    return self._json({"error": msg})  # HTTP 200 (bug-tracker#618)
                if kind == "ollama":
                    return self._raw(404, b"404 page not found", "text/plain")
                if kind.startswith("llama-server"):
                    err = {"code": 404, "message": "File Not Found", "type": "not_found_error"}
                    return self._json({"error": err}, 404)
                return self._json({"detail": "Not Found"}, 404)

            def _tokenize(self, body: dict[str, Any]) -> None:
                kind = owner.script.kind
                if kind in ("sglang", "lmstudio", "ollama"):
                    return self._missing()
                if kind.startswith("llama-server"):
                    if self.path != "/tokenize":
                        return self._missing()
                    text = body.get("content")
                    got = (
                        [] if text is None else tokens_of(str(text), bool(body.get("add_special")))
                    )
                    return self._json({"tokens": got})
                if kind == "vllm":
                    if self.path != "/tokenize" or "prompt" not in body:
                        return self._json({"detail": "Not Found"}, 404 if "prompt" in body else 400)
                    got = tokens_of(str(body["prompt"]))
                    return self._json({"tokens": got, "count": len(got), "max_model_len": 4096})
                return self._json({"tokens": tokens_of(str(body.get("input", "")))})

            def _verify(self, prompt: str) -> None:
                s = owner.script
                if s.verify_s and owner.released.wait(s.verify_s):
                    return
                nan = s.nan_verifies > 0
                s.nan_verifies -= nan
                ids = tokens_of(prompt)
                labels = ["<s>", *prompt, "x"]
                value = float("nan") if nan else 0.0
                tops: list[Any] = [None] + [{t: value} for t in labels[1:]]
                logprobs: dict[str, Any] = {
                    "tokens": labels,
                    "token_logprobs": [None] + [value] * (len(ids)),
                    "top_logprobs": tops,
                }
                if s.kind == "vllm":
                    logprobs["text_offset"] = [0, *range(len(prompt) + 1)]
                elif s.kind == "sglang":
                    logprobs["text_offset"] = [-1] * len(labels)
                self._json(
                    {
                        "choices": [
                            {
                                "text": prompt + "x",
                                "finish_reason": "stop" if s.verify_ends else "length",
                                "logprobs": logprobs,
                            }
                        ],
                        "usage": {"prompt_tokens": len(ids), "completion_tokens": 1},
                    }
                )

            def _once(self, prompt: str, body: dict[str, Any]) -> None:
                """A completion that is not streamed and has no prompt log-probabilities."""
                s = owner.script
                piece = s.output[:1]
                choice: dict[str, Any] = {"text": piece, "index": 0, "finish_reason": "length"}
                if body.get("echo") and s.kind not in ("lmstudio", "ollama"):
                    choice["text"] = prompt + piece
                if body.get("logprobs") and s.kind in ("llama-server-echo", "ollama"):
                    # The generated token's only (llama.cpp#27174; Ollama's ChoiceLogprobs).
                    entry = {"token": piece, "logprob": -0.1, "bytes": list(piece.encode())}
                    choice["logprobs"] = {"content": [{**entry, "top_logprobs": [entry]}]}
                elif s.kind in ("llama-server", "llama-server-echo"):
                    choice["logprobs"] = None
                got: dict[str, Any] = {
                    "object": "text_completion",
                    "model": s.model,
                    "choices": [choice],
                    "usage": {"prompt_tokens": len(tokens_of(prompt)), "completion_tokens": 1},
                }
                if s.kind == "ollama":
                    got["system_fingerprint"] = "fp_ollama"
                self._json(got)

            def _chat(self, body: dict[str, Any]) -> None:
                s = owner.script
                max_tokens = int(body.get("max_tokens") or 1 << 30)
                thinking = s.thinks and body.get("reasoning_effort") != "none"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                n = 0
                try:
                    if thinking:  # it thinks first, and the thinking counts as tokens
                        for c in "Let me think about this translation. " * 4:
                            if n >= max_tokens:
                                break
                            self._event(self._delta({"reasoning": c}))
                            n += 1
                    for c in s.output:
                        if n >= max_tokens:
                            break
                        self._event(self._delta({"content": c}))
                        n += 1
                    finish = "length" if n >= max_tokens else "stop"
                    self._event(self._delta({}, finish))
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:
                    return

            def _delta(self, delta: dict[str, Any], finish: str | None = None) -> Any:
                got: dict[str, Any] = {
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                if owner.script.kind == "ollama":
                    got["system_fingerprint"] = "fp_ollama"
                return got

            def _stream(self, max_tokens: int, fingerprint: bool = False) -> None:
                s = owner.script
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                n = 0
                extra = {"system_fingerprint": "fp_ollama"} if fingerprint else {}
                try:
                    while s.endless or n < len(s.output):
                        if s.every_s and owner.released.wait(s.every_s):
                            return
                        piece = s.output[n % len(s.output)]
                        self._event({"choices": [{"text": piece, "finish_reason": None}], **extra})
                        n += 1
                        if n >= max_tokens and not s.endless:
                            break
                    finish = "length" if n >= max_tokens else "stop"
                    self._event({"choices": [{"text": "", "finish_reason": finish}], **extra})
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:
                    return  # the client hung up: it stopped reading

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                self.wfile.flush()

            def _busy(self) -> None:
                """OpenAI's answer to too many requests (its error codes' guide)."""
                raw = json.dumps(
                    {"error": {"message": "Rate limit reached", "type": "requests"}}
                ).encode()
                self.send_response(429)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                if owner.script.retry_after is not None:
                    self.send_header("Retry-After", owner.script.retry_after)
                self.end_headers()
                self.wfile.write(raw)

            def _json(self, data: Any, status: int = 200) -> None:
                self._raw(status, json.dumps(data).encode(), "application/json")

            def _raw(self, status: int, raw: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def streams(self) -> int:
        return sum(bool(r.get("stream")) for r in self.script.requests)

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        return [r for r in self.script.requests if r["path"] == path]

    def close(self) -> None:
        self.released.set()
        time.sleep(0)  # let streaming handlers see it
        self.server.shutdown()
        self.server.server_close()
