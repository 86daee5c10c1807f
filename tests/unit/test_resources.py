"""The package list in pyproject.toml (spelled out to map assets/ in) stays complete."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

from subtitler.resources import asset_path, assets_dir

ROOT = Path(__file__).resolve().parents[2]


def test_every_subpackage_is_installed() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(cfg["setuptools"]["packages"])
    found = set(find_packages(str(ROOT), include=["subtitler", "subtitler.*"]))
    assets = {f"subtitler.assets.{d.name}" for d in (ROOT / "assets").iterdir() if d.is_dir()}
    assert listed == found | {"subtitler.assets"} | assets
    assert cfg["setuptools"]["package-dir"] == {"subtitler.assets": "assets"}


def test_a_checkout_finds_the_assets_folder_beside_the_package() -> None:
    assert assets_dir() == ROOT / "assets"
    assert asset_path("icon.png").is_file()
    assert (asset_path("selftest") / "README.md").is_file()
