"""The app's folders: settings, data (transcripts, log) and downloaded models, one app folder
per kind on every OS (``appauthor=False``: no ``subtitler\\subtitler`` on Windows)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from platformdirs import PlatformDirs
from platformdirs.api import PlatformDirsABC

log = logging.getLogger(__name__)

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


def move_legacy_models(platform: type[PlatformDirsABC] | None = None) -> Path | None:
    """Models downloaded by 0.1.0 on Windows sit in ``subtitler\\subtitler\\Cache\\models``
    (platformdirs' default app author): move them to :func:`models_dir` once, so nothing is
    downloaded again. Returns the old folder when it moved it."""
    if os.environ.get(MODELS_DIR_ENV):
        return None
    old = Path((platform or PlatformDirs)(APP).user_cache_dir) / "models"
    new = models_dir(platform)
    if old == new or not old.is_dir() or new.exists():
        return None
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
    except OSError as e:  # in use, or another volume: leave them; they can be downloaded again
        log.warning("could not move models from %s to %s: %s", old, new, e)
        return None
    log.info("moved downloaded models from %s to %s", old, new)
    return old
