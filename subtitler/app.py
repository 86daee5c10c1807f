"""Command line of the app: ``python main.py [options]`` and ``python main.py models ...``."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from subtitler import __version__
from subtitler.config import (
    MAX_EXTRA_TARGETS,
    SECTIONS,
    SETTING_DEST,
    UNSET,
    OneLineErrorParser,
    add_setting_flags,
    flag_of,
    given_settings,
    language_codes,
    spec_of,
)
from subtitler.log_file import LogFile

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# A replay's pace: slower than a tenth nothing is heard for minutes; faster than 100 the
# recogniser is far behind at once (and inf or nan are no pace).
MIN_SPEED, MAX_SPEED = 0.1, 100.0
DETECT = "auto"  # a speech language flag's word for "recognise it" (None in the settings)


SHORT_FLAGS = {
    "asr.model": "--asr-model",
    "mt.model_path": "--mt-model",
    "mt.tgt_lang": "--tgt-lang",
}
# The settings --help shows; every other one is a flag too (--help-settings lists them all).
COMMON_SETTINGS = (
    "audio.device",
    "asr.language",
    "mt.tgt_lang",
    "mt.extra_targets",
    "asr.model",
    "mt.model_path",
)
# Their help in plain words (the declarations' docs are written for the settings file).
COMMON_HELP = {
    "audio.device": ("NAME", "the input to listen to, by name (see --list-inputs); "
                     "default: the system's microphone"),
    "asr.language": ("CODE", "the language spoken (en, de, ja, ...; auto: recognised); "
                     "default: recognised"),
    "mt.tgt_lang": ("CODE", "the language of the subtitles (de, fr, ja, ...)"),
    "mt.extra_targets": ("CODES", "more languages shown under the first, e.g. 'ja, fr' "
                         "(at most 4)"),
    "asr.model": ("MODEL", "speech model: a size (tiny, base, small, ...; see 'subtitler models "
                  "list') or a model folder"),
    "mt.model_path": ("MODEL", "translation model: a .gguf file or a model id of 'subtitler "
                      "models list'"),
}  # fmt: skip
EXAMPLES = """\
examples:
  subtitler                          start (the first start offers models and languages)
  subtitler --list-inputs            the microphones and meeting-audio inputs, by name
  subtitler --audio-device NAME      listen to that input in this run
  subtitler --asr-language en --tgt-lang fr
                                     English speech, French subtitles, in this run
  subtitler --replay talk.wav        a recording played as if spoken (no microphone)
  subtitler --toggle pause           start / pause the running subtitler (a desktop shortcut)
  subtitler models list              the speech and translation models, and which are here
  subtitler models download whisper-base
  subtitler --self-test              check that this installation works

Settings given on the command line apply to this run only (they are not saved).
"""


class _HelpSettings(argparse.Action):
    """--help-settings: the help with every setting's flag, then exit."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        ap: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(parser(all_settings=True).format_help())
        ap.exit()


def parser(*, all_settings: bool = False) -> argparse.ArgumentParser:
    """The app's command line; ``all_settings``: its help lists every setting's flag (the
    short help, the common ones: the others are accepted all the same)."""
    ap = OneLineErrorParser(
        prog="subtitler",
        description="Live translated subtitles over any meeting.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"subtitler {__version__}")
    ap.add_argument(
        "--list-inputs",
        action="store_true",
        help="list the audio inputs (microphones, meeting audio) by name, then exit",
    )
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
    ap.add_argument(
        "--help-settings",
        action=_HelpSettings,
        help="show every setting that can be given for one run, then exit",
    )
    # Every setting, from its declaration in subtitler.config (a few keep their short names).
    common = ap.add_argument_group("settings for this run (not saved)")
    add_setting_flags(common, only=COMMON_SETTINGS, names=SHORT_FLAGS)
    for action in common._group_actions:
        action.metavar, action.help = COMMON_HELP[action.dest.removeprefix(SETTING_DEST)]
    rest = ap.add_argument_group("all other settings for this run (not saved)")
    add_setting_flags(rest, only=_other_settings(), names=SHORT_FLAGS)
    if not all_settings:
        for action in rest._group_actions:
            action.help = argparse.SUPPRESS
    return ap


def _other_settings() -> list[str]:
    from subtitler.config import specs

    return [
        f"{section}.{f.name}"
        for section, cls in SECTIONS.items()
        for f, _spec in specs(cls)
        if f"{section}.{f.name}" not in COMMON_SETTINGS
    ]


def list_inputs() -> int:
    """--list-inputs: each input's name (what --audio-device and the settings take) and what
    it is; 1 when there is none or audio does not work."""
    from subtitler.session import input_devices

    devices, notice = input_devices()
    if not devices:
        print(notice or "No input device found: connect a microphone or use --replay.")
        return 1
    print("Audio inputs (give one with --audio-device NAME, or choose it in Settings → Audio):")
    for label, name in devices:
        rest = label[len(name) :] if label.startswith(name) else ""
        what = ", ".join(p.strip().strip("()") for p in rest.split("·") if p.strip())
        print(f"  {name}" + (f"    ({what})" if what else ""))
    return 0


def setup_logging(level: str, data_dir: Path) -> None:
    root = logging.getLogger()
    root.setLevel(level.upper())
    err = logging.StreamHandler()
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(err)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        fh = LogFile(data_dir / "subtitler.log")
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(fh)
    except OSError:
        pass  # a read-only home must not keep the app from starting


def _may_be_recognised(section: str, name: str) -> bool:
    """Whether a language setting may be None: the speech language, recognised."""
    (f,) = [f for f in dataclasses.fields(SECTIONS[section]) if f.name == name]
    return f.default is None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["models"]:
        from subtitler.models_cli import main as models_main

        return models_main(argv[1:])
    a = parser().parse_args(argv)
    if a.list_inputs:
        return list_inputs()
    if a.self_test:
        from subtitler.selftest import run_self_test

        return run_self_test()
    from subtitler import paths

    data_dir = a.data_dir or paths.data_dir()
    if a.data_dir is not None and a.data_dir.exists() and not a.data_dir.is_dir():
        # (it was taken for a folder others can write: "instance socket not put in ...")
        print(f"error: --data-dir: {a.data_dir} is a file, not a folder", file=sys.stderr)
        return 2
    if a.toggle:
        from subtitler.ui.single_instance import send_command

        if send_command(data_dir, a.toggle):
            return 0
        print("error: subtitler is not running", file=sys.stderr)
        return 1
    setup_logging(a.log_level, data_dir)
    paths.move_legacy_models()
    if a.replay is not None:
        from subtitler.audio.sources import not_a_file

        if unplayable := not_a_file(a.replay):
            print(f"error: {unplayable}", file=sys.stderr)
            return 2
    if not MIN_SPEED <= a.speed <= MAX_SPEED:  # (nan too)
        print(
            f"error: --speed must be between {MIN_SPEED} and {MAX_SPEED:g} (1: as fast as "
            "it was said)",
            file=sys.stderr,
        )
        return 2
    if a.config is not None:
        from subtitler.settings_store import named_file_problem

        if (why := named_file_problem(a.config)) is not None:
            print(f"error: --config: {why}; nothing was changed", file=sys.stderr)
            return 2
    from subtitler.mt.languages import UnknownLanguageError, normalize_code

    for key, value in given_settings(a).items():
        section, name = key.split(".", 1)
        spec = spec_of(SECTIONS[section], name)
        if not (spec.language or spec.languages):
            continue
        flag = SHORT_FLAGS.get(key, flag_of(section, name))
        detectable = _may_be_recognised(section, name)
        if detectable and value.strip().lower() == DETECT:
            # (the settings file may fix the language: this run recognises it)
            setattr(a, SETTING_DEST + key, UNSET)
            continue
        try:
            codes = [normalize_code(c) for c in language_codes(value)] if spec.languages else []
            value = ",".join(codes) if spec.languages else normalize_code(value)
        except UnknownLanguageError as e:
            also = f", or '{DETECT}' to recognise it" if detectable else ""
            print(f"error: {flag}: {e}{also}", file=sys.stderr)
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
