"""One folder per app on every OS: settings, data and models all under 'subtitler', once."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix
from platformdirs.windows import Windows

from subtitler import paths

LOCAL = r"C:\Users\ann\AppData\Local"


@pytest.fixture(autouse=True)
def _no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(paths.MODELS_DIR_ENV, raising=False)
    # platformdirs' own override: the Windows code path on any OS, with a known profile
    monkeypatch.setenv("WIN_PD_OVERRIDE_LOCAL_APPDATA", LOCAL)
    monkeypatch.setenv("WIN_PD_OVERRIDE_APPDATA", r"C:\Users\ann\AppData\Roaming")
    monkeypatch.setenv("HOME", "/home/ann")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)


def test_windows_keeps_models_in_the_same_app_folder_as_settings_and_data() -> None:
    got = {
        "config": PureWindowsPath(str(paths.config_dir(Windows))),
        "data": PureWindowsPath(str(paths.data_dir(Windows))),
        "models": PureWindowsPath(str(paths.models_dir(Windows))),
    }
    app = PureWindowsPath(LOCAL, "subtitler")
    assert got == {"config": app, "data": app, "models": app / "Cache" / "models"}


def test_macos_folders() -> None:
    support = PurePosixPath("/home/ann/Library/Application Support/subtitler")
    assert PurePosixPath(paths.config_dir(MacOS)) == support
    assert PurePosixPath(paths.data_dir(MacOS)) == support
    assert PurePosixPath(paths.models_dir(MacOS)) == PurePosixPath(
        "/home/ann/Library/Caches/subtitler/models"
    )


def test_linux_folders() -> None:
    assert PurePosixPath(paths.config_dir(Unix)) == PurePosixPath("/home/ann/.config/subtitler")
    assert PurePosixPath(paths.data_dir(Unix)) == PurePosixPath("/home/ann/.local/share/subtitler")
    assert PurePosixPath(paths.models_dir(Unix)) == PurePosixPath(
        "/home/ann/.cache/subtitler/models"
    )


def test_models_folder_can_be_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.MODELS_DIR_ENV, "~/models")
    assert str(paths.models_dir(Windows)) == "/home/ann/models"


def test_the_app_uses_these_folders() -> None:
    from subtitler import settings_store
    from subtitler.models import download

    assert settings_store.default_path().parent == paths.config_dir()
    assert download.models_dir() == paths.models_dir()


def test_models_in_the_old_windows_folder_are_moved_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """0.1.0 kept them in subtitler/subtitler/Cache: moved, not downloaded again."""
    import platformdirs.windows

    monkeypatch.setattr(platformdirs.windows, "get_win_folder", lambda csidl: str(tmp_path))
    old = Path(Windows("subtitler").user_cache_dir) / "models"
    (old / "whisper-small").mkdir(parents=True)
    (old / "whisper-small" / "model.bin").write_bytes(b"w")
    assert paths.move_legacy_models(Windows) == old
    new = paths.models_dir(Windows)
    assert (new / "whisper-small" / "model.bin").read_bytes() == b"w"
    assert not old.exists()
    assert paths.move_legacy_models(Windows) is None  # once
    old.mkdir(parents=True)  # both exist: the new folder is never overwritten
    assert paths.move_legacy_models(Windows) is None and (new / "whisper-small").is_dir()


def test_other_oses_had_no_old_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.move_legacy_models(MacOS) is None and paths.move_legacy_models(Unix) is None
