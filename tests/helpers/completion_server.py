"""A real llama-cpp-python server on 127.0.0.1, and a proxy in front of it that misbehaves on
demand (garbage, a stall, a connection dropped mid-answer, errors, no prompt log-probabilities).
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
API_KEY = "test-key-19"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# llama_cpp.server under the app's AMX guard (subtitler.mt.llama_backend.amx_safe_load): on a
# CPU with AMX its first decode would segfault (ggml-org/llama.cpp#20824).
_SERVE = (
    "import runpy, sys, llama_cpp; sys.argv[0] = 'llama_cpp.server'\n"
    "from subtitler.mt.llama_backend import amx_safe_load\n"
    "with amx_safe_load(llama_cpp): runpy.run_module('llama_cpp.server', run_name='__main__')"
)


class LlamaServer:
    """``python -m llama_cpp.server`` serving a GGUF with the bit-exact settings (Q8_0 weights,
    flash attention, n_ubatch 32: README, "Exactness of beta = 0")."""

    def __init__(
        self, model: Path = FIXTURE, port: int | None = None, api_key: str = API_KEY
    ) -> None:
        self.model, self.port, self.api_key = model, port or free_port(), api_key
        self.log = Path(tempfile.gettempdir()) / f"subtitler-llama-server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 90.0) -> LlamaServer:
        cmd = [
            sys.executable, "-c", _SERVE, "--model", str(self.model),
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "1024",
            "--n_batch", "256", "--n_ubatch", "32", "--flash_attn", "true",
            "--n_threads", "1", "--n_threads_batch", "1", "--api_key", self.api_key,
        ]  # fmt: skip
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
            )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self.log.read_text()[-2000:]}")
            try:
                req = urllib.request.Request(
                    f"{self.url}/models", headers={"Authorization": f"Bearer {self.api_key}"}
                )
                with urllib.request.urlopen(req, timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("llama_cpp.server did not start in time")

    def kill(self) -> None:
        """SIGKILL, as a crash or a pulled cable would end it."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.unlink(missing_ok=True)  # each run left one in the temporary folder


Fault = Callable[[str, dict[str, Any]], str]  # (path, request body) -> mode


class FaultyProxy:
    """Forwards to ``upstream`` unless ``fault(path, body)`` names a mode:

    "garbage": 200 with an HTML body; "stall": headers never come (until closed); "stall-mid":
    the first part of the real answer, then nothing (until closed); "reset":
    the connection is closed before any answer;
    "drop": the first part of the real answer, then the connection is cut; "http500": an
    error answer; "no-logprobs": the real answer without its log-probabilities.
    """

    def __init__(self, upstream: str, fault: Fault | None = None) -> None:
        self.upstream = upstream.split("//", 1)[1].split("/", 1)[0]
        self.fault: Fault = fault or (lambda path, body: "pass")
        self.seen: list[tuple[str, str]] = []  # (path, mode) of every request
        self.released = threading.Event()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve(b"")

            def do_POST(self) -> None:
                self._serve(self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def _serve(self, raw: bytes) -> None:
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                mode = proxy.fault(self.path, body)
                proxy.seen.append((self.path, mode))
                if mode == "stall":
                    proxy.released.wait(60)
                    self.close_connection = True
                    return
                if mode == "reset":  # the connection closes before any answer
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if mode == "garbage":
                    return self._send(200, b"<html><body>upstream hiccup</body></html>")
                if mode == "http500":
                    return self._send(500, b'{"error": {"message": "CUDA out of memory"}}')
                conn = http.client.HTTPConnection(proxy.upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=raw or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if mode == "no-logprobs" and body.get("echo"):
                    got = json.loads(data)
                    for choice in got.get("choices", []):
                        choice["logprobs"] = None
                    data = json.dumps(got).encode()
                if mode == "stall-mid":  # part of the answer, then nothing more
                    self.send_response(resp.status)
                    self.send_header("Content-Type", resp.getheader("Content-Type", ""))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: max(1, len(data) // 3)])
                    self.wfile.flush()
                    proxy.released.wait(60)
                    self.close_connection = True
                    return
                if mode == "drop":
                    self.send_response(resp.status)
                    self.send_header("Content-Type", resp.getheader("Content-Type", ""))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: max(1, len(data) // 3)])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self._send(resp.status, data, resp.getheader("Content-Type", "application/json"))

            def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
