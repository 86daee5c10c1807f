"""The app's command line: version, bad arguments, the models subcommand, the script entry."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from subtitler import __version__
from subtitler.app import main
from subtitler.config import given_settings

ROOT = Path(__file__).resolve().parents[2]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"subtitler {__version__}"


def test_version_comes_from_pyproject() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["version"] == __version__
    assert meta["project"]["scripts"]["subtitler"] == "subtitler.app:main"


def test_missing_replay_file_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["--replay", str(tmp_path / "nope.wav"), "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"error: audio file not found: {tmp_path / 'nope.wav'}"]
    rc = main(["--replay", str(tmp_path), "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"error: {tmp_path} is a folder, not an audio file"]


def test_a_replay_of_a_pipe_or_a_device_says_what_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO or a link to /dev/zero given to --replay (or as the settings' audio file) was
    said to be 'not found', the file there."""
    from subtitler.audio.inputs import open_audio
    from subtitler.audio.sources import AudioFileError
    from subtitler.config import AudioConfig

    fifo = tmp_path / "talk.wav"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.wav"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        why = f"{path} is not a regular file (a pipe or a device), not an audio file"
        rc = main(["--replay", str(path), "--data-dir", str(tmp_path / "data")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and err == [f"error: {why}"]
        with pytest.raises(AudioFileError) as e:
            open_audio(AudioConfig(source="file", file_path=str(path)), lambda: 0.0)
        assert str(e.value) == why


def test_a_settings_file_named_that_is_none_is_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--config` on a file that is no settings file renamed it and wrote the app's settings
    in its place (/etc/passwd, run as root, became a settings file)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n", encoding="utf-8")
    other = tmp_path / "pyproject.toml"
    other.write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 99\n', encoding="utf-8")
    folder = tmp_path / "folder"
    folder.mkdir()
    for path, why in (
        (notes, f"{notes} is not a subtitler settings file (not TOML)"),
        (other, f"{other} is not a subtitler settings file (it has [project], [tool] and none "),
        (folder, f"folder is a folder, not a file ({folder})"),
    ):
        before = path.read_bytes() if path.is_file() else None
        rc = main(["--config", str(path), "--data-dir", str(tmp_path / "data")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and err[0].startswith(f"error: --config: {why}")
        assert err[0].endswith("; nothing was changed")
        if before is not None:
            assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data",
        "folder",
        "notes.txt",
        "pyproject.toml",
    ]


def test_a_data_folder_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "data"
    afile.write_text("a file", encoding="utf-8")
    rc = main(["--data-dir", str(afile)])
    err = capsys.readouterr().err.strip().splitlines()
    assert (rc, err) == (2, [f"error: --data-dir: {afile} is a file, not a folder"])
    assert afile.read_text(encoding="utf-8") == "a file"


@pytest.mark.parametrize("speed", ["nan", "inf", "0", "-1", "1e-9", "1000"])
def test_a_replay_pace_that_is_none_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], speed: str
) -> None:
    rc = main(["--speed", speed, "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert (rc, err) == (
        2, ["error: --speed must be between 0.1 and 100 (1: as fast as it was said)"]
    )  # fmt: skip


def test_unknown_target_language_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["--tgt-lang", "klingon", "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("error: --tgt-lang: unknown language code 'klingon' (known: af, ")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--mt-extra-targets", "ja, klingon"], "error: --mt-extra-targets: unknown language"),
        (["--mt-extra-targets", "ja,fr,es,it,nl"], "--mt-extra-targets: at most 4 languages"),
        (["--tgt-lang", "JA", "--mt-extra-targets", "de,ja"], "'ja' is already the target"),
    ],
)
def test_extra_target_languages_are_checked_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    rc = main([*argv, "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and said in err[0], err


def test_models_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path))
    assert main(["models", "list", "--kind", "mt"]) == 0
    out = capsys.readouterr().out
    assert "qwen3-4b-q4_k_m" in out and "whisper-small" not in out
    # Whether each may be used at work, and what each licence allows, before a download.
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert "AT WORK" in out.splitlines()[0]
    assert rows["tower-plus-2b-q4_k_m"][7:9] == ["CC-BY-NC-SA-4.0", "no"]
    assert rows["qwen3-4b-q4_k_m"][7:9] == ["Apache-2.0", "yes"]
    legend = out.split("Licences, what each allows:\n")[1].splitlines()
    assert any(
        line.split()[0] == "CC-BY-NC-SA-4.0" and "not for commercial use" in line for line in legend
    )
    assert main(["models", "list", "--json"]) == 0
    (tower,) = [
        r for r in json.loads(capsys.readouterr().out) if r["id"].startswith("tower-plus-2b")
    ]
    assert tower["commercial"] is False and tower["at_work"] == "no"
    assert tower["licence_text"].startswith("Creative Commons BY-NC-SA 4.0: ")


def test_log_level_is_one_of_the_choices_in_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--log-level", "verbose", "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1
    # argparse quotes the choices differently between Python versions
    assert err[0].startswith("error: argument --log-level: invalid choice: 'VERBOSE' (choose ")
    assert all(level in err[0] for level in ("DEBUG", "INFO", "WARNING", "ERROR"))
    from subtitler.app import parser

    assert parser().parse_args(["--log-level", "debug"]).log_level == "DEBUG"


def test_any_bad_argument_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--speed", "fast"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err == [
        "error: argument --speed: invalid float value: 'fast' (see subtitler --help)"
    ]


def test_help_is_short_with_examples_and_every_setting_is_one_flag_away(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 27: `--help` was 237 lines, every setting's flag, no example and no way to list
    the inputs."""
    from subtitler.app import parser

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and len(out.splitlines()) <= 70, len(out.splitlines())
    assert "examples:" in out and "subtitler --list-inputs" in out
    assert "--audio-device NAME" in out and "--tgt-lang CODE" in out
    assert "--mt-beta" not in out and "None" not in out  # a setting file's words
    with pytest.raises(SystemExit) as e:
        main(["--help-settings"])
    full = capsys.readouterr().out
    assert e.value.code == 0 and "--mt-beta" in full and "--display-lines" in full
    # A setting left out of the short help is taken all the same.
    assert given_settings(parser().parse_args(["--mt-beta", "0.3"])) == {"mt.beta": 0.3}


def test_list_inputs_names_each_input_as_audio_device_takes_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from subtitler import session

    inputs = [
        ("USB Mic (ALSA)", "USB Mic"),
        ("Monitor of Speakers (ALSA)  · meeting audio", "Monitor of Speakers"),
        ("Speakers [Loopback]  · meeting audio", "Speakers [Loopback]"),
    ]
    monkeypatch.setattr(session, "input_devices", lambda: (inputs, ""))
    assert main(["--list-inputs"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Audio inputs (give one with --audio-device NAME")
    assert out[1:] == [
        "  USB Mic    (ALSA)",
        "  Monitor of Speakers    (ALSA, meeting audio)",
        "  Speakers [Loopback]    (meeting audio)",
    ]
    broken = "Audio is unavailable (no PortAudio)."
    monkeypatch.setattr(session, "input_devices", lambda: ([], broken))
    assert main(["--list-inputs"]) == 1
    assert capsys.readouterr().out.strip() == broken


def test_models_alone_prints_its_help(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["models"]) == 0  # was a bare argparse error (exit 2)
    out = capsys.readouterr().out
    assert out.startswith("usage: subtitler models") and "subtitler models list" in out
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path))
    assert main(["models", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tower = next(line for line in lines if line.startswith("tower-plus-2b"))
    # Every language, not cut at 24 characters; the state in words.
    assert tower.endswith(",pl,sv,hu,ro,da,no,fi") and "not downloaded" in tower


@pytest.mark.parametrize("flag", ["--asr-language", "--asr-you-language"])
def test_auto_asks_for_the_speech_language_to_be_recognised(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
) -> None:
    """`--asr-language auto` was refused as an unknown code: a language fixed in the settings
    file could not be set back to recognised for one run."""
    import subtitler.ui.app as ui_app
    from subtitler.config import AppConfig, with_settings

    given: list[dict[str, object]] = []
    monkeypatch.setattr(ui_app, "run_app", lambda a, data_dir: given.append(given_settings(a)))
    for spelling in ("auto", "AUTO"):
        main([flag, spelling, "--data-dir", str(tmp_path)])
    key = "asr." + flag.removeprefix("--asr-").replace("-", "_")
    assert given == [{key: None}, {key: None}], capsys.readouterr().err
    fixed = with_settings(AppConfig(), {key: "fr"})
    assert getattr(with_settings(fixed, given[0]).asr, key.split(".")[1]) is None
    # A code that is none is still one line.
    assert main([flag, "automatic", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {flag}: unknown language code ")
    assert "'auto' to recognise it" in err[0]


def test_auto_is_no_target_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--tgt-lang", "auto", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --tgt-lang: unknown language code 'auto'")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["lst"], "invalid choice: 'lst'"),
        (["list", "--kind", "foo"], "invalid choice: 'foo'"),
        (["download"], "the following arguments are required: ID"),
        (["list", "--nope"], "unrecognized arguments: --nope"),
    ],
)
def test_a_wrong_models_command_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """A wrong `subtitler models` command printed argparse's usage block before its error."""
    with pytest.raises(SystemExit) as e:
        main(["models", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("error: ") and said in err[0], err
    assert err[0].endswith(" --help)")
    if argv == ["lst"]:  # the commands named
        assert all(c in err[0] for c in ("list", "download", "verify", "remove", "hardware"))


def test_the_models_options_go_on_either_side_of_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`models list --models-dir X` was refused: the options were the parser's, before the
    command only."""
    monkeypatch.delenv("SUBTITLER_MODELS_DIR", raising=False)
    folder = tmp_path / "models-here"
    folder.write_text("a file", encoding="utf-8")  # (so the folder given is said back)
    said = f"error: the models folder {folder} is a file, not a folder"
    for argv in (
        ["--models-dir", str(folder), "list"],
        ["list", "--models-dir", str(folder)],
        ["list", "--kind", "mt", "--models-dir", str(folder)],
    ):
        assert main(["models", *argv]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [said], argv
    cat = tmp_path / "my-catalog.toml"
    cat.write_text("not = [toml", encoding="utf-8")
    for argv in (["--catalog", str(cat), "list"], ["list", "--catalog", str(cat)]):
        assert main(["models", *argv, "--models-dir", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "my-catalog.toml is not valid TOML" in err[0], (argv, err)
    # Given on both sides, the one after the command counts (it is the one read last).
    assert main(["models", "--models-dir", str(tmp_path), "list", "--models-dir", str(folder)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [said]
