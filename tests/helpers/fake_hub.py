"""A tiny stand-in for the Hugging Face hub on 127.0.0.1, for the real download code.

It serves ``HEAD``/``GET /{owner}/{name}/resolve/{revision}/{path}`` the way the hub does for the
calls huggingface_hub makes in ``get_hf_file_metadata`` and ``http_get``: ``ETag`` (sha256 for
"LFS" files, git blob sha1 for small ones), ``X-Repo-Commit``, ``Content-Length``, ``Range`` ->
206, and ``X-Error-Code`` on 404 (``RevisionNotFound`` for a revision it does not hold; it
holds "main" and ``COMMIT`` unless told otherwise). Faults are injected per path: drop the
connection midway once, or serve bytes that do not match the advertised ETag.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

COMMIT = "0123456789abcdef0123456789abcdef01234567"
MT_REPO = "test/tiny-gguf"
ASR_REPO = "test/tiny-whisper"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    range: str | None
    authorization: str | None = None  # the Authorization header, if one was sent


@dataclass
class FakeHub:
    files: dict[str, bytes] = field(default_factory=dict)  # "owner/name/path" -> content
    lfs: set[str] = field(default_factory=set)  # keys whose ETag is the sha256
    drop_once_at: dict[str, int] = field(default_factory=dict)  # key -> bytes sent before a drop
    corrupt: set[str] = field(default_factory=set)  # keys served with one byte flipped
    # key -> (bytes sent, then this is called once, then the rest is sent)
    midway: dict[str, tuple[int, Callable[[], None]]] = field(default_factory=dict)
    revisions: set[str] = field(default_factory=lambda: {"main", COMMIT})  # what it holds
    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def add(self, repo: str, path: str, data: bytes, *, lfs: bool = True) -> str:
        key = f"{repo}/{path}"
        self.files[key] = data
        if lfs:
            self.lfs.add(key)
        return key

    def etag(self, key: str) -> str:
        data = self.files[key]
        return hashlib.sha256(data).hexdigest() if key in self.lfs else git_blob_sha1(data)

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def _lookup(self) -> str | None:
                parts = unquote(self.path.split("?")[0]).lstrip("/").split("/")
                if len(parts) < 5 or parts[2] != "resolve":
                    return None
                return "/".join([parts[0], parts[1], *parts[4:]])

            def _revision(self) -> str:
                parts = unquote(self.path.split("?")[0]).lstrip("/").split("/")
                return parts[3] if len(parts) > 3 else ""

            def _not_found(self) -> None:
                self.send_response(404)
                known = self._revision() in hub.revisions
                self.send_header("X-Error-Code", "EntryNotFound" if known else "RevisionNotFound")
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _headers(self, key: str, status: int, length: int, extra: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("ETag", f'"{hub.etag(key)}"')
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(length))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()

            def do_HEAD(self) -> None:
                key = self._lookup()
                auth = self.headers.get("Authorization")
                hub.requests.append(Request("HEAD", self.path, None, auth))
                if key is None or key not in hub.files or self._revision() not in hub.revisions:
                    return self._not_found()
                self._headers(key, 200, len(hub.files[key]), {})

            def do_GET(self) -> None:
                key = self._lookup()
                rng = self.headers.get("Range")
                hub.requests.append(
                    Request("GET", self.path, rng, self.headers.get("Authorization"))
                )
                if key is None or key not in hub.files or self._revision() not in hub.revisions:
                    return self._not_found()
                data = hub.files[key]
                if key in hub.corrupt:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                start = 0
                if rng and rng.startswith("bytes="):
                    start = int(rng[6:].split("-")[0])
                body = data[start:]
                extra = {}
                status = 200
                if start:
                    status = 206
                    extra["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                self._headers(key, status, len(body), extra)
                cut = hub.drop_once_at.pop(key, None)
                if cut is not None:
                    # Promise the whole body, send part of it, then hang up.
                    self.wfile.write(body[: cut - start])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if key in hub.midway:
                    at, then = hub.midway.pop(key)
                    self.wfile.write(body[: at - start])
                    self.wfile.flush()
                    then()
                    body = body[at - start :]
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def fake_whisper_files() -> dict[str, bytes]:
    """Files that pass as a CTranslate2 Whisper model folder (header + JSON), not loadable."""
    import json
    import struct

    name = b"WhisperSpec\0"
    model_bin = struct.pack("<I", 6) + struct.pack("<H", len(name)) + name + bytes(range(256)) * 64
    return {
        "model.bin": model_bin,
        "config.json": json.dumps({"suppress_ids": [], "lang_ids": []}).encode(),
        "tokenizer.json": json.dumps(
            {
                "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}},
                "added_tokens": [{"id": 2, "content": "<|startoftranscript|>"}],
            }
        ).encode(),
        "vocabulary.json": json.dumps(["a", "b", "<|startoftranscript|>"]).encode(),
    }


@contextmanager
def serving(monkeypatch: Any, hub: FakeHub) -> Iterator[FakeHub]:
    """``hub`` running, and huggingface_hub pointed at it (tests/conftest.py turns the real
    hub off globally)."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    hub.start()
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    try:
        yield hub
    finally:
        hub.stop()


@contextmanager
def serving_models(monkeypatch: Any, gguf: bytes) -> Iterator[FakeHub]:
    """A running FakeHub with ``gguf`` in MT_REPO and a tiny Whisper folder in ASR_REPO."""
    hub = FakeHub()
    hub.add(MT_REPO, "tiny.gguf", gguf)
    for name, data in fake_whisper_files().items():
        hub.add(ASR_REPO, name, data, lfs=name == "model.bin")
    with serving(monkeypatch, hub):
        yield hub
