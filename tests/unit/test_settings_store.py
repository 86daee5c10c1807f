"""Settings: round trip, validation, atomic write, corrupt-file recovery."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import get_type_hints

import pytest

from subtitler import settings_store as store
from subtitler.config import AppConfig, with_settings
from tests.helpers.bounded import run_bounded


def test_round_trip(tmp_path: Path) -> None:
    cfg = with_settings(
        AppConfig(),
        {
            "mt.beta": 0.35,
            "mt.tgt_lang": "ja",
            "display.mask_k": 5,
            "asr.language": "en",
            "display.geometry": {"screen-A": [10, 20, 800, 120]},
        },
    )
    p = store.save(cfg, tmp_path / "c" / "config.toml")
    res = store.load(p)
    assert res.config == cfg and res.notice == ""


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert store.load(tmp_path / "none.toml").config == AppConfig()


@pytest.mark.parametrize(
    "text",
    [
        "this is [not toml",
        "x = " + "[" * 5000 + "]" * 5000 + "\n",  # tomllib recurses once per level
        "[mt\nbeta = 0.3\n",
    ],
)
def test_unreadable_file_is_backed_up_and_replaced(tmp_path: Path, text: str) -> None:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    res = store.load(p)
    assert res.config == AppConfig()
    assert res.backup is not None and res.backup.read_text(encoding="utf-8") == text
    assert "could not be read" in res.notice and res.backup.name in res.notice
    assert store.load(p).config == AppConfig()  # the replacement file is valid


# (the line as written, the field, the value used, what the notice says)
FIXES = [
    ("[mt]\nthreads = 2000\n", "mt.threads", 64, "mt.threads = 2000 (allowed: 1..64): 64 used"),
    ("[mt]\nthreads = 100000\n", "mt.threads", 64, "mt.threads = 100000"),
    ("[mt]\nmax_new_tokens = -1\n", "mt.max_new_tokens", 256, "256 used"),
    ("[asr]\nthreads = 0\n", "asr.threads", 1, "asr.threads = 0 (allowed: 1..64): 1 used"),
    ("[mt]\nbeta = 3.0\n", "mt.beta", 1.0, "mt.beta = 3.0 (allowed: 0..1): 1.0 used"),
    ("[mt]\nbeta = nan\n", "mt.beta", 0.2, "0.2 used"),
    ("[mt]\nn_ctx = inf\n", "mt.n_ctx", 2048, "mt.n_ctx should be int"),
    ("[display]\nfont_size = 500\n", "display.font_size", 120, "120 used"),
    ("[display]\nmask_k = 'five'\n", "display.mask_k", 3, "display.mask_k should be int"),
    ("[display]\nmask_k = true\n", "display.mask_k", 3, "should be int"),
    ("[mt]\ntgt_lang = 'klingon'\n", "mt.tgt_lang", "de", "unknown language 'klingon'"),
    ("[mt]\nmethod = 'fast'\n", "mt.method", "SSBD", "(allowed: one of SSBD, RT, CD)"),
    ("[asr]\ncompute_type = 'int4'\n", "asr.compute_type", "auto", "'int4'"),
    ("[audio]\nqueue_blocks = 99999999\n", "audio.queue_blocks", 6000, "6000 used"),
    ("mt = 5\n", "mt.threads", 1, "[mt] should be a table"),
    # Fields whose default is None or a table are type-checked too.
    ("[asr]\nlanguage = 5\n", "asr.language", None, "asr.language should be"),
    ("[display]\ngeometry = 'x'\n", "display.geometry", {}, "display.geometry should be"),
    ("[display.geometry]\ns = [1, 2, 'three', 4]\n", "display.geometry", {}, "should be"),
    ("[display.geometry]\ns = [0, 0, 800, 4294967296]\n", "display.geometry", {}, "{} used"),
    ("[audio]\ndevice = 1.5\n", "audio.device", None, "audio.device should be"),
    ("[mt]\ngpu_layers = 'all'\n", "mt.gpu_layers", None, "mt.gpu_layers should be"),
    ("[mt]\ngpu_layers = -7\n", "mt.gpu_layers", -1, "-1 used"),
    # Extra target languages: each a known code, at most four, not the main target again.
    ("[mt]\nextra_targets = 'ja, xx'\n", "mt.extra_targets", "", "unknown language 'xx'"),
    ("[mt]\nextra_targets = 'ja,fr,es,it,nl'\n", "mt.extra_targets", "", "at most 4"),
    ("[mt]\nextra_targets = 'DE, ja'\n", "mt.extra_targets", "ja", "repeats the main target"),
    ("[mt]\nextra_targets = ['ja']\n", "mt.extra_targets", "", "should be str"),
    # An integer of 400 digits (no float holds it): clamped like any number out of range.
    (f"[mt]\nbeta = {'9' * 400}\n", "mt.beta", 1.0, "(allowed: 0..1): 1.0 used"),
    (f"[mt]\nserver_timeout_s = {'9' * 400}\n", "mt.server_timeout_s", 120.0, "120.0 used"),
    (f"[mt]\nthreads = {'9' * 400}\n", "mt.threads", 64, "64 used"),
    (f"[mt]\nthreads = -{'9' * 400}\n", "mt.threads", 1, "1 used"),
]


@pytest.mark.parametrize(("text", "name", "used", "said"), FIXES)
def test_a_bad_value_costs_that_field_only(
    tmp_path: Path, text: str, name: str, used: object, said: str
) -> None:
    """Out of range, not a choice, or the wrong type: that field is clamped or reset with one
    notice naming it; the other settings and the file itself are kept."""
    p = tmp_path / "config.toml"
    if text.startswith("[display]"):
        text = text.replace("[display]\n", "[display]\nlines = 4\n")
    elif text.startswith("[display."):
        text = "[display]\nlines = 4\n" + text
    else:
        text += "[display]\nlines = 4\n"
    p.write_text(text, encoding="utf-8")
    res = store.load(p)
    section, field = name.split(".")
    assert getattr(getattr(res.config, section), field) == used
    assert res.config.display.lines == 4  # the rest of the file still counts
    assert res.notice.startswith("Settings corrected: ") and said in res.notice
    assert name.split(".")[0] in res.notice and res.backup is None
    assert p.read_text(encoding="utf-8") == text  # not lost, not rewritten
    assert store.validate(res.config) == []
    store.save(res.config, p)  # the corrected settings save and load back clean
    assert store.load(p).notice == ""


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


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    """Notepad writes one at the start of a UTF-8 file: the settings are read as written."""
    p = tmp_path / "config.toml"
    p.write_bytes(b"\xef\xbb\xbf[mt]\nbeta = 0.35\n")
    res = store.load(p)
    assert res.config.mt.beta == 0.35 and res.notice == "" and res.backup is None


def test_a_fifo_in_place_of_the_file_is_set_aside_without_waiting(tmp_path: Path) -> None:
    """Opening a FIFO blocks until someone writes to it: the start must not."""
    p = tmp_path / "config.toml"
    os.mkfifo(p)
    res = run_bounded(lambda: store.load(p))
    assert res.config == AppConfig() and "is not a regular file" in res.notice
    assert res.backup is not None and stat.S_ISFIFO(res.backup.lstat().st_mode)
    assert p.is_file() and store.load(p).notice == ""  # the defaults, written in its place


def test_a_link_to_an_endless_device_is_not_read(tmp_path: Path) -> None:
    p = tmp_path / "config.toml"
    p.symlink_to("/dev/zero")
    res = run_bounded(lambda: store.load(p))
    assert res.config == AppConfig() and "is not a regular file" in res.notice
    assert res.backup is not None and res.backup.is_symlink()


def test_a_huge_file_is_set_aside_unread(tmp_path: Path) -> None:
    p = tmp_path / "config.toml"
    p.write_bytes(b"# " + b"x" * (store.MAX_BYTES + 10) + b"\n")
    res = store.load(p)
    assert res.config == AppConfig() and "is larger than 1 MB" in res.notice
    assert res.backup is not None and res.backup.stat().st_size > store.MAX_BYTES


def test_whatever_the_parser_raises_the_file_is_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception of a class nobody expected (a parser's bug, an OverflowError) sets the
    file aside like a syntax error: the next start does not meet it again."""
    p = tmp_path / "config.toml"
    p.write_text("[mt]\nbeta = 0.3\n", encoding="utf-8")

    def broken(text: str, notes: list[str] | None = None) -> AppConfig:
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(store, "from_toml", broken)
    res = store.load(p)
    assert res.config == AppConfig() and res.backup is not None
    assert "(OverflowError: int too large to convert to float)" in res.notice
    assert "\n" not in res.notice


def test_corrupt_file_in_a_read_only_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "config.toml"
    p.write_text("[asr\nlanguage = 5\n", encoding="utf-8")

    def refuse(*a: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    res = store.load(p)  # no exception: the app starts on defaults
    assert res.config == AppConfig() and res.backup is None
    assert res.notice.startswith("Your settings file could not be read (not valid TOML")
    assert "nor set aside (Permission denied)" in res.notice
    assert p.read_text(encoding="utf-8") == "[asr\nlanguage = 5\n"  # left as it was


def test_unknown_keys_are_ignored_and_ints_accepted_for_floats(tmp_path: Path) -> None:
    p = tmp_path / "config.toml"
    p.write_text("[mt]\nbeta = 0\nfuture_option = 1\n", encoding="utf-8")
    res = store.load(p)
    assert res.config.mt.beta == 0.0 and isinstance(res.config.mt.beta, float)
    assert res.notice == ""


def test_invalid_values_are_not_saved(tmp_path: Path) -> None:
    cfg = with_settings(AppConfig(), {"display.mask_k": 11})
    said = r"Hide the last words of an unfinished line \(mask-k\) must be 0\.\.10 \(is 11\)"
    with pytest.raises(store.ConfigError, match=said):
        store.save(cfg, tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()
    cfg = with_settings(AppConfig(), {"mt.draft_tokens": 0})
    said = r"Helper model's guesses \(draft tokens\) must be 1\.\.16"
    with pytest.raises(store.ConfigError, match=said):
        store.save(cfg, tmp_path / "x.toml")
    cfg = with_settings(AppConfig(), {"mt.gpu_layers": -2})
    with pytest.raises(store.ConfigError, match="GPU layers"):
        store.save(cfg, tmp_path / "x.toml")


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "config.toml"
    store.save(AppConfig(), p)
    before = p.read_text()

    def boom(*a: object, **k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    cfg = with_settings(AppConfig(), {"mt.beta": 0.4})
    with pytest.raises(OSError):
        store.save(cfg, p)
    assert p.read_text() == before
    assert [x.name for x in tmp_path.iterdir()] == ["config.toml"]  # no temp file left


def test_command_line_uses_the_same_limits(capsys: pytest.CaptureFixture[str]) -> None:
    from subtitler.config import given_settings
    from subtitler_research.pipeline import replay

    for flag, bad, said in [
        (
            "--mt-threads",
            "2000",
            "Processor cores for translation (translation threads) must be 1..64 (is 2000)",
        ),
        ("--asr-threads", "0", "Processor cores for speech (speech threads) must be 1..64 (is 0)"),
        ("--beta", "1.5", "Stability (bias β) must be 0..1 (is 1.5)"),
        ("--k", "11", "Hide the last words of an unfinished line (mask-k) must be 0..10 (is 11)"),
        ("--draft-tokens", "-1", "Helper model's guesses (draft tokens) must be 1..16 (is -1)"),
        ("--beta", "nan", "Stability (bias β) must be 0..1 (is nan)"),
        ("--mt-threads", "two", "not a number: 'two'"),
    ]:
        with pytest.raises(SystemExit) as e:
            replay.parser().parse_args(["--oracle", "w.tsv", flag, bad])
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.endswith(f"argument {flag}: {said}"), err
    a = replay.parser().parse_args(["x.wav", "--mt-threads", "64", "--beta", "1", "--k", "0"])
    assert given_settings(a) == {"mt.threads": 64, "mt.beta": 1.0, "display.mask_k": 0}


def test_every_number_setting_declares_its_range() -> None:
    """One declaration per field: a number, a choice or a language without limits would be
    checked nowhere."""
    from subtitler.config import SECTIONS, specs

    for cls in SECTIONS.values():
        hints = get_type_hints(cls)
        for f, spec in specs(cls):
            tp = str(hints[f.name])
            if "int" in tp or "float" in tp:
                if f.name in ("device", "meeting_device"):  # an input: checked when opened
                    continue
                assert spec.range is not None, f"{cls.__name__}.{f.name}"
            assert spec.label, f"{cls.__name__}.{f.name}"
        assert {f.name for f, _ in specs(cls)} == set(cls.__dataclass_fields__)


def test_extra_target_languages_are_checked_like_the_main_one() -> None:
    from subtitler.config import MtConfig

    def problems(tgt: str, extra: str) -> list[str]:
        return store.validate(
            with_settings(AppConfig(), {"mt.tgt_lang": tgt, "mt.extra_targets": extra})
        )

    assert problems("de", "ja, fr") == [] and problems("de", "") == []
    assert problems("de", "ja,klingon") == ["Also translate into: unknown language 'klingon'"]
    assert problems("ja", "de, ja") == [
        "Also translate into: 'ja' is already the language to translate into"
    ]
    assert problems("de", "ja fr zh es it") == ["Also translate into: at most 4 languages (is 5)"]
    # A paragraph pasted into the field is not repeated whole in the line under it.
    assert problems("x" * 10_000, "") == ["Translate into: unknown language '" + "x" * 23 + "…'"]
    # The languages translated into: the main one first, each once, codes as compared.
    mt = MtConfig(tgt_lang="de", extra_targets="JA, fr ja,pt-BR")
    assert mt.targets == ("de", "ja", "fr", "pt")
    ja = mt.for_target("ja")
    assert (ja.tgt_lang, ja.targets) == ("ja", ("ja", "de", "fr", "pt"))


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_the_file_is_its_users_alone(tmp_path: Path) -> None:
    """It may hold a translation server's API key."""
    p = store.save(with_settings(AppConfig(), {"mt.server_api_key": "sk-1"}), tmp_path / "c.toml")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


def test_languages_in_a_settings_file_are_read_as_the_codes_the_engines_take(
    tmp_path: Path,
) -> None:
    """A speech language of "EN" or "zh-CN" passed the check and reached Whisper as it
    was: every recognition failed ("'EN' is not a valid language code"), then recognition
    stopped. The command line already gave the engines "en" and "zh"."""
    path = tmp_path / "config.toml"
    path.write_text(
        '[asr]\nlanguage = "EN"\nyou_language = "pt-BR"\n'
        '[mt]\nsrc_lang = "zh_CN"\ntgt_lang = "DE"\nextra_targets = "JA, fr-CA"\n',
        encoding="utf-8",
    )
    loaded = store.load(path)
    assert loaded.notice == ""
    asr, mt = loaded.config.asr, loaded.config.mt
    assert (asr.language, asr.you_language) == ("en", "pt")
    assert (mt.src_lang, mt.tgt_lang, mt.extra_targets) == ("zh", "de", "ja,fr")
