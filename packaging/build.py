"""Build the app bundle and the installer for this OS; run the bundle's self-test in between.

    python packaging/build.py            # all: bundle, its self-test, installer (.dmg / setup.exe)
    python packaging/build.py bundle     # one step: bundle | self-test | installer

Needs the app's dependencies and PyInstaller in the running Python (``pip install -e .[package]``).
Outputs under dist/: ``subtitler/`` (onedir), ``subtitler.app`` (macOS),
``subtitler-VERSION-macos-arm64.dmg`` or ``subtitler-VERSION-windows-x64-setup.exe``.
On macOS, signing happens when SUBTITLER_CODESIGN_IDENTITY is set (see packaging/README.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "subtitler.spec"
STEPS = ("bundle", "self-test", "installer")


def version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def bundle_executable(dist: Path) -> Path:
    """The executable that runs ``--self-test`` (the console one on Windows)."""
    if sys.platform == "darwin":
        return dist / "subtitler.app" / "Contents" / "MacOS" / "subtitler"
    if sys.platform == "win32":
        return dist / "subtitler" / "subtitler-cli.exe"
    return dist / "subtitler" / "subtitler"


def run(cmd: list[str], **kw: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


def pyinstaller_command(dist: Path, work: Path, *, clean: bool = True) -> list[str]:
    """PyInstaller on the spec; ``clean=False`` reuses the analysis cache in ``work``."""
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm"]
    cmd += ["--clean"] if clean else []
    cmd += ["--log-level", "WARN", "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    return cmd


def build_bundle(dist: Path, work: Path) -> None:
    run(pyinstaller_command(dist, work), cwd=ROOT)


def self_test(dist: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run([str(bundle_executable(dist)), "--self-test"], env=env, timeout=600)


def numeric_version(v: str) -> str:
    """The leading numbers of a version ("0.2.0rc1" -> "0.2.0"): Inno Setup's
    VersionInfoVersion accepts up to four dot-separated numbers and nothing else."""
    m = re.match(r"\d+(?:\.\d+){0,3}", v)
    return m.group(0) if m else "0.0.0"


def iscc() -> str:
    found = shutil.which("iscc") or shutil.which("ISCC")
    if found:
        return found
    for base in (os.environ.get("PROGRAMFILES(X86)"), os.environ.get("PROGRAMFILES")):
        if base and (Path(base) / "Inno Setup 6" / "ISCC.exe").is_file():
            return str(Path(base) / "Inno Setup 6" / "ISCC.exe")
    raise SystemExit("Inno Setup 6 (ISCC.exe) not found: install it (choco install innosetup)")


def installer(dist: Path) -> Path:
    v = version()
    if sys.platform == "darwin":
        arch = "arm64" if platform.machine() == "arm64" else "x86_64"
        out = dist / f"subtitler-{v}-macos-{arch}.dmg"
        run(
            [
                "bash",
                str(ROOT / "packaging" / "macos" / "make_dmg.sh"),
                str(dist / "subtitler.app"),
                str(out),
            ]
        )
        return out
    if sys.platform == "win32":
        run(
            [
                iscc(),
                f"/DAppVersion={v}",
                f"/DNumVersion={numeric_version(v)}",
                f"/DSourceDir={dist / 'subtitler'}",
                f"/DOutputDir={dist}",
                str(ROOT / "packaging" / "windows" / "subtitler.iss"),
            ]
        )
        return dist / f"subtitler-{v}-windows-x64-setup.exe"
    out = dist / f"subtitler-{v}-linux-{platform.machine()}"
    return Path(shutil.make_archive(str(out), "gztar", dist, "subtitler"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller")
    ap.add_argument(
        "steps",
        nargs="*",
        choices=["all", *STEPS],
        default=["all"],
        help="what to do (default: all, in order)",
    )
    a = ap.parse_args(argv)
    dist, work = a.dist.resolve(), a.work.resolve()
    steps = STEPS if "all" in a.steps else a.steps
    if "bundle" in steps:
        build_bundle(dist, work)
    if "self-test" in steps:
        self_test(dist)
    if "installer" in steps:
        print(f"installer: {installer(dist)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
