"""AppConfig <-> a TOML file in the user's config dir: validated, written atomically, and a
corrupt file is set aside and replaced by defaults with a notice for the user."""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
import time
import tomllib
import types
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import tomli_w

from subtitler import paths
from subtitler.config import AppConfig
from subtitler.mt.languages import UnknownLanguageError, normalize_code

log = logging.getLogger(__name__)
FILENAME = "config.toml"


class ConfigError(ValueError):
    pass


def default_path() -> Path:
    return paths.config_dir() / FILENAME


def validate(cfg: AppConfig) -> list[str]:
    """Every problem with a config, as user-facing sentences (empty when valid)."""
    errs: list[str] = []
    mt, d, asr, audio = cfg.mt, cfg.display, cfg.asr, cfg.audio
    if not 0.0 <= mt.beta <= 1.0:
        errs.append(f"beta must be between 0 and 1 (is {mt.beta})")
    if not 0 <= d.mask_k <= 10:
        errs.append(f"k must be between 0 and 10 (is {d.mask_k})")
    if mt.method not in ("SSBD", "RT", "CD"):
        errs.append(f"decoding mode must be SSBD, RT or CD (is {mt.method!r})")
    for name, code in (("target", mt.tgt_lang), ("source", mt.src_lang)):
        try:
            normalize_code(code)
        except UnknownLanguageError:
            errs.append(f"unknown {name} language {code!r}")
    if asr.language is not None:
        try:
            normalize_code(asr.language)
        except UnknownLanguageError:
            errs.append(f"unknown speech language {asr.language!r}")
    if mt.template not in ("auto", "tower", "qwen3", "chatml", "gguf"):
        errs.append(f"unknown prompt template {mt.template!r}")
    if not 0 <= mt.context_sentences <= 3:
        errs.append(f"context sentences must be 0..3 (is {mt.context_sentences})")
    if not 0 <= mt.lookahead <= 16:
        errs.append(f"lookahead must be 0..16 tokens (is {mt.lookahead})")
    if not 1 <= mt.draft_tokens <= 16:
        errs.append(f"draft model tokens must be 1..16 (is {mt.draft_tokens})")
    if mt.verify not in ("biased", "specdec"):
        errs.append(f"verification must be 'biased' or 'specdec' (is {mt.verify!r})")
    if mt.top_b < 1 or mt.tau < 0:
        errs.append("SpecDec needs top-b >= 1 and tau >= 0")
    if not 1 <= d.lines <= 6:
        errs.append(f"lines shown must be 1..6 (is {d.lines})")
    if not 8 <= d.font_size <= 120:
        errs.append(f"font size must be 8..120 (is {d.font_size})")
    if not 0.0 <= d.background_opacity <= 1.0:
        errs.append("background opacity must be between 0 and 1")
    if mt.gpu_layers is not None and mt.gpu_layers < -1:
        errs.append(f"GPU layers must be -1 (all), 0 (none) or more (is {mt.gpu_layers})")
    if mt.threads < 1 or asr.threads < 1:
        errs.append("thread counts must be at least 1")
    if asr.min_chunk_s <= 0 or asr.silence_end_s <= 0:
        errs.append("ASR chunk and silence lengths must be positive")
    if audio.source not in ("microphone", "file"):
        errs.append(f"audio source must be 'microphone' or 'file' (is {audio.source!r})")
    if cfg.web.share not in ("off", "local", "network"):
        errs.append(f"web page sharing must be off, local or network (is {cfg.web.share!r})")
    if not 1024 <= cfg.web.port <= 65535:
        errs.append(f"web page port must be 1024..65535 (is {cfg.web.port})")
    return errs


def _strip_none(obj: Any) -> Any:
    """TOML has no null: None values are left out (they read back as defaults)."""
    if isinstance(obj, dict):
        return {k: _strip_none(v) for k, v in obj.items() if v is not None}
    return obj


def to_toml(cfg: AppConfig) -> str:
    return tomli_w.dumps(_strip_none(dataclasses.asdict(cfg)))


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"[{where}] must be a table")
    known = {f.name: f for f in fields(cls)}
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            log.warning("ignoring unknown setting %s.%s", where, key)
            continue
        default = getattr(cls(), key)
        if is_dataclass(default):
            kwargs[key] = _build(type(default), value, f"{where}.{key}" if where else key)
            continue
        # Checked against the field's declared type, so that fields whose default is None or
        # a table (language, device, geometry...) are checked too.
        tp = hints[key]
        if not _matches(value, tp):
            raise ConfigError(f"{where}.{key} should be {_type_name(tp)}, got {value!r}")
        if isinstance(default, float):
            value = float(value)
        kwargs[key] = value
    return cls(**kwargs)


def _matches(value: Any, tp: Any) -> bool:
    """Whether a TOML value fits a settings field's type (the few shapes config.py uses)."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(_matches(value, a) for a in args)
    if tp is type(None):
        return value is None
    if tp is float:  # TOML writes 1 for 1.0
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is dict:
        kt, vt = args or (Any, Any)
        return isinstance(value, dict) and all(
            _matches(k, kt) and _matches(v, vt) for k, v in value.items()
        )
    if origin is list:
        (et,) = args or (Any,)
        return isinstance(value, list) and all(_matches(v, et) for v in value)
    return isinstance(value, tp) if isinstance(tp, type) else True


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")


def from_toml(text: str) -> AppConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"not valid TOML: {e}") from None
    cfg: AppConfig = _build(AppConfig, data, "")
    errs = validate(cfg)
    if errs:
        raise ConfigError("; ".join(errs))
    return cfg


@dataclass
class LoadResult:
    config: AppConfig
    notice: str = ""  # shown to the user when the file had to be replaced
    backup: Path | None = None


def load(path: Path | None = None) -> LoadResult:
    """The saved settings; defaults for a missing file; a bad file is backed up and replaced."""
    path = path or default_path()
    if not path.exists():
        return LoadResult(AppConfig())
    try:
        return LoadResult(from_toml(path.read_text(encoding="utf-8")))
    except (ConfigError, UnicodeDecodeError, TypeError) as e:
        backup = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        cfg = AppConfig()
        try:
            os.replace(path, backup)
            save(cfg, path)
        except OSError as oe:  # a read-only settings folder: leave the file as it is
            notice = (
                f"Your settings file could not be read ({e}), nor set aside ({oe.strerror}). "
                "The defaults are in use for this session."
            )
            log.warning(notice)
            return LoadResult(cfg, notice)
        notice = (
            f"Your settings file could not be read ({e}). It was saved as {backup.name} "
            "and the defaults are in use."
        )
        log.warning(notice)
        return LoadResult(cfg, notice, backup)
    except OSError as e:  # unreadable (permissions, a folder in its place)
        notice = f"Your settings file could not be opened ({e}); the defaults are in use."
        log.warning(notice)
        return LoadResult(AppConfig(), notice)


def save(cfg: AppConfig, path: Path | None = None) -> Path:
    """Validate and write atomically (a crash mid-write leaves the old file intact)."""
    errs = validate(cfg)
    if errs:
        raise ConfigError("; ".join(errs))
    path = path or default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(to_toml(cfg))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
