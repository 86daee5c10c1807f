"""The project's licence and the third-party notices the installers ship and About shows:
one entry per distribution the app runs on, each with its version, licence and licence text."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from subtitler import notices

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundled() -> list[notices.Notice]:
    return notices.collect(bundle=True)


def test_every_distribution_the_installers_carry_has_its_licence_text(
    bundled: list[notices.Notice],
) -> None:
    assert notices.without_text(bundled) == []
    names = {notices.normalize(n.name) for n in bundled}
    # The app's own requirements, what they pull in, the bootloader and the interpreter.
    assert {"pyside6-essentials", "shiboken6", "faster-whisper", "ctranslate2"} <= names
    assert {"llama-cpp-python", "soundfile", "numpy", "pyinstaller", "python"} <= names
    assert "av" not in names  # left out of the installers (packaging/README.md, "FFmpeg")
    qt = next(n for n in bundled if notices.normalize(n.name) == "pyside6-essentials")
    assert any("GNU LESSER GENERAL PUBLIC LICENSE" in text for _w, text in qt.texts)


def test_the_notices_file_lists_each_with_version_and_licence_then_its_texts(
    bundled: list[notices.Notice],
) -> None:
    text = notices.render(bundled)
    for n in bundled:
        assert re.search(rf"^  {re.escape(n.name)} +{re.escape(n.version)} +", text, re.M)
        assert f"\n{n.name} {n.version}\nLicence: {n.licence}\n" in text
    assert "llama.cpp and ggml (in llama-cpp-python): MIT" in text
    assert "The ggml authors" in text  # llama.cpp's own licence, not only the binding's


def test_a_checkout_runs_on_pyav_and_says_so() -> None:
    names = {notices.normalize(n.name) for n in notices.collect()}
    assert "av" in names and "pyinstaller" not in names


def test_the_spec_leaves_out_what_the_notices_leave_out_and_ships_them() -> None:
    spec = (ROOT / "packaging" / "subtitler.spec").read_text(encoding="utf-8")
    excludes = re.search(r"excludes=\[(.*?)\]", spec, re.S)
    assert excludes is not None
    for name in notices.BUNDLE_LEAVES_OUT:
        assert f'"{name}"' in excludes.group(1)
    assert '"subtitler.notices", "--bundle"' in spec
    assert '(str(NOTICES), "subtitler"), (str(ROOT / "LICENSE"), "subtitler")' in spec
    assert '"packaging" / "stubs" / "av" / "__init__.py"), "av")' in spec


def test_the_project_is_mit_licensed_in_one_voice() -> None:
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "subtitler contributors" in licence
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert notices.project_licence() == licence


def test_writing_the_notices_fails_when_a_text_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "n.txt"
    assert notices.main([str(out), "--bundle"]) == 0
    assert out.read_text(encoding="utf-8").startswith("Third-party software in subtitler")
    real = notices.licence_texts
    monkeypatch.setattr(
        notices,
        "licence_texts",
        lambda d: [] if notices.normalize(d.metadata["Name"]) == "tokenizers" else real(d),
    )
    assert notices.main([str(tmp_path / "m.txt"), "--bundle"]) == 1
    assert not (tmp_path / "m.txt").exists()


def test_about_prefers_the_shipped_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = tmp_path / notices.FILE_NAME
    shipped.write_text("shipped notices\n", encoding="utf-8")
    monkeypatch.setattr(notices, "shipped", lambda: shipped)
    assert notices.for_about() == "shipped notices\n"


def test_macos_only_pyobjc_wheels_get_pyobjcs_licence_text() -> None:
    """The macOS meeting audio's pyobjc wheels carry no licence file (only the Cocoa one
    does): the bundle built on a Mac would fail its notices without the supplement."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    darwin = {notices.normalize(re.split(r"[<>=;\s]", d)[0]) for d in deps if "'darwin'" in d}
    assert darwin == {"pyobjc-framework-screencapturekit", "pyobjc-framework-coremedia"}
    for name in (*darwin, "pyobjc-core"):
        (text_name,) = notices.SUPPLEMENTS[name]
        text = notices._supplement(text_name)
        assert text.startswith("Source: the pyobjc-framework-Cocoa")
        assert "Permission is hereby granted, free of charge" in text  # MIT
