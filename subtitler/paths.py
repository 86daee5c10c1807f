"""The app's folders: settings, data (transcripts, log) and downloaded models, one app folder
per kind on every OS (``appauthor=False``: no ``subtitler\\subtitler`` on Windows)."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import PlatformDirs
from platformdirs.api import PlatformDirsABC

APP = "subtitler"
MODELS_DIR_ENV = "SUBTITLER_MODELS_DIR"  # where models live instead (tests, portable setups)


def _dirs(platform: type[PlatformDirsABC] | None) -> PlatformDirsABC:
    return (platform or PlatformDirs)(APP, appauthor=False)


def config_dir(platform: type[PlatformDirsABC] | None = None) -> Path:
    """Where config.toml lives."""
    return Path(_dirs(platform).user_config_dir)


def data_dir(platform: type[PlatformDirsABC] | None = None) -> Path:
    """Transcripts, the log and the single-instance lock."""
    return Path(_dirs(platform).user_data_dir)


def models_dir(platform: type[PlatformDirsABC] | None = None) -> Path:
    """Downloaded models (a cache: they can be downloaded again)."""
    env = os.environ.get(MODELS_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(_dirs(platform).user_cache_dir) / "models"
