"""Settings: round trip, validation, atomic write, corrupt-file recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from subtitler import settings_store as store
from subtitler.config import AppConfig


def test_round_trip(tmp_path: Path) -> None:
    cfg = AppConfig()
    cfg.mt.beta, cfg.mt.tgt_lang, cfg.display.mask_k = 0.35, "ja", 5
    cfg.asr.language = "en"
    cfg.display.geometry = {"screen-A": [10, 20, 800, 120]}
    p = store.save(cfg, tmp_path / "c" / "config.toml")
    res = store.load(p)
    assert res.config == cfg and res.notice == ""


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert store.load(tmp_path / "none.toml").config == AppConfig()


@pytest.mark.parametrize(
    "text",
    [
        "this is [not toml",
        "[mt]\nbeta = 3.0\n",
        "[display]\nmask_k = 'five'\n",
        "[mt]\ntgt_lang = 'klingon'\n",
        "mt = 5\n",
        # Fields whose default is None or a table are type-checked too.
        "[asr]\nlanguage = 5\n",
        "[display]\ngeometry = 'x'\n",
        "[display.geometry]\nscreen = [1, 2, 'three', 4]\n",
        "[audio]\ndevice = 1.5\n",
        "[mt]\ngpu_layers = 'all'\n",
        "[display]\nmask_k = true\n",
    ],
)
def test_corrupt_file_is_backed_up_and_replaced(tmp_path: Path, text: str) -> None:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    res = store.load(p)
    assert res.config == AppConfig()
    assert res.backup is not None and res.backup.read_text(encoding="utf-8") == text
    assert "could not be read" in res.notice and res.backup.name in res.notice
    assert store.load(p).config == AppConfig()  # the replacement file is valid


def test_values_of_union_and_table_fields_are_accepted(tmp_path: Path) -> None:
    p = tmp_path / "config.toml"
    p.write_text(
        "[audio]\ndevice = 3\n[display.geometry]\nscreen = [1, 2, 3, 4]\n", encoding="utf-8"
    )
    res = store.load(p)
    assert res.notice == "" and res.config.audio.device == 3
    assert res.config.display.geometry == {"screen": [1, 2, 3, 4]}
    p.write_text("[audio]\ndevice = 'USB Mic'\n", encoding="utf-8")
    assert store.load(p).config.audio.device == "USB Mic"


def test_corrupt_file_in_a_read_only_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "config.toml"
    p.write_text("[asr]\nlanguage = 5\n", encoding="utf-8")

    def refuse(*a: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store.os, "replace", refuse)
    res = store.load(p)  # no exception: the app starts on defaults
    assert res.config == AppConfig() and res.backup is None
    assert res.notice.startswith("Your settings file could not be read (asr.language should be")
    assert "nor set aside (Permission denied)" in res.notice
    assert p.read_text(encoding="utf-8") == "[asr]\nlanguage = 5\n"  # left as it was


def test_unknown_keys_are_ignored_and_ints_accepted_for_floats(tmp_path: Path) -> None:
    p = tmp_path / "config.toml"
    p.write_text("[mt]\nbeta = 0\nfuture_option = 1\n", encoding="utf-8")
    res = store.load(p)
    assert res.config.mt.beta == 0.0 and isinstance(res.config.mt.beta, float)
    assert res.notice == ""


def test_invalid_values_are_not_saved(tmp_path: Path) -> None:
    cfg = AppConfig()
    cfg.display.mask_k = 11
    with pytest.raises(store.ConfigError, match="k must be between 0 and 10"):
        store.save(cfg, tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()
    cfg = AppConfig()
    cfg.mt.draft_tokens = 0
    with pytest.raises(store.ConfigError, match=r"draft model tokens must be 1\.\.16"):
        store.save(cfg, tmp_path / "x.toml")
    cfg = AppConfig()
    cfg.mt.gpu_layers = -2
    with pytest.raises(store.ConfigError, match="GPU layers"):
        store.save(cfg, tmp_path / "x.toml")


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "config.toml"
    store.save(AppConfig(), p)
    before = p.read_text()

    def boom(*a: object, **k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store.os, "replace", boom)
    cfg = AppConfig()
    cfg.mt.beta = 0.4
    with pytest.raises(OSError):
        store.save(cfg, p)
    assert p.read_text() == before
    assert [x.name for x in tmp_path.iterdir()] == ["config.toml"]  # no temp file left
