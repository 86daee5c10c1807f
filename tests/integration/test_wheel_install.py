"""The installed app works: build the wheel, install it into a fresh virtual environment and run
``subtitler --self-test`` and ``subtitler models list`` from there, away from the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bin(env_dir: Path, name: str) -> Path:
    return env_dir / ("Scripts" if os.name == "nt" else "bin") / name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the checkout (no build files left in it)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "main.py"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("subtitler", "assets"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "-w", str(out), str(src)], check=True, timeout=300)
    (whl,) = out.glob("subtitler-*.whl")
    return whl


def test_wheel_carries_the_assets(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for asset in (ROOT / "assets").rglob("*"):
        if asset.is_file():
            rel = asset.relative_to(ROOT / "assets").as_posix()
            assert f"subtitler/assets/{rel}" in names, rel
    assert "subtitler/models/catalog.toml" in names
    assert "subtitler/models/licences.toml" in names  # what each model's licence allows
    assert "subtitler/web/page.html" in names  # the browser subtitles' page


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new environment with only the wheel installed as subtitler. Its dependencies come
    from this test environment through a path file (no network in tests); the checkout and
    its editable install are not visible there."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = _bin(env_dir, "python")
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    return env_dir


def _run(env_dir: Path, args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        QT_QPA_PLATFORM="offscreen",
        HF_HUB_OFFLINE="1",
    )
    return subprocess.run(
        [str(_bin(env_dir, "subtitler")), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=home,
        env=env,
    )


def test_installed_app_finds_its_assets_and_passes_its_self_test(
    installed: Path, tmp_path: Path
) -> None:
    probe = subprocess.run(
        [
            str(_bin(installed, "python")),
            "-c",
            "from PySide6.QtWidgets import QApplication; app = QApplication([]); "
            "import subtitler.resources as r, subtitler.ui.app as a; "
            "print(r.assets_dir()); print(a.app_icon().isNull())",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        check=True,
    )
    assets, icon_missing = probe.stdout.split()
    assert Path(assets).is_relative_to(installed), assets  # not the checkout's assets/
    assert icon_missing == "False"  # the tray and windows have an icon
    out = _run(installed, ["--self-test"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(source," in out.stdout.splitlines()[0]
    assert out.stdout.splitlines()[-1].startswith("self-test passed"), out.stdout


def test_installed_models_list(installed: Path, tmp_path: Path) -> None:
    out = _run(installed, ["models", "list", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {r["kind"] for r in rows} == {"asr", "mt"}
    assert {r["status"] for r in rows} == {"missing"}  # a fresh user: nothing downloaded
    assert all(Path(r["path"]).is_relative_to(tmp_path) for r in rows)  # in the user folder
