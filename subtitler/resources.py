"""Where the app's data files (icons, the self-test's models) are, however it was installed."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def assets_dir() -> Path:
    """``subtitler/assets`` in an installed package (a wheel, or the PyInstaller bundle, whose
    spec places it there too); ``assets/`` beside the package in a source checkout."""
    installed = _PACKAGE / "assets"
    return installed if installed.is_dir() else _PACKAGE.parent / "assets"


def asset_path(name: str) -> Path:
    """A file or folder under the assets folder (it may not exist: callers check)."""
    return assets_dir() / name
