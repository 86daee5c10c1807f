"""The huggingface_hub names subtitler imports exist in the installed release, and the
dependency is bounded to the major releases checked this way."""

from __future__ import annotations

import ast
import importlib
import inspect
import tomllib
from pathlib import Path

import huggingface_hub
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def _hub_imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from huggingface_hub... import name`` in the package."""
    found: set[tuple[str, str]] = set()
    for py in (ROOT / "subtitler").rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "huggingface_hub"
            ):
                found |= {(node.module or "", a.name) for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {(a.name, "") for a in node.names if a.name.startswith("huggingface_hub")}
    return found


def test_every_imported_name_exists() -> None:
    used = _hub_imports()
    assert ("huggingface_hub.file_download", "http_get") in used  # the scan sees the downloader
    for module, name in sorted(used):
        mod = importlib.import_module(module)
        assert not name or hasattr(mod, name), f"{module}.{name}"


def test_http_get_takes_what_the_downloader_passes() -> None:
    from huggingface_hub.file_download import http_get

    params = inspect.signature(http_get).parameters
    assert {"url", "temp_file", "resume_size", "headers", "expected_size"} <= set(params)


def test_version_is_bounded_to_checked_majors() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (req,) = [
        Requirement(d)
        for d in meta["project"]["dependencies"]
        if Requirement(d).name == "huggingface_hub"
    ]
    uppers = [Version(s.version) for s in req.specifier if s.operator == "<"]
    assert uppers, "huggingface_hub needs an upper bound"
    assert Version(huggingface_hub.__version__) in req.specifier
