"""AppConfig <-> a TOML file in the user's config dir: validated, written atomically, and a
corrupt file is set aside and replaced by defaults with a notice for the user."""

from __future__ import annotations

import dataclasses
import logging
import math
import tomllib
import types
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import tomli_w

from subtitler import paths, user_files
from subtitler.config import (
    MAX_EXTRA_TARGETS,
    SECTIONS,
    AppConfig,
    Spec,
    base_code,
    language_codes,
    spec_of,
    specs,
)
from subtitler.mt.languages import UnknownLanguageError, normalize_code

log = logging.getLogger(__name__)
FILENAME = "config.toml"
MAX_BYTES = 1 * user_files.MB  # a settings file is a few kB


class ConfigError(ValueError):
    pass


def default_path() -> Path:
    return paths.config_dir() / FILENAME


def _quoted(text: str, most: int = 24) -> str:
    """``text`` quoted for a one-line message, cut at ``most`` characters (a pasted paragraph
    in a language field was repeated whole in the red line under it)."""
    return repr(text if len(text) <= most else text[: most - 1] + "…")


def _language_problem(spec: Spec, value: Any) -> str | None:
    if value is None or not isinstance(value, str):
        return None
    if spec.languages:
        codes = language_codes(value)
        bad = [c for c in codes if not _is_language(c)]
        if bad:
            return f"{spec.label}: unknown language {', '.join(map(_quoted, bad))}"
        if len(codes) > MAX_EXTRA_TARGETS:
            return f"{spec.label}: at most {MAX_EXTRA_TARGETS} languages (is {len(codes)})"
        return None
    if not spec.language:
        return None
    try:
        normalize_code(value)
    except UnknownLanguageError:
        return f"{spec.label}: unknown language {_quoted(value)}"
    return None


def _normalized(spec: Spec, value: Any) -> Any:
    """A language setting in the codes the engines take ("EN", "zh-CN" are "en", "zh"), as
    the command line gives them: Whisper refused "EN" at every recognition, and recognition
    stopped after ten."""
    if not isinstance(value, str) or not (spec.language or spec.languages):
        return value
    if spec.languages:
        return ",".join(normalize_code(c) for c in language_codes(value))
    return normalize_code(value)


def _is_language(code: str) -> bool:
    try:
        normalize_code(code)
    except UnknownLanguageError:
        return False
    return True


def _target_problem(cfg: AppConfig) -> str | None:
    """The extra target languages must not repeat the main one."""
    main = base_code(cfg.mt.tgt_lang)
    if main in language_codes(cfg.mt.extra_targets):
        also = spec_of(SECTIONS["mt"], "extra_targets").label
        into = spec_of(SECTIONS["mt"], "tgt_lang").label
        return f"{also}: {main!r} is already the language to {into.lower()}"
    return None


def _without_main_target(cfg: AppConfig, notes: list[str]) -> AppConfig:
    """A settings file whose extra targets repeat the main one: that code is left out."""
    if _target_problem(cfg) is None:
        return cfg
    main = base_code(cfg.mt.tgt_lang)
    rest = ",".join(c for c in language_codes(cfg.mt.extra_targets) if c != main)
    notes.append(f"mt.extra_targets repeats the main target {main!r}: {rest!r} used")
    return dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, extra_targets=rest))


def validate(cfg: AppConfig) -> list[str]:
    """Every problem with a config, as user-facing sentences (empty when valid). Each field is
    checked against its declaration in :mod:`subtitler.config`."""
    errs: list[str] = []
    for name, cls in SECTIONS.items():
        section = getattr(cfg, name)
        for f, spec in specs(cls):
            value = getattr(section, f.name)
            why = spec.problem(value) or _language_problem(spec, value)
            if why:
                errs.append(why)
    if (why := _target_problem(cfg)) is not None:
        errs.append(why)
    return errs


def _strip_none(obj: Any) -> Any:
    """TOML has no null: None values are left out (they read back as defaults)."""
    if isinstance(obj, dict):
        return {k: _strip_none(v) for k, v in obj.items() if v is not None}
    return obj


def to_toml(cfg: AppConfig) -> str:
    return tomli_w.dumps(_strip_none(dataclasses.asdict(cfg)))


def _build(cls: type, data: Any, where: str, notes: list[str]) -> Any:
    """A settings section from its TOML table. A value of the wrong type, out of range or not
    among the choices costs that one field (clamped, or its default) and a line in ``notes``;
    the rest of the file is kept."""
    if not isinstance(data, dict):
        raise ConfigError(f"[{where}] must be a table")
    known = {f.name: f for f in fields(cls)}
    hints = get_type_hints(cls)
    defaults = cls()
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            log.warning("ignoring unknown setting %s.%s", where, key)
            continue
        name = f"{where}.{key}" if where else key
        default = getattr(defaults, key)
        if is_dataclass(default):
            if not isinstance(value, dict):
                notes.append(f"[{name}] should be a table, not {_short(value)}: defaults used")
                continue
            # A section's class from SECTIONS (the schema), the same one AppConfig holds.
            kind = SECTIONS.get(key, type(default)) if not where else type(default)
            kwargs[key] = _build(kind, value, name, notes)
            continue
        # Checked against the field's declared type, so that fields whose default is None or
        # a table (language, device, geometry...) are checked too.
        tp = hints[key]
        if not _matches(value, tp):
            notes.append(f"{name} should be {_type_name(tp)}, not {_short(value)}: default used")
            continue
        written = value
        if isinstance(default, float) and value is not None:
            value = _as_float(value)
        spec: Spec | None = known[key].metadata.get("spec")
        if spec is not None:
            if (why := _language_problem(spec, value)) is not None:
                notes.append(f"{name}: {why.split(': ', 1)[-1]}, {default!r} used")
                continue
            value = _normalized(spec, value)
            if spec.problem(value) is not None:
                fixed = spec.fixed(value, default)
                notes.append(
                    f"{name} = {_short(written)} (allowed: {spec.describe()}): {_short(fixed)} used"
                )
                value = fixed
        kwargs[key] = value
    return cls(**kwargs)


def _as_float(value: int | float) -> float:
    """A TOML number as a float; an integer too large for one (400 digits) is infinite, which
    the range check then clamps."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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


def from_toml(text: str, notes: list[str] | None = None) -> AppConfig:
    """Parse a settings file. Raises ConfigError when it cannot be used at all; a field that
    is out of range or of the wrong type is corrected, with a line in ``notes`` (when given;
    else it raises too)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError("not valid TOML: nested too deeply") from None
    found: list[str] = []
    cfg: AppConfig = _build(AppConfig, data, "", found)
    cfg = _without_main_target(cfg, found)
    if notes is None and found:
        raise ConfigError("; ".join(found))
    if notes is not None:
        notes.extend(found)
    errs = validate(cfg)  # (cannot happen after the corrections; kept as the last guard)
    if errs:
        raise ConfigError("; ".join(errs))
    return cfg


@dataclass
class LoadResult:
    config: AppConfig
    notice: str = ""  # shown to the user when the file had to be replaced
    backup: Path | None = None


def load(path: Path | None = None) -> LoadResult:
    """The saved settings; defaults for a missing file. A file that cannot be used (not a
    regular file, too large, not UTF-8 TOML, or anything its parser raises) is set aside and
    replaced by the defaults, with a one-line notice; a value out of range costs that value."""
    path = path or default_path()

    def parse(text: str) -> tuple[AppConfig, list[str]]:
        notes: list[str] = []
        return from_toml(text, notes), notes

    loaded = user_files.load(path, parse, limit=MAX_BYTES)
    if loaded.value is not None:
        cfg, notes = loaded.value
        if not notes:
            return LoadResult(cfg)
        notice = (
            f"Settings corrected: {'; '.join(notes)} ({path.name} is kept as it is until "
            "the next change is saved)."
        )
        log.warning(notice)
        return LoadResult(cfg, notice)
    cfg = AppConfig()
    if not loaded.problem:  # no file yet
        return LoadResult(cfg)
    if loaded.backup is not None:
        try:
            save(cfg, path)
        except OSError as e:  # the next save tries again; the defaults are in use meanwhile
            log.warning("could not write default settings to %s: %s", path, e)
    notice = loaded.notice("Your settings file", "the defaults are in use")
    log.warning(notice)
    return LoadResult(cfg, notice, loaded.backup)


def named_file_problem(path: Path) -> str | None:
    """Why a settings file the user named (``--config``) cannot be used, in one line; None
    when it can (or is not there yet: it is written at the first change). The app's own
    file is set aside and replaced when it is damaged; a named one is someone's file (a
    mistyped name, another program's TOML) and is left as it is."""
    try:
        text = user_files.read_text(path, MAX_BYTES)
    except user_files.FileMissing:
        return None
    except user_files.FileProblem as e:
        return f"{e} ({path})"  # (its message names the file)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return f"{path} is not a subtitler settings file (not TOML)"
    if data and not set(data) & set(SECTIONS):
        tables = ", ".join(f"[{k}]" for k in list(data)[:3])
        return f"{path} is not a subtitler settings file (it has {tables} and none of its own)"
    return None


def save(cfg: AppConfig, path: Path | None = None) -> Path:
    """Validate and write atomically (a crash mid-write leaves the old file intact)."""
    errs = validate(cfg)
    if errs:
        raise ConfigError("; ".join(errs))
    path = path or default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return user_files.write_atomic(path, to_toml(cfg))
