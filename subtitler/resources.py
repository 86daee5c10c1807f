"""Where the app's data files (``assets/``) are, from a source checkout or a frozen bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def assets_dir() -> Path:
    """``assets/`` next to the package in a checkout; inside the bundle when frozen.

    PyInstaller unpacks (onedir: places) data files under ``sys._MEIPASS``; the spec in
    packaging/ copies ``assets/`` there under the same name.
    """
    base = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and base:
        return Path(base) / "assets"
    return Path(__file__).resolve().parents[1] / "assets"


def asset_path(name: str) -> Path:
    """A file or folder under ``assets/`` (it may not exist: callers check)."""
    return assets_dir() / name
