"""What the downloader sends and where it writes: the hub token only to the hub (or an endpoint
the user trusts) and never over plain http; catalog ids and file paths that would reach outside
the models folder are refused; a file that fails its structure check is not kept."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.models import download as dl
from subtitler.models.catalog import CatalogEntry, CatalogError, ModelFile, parse_catalog
from tests.helpers.bounded import run_bounded
from tests.helpers.fake_hub import MT_REPO, FakeHub, serving_models

SECRET = "hf_secretTOKEN123"


@pytest.fixture
def hub(tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    monkeypatch.setenv("HF_TOKEN", SECRET)  # a stored token (hf auth login)
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


# -- the token ----------------------------------------------------------------------------


def test_the_stored_token_is_not_sent_to_another_endpoint(hub: FakeHub, tmp_path: Path) -> None:
    dl.download(mt_entry(), root=tmp_path, endpoint=hub.endpoint)
    assert hub.requests and all(r.authorization is None for r in hub.requests)


def test_not_over_plain_http_even_when_trusted(hub: FakeHub, tmp_path: Path) -> None:
    dl.download(mt_entry(), root=tmp_path, endpoint=hub.endpoint, trust_endpoint=True)
    assert hub.requests and all(r.authorization is None for r in hub.requests)


@pytest.mark.parametrize(
    ("endpoint", "trusted", "token", "sent"),
    [
        ("https://huggingface.co", False, None, None),  # None: huggingface_hub's stored token
        ("https://huggingface.co/", False, "hf_x", "hf_x"),
        ("https://mirror.example", False, None, False),  # False: no token at all
        ("https://mirror.example", False, "hf_x", False),
        ("https://mirror.example", True, None, None),
        ("http://mirror.example", True, None, False),
        ("http://huggingface.co", False, None, False),
        ("https://huggingface.co.evil.example", False, None, False),
        ("https://huggingface.co:8443", False, None, False),
        ("https://user@huggingface.co", False, None, False),
    ],
)
def test_which_token_goes_where(endpoint: str, trusted: bool, token: object, sent: object) -> None:
    assert dl.token_for(endpoint, token, trust_endpoint=trusted) == sent  # type: ignore[arg-type]


# -- ids and paths --------------------------------------------------------------------------


def catalog_with(model_id: str = "tiny-mt", path: str = "tiny.gguf") -> dict[str, object]:
    return {
        "schema": 1,
        "model": [
            {
                "id": model_id, "kind": "mt", "name": "tiny", "repo": MT_REPO,
                "template": "chatml", "size_mb": 16, "memory_mb": 50, "licence": "MIT",
                "languages": ["*"], "speed": "fast", "files": [{"path": path}],
            }
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    "model_id", ["..", ".", "", "a/b", "a\\b", "../x", "C:x", "NUL", "con", "x\x00", " x", "x."]
)
def test_ids_that_are_not_plain_folder_names_are_refused(model_id: str) -> None:
    with pytest.raises(CatalogError, match="not a plain name") as e:
        parse_catalog(catalog_with(model_id=model_id))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "path",
    [
        "../x.gguf", "a/../../x.gguf", "/etc/x.gguf", "a\\..\\..\\x.gguf", "C:x.gguf",
        "C:\\x.gguf", "a//x.gguf", "./x.gguf", "sub/NUL.gguf", "x.gguf\x00", "a /x.gguf",
    ],
)  # fmt: skip
def test_file_paths_that_leave_the_model_folder_are_refused(path: str) -> None:
    with pytest.raises(CatalogError, match="bad file path"):
        parse_catalog(catalog_with(path=path))


def test_plain_ids_and_sub_paths_are_fine() -> None:
    cat = parse_catalog(catalog_with("whisper-large-v3_q8.0", "sub/dir/x-1.gguf"))
    assert cat.entries[0].files[0].path == "sub/dir/x-1.gguf"


def test_models_remove_dotdot_does_not_remove_the_models_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from subtitler.models_cli import main

    models = tmp_path / "home" / "models"
    (models / "other").mkdir(parents=True)
    (models / "other" / "keep.gguf").write_bytes(b"GGUF")
    cat = tmp_path / "catalog.toml"
    cat.write_text(
        f"""schema = 1
[[model]]
id = ".."
kind = "mt"
name = "evil"
repo = "{MT_REPO}"
template = "chatml"
size_mb = 1
memory_mb = 1
licence = "MIT"
languages = ["*"]
speed = "fast"
files = [{{ path = "x.gguf" }}]
""",
        encoding="utf-8",
    )
    assert main(["--catalog", str(cat), "--models-dir", str(models), "remove", ".."]) == 2
    assert (models / "other" / "keep.gguf").exists()
    err = capsys.readouterr().err
    assert err.startswith("error: model '..': id '..' is not a plain name") and err.count("\n") == 1


def test_an_entry_made_in_code_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / "keep").mkdir()
    with pytest.raises(dl.DownloadError, match="not a plain name"):
        dl.remove(mt_entry(id=".."), tmp_path / "models")
    with pytest.raises(dl.DownloadError, match="bad file path"):
        dl.model_path(mt_entry(files=(ModelFile("../../x.gguf"),)), tmp_path)
    assert (tmp_path / "keep").exists()


def test_a_manifest_naming_files_outside_is_not_trusted(hub: FakeHub, tmp_path: Path) -> None:
    dl.download(mt_entry(), root=tmp_path)
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"x" * 10)
    man_path = tmp_path / "tiny-mt" / dl.MANIFEST
    man = json.loads(man_path.read_text())
    man["files"]["../outside.bin"] = {"size": 10, "sha256": "0" * 64}
    man_path.write_text(json.dumps(man))
    assert dl.status(mt_entry(), tmp_path) == "partial"
    problems = dl.verify(mt_entry(), tmp_path)
    assert problems == ["the download record of tiny-mt names a file outside its folder"]


def test_a_manifest_of_any_shape_is_no_download(hub: FakeHub, tmp_path: Path) -> None:
    """The record of a download is a file anyone can break: nested past the parser's depth,
    or replaced by a FIFO, it means "not downloaded" (the list and Models window go on)."""
    dl.download(mt_entry(), root=tmp_path)
    man_path = tmp_path / "tiny-mt" / dl.MANIFEST
    man_path.write_text("[" * 100_000)
    assert dl.status(mt_entry(), tmp_path) == "partial"
    assert dl.verify(mt_entry(), tmp_path) == ["tiny-mt is not downloaded"]
    man_path.unlink()
    os.mkfifo(man_path)
    assert run_bounded(lambda: dl.status(mt_entry(), tmp_path)) == "partial"


# -- the structure check ----------------------------------------------------------------------


def test_a_file_failing_its_structure_check_is_fetched_again(
    hub: FakeHub, tmp_path: Path, tiny_gguf: Path
) -> None:
    """It matched the hub's hash, so the bytes are what the hub serves, but it is no model:
    it is deleted, and the next download fetches it again (it was kept and skipped forever)."""
    key = f"{MT_REPO}/tiny.gguf"
    good = hub.files[key]
    hub.files[key] = b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 64  # a header that cannot be
    with pytest.raises(dl.DownloadError) as e:
        dl.download(mt_entry(), root=tmp_path)
    assert not (tmp_path / "tiny-mt" / "tiny.gguf").exists()
    gets = sum(r.method == "GET" for r in hub.requests)
    with pytest.raises(dl.DownloadError):
        dl.download(mt_entry(), root=tmp_path)  # the same bytes fail again...
    assert sum(r.method == "GET" for r in hub.requests) == gets + 1  # ...but were fetched again
    hub.files[key] = good  # fixed on the hub
    path = dl.download(mt_entry(), root=tmp_path)
    assert path.read_bytes() == good and dl.verify(mt_entry(), tmp_path) == []
    assert str(e.value) == (
        "tiny-mt: downloaded, but tiny.gguf: corrupt GGUF header (implausible tensor or key "
        "count); the file was deleted: the next download fetches it again"
    )
