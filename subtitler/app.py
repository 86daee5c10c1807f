"""Command line of the app: ``python main.py [options]`` and ``python main.py models ...``."""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import sys
from pathlib import Path
from typing import NoReturn

from subtitler import __version__
from subtitler.config import (
    MAX_EXTRA_TARGETS,
    SECTIONS,
    SETTING_DEST,
    add_setting_flags,
    flag_of,
    given_settings,
    language_codes,
    spec_of,
)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class OneLineErrorParser(argparse.ArgumentParser):
    """Argument errors as one ``error: ...`` line (argparse prints its usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


SHORT_FLAGS = {
    "asr.model": "--asr-model",
    "mt.model_path": "--mt-model",
    "mt.tgt_lang": "--tgt-lang",
}


def parser() -> argparse.ArgumentParser:
    ap = OneLineErrorParser(
        prog="subtitler",
        description="Live translated subtitles over any meeting. "
        "Also: 'subtitler models list|download|verify|remove'.",
    )
    ap.add_argument("--version", action="version", version=f"subtitler {__version__}")
    ap.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="play an audio file through the pipeline in real time (no microphone)",
    )
    ap.add_argument("--speed", type=float, default=1.0, help="replay speed")
    ap.add_argument("--config", type=Path, default=None, help="settings file (default: user's)")
    ap.add_argument("--data-dir", type=Path, default=None, help="where transcripts are kept")
    ap.add_argument(
        "--toggle",
        choices=("click-through", "pause"),
        help="switch click-through, or start / pause, in the running subtitler and exit: "
        "for a shortcut in the desktop's keyboard settings (Wayland has no global hotkeys)",
    )
    ap.add_argument(
        "--self-test",
        action="store_true",
        help="check Qt, audio, faster-whisper and llama.cpp, then exit",
    )
    ap.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LOG_LEVELS,
        help="detail of subtitler.log: %(choices)s (default: %(default)s)",
    )
    # Every setting, from its declaration in subtitler.config (a few keep their short names).
    add_setting_flags(ap.add_argument_group("settings for this run (not saved)"), names=SHORT_FLAGS)
    return ap


def setup_logging(level: str, data_dir: Path) -> None:
    root = logging.getLogger()
    root.setLevel(level.upper())
    err = logging.StreamHandler()
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(err)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        fh = logging.handlers.RotatingFileHandler(
            data_dir / "subtitler.log", maxBytes=2_000_000, backupCount=2, encoding="utf-8"
        )
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(fh)
    except OSError:
        pass  # a read-only home must not keep the app from starting


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["models"]:
        from subtitler.models.cli import main as models_main

        return models_main(argv[1:])
    a = parser().parse_args(argv)
    if a.self_test:
        from subtitler.selftest import run_self_test

        return run_self_test()
    from subtitler import paths

    data_dir = a.data_dir or paths.data_dir()
    if a.toggle:
        from subtitler.ui.single_instance import send_command

        if send_command(data_dir, a.toggle):
            return 0
        print("error: subtitler is not running", file=sys.stderr)
        return 1
    setup_logging(a.log_level, data_dir)
    paths.move_legacy_models()
    if a.replay is not None and not a.replay.is_file():
        print(f"error: audio file not found: {a.replay}", file=sys.stderr)
        return 2
    if a.speed <= 0:
        print("error: --speed must be positive", file=sys.stderr)
        return 2
    from subtitler.mt.languages import UnknownLanguageError, normalize_code

    for key, value in given_settings(a).items():
        section, name = key.split(".", 1)
        spec = spec_of(SECTIONS[section], name)
        if not (spec.language or spec.languages):
            continue
        flag = SHORT_FLAGS.get(key, flag_of(section, name))
        try:
            codes = [normalize_code(c) for c in language_codes(value)] if spec.languages else []
            value = ",".join(codes) if spec.languages else normalize_code(value)
        except UnknownLanguageError as e:
            print(f"error: {flag}: {e}", file=sys.stderr)
            return 2
        if len(codes) > MAX_EXTRA_TARGETS:
            print(f"error: {flag}: at most {MAX_EXTRA_TARGETS} languages", file=sys.stderr)
            return 2
        setattr(a, SETTING_DEST + key, value)
    given = given_settings(a)
    if given.get("mt.tgt_lang") in language_codes(given.get("mt.extra_targets", "")):
        print(
            f"error: {flag_of('mt', 'extra_targets')}: {given['mt.tgt_lang']!r} is already "
            f"the target language ({SHORT_FLAGS['mt.tgt_lang']})",
            file=sys.stderr,
        )
        return 2
    from subtitler.ui.app import run_app

    return run_app(a, data_dir)
