"""The real download code against a fake hub on 127.0.0.1 (never the real hub)."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.models import download as dl
from subtitler.models.catalog import CatalogEntry, ModelFile
from subtitler.models.validate import check_translator, check_whisper_dir
from tests.helpers.fake_hub import (
    ASR_REPO,
    COMMIT,
    MT_REPO,
    FakeHub,
    fake_whisper_files,
    serving_models,
)


@pytest.fixture
def hub(tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving_models(monkeypatch, tiny_gguf.read_bytes()) as h:
        yield h


def mt_entry(**kw: object) -> CatalogEntry:
    args: dict[str, object] = dict(
        id="tiny-mt", kind="mt", name="tiny", files=(ModelFile("tiny.gguf"),), size_mb=16,
        memory_mb=50, licence="MIT", languages=("*",), speed="fast", repo=MT_REPO,
        template="chatml",
    )  # fmt: skip
    args.update(kw)
    return CatalogEntry(**args)  # type: ignore[arg-type]


def asr_entry() -> CatalogEntry:
    files = (
        ModelFile("model.bin"),
        ModelFile("config.json"),
        ModelFile("tokenizer.json"),
        ModelFile("vocabulary.txt", optional=True),
        ModelFile("vocabulary.json", optional=True),
    )
    return CatalogEntry(
        id="tiny-asr", kind="asr", name="tiny whisper", files=files, size_mb=1, memory_mb=10,
        licence="MIT", languages=("*",), speed="fast", repo=ASR_REPO, size_name="tiny-test",
    )  # fmt: skip


def test_download_gguf_verifies_and_reports_progress(hub: FakeHub, tmp_path: Path) -> None:
    seen: list[dl.DownloadProgress] = []
    path = dl.download(mt_entry(), root=tmp_path, progress=seen.append)
    assert path == tmp_path / "tiny-mt" / "tiny.gguf"
    assert path.read_bytes() == hub.files[f"{MT_REPO}/tiny.gguf"]
    assert check_translator(path).template == "gguf"
    assert dl.status(mt_entry(), tmp_path) == "installed"
    assert dl.verify(mt_entry(), tmp_path) == []
    assert seen[-1].total == path.stat().st_size and seen[-1].done == seen[-1].total
    assert seen[-1].phase == "verify"
    assert all(a.done <= b.done for a, b in itertools.pairwise(seen))
    # Installed: a second call does not touch the network.
    n = len(hub.requests)
    assert dl.download(mt_entry(), root=tmp_path) == path
    assert len(hub.requests) == n


def test_download_whisper_dir_skips_absent_optional_file(hub: FakeHub, tmp_path: Path) -> None:
    path = dl.download(asr_entry(), root=tmp_path)
    check_whisper_dir(path)
    assert sorted(p.name for p in path.iterdir()) == sorted([*fake_whisper_files(), dl.MANIFEST])
    assert dl.verify(asr_entry(), tmp_path) == []
    # Small files carry the git blob sha1 as their ETag; that is what was checked.
    man = dl.read_manifest(asr_entry(), tmp_path)
    assert man is not None and len(man["files"]["config.json"]["etag"]) == 40


def test_dropped_connection_resumes_with_range(hub: FakeHub, tmp_path: Path) -> None:
    key = f"{MT_REPO}/tiny.gguf"
    size = len(hub.files[key])
    hub.drop_once_at[key] = size - 3_000_000  # after the first 10 MB chunk was written
    path = dl.download(mt_entry(), root=tmp_path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hub.etag(key)
    gets = [r for r in hub.requests if r.method == "GET"]
    assert len(gets) == 2
    assert gets[0].range is None
    assert gets[1].range is not None and gets[1].range.startswith("bytes=")
    assert 0 < int(gets[1].range[6:].rstrip("-")) < size


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.geteuid() == 0), reason="a tmpfs: root on Linux"
)
def test_a_disk_that_fills_up_mid_download_keeps_what_was_fetched(
    hub: FakeHub, tmp_path: Path
) -> None:
    """The part fetched was deleted when the disk filled up mid-file, the next run began at
    byte 0, and the message was "[Errno 28] No space left on device"."""
    key = f"{MT_REPO}/tiny.gguf"
    size = len(hub.files[key])
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size + (2 << 20)}", "tmpfs", str(disk)], check=True
    )
    try:
        filler = disk / "other program's file"

        def fill_up() -> None:  # another program takes the room, the download still running
            filler.write_bytes(b"\0" * (shutil.disk_usage(disk).free - (1 << 20)))

        hub.midway[key] = (size // 2, fill_up)
        with pytest.raises(dl.DownloadError) as e:
            dl.download(mt_entry(), root=disk / "models")
        part = disk / "models" / "tiny-mt" / ("tiny.gguf" + dl.PART)
        held = part.stat().st_size
        assert str(e.value) == (
            f"tiny.gguf: the disk is full in {part.parent}: free {(size - held) / 1e6:.0f} MB "
            "more and run it again to resume"
        )
        assert held > 0
        filler.unlink()
        path = dl.download(mt_entry(), root=disk / "models")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == hub.etag(key)
        gets = [r.range for r in hub.requests if r.method == "GET"]
        assert gets == [None, f"bytes={held}-"]  # resumed where the disk was full
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.geteuid() == 0), reason="a tmpfs: root on Linux"
)
def test_too_little_room_says_how_much_in_units_that_say_it(hub: FakeHub, tmp_path: Path) -> None:
    """A model of some MB on a nearly full disk: "0.0 GB needed, 0.0 GB free"."""
    size = len(hub.files[f"{MT_REPO}/tiny.gguf"])
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    try:
        with pytest.raises(dl.DownloadError) as e:
            dl.download(mt_entry(), root=disk / "models")
        free = shutil.disk_usage(disk).free
        assert str(e.value) == (
            f"not enough disk space in {disk / 'models' / 'tiny-mt'}: {size / 1e6:.0f} MB "
            f"needed, {free / 1e6:.0f} MB free"
        )
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_web_page_where_the_hub_should_be_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network's sign-in page answers every address with HTTP 200: it was fetched as the
    model, refused as no GGUF, and "the next download fetches it again" (the same page)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import huggingface_hub.constants

    page = b"<html><body>Please sign in to the hotel network</body></html>"

    class Portal(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _page(self, body: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            if body:
                self.wfile.write(page)

        def do_HEAD(self) -> None:
            self._page(False)

        def do_GET(self) -> None:
            self._page(True)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Portal)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    try:
        host, port = srv.server_address[:2]
        with pytest.raises(dl.DownloadError) as e:
            dl.download(mt_entry(), root=tmp_path, endpoint=f"http://{host!s}:{port}")
    finally:
        srv.shutdown()
        srv.server_close()
    assert str(e.value) == (
        f"{host!s}:{port} did not answer as a model hub (a web page: a network that asks to "
        "sign in, or a proxy?)"
    )
    assert not list(tmp_path.rglob("*.gguf*"))  # nothing fetched


def test_cancel_keeps_partial_file_and_next_call_resumes(hub: FakeHub, tmp_path: Path) -> None:
    cancel = threading.Event()

    def on_progress(p: dl.DownloadProgress) -> None:
        if p.done > 0:
            cancel.set()

    with pytest.raises(dl.DownloadCancelled):
        dl.download(mt_entry(), root=tmp_path, progress=on_progress, cancel=cancel)
    part = tmp_path / "tiny-mt" / ("tiny.gguf" + dl.PART)
    assert part.is_file() and part.stat().st_size > 0
    assert dl.status(mt_entry(), tmp_path) == "partial"
    kept = part.stat().st_size
    path = dl.download(mt_entry(), root=tmp_path)
    assert path.read_bytes() == hub.files[f"{MT_REPO}/tiny.gguf"]
    assert hub.requests[-1].range == f"bytes={kept}-"
    assert not part.exists()


def test_corrupted_file_fails_integrity_check(hub: FakeHub, tmp_path: Path) -> None:
    hub.corrupt.add(f"{MT_REPO}/tiny.gguf")
    with pytest.raises(dl.IntegrityError) as e:
        dl.download(mt_entry(), root=tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and "sha256" in msg and "deleted" in msg
    assert not (tmp_path / "tiny-mt" / "tiny.gguf").exists()
    assert not (tmp_path / "tiny-mt" / ("tiny.gguf" + dl.PART)).exists()
    assert dl.status(mt_entry(), tmp_path) != "installed"


def test_catalog_sha256_is_checked_first(hub: FakeHub, tmp_path: Path) -> None:
    wrong = ModelFile("tiny.gguf", sha256="0" * 64)
    with pytest.raises(dl.IntegrityError, match="catalog"):
        dl.download(mt_entry(files=(wrong,)), root=tmp_path)


def test_a_pinned_revision_and_checksum(hub: FakeHub, tmp_path: Path) -> None:
    """An entry pinned to a commit with its file's sha256 (the catalog's schema allows both;
    no packaged entry has them: subtitler/models/README.md) is fetched from that commit,
    checked against that sha256 and recorded so; a commit the hub does not hold is one line."""
    data = hub.files[f"{MT_REPO}/tiny.gguf"]
    spec = ModelFile("tiny.gguf", size=len(data), sha256=hashlib.sha256(data).hexdigest())
    pinned = mt_entry(files=(spec,), revision=COMMIT)
    path = dl.download(pinned, root=tmp_path)
    assert path.read_bytes() == data
    assert {r.path.split("/")[4] for r in hub.requests} == {COMMIT}  # /owner/name/resolve/REV
    man = dl.read_manifest(pinned, tmp_path)
    assert man is not None and man["revision"] == COMMIT
    assert man["files"]["tiny.gguf"]["sha256"] == spec.sha256
    assert dl.verify(pinned, tmp_path) == []
    gone = "f" * 40
    with pytest.raises(dl.DownloadError) as e:
        dl.download(mt_entry(id="gone", revision=gone), root=tmp_path)
    assert str(e.value) == f"revision {gone} not found in {MT_REPO}"


def test_missing_file_and_repository_give_one_line(hub: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(dl.DownloadError, match=r"^nope\.gguf not found in test/tiny-gguf@main$"):
        dl.download(mt_entry(files=(ModelFile("nope.gguf"),)), root=tmp_path)


def test_no_network_is_a_plain_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(dl.NetworkUnavailableError) as e:
        dl.download(mt_entry(), root=tmp_path, endpoint=f"http://127.0.0.1:{port}")
    msg = str(e.value)
    assert msg.startswith("no network: cannot reach 127.0.0.1:") and "\n" not in msg
    assert "(it refused the connection)" in msg and "Errno" not in msg
    assert not any((tmp_path / "tiny-mt").glob("*.gguf*"))


def test_network_errors_are_said_in_plain_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 point 7: '[Errno -2] Name or service not known' reached the user."""
    from subtitler.models.download import _network_why

    dns = socket.gaierror(-2, "Name or service not known")
    assert str(dns) == "[Errno -2] Name or service not known"
    lookup = "its address could not be looked up: is this computer online?"
    assert _network_why(dns) == lookup
    assert _network_why(ConnectionError(f"Max retries exceeded ({dns})")) == lookup  # (wrapped)
    assert _network_why(socket.gaierror(-3, "Temporary failure in name resolution")) == lookup
    assert _network_why(OSError(101, "Network is unreachable")).startswith("no network route")
    assert _network_why(TimeoutError("timed out")) == "it did not answer in time"
    assert _network_why(OSError(71, "Protocol error")) == "Protocol error"  # as it is, no Errno


def test_offline_mode_is_a_plain_message(tmp_path: Path) -> None:
    # HF_HUB_OFFLINE=1 from tests/conftest.py is in force here.
    with pytest.raises(dl.NetworkUnavailableError, match="offline mode is on"):
        dl.download(mt_entry(), root=tmp_path, endpoint="http://127.0.0.1:9")


def test_remove_frees_the_directory(hub: FakeHub, tmp_path: Path) -> None:
    dl.download(mt_entry(), root=tmp_path)
    freed = dl.remove(mt_entry(), tmp_path)
    assert freed >= len(hub.files[f"{MT_REPO}/tiny.gguf"])
    assert dl.status(mt_entry(), tmp_path) == "missing"
    with pytest.raises(dl.DownloadError, match="not downloaded"):
        dl.remove(mt_entry(), tmp_path)


def test_verify_detects_damage_after_download(hub: FakeHub, tmp_path: Path) -> None:
    path = dl.download(mt_entry(), root=tmp_path)
    with path.open("r+b") as f:
        f.seek(100_000)
        f.write(b"\0" * 16)
    problems = dl.verify(mt_entry(), tmp_path)
    assert problems == ["tiny.gguf: sha256 changed since download (file damaged)"]


def test_a_file_downloaded_before_the_catalog_pinned_another_is_not_said_damaged(
    hub: FakeHub, tmp_path: Path
) -> None:
    """A model downloaded by an older version from ``main``, before the catalog pinned the
    entry to a commit whose file is another: the file is as downloaded (its sha256 is the one
    recorded then), so it is said to be another version than the catalog's, not damaged."""
    dl.download(mt_entry(), root=tmp_path)  # the older version's catalog: no pin
    man = dl.read_manifest(mt_entry(), tmp_path)
    assert man is not None and man["revision"] == "main"
    spec = ModelFile("tiny.gguf", sha256="a" * 64)
    pinned = mt_entry(files=(spec,), revision=COMMIT)
    problems = dl.verify(pinned, tmp_path)
    assert problems == [
        "tiny.gguf: another version than the catalog's (downloaded from main, before it "
        f"named revision {COMMIT[:7]})"
    ]
    gguf = tmp_path / "tiny-mt" / "tiny.gguf"
    with gguf.open("r+b") as f:  # damaged since, as well: said as damage
        f.seek(100_000)
        f.write(b"\0" * 16)
    damaged = ["tiny.gguf: sha256 changed since download (file damaged)"]
    assert dl.verify(pinned, tmp_path) == damaged


# -- the CLI, in-process -------------------------------------------------------------------


CATALOG = f"""
schema = 1
[defaults.cpu]
asr = "tiny-asr"
mt = ["tiny-mt"]

[[model]]
id = "tiny-asr"
kind = "asr"
name = "tiny whisper"
size_name = "tiny-test"
repo = "{ASR_REPO}"
size_mb = 1
memory_mb = 10
licence = "MIT"
languages = ["*"]
speed = "fast"
files = [{{ path = "model.bin" }}, {{ path = "config.json" }}, {{ path = "tokenizer.json" }},
         {{ path = "vocabulary.txt", optional = true }},
         {{ path = "vocabulary.json", optional = true }}]

[[model]]
id = "tiny-mt"
kind = "mt"
name = "tiny translator"
repo = "{MT_REPO}"
template = "chatml"
size_mb = 16
memory_mb = 50
licence = "MIT"
languages = ["*"]
speed = "fast"
files = [{{ path = "tiny.gguf" }}]
"""


def cli(tmp_path: Path, *args: str) -> int:
    from subtitler.models_cli import main

    cat = tmp_path / "catalog.toml"
    if not cat.exists():
        cat.write_text(CATALOG, encoding="utf-8")
    return main(["--catalog", str(cat), "--models-dir", str(tmp_path / "m"), *args])


def test_cli_list_download_verify_remove(
    hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert cli(tmp_path, "list") == 0
    out = capsys.readouterr().out
    assert "tiny-mt" in out and "not downloaded" in out

    assert cli(tmp_path, "download", "tiny-mt", "tiny-asr", "--no-progress") == 0
    out = capsys.readouterr().out
    assert f"tiny-mt: {tmp_path / 'm' / 'tiny-mt' / 'tiny.gguf'}" in out

    assert cli(tmp_path, "list", "--json") == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["tiny-mt"]["status"] == rows["tiny-asr"]["status"] == "installed"

    # (--no-load: the fake hub's models are no models an engine runs; the real test of a
    # downloaded model is below and in tests/integration/test_engine_workers.py)
    assert cli(tmp_path, "verify", "--no-load") == 0
    out = capsys.readouterr().out
    assert out.count("ok ") == 2

    gguf = tmp_path / "m" / "tiny-mt" / "tiny.gguf"
    with gguf.open("r+b") as f:
        f.truncate(gguf.stat().st_size // 2)
    assert cli(tmp_path, "verify", "tiny-mt") == 1
    assert "FAIL tiny-mt: tiny.gguf: size" in capsys.readouterr().out

    assert cli(tmp_path, "remove", "tiny-mt") == 0
    assert "removed tiny-mt" in capsys.readouterr().out
    assert not gguf.parent.exists()


def test_cli_download_with_progress_bar(
    hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(tmp_path, "download", "tiny-mt") == 0
    err = capsys.readouterr().err
    assert "tiny-mt" in err and "15.0M" in err  # tqdm's bar on stderr, in MiB


def test_cli_verify_gives_a_downloaded_model_its_real_test(
    hub: FakeHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hashes say the bytes are those downloaded, not that they work: a catalog model that
    passes them is loaded and given its real test too (it was not), unless --no-load."""
    from subtitler import models_cli

    assert cli(tmp_path, "download", "tiny-mt", "--no-progress") == 0
    tested: list[tuple[Path, str]] = []

    def damaged(path: Path, template: str) -> None:
        tested.append((path, template))
        raise models_cli.LoadFailed(
            f"{path.name}: damaged: it translates a test sentence as nothing"
        )

    monkeypatch.setattr(models_cli, "_load_once", damaged)
    capsys.readouterr()
    assert cli(tmp_path, "verify", "tiny-mt") == 1
    assert capsys.readouterr().out == (
        "FAIL tiny-mt: tiny.gguf: damaged: it translates a test sentence as nothing; to "
        "download it again: subtitler models remove tiny-mt, then download tiny-mt\n"
    )
    assert tested == [(tmp_path / "m" / "tiny-mt" / "tiny.gguf", "chatml")]
    assert cli(tmp_path, "verify", "tiny-mt", "--no-load") == 0
    assert len(tested) == 1


def test_cli_user_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(tmp_path, "download", "nope") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown model 'nope'") and err.count("\n") == 1
    assert cli(tmp_path, "remove", "tiny-mt") == 2
    assert capsys.readouterr().err == "error: tiny-mt is not downloaded\n"
    # HF_HUB_OFFLINE=1 (tests/conftest.py): a plain message, exit 2.
    assert cli(tmp_path, "download", "tiny-mt", "--endpoint", "http://127.0.0.1:9") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: offline mode is on (HF_HUB_OFFLINE)") and err.count("\n") == 1


def test_unwritable_models_folder_is_a_one_line_error(
    hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "m"  # the models folder the CLI helper uses
    blocker.write_text("a file where the folder should be")
    with pytest.raises(dl.DownloadError) as err:
        dl.download(mt_entry(), root=blocker)
    assert str(err.value) == f"cannot write tiny-mt to {blocker / 'tiny-mt'}: Not a directory"
    assert cli(tmp_path, "download", "tiny-mt") == 2
    assert capsys.readouterr().err == (
        f"error: cannot write tiny-mt to {blocker / 'tiny-mt'}: Not a directory\n"
    )


def test_a_models_folder_that_is_a_file_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every model was listed "not downloaded", and verify and remove said the same."""
    blocker = tmp_path / "m"  # the models folder the CLI helper uses
    blocker.write_text("a file where the folder should be")
    said = f"error: the models folder {blocker} is a file, not a folder\n"
    for args in (
        ["list"],
        ["list", "--json"],
        ["verify"],
        ["verify", "tiny-mt"],
        ["remove", "tiny-mt"],
    ):
        assert cli(tmp_path, *args) == 2
        assert capsys.readouterr() == ("", said)
    own = tmp_path / "noise.gguf"  # a file of the user's own is checked wherever models are
    own.write_bytes(b"\x00" * 1000)
    assert cli(tmp_path, "verify", str(own)) == 1
    assert capsys.readouterr().out == "FAIL noise.gguf: not a GGUF model file (bad header)\n"


def test_cli_verify_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "noise.gguf"
    bad.write_bytes(b"\x00" * 1000)
    notdir = tmp_path / "photos"
    notdir.mkdir()
    assert cli(tmp_path, "verify", str(bad), str(notdir)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "FAIL noise.gguf: not a GGUF model file (bad header)",
        "FAIL photos: not a CTranslate2 Whisper model folder (missing model.bin, config.json, "
        "tokenizer.json, vocabulary.json or vocabulary.txt)",
    ]


def test_cli_verify_says_a_target_that_does_not_exist_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped id or path among several stopped the command there, 'error: not a catalog
    model id or an existing path', exit 2, the models after it not checked."""
    bad = tmp_path / "noise.gguf"
    bad.write_bytes(b"\x00" * 1000)
    notdir = tmp_path / "photos"
    notdir.mkdir()
    gone = tmp_path / "nothing.gguf"
    assert cli(tmp_path, "verify", str(bad), "whisper-bsae", str(gone), str(notdir)) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "FAIL noise.gguf: not a GGUF model file (bad header)",
        "FAIL whisper-bsae: not a catalog model id or an existing path",
        f"FAIL {gone}: not a catalog model id or an existing path",
        "FAIL photos: not a CTranslate2 Whisper model folder (missing model.bin, config.json, "
        "tokenizer.json, vocabulary.json or vocabulary.txt)",
    ]
    assert err == ""


def test_cli_says_a_dropped_connection_once(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub's warning reached stderr by its own handler and by the CLI's (pytest's
    log capture hides the second, so the CLI runs as the user runs it)."""
    import subprocess

    key = f"{MT_REPO}/tiny.gguf"
    hub.drop_once_at[key] = len(hub.files[key]) - 3_000_000
    cat = tmp_path / "catalog.toml"
    cat.write_text(CATALOG, encoding="utf-8")
    args = ["--catalog", str(cat), "--models-dir", str(tmp_path / "m")]
    out = subprocess.run(
        [sys.executable, "-m", "subtitler.models", *args, "download", "tiny-mt", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("Trying to resume download") == 1, out.stderr
    assert "WARNING huggingface_hub" in out.stderr  # in the CLI's own format


def test_module_entry_point_runs() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "subtitler.models", "list", "--kind", "mt"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "qwen3-4b-q4_k_m" in out.stdout and "whisper" not in out.stdout


# -- every catalog Whisper entry: what the hub publishes -> download -> the app's loader ------

# How converted Whisper repositories publish a model (faster-whisper PR #311; its own download
# takes config.json, preprocessor_config.json, model.bin, tokenizer.json and vocabulary.*).
LAYOUTS = {
    "text vocabulary (older conversions)": ("vocabulary.txt",),
    "JSON vocabulary (CTranslate2 >= 3.16)": ("vocabulary.json",),
    "JSON vocabulary + preprocessor config": ("vocabulary.json", "preprocessor_config.json"),
    "text vocabulary + preprocessor config": ("vocabulary.txt", "preprocessor_config.json"),
}


@pytest.fixture(scope="module")
def shaped_whispers(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Random-weight Whispers (only their shape matters here) with 80 and 128 Mel bins."""
    from subtitler_research.asr.tiny_model import WhisperShape, build_random_whisper

    root = tmp_path_factory.mktemp("shapes")
    return {
        n: build_random_whisper(root / f"mels{n}", WhisperShape(1, 2, 32, n), ff=64)
        for n in (80, 128)
    }


def published(model: Path, layout: tuple[str, ...]) -> dict[str, bytes]:
    import json

    files = {n: (model / n).read_bytes() for n in ("model.bin", "config.json", "tokenizer.json")}
    tokens = json.loads((model / "vocabulary.json").read_text(encoding="utf-8"))
    for name in layout:
        if name == "vocabulary.txt":
            files[name] = "\n".join(tokens).encode("utf-8") + b"\n"
        elif name == "vocabulary.json":
            files[name] = json.dumps(tokens).encode("utf-8")
        elif (model / name).is_file():
            files[name] = (model / name).read_bytes()
    return files


def whisper_cases() -> list[tuple[str, str]]:
    from subtitler.models.catalog import load_catalog

    out = []
    for e in load_catalog().of_kind("asr"):
        large_v3 = "large-v3" in (e.size_name or "")
        for name, layout in LAYOUTS.items():
            # large-v3 models (128 Mel bins) are only published with their preprocessor config.
            if large_v3 == ("preprocessor_config.json" in layout) or not large_v3:
                out.append((e.id, name))
    return out


@pytest.mark.parametrize(("entry_id", "layout"), whisper_cases())
def test_every_catalog_whisper_downloads_what_the_loader_needs(
    entry_id: str,
    layout: str,
    shaped_whispers: dict[int, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from subtitler.asr.faster_whisper import (
        FasterWhisperBackend,
        WhisperSettings,
        decode_audio_file,
    )
    from subtitler.models.catalog import load_catalog
    from tests.helpers.fake_hub import serving

    entry = load_catalog().get(entry_id)
    assert entry.repo is not None
    # The fake hub serves stand-in weights of the entry's shape: the layout is under test
    # here, so the pinned checksum and size go (the pinned commit stays: it is fetched).
    entry = dataclasses.replace(
        entry, files=tuple(dataclasses.replace(f, sha256=None, size=None) for f in entry.files)
    )
    mels = 128 if "large-v3" in (entry.size_name or "") else 80
    hub = FakeHub()
    hub.revisions.add(entry.revision)
    for name, data in published(shaped_whispers[mels], LAYOUTS[layout]).items():
        hub.add(entry.repo, name, data, lfs=name == "model.bin")
    with serving(monkeypatch, hub):
        path = dl.download(entry, root=tmp_path)
    have = sorted(p.name for p in path.iterdir() if p.name != dl.MANIFEST)
    assert have == sorted(published(shaped_whispers[mels], LAYOUTS[layout]))
    be = FasterWhisperBackend(WhisperSettings(str(path), device="cpu", max_new_tokens=2))
    clip = decode_audio_file(Path(__file__).resolve().parents[1] / "data" / "LJ001-0002.flac")
    be.transcribe(clip, t0=0.0, prompt="", language="en")  # runs end to end (shape only)
    words = be.align(clip, "in being comparatively modern.", language="en")
    assert [w.text.strip() for w in words] == ["in", "being", "comparatively", "modern."]
