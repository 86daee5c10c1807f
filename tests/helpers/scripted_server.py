"""A scripted OpenAI-compatible completions server on 127.0.0.1, for the remote translator's
timing rules: no model, a character tokenizer, answers the tests choose (a stream that drips
a token now and then and never ends, log-probabilities that are NaN, a tiny context).

The layouts are those of ``mt.completions`` (the OpenAI one: one log-probability entry per
prompt token, then the generated one).
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

BOS = 1


def tokens_of(text: str) -> list[int]:
    """One token per character, after a BOS token."""
    return [BOS, *(ord(c) + 10 for c in text)]


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
    requests: list[dict[str, Any]] = field(default_factory=list)


class ScriptedServer:
    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.released = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection, ended by closing

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                model: dict[str, Any] = {"id": "scripted", "object": "model"}
                if owner.script.max_model_len is not None:
                    model["max_model_len"] = owner.script.max_model_len
                self._json({"object": "list", "data": [model]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                owner.script.requests.append({"path": self.path, **body})
                if self.path.endswith("/tokenize"):
                    self._json({"tokens": tokens_of(str(body.get("input", "")))})
                elif body.get("echo"):
                    self._verify(str(body["prompt"]))
                elif body.get("stream"):
                    self._stream(int(body["max_tokens"]))
                else:
                    self._json({"error": {"message": "not scripted"}}, 400)

            def _verify(self, prompt: str) -> None:
                s = owner.script
                if s.verify_s and owner.released.wait(s.verify_s):
                    return
                nan = s.nan_verifies > 0
                s.nan_verifies -= nan
                ids = tokens_of(prompt)
                labels = ["<s>", *prompt, "x"]
                value = float("nan") if nan else 0.0
                self._json(
                    {
                        "choices": [
                            {
                                "text": prompt + "x",
                                "finish_reason": "stop" if s.verify_ends else "length",
                                "logprobs": {
                                    "tokens": labels,
                                    "token_logprobs": [None] + [value] * (len(ids)),
                                    "top_logprobs": [None] + [{t: value} for t in labels[1:]],
                                },
                            }
                        ],
                        "usage": {"prompt_tokens": len(ids), "completion_tokens": 1},
                    }
                )

            def _stream(self, max_tokens: int) -> None:
                s = owner.script
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                n = 0
                try:
                    while s.endless or n < len(s.output):
                        if s.every_s and owner.released.wait(s.every_s):
                            return
                        piece = s.output[n % len(s.output)]
                        self._event({"choices": [{"text": piece, "finish_reason": None}]})
                        n += 1
                        if n >= max_tokens and not s.endless:
                            break
                    finish = "length" if n >= max_tokens else "stop"
                    self._event({"choices": [{"text": "", "finish_reason": finish}]})
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:
                    return  # the client hung up: it stopped reading

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                self.wfile.flush()

            def _json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
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

    def close(self) -> None:
        self.released.set()
        time.sleep(0)  # let streaming handlers see it
        self.server.shutdown()
        self.server.server_close()
