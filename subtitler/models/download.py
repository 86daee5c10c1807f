"""Download catalog models through huggingface_hub: resumable, verified, cancellable.

Layout: ``<models dir>/<model id>/<file>`` (``subtitler.paths.models_dir()``: the user cache
folder's ``models``, unless ``SUBTITLER_MODELS_DIR`` is set), plus a manifest recording what was
verified.

Why not ``hf_hub_download``: in the installed huggingface_hub (2.x) it writes to a process-unique
temporary file and deletes it on any failure, so a cancelled or interrupted multi-GB download
starts again from zero. Here huggingface_hub still resolves the URL (``hf_hub_url``, honouring
``HF_ENDPOINT``), reads the file metadata (``get_hf_file_metadata``: ETag, size, commit, redirect)
and streams the bytes (``file_download.http_get``, which itself retries a dropped connection with a
Range request), but the partial file is ours: ``<file>.part`` survives cancel, errors and restarts
and the next attempt continues it with a Range request.

Integrity: the catalog's sha256 when known, else the hub's ETag, which for LFS files is the file's
sha256 and for small git-stored files its git blob sha1; and the size. A file that fails the check
is deleted, so the next attempt starts clean.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib
import inspect
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal
from urllib.parse import urlparse

from subtitler import paths, user_files
from subtitler.models.catalog import (
    CatalogEntry,
    ModelFile,
    id_problem,
    path_problem,
    size_text,
)
from subtitler.models.validate import InvalidModelError, check_whisper_dir, read_gguf

log = logging.getLogger(__name__)

HUB_HOST = "huggingface.co"  # the only endpoint the stored hub token goes to unasked
MANIFEST = ".subtitler-manifest.json"
PART = ".part"
_HASH_CHUNK = 4 << 20
MAX_RECORD_BYTES = 1 << 20  # a manifest or a partial file's record: a few hundred bytes

Phase = Literal["download", "verify"]
Status = Literal["installed", "partial", "missing", "local", "local-missing"]


class DownloadError(RuntimeError):
    """A download failed; the message is one line for the user."""


class NetworkUnavailableError(DownloadError):
    """No connection to the hub (or offline mode); local files still work."""


class IntegrityError(DownloadError):
    """A downloaded file does not match its expected size or hash (and was deleted)."""


class DownloadCancelled(DownloadError):
    """The user cancelled; the partial file is kept and the next download resumes it."""


@dataclass(frozen=True)
class DownloadProgress:
    """A progress report, for a CLI bar or a UI progress dialog (called on the worker thread)."""

    model_id: str
    file: str  # file being fetched or verified
    file_index: int  # 0-based among the files of this model
    file_count: int
    phase: Phase
    done: int  # bytes of this model present so far (resumed bytes included)
    total: int | None  # bytes of the whole model when known

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None


ProgressCallback = Callable[[DownloadProgress], None]


def models_dir() -> Path:
    """Where downloaded models live (created on demand)."""
    return paths.models_dir()


def model_dir(entry: CatalogEntry, root: Path | None = None) -> Path:
    lp = entry.local_path
    if lp is not None:
        return lp.parent
    # The catalog checks ids when it is read; an entry made in code is checked here too: an
    # id of ".." once made `models remove` delete the whole models folder.
    if (why := id_problem(entry.id)) is not None:
        raise DownloadError(f"model {entry.id!r}: {why}")
    return (root or models_dir()) / entry.id


def _inside(d: Path, rel: str) -> Path:
    """``d / rel`` for a file path of the catalog or the manifest; DownloadError if ``rel``
    could reach outside ``d``."""
    if (why := path_problem(rel)) is not None:
        raise DownloadError(f"{d.name}: {why}")
    return d / rel


def model_path(entry: CatalogEntry, root: Path | None = None) -> Path:
    """What the app loads: the .gguf file of a translator, the folder of a Whisper model."""
    lp = entry.local_path
    if lp is not None:
        return lp
    d = model_dir(entry, root)
    return _inside(d, entry.main_file.path) if entry.kind == "mt" else d


def _manifest_files(man: dict[str, Any]) -> dict[str, Any] | None:
    """The manifest's files, or None when it names one outside the model folder (damaged or
    planted: never followed)."""
    files = man.get("files", {})
    if not isinstance(files, dict) or any(path_problem(str(n)) for n in files):
        return None
    return files


def read_manifest(entry: CatalogEntry, root: Path | None = None) -> dict[str, Any] | None:
    p = model_dir(entry, root) / MANIFEST
    try:
        data = json.loads(user_files.read_text(p, MAX_RECORD_BYTES))
    except (OSError, ValueError, RecursionError):  # (FileProblem is an OSError)
        return None  # no usable record: the model counts as not downloaded
    return data if isinstance(data, dict) else None


def status(entry: CatalogEntry, root: Path | None = None) -> Status:
    """Cheap on-disk state (sizes only; ``verify`` re-hashes)."""
    lp = entry.local_path
    if lp is not None:
        return "local" if lp.is_file() else "local-missing"
    d = model_dir(entry, root)
    man = read_manifest(entry, root)
    files = _manifest_files(man) if man is not None else None
    if (
        man is not None
        and man.get("complete")
        and files is not None
        and all(
            (d / name).is_file() and (d / name).stat().st_size == info.get("size")
            for name, info in files.items()
        )
    ):
        return "installed"
    return "partial" if d.is_dir() and any(d.iterdir()) else "missing"


def is_installed(entry: CatalogEntry, root: Path | None = None) -> bool:
    return status(entry, root) in ("installed", "local")


def disk_usage(entry: CatalogEntry, root: Path | None = None) -> int:
    d = model_dir(entry, root)
    if entry.local_path is not None:
        return entry.local_path.stat().st_size if entry.local_path.is_file() else 0
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) if d.is_dir() else 0


def hf_cache_path(entry: CatalogEntry) -> Path | None:
    """A complete copy of an entry in the Hugging Face cache (e.g. fetched by faster-whisper)."""
    if entry.repo is None:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(entry.repo, entry.main_file.path, revision=entry.revision)
    except Exception as e:  # a damaged cache must not break start-up
        log.debug("HF cache lookup for %s failed: %s", entry.id, e)
        return None
    if not isinstance(found, str):
        return None
    p = Path(found)
    return p.parent if entry.kind == "asr" else p


# -- hashing --------------------------------------------------------------------------------


def _is_hex(s: str, n: int) -> bool:
    return len(s) == n and all(c in "0123456789abcdef" for c in s)


def file_digests(
    path: Path, *, git_sha1: bool = False, cancel: threading.Event | None = None
) -> tuple[str, str | None]:
    """sha256 of a file and, if asked, its git blob sha1 (what the hub's ETag is for git files)."""
    h = hashlib.sha256()
    g = None
    if git_sha1:
        g = hashlib.sha1(usedforsecurity=False)
        g.update(b"blob %d\0" % path.stat().st_size)
    with path.open("rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled("download cancelled")
            h.update(chunk)
            if g is not None:
                g.update(chunk)
    return h.hexdigest(), (g.hexdigest() if g is not None else None)


def check_file(path: Path, spec: ModelFile, etag: str | None, size: int | None) -> str:
    """Return the file's sha256 or raise IntegrityError naming what did not match."""
    actual = path.stat().st_size
    want_size = spec.size if spec.size is not None else size
    if want_size is not None and actual != want_size:
        raise IntegrityError(f"{spec.path}: size {actual:,} bytes, expected {want_size:,}")
    tag = (etag or "").lower()
    sha256, sha1 = file_digests(path, git_sha1=spec.sha256 is None and _is_hex(tag, 40))
    if spec.sha256 is not None:
        if sha256 != spec.sha256:
            raise IntegrityError(
                f"{spec.path}: sha256 {sha256[:12]}… does not match the catalog's "
                f"{spec.sha256[:12]}…"
            )
    elif _is_hex(tag, 64):
        if sha256 != tag:
            raise IntegrityError(
                f"{spec.path}: sha256 {sha256[:12]}… does not match the hub's {tag[:12]}…"
            )
    elif sha1 is not None:
        if sha1 != tag:
            raise IntegrityError(
                f"{spec.path}: git hash {sha1[:12]}… does not match the hub's {tag[:12]}…"
            )
    else:
        log.warning("%s: no sha256 or usable ETag; only the size was checked", spec.path)
    return sha256


# -- the transfer ---------------------------------------------------------------------------


class _Sink:
    """The file object handed to ``http_get``: counts bytes, reports progress, honours cancel."""

    def __init__(self, f: BinaryIO, on_bytes: Callable[[int], None], cancel: threading.Event):
        self._f = f
        self._on_bytes = on_bytes
        self._cancel = cancel

    def write(self, b: bytes) -> int:
        # Checked before writing: a chunk that arrives after cancel is dropped, not half-written.
        if self._cancel.is_set():
            raise DownloadCancelled("download cancelled")
        n = self._f.write(b)
        self._on_bytes(len(b))
        return n

    def __getattr__(self, name: str) -> Any:  # seek / tell / truncate / flush
        return getattr(self._f, name)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection-level exception classes of whichever HTTP library huggingface_hub uses."""
    errs: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for mod, attr in (("httpx2", "TransportError"), ("httpx", "TransportError")):
        with contextlib.suppress(ImportError, AttributeError):
            errs.append(getattr(importlib.import_module(mod), attr))
    try:
        import requests

        errs.append(requests.exceptions.ConnectionError)
        errs.append(requests.exceptions.Timeout)
    except ImportError:
        pass
    return tuple(errs)


# What the system's network errors mean, in plain words (the raw one goes to the log).
_NETWORK_WORDS = (
    (
        (
            "name or service not known",
            "temporary failure in name resolution",
            "nodename nor servname",
            "getaddrinfo failed",
            "no address associated",
        ),
        "its address could not be looked up: is this computer online?",
    ),
    (("network is unreachable",), "no network route to it: is this computer online?"),
    (("connection refused", "actively refused"), "it refused the connection"),
    (("timed out", "timeout"), "it did not answer in time"),
    (("connection reset", "remote end closed", "connection aborted"), "the connection was cut"),
)


def _network_why(e: BaseException) -> str:
    """Why a connection failed, for people: '[Errno -2] Name or service not known' is 'its
    address could not be looked up: is this computer online?'."""
    raw = user_files.first_line(e)
    log.info("network error: %s", raw)
    low = raw.lower()
    for needles, words in _NETWORK_WORDS:
        if any(n in low for n in needles):
            return words
    return re.sub(r"^\[Errno -?\d+\]\s*", "", raw)


def _host(url: str) -> str:
    return urlparse(url).netloc or url


def _silent_tqdm() -> Any:
    from tqdm.auto import tqdm

    class Silent(tqdm):  # type: ignore[misc]
        def __init__(self, *a: Any, **kw: Any) -> None:
            kw.pop("name", None)
            kw["disable"] = True
            super().__init__(*a, **kw)

    return Silent


@dataclass(frozen=True)
class _Remote:
    url: str  # where the bytes are (after the hub's redirect)
    etag: str | None
    size: int | None
    commit: str | None


def _metadata(
    entry: CatalogEntry, spec: ModelFile, endpoint: str, token: str | bool | None
) -> _Remote | None:
    """HEAD the file on the hub; None when an optional file does not exist."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    assert entry.repo is not None
    url = hf_hub_url(entry.repo, spec.path, revision=entry.revision, endpoint=endpoint)
    try:
        meta = get_hf_file_metadata(url, token=token)
    except OfflineModeIsEnabled:
        raise NetworkUnavailableError(
            "offline mode is on (HF_HUB_OFFLINE): models cannot be downloaded now; "
            "local model files still work"
        ) from None
    except EntryNotFoundError:
        if spec.optional:
            return None
        raise DownloadError(f"{spec.path} not found in {entry.repo}@{entry.revision}") from None
    except GatedRepoError:
        withheld = "" if token is not False else " (the hub token is sent only to the hub)"
        raise DownloadError(
            f"{entry.repo} is gated: accept its licence on the hub and log in (hf auth login)"
            + withheld
        ) from None
    except RepositoryNotFoundError:
        raise DownloadError(f"repository {entry.repo} not found on {_host(endpoint)}") from None
    except RevisionNotFoundError:
        raise DownloadError(f"revision {entry.revision} not found in {entry.repo}") from None
    except HfHubHTTPError as e:
        code = getattr(getattr(e, "response", None), "status_code", "?")
        raise DownloadError(f"{_host(endpoint)} answered HTTP {code} for {spec.path}") from None
    except _transport_errors() as e:
        raise NetworkUnavailableError(
            f"no network: cannot reach {_host(endpoint)} ({_network_why(e)}); "
            "local model files still work"
        ) from None
    except OSError as e:  # e.g. FileMetadataError: an endpoint that is not a hub
        raise DownloadError(f"{_host(endpoint)}: {user_files.first_line(e)}") from None
    if meta.etag is None and meta.commit_hash is None:
        # A hub tags every file and names its commit; a sign-in portal or a proxy's page does
        # neither (it was fetched, found no GGUF, and "the next download" was promised).
        raise DownloadError(
            f"{_host(endpoint)} did not answer as a model hub (a web page: a network that "
            "asks to sign in, or a proxy?)"
        )
    location = meta.location or url
    return _Remote(location, meta.etag, meta.size, meta.commit_hash)


def _fetch(
    remote: _Remote,
    spec: ModelFile,
    part: Path,
    *,
    endpoint: str,
    token: str | bool | None,
    cancel: threading.Event,
    on_bytes: Callable[[int], None],
) -> None:
    """Stream ``remote`` into ``part``, continuing what is already there."""
    from huggingface_hub.file_download import http_get

    # Public (in utils.__all__), attached lazily, which mypy cannot follow.
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]

    info = part.with_name(part.name + ".json")
    expected = spec.size if spec.size is not None else remote.size
    resume = 0
    if part.exists():
        try:
            record = json.loads(user_files.read_text(info, MAX_RECORD_BYTES))
            same = isinstance(record, dict) and record.get("etag") == remote.etag
        except (OSError, ValueError, RecursionError):
            same = False
        resume = part.stat().st_size if same else 0
        if expected is not None and resume > expected:
            resume = 0
        if resume == 0:
            part.unlink()
    info.write_text(json.dumps({"etag": remote.etag, "size": expected}), encoding="utf-8")
    if expected is not None:
        free = shutil.disk_usage(part.parent).free
        if free < expected - resume:
            raise DownloadError(
                f"not enough disk space in {part.parent}: {_size(expected - resume)} needed, "
                f"{_size(free)} free"
            )
    if resume:
        log.info("resuming %s at %d bytes", spec.path, resume)
        on_bytes(resume)
    headers = build_hf_headers(token=token)
    if _host(remote.url) != _host(endpoint):
        headers.pop("authorization", None)  # a signed CDN URL: the token must not leave the hub
    kwargs: dict[str, Any] = {}
    if "tqdm_class" in inspect.signature(http_get).parameters:
        kwargs["tqdm_class"] = _silent_tqdm()  # our own progress, not a second bar on stderr
    with part.open("r+b" if resume else "wb") as f:
        f.seek(resume)
        sink = _Sink(f, on_bytes, cancel)
        http_get(
            remote.url,
            sink,  # type: ignore[arg-type]
            resume_size=resume,
            headers=headers,
            expected_size=expected,
            **kwargs,
        )


def _endpoint(endpoint: str | None) -> str:
    # Read at call time, not import time: huggingface_hub.constants freezes HF_ENDPOINT on import.
    ep = endpoint or os.environ.get("HF_ENDPOINT") or f"https://{HUB_HOST}"
    return ep.rstrip("/")


def token_for(
    endpoint: str, token: str | bool | None, *, trust_endpoint: bool = False
) -> str | bool | None:
    """The token to hand huggingface_hub for ``endpoint``: ``token`` itself (None meaning
    huggingface_hub's stored token) for the official hub over https, or for an https endpoint
    the user trusts explicitly; False (no token at all) for any other endpoint and for any
    plain-http one (the token would travel in clear)."""
    u = urlparse(endpoint)
    if u.scheme != "https":
        return False
    try:
        port = u.port
    except ValueError:
        return False
    official = u.hostname == HUB_HOST and port in (None, 443) and u.username is None
    return token if official or trust_endpoint else False


def _one_log_path() -> None:
    """Have huggingface_hub's records reach the process's own handlers only.

    huggingface_hub gives its library logger a stderr handler of its own and lets records
    propagate too, so where the root logger has one (the models CLI, the app's log file) each
    warning was printed twice ("Error while downloading ... Trying to resume download..."); its
    ``enable_propagation`` docstring asks the caller to drop that handler then."""
    if not logging.getLogger().handlers:
        return  # nothing configured: its own handler is the only one that says anything
    import huggingface_hub.utils.logging as hub_logging

    hub = hub_logging.get_logger()
    for h in list(hub.handlers):
        if type(h) is logging.StreamHandler:
            hub.removeHandler(h)


def download(
    entry: CatalogEntry,
    *,
    root: Path | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    trust_endpoint: bool = False,
) -> Path:
    """Fetch (or finish fetching) every file of ``entry``; returns :func:`model_path`.

    Raises DownloadError (NetworkUnavailableError, IntegrityError, DownloadCancelled, or a
    folder that cannot be written: not a folder, read-only, disk full) with a one-line message.
    Safe to call again after any failure: finished files are kept, a partial file is continued.
    The hub token goes only where :func:`token_for` allows (``trust_endpoint``: the user
    trusts an endpoint other than the hub with it).
    """
    _one_log_path()
    ep = _endpoint(endpoint)
    sent = token_for(ep, token, trust_endpoint=trust_endpoint)
    if sent is False and token is not False:
        log.info("no hub token sent to %s (only to https://%s, or when trusted)", ep, HUB_HOST)
    try:
        return _download(
            entry, root=root, endpoint=ep, token=sent, progress=progress, cancel=cancel
        )
    except OSError as e:
        where = e.filename or model_dir(entry, root)
        raise DownloadError(f"cannot write {entry.id} to {where}: {e.strerror or e}") from e


def _download(
    entry: CatalogEntry,
    *,
    root: Path | None,
    endpoint: str | None,
    token: str | bool | None,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
) -> Path:
    if entry.repo is None:
        raise DownloadError(f"{entry.id} is a local model and cannot be downloaded")
    if status(entry, root) == "installed":
        return model_path(entry, root)
    ep = _endpoint(endpoint)
    for spec in entry.files:
        _inside(model_dir(entry, root), spec.path)
    cancel = cancel or threading.Event()
    d = model_dir(entry, root)
    d.mkdir(parents=True, exist_ok=True)
    man = read_manifest(entry, root) or {}
    done_files: dict[str, Any] = dict(_manifest_files(man) or {})
    report = progress or (lambda _p: None)

    # Metadata for every file first: the total is known before any byte moves, and a missing
    # repository or no network fails fast without touching the disk.
    remotes: list[tuple[ModelFile, _Remote]] = []
    for spec in entry.files:
        if cancel.is_set():
            raise DownloadCancelled("download cancelled")
        r = _metadata(entry, spec, ep, token)
        if r is not None:
            remotes.append((spec, r))
    sizes = [s.size if s.size is not None else r.size for s, r in remotes]
    total = sum(x for x in sizes if x is not None) if all(x is not None for x in sizes) else None
    base = 0
    n = len(remotes)
    for i, (spec, remote) in enumerate(remotes):
        target = _inside(d, spec.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        prev = done_files.get(spec.path)
        if (
            prev
            and prev.get("etag") == remote.etag
            and target.is_file()
            and (target.stat().st_size == prev.get("size"))
        ):
            base += target.stat().st_size
            report(DownloadProgress(entry.id, spec.path, i, n, "download", base, total))
            continue
        got = 0

        def on_bytes(k: int, _i: int = i, _spec: ModelFile = spec, _base: int = base) -> None:
            nonlocal got
            got += k
            report(DownloadProgress(entry.id, _spec.path, _i, n, "download", _base + got, total))

        part = target.with_name(target.name + PART)
        report(DownloadProgress(entry.id, spec.path, i, n, "download", base, total))
        try:
            _fetch(remote, spec, part, endpoint=ep, token=token, cancel=cancel, on_bytes=on_bytes)
        except DownloadError:
            raise
        except _transport_errors() as e:
            raise NetworkUnavailableError(
                f"download of {spec.path} interrupted ({_network_why(e)}); run it again to resume"
            ) from None
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                # What was fetched is kept for the next run to resume (it was deleted).
                size = spec.size if spec.size is not None else remote.size
                held = part.stat().st_size if part.exists() else 0
                need = f"{_size(size - held)} more" if size is not None else "some space"
                raise DownloadError(
                    f"{spec.path}: the disk is full in {part.parent}: free {need} and run it "
                    "again to resume"
                ) from None
            # huggingface_hub's own size check ("Consistency check failed") lands here too.
            _discard(part)
            raise DownloadError(f"{spec.path}: {user_files.first_line(e)}") from None
        report(DownloadProgress(entry.id, spec.path, i, n, "verify", base + got, total))
        try:
            sha256 = check_file(part, spec, remote.etag, remote.size)
        except IntegrityError as e:
            _discard(part)
            raise IntegrityError(f"{e}; the file was deleted, download it again") from None
        os.replace(part, target)
        _discard(part)
        done_files[spec.path] = {
            "size": target.stat().st_size,
            "sha256": sha256,
            "etag": remote.etag,
            "commit": remote.commit,
        }
        _write_manifest(d, entry, done_files, complete=False)
        base += target.stat().st_size
    _write_manifest(d, entry, done_files, complete=False)
    try:
        _check_structure(entry, root)
    except InvalidModelError as e:
        # The bytes matched the hub's hash yet are no usable model. Kept, the next download
        # would take them as done and never fetch them again: the files the message names
        # (or all of them) are deleted instead.
        bad = [n for n in done_files if Path(n).name in str(e)] or list(done_files)
        for name in bad:
            _inside(d, name).unlink(missing_ok=True)
            done_files.pop(name)
        _write_manifest(d, entry, done_files, complete=False)
        what = "the file was deleted: the next download fetches it again"
        if len(bad) > 1:
            what = "the files were deleted: the next download fetches them again"
        raise DownloadError(f"{entry.id}: downloaded, but {e}; {what}") from None
    _write_manifest(d, entry, done_files, complete=True)
    log.info("downloaded %s to %s", entry.id, d)
    return model_path(entry, root)


def _size(n: float) -> str:
    """Bytes for a message, as the catalog says sizes ("1.4 GB", "120 MB"), and "300 kB"
    ("0.0 GB needed, 0.0 GB free" said nothing of a small model)."""
    return size_text(round(n / 1e6)) if n >= 1e6 else f"{max(n, 0) / 1e3:.0f} kB"


def _discard(part: Path) -> None:
    part.unlink(missing_ok=True)
    part.with_name(part.name + ".json").unlink(missing_ok=True)


def _write_manifest(d: Path, entry: CatalogEntry, files: dict[str, Any], complete: bool) -> None:
    data = {
        "id": entry.id,
        "repo": entry.repo,
        "revision": entry.revision,
        "complete": complete,
        "files": files,
    }
    user_files.write_atomic(d / MANIFEST, json.dumps(data, indent=1), mode=user_files.PUBLIC)


def _check_structure(entry: CatalogEntry, root: Path | None) -> None:
    p = model_path(entry, root)
    if entry.kind == "asr":
        check_whisper_dir(p)
    else:
        read_gguf(p)


def verify(
    entry: CatalogEntry, root: Path | None = None, *, cancel: threading.Event | None = None
) -> list[str]:
    """Re-check an installed model: presence, size, sha256, structure. Empty list = good."""
    if entry.local_path is not None:
        try:
            _check_structure(entry, root)
        except InvalidModelError as e:
            return [str(e)]
        return []
    d = model_dir(entry, root)
    man = read_manifest(entry, root)
    if man is None:
        return [f"{entry.id} is not downloaded"]
    files = _manifest_files(man)
    if files is None:
        return [f"the download record of {entry.id} names a file outside its folder"]
    problems: list[str] = []
    if not man.get("complete"):
        problems.append(f"{entry.id}: download not finished")
    specs = {f.path: f for f in entry.files}
    for name, info in files.items():
        p = d / name
        if not p.is_file():
            problems.append(f"{name}: missing")
            continue
        if p.stat().st_size != info.get("size"):
            problems.append(
                f"{name}: size {p.stat().st_size:,} bytes, expected {info.get('size'):,}"
            )
            continue
        sha, _ = file_digests(p, cancel=cancel)
        pinned = specs[name].sha256 if name in specs else None
        want = pinned or info.get("sha256")
        if sha != want and pinned and sha == info.get("sha256"):
            # As downloaded, by a version whose catalog did not pin the file yet (from "main"):
            # not damage, another version of the file than the one the catalog names now.
            problems.append(f"{name}: {_another_version(man, entry)}")
        elif sha != want:
            problems.append(f"{name}: sha256 changed since download (file damaged)")
    for spec in entry.files:
        if not spec.optional and spec.path not in files:
            problems.append(f"{spec.path}: missing")
    if not problems:
        try:
            _check_structure(entry, root)
        except InvalidModelError as e:
            problems.append(str(e))
    return problems


def _another_version(man: dict[str, Any], entry: CatalogEntry) -> str:
    """Why a file as downloaded is not the catalog's: where it came from, what is named now."""
    got = man.get("revision")
    source = f" from {got[:7] if _is_hex(str(got), 40) else got}" if isinstance(got, str) else ""
    named = f" revision {entry.revision[:7]}" if entry.revision else " another file"
    return f"another version than the catalog's (downloaded{source}, before it named{named})"


def remove(entry: CatalogEntry, root: Path | None = None) -> int:
    """Delete a downloaded model (partial downloads too); returns the bytes freed."""
    if entry.local_path is not None:
        raise DownloadError(f"{entry.id} is a local model file; it is not removed from here")
    d = model_dir(entry, root)
    if not d.is_dir():
        raise DownloadError(f"{entry.id} is not downloaded")
    freed = disk_usage(entry, root)
    shutil.rmtree(d)
    return freed
