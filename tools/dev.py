"""Create or reuse the project's virtual environment, install what a task needs, and run it.

    python tools/dev.py app  [main.py arguments]   # the desktop app
    python tools/dev.py test [pytest arguments]    # the whole test suite

Works the same on Linux, macOS and Windows with Python 3.11+. On Linux it first checks the
system libraries and programs the task needs (PortAudio, Qt's X11 libraries, and for the tests
Xvfb, PulseAudio and Chromium); on Debian/Ubuntu it installs the missing ones with apt when it
runs as root or may use sudo without a password, and otherwise prints the one command to run and
stops with exit code 2. macOS and Windows need nothing: the wheels carry their libraries.
Installs are skipped while pyproject.toml is unchanged (a hash stamp in the environment), so a
second run starts at once.
"""

from __future__ import annotations

import ctypes.util
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("SUBTITLER_VENV", ROOT / ".venv"))
EXTRAS = {"app": "", "test": "[dev,bench]"}
# Tests that need a system program fail instead of skipping when dev.py has set this: what
# this script installs is there, so a skip could only hide a broken machine.
SYSTEM_CHECKED_ENV = "SUBTITLER_SYSTEM_CHECKED"


@dataclass(frozen=True)
class Need:
    """Something from the OS: found by library or program name, installed by a Debian package."""

    what: str
    package: str  # Debian/Ubuntu package that provides it
    library: str = ""  # name for ctypes.util.find_library ("portaudio" -> libportaudio.so.2)
    program: str = ""  # executable on PATH
    tests_only: bool = False
    found: Callable[[], bool] | None = None  # a custom check (else library / program)

    def present(self) -> bool:
        if self.found is not None:
            return self.found()
        if self.program:
            return shutil.which(self.program) is not None
        return ctypes.util.find_library(self.library) is not None


def _has_ensurepip() -> bool:
    # Debian's python3 leaves ensurepip (and so `python -m venv` with pip) to python3-venv.
    return importlib.util.find_spec("ensurepip") is not None


def _has_cjk_font() -> bool:
    """A font with Japanese and Chinese glyphs (without one they draw as boxes of another
    width: the overlay's wrapping and screenshot tests of CJK subtitles need real glyphs)."""
    if shutil.which("fc-list") is None:
        return False
    for lang in ("ja", "zh-cn"):
        out = subprocess.run(["fc-list", f":lang={lang}", "family"], capture_output=True, text=True)
        if not out.stdout.strip():
            return False
    return True


def _venv_package() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}-venv"


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


# Qt's X11 platform plugin (libqxcb) and the libraries it loads: Qt's own list for X11
# (https://doc.qt.io/qt-6/linux-requirements.html), which PySide6's wheels do not carry.
_QT_X11 = (
    ("xcb-cursor", "libxcb-cursor0"),
    ("xcb-icccm", "libxcb-icccm4"),
    ("xcb-image", "libxcb-image0"),
    ("xcb-keysyms", "libxcb-keysyms1"),
    ("xcb-randr", "libxcb-randr0"),
    ("xcb-render", "libxcb-render0"),
    ("xcb-render-util", "libxcb-render-util0"),
    ("xcb-shape", "libxcb-shape0"),
    ("xcb-shm", "libxcb-shm0"),
    ("xcb-sync", "libxcb-sync1"),
    ("xcb-util", "libxcb-util1"),
    ("xcb-xfixes", "libxcb-xfixes0"),
    ("xcb-xkb", "libxcb-xkb1"),
    ("X11-xcb", "libx11-xcb1"),
    ("xkbcommon-x11", "libxkbcommon-x11-0"),
    ("EGL", "libegl1"),
    ("GL", "libgl1"),
    ("fontconfig", "libfontconfig1"),
    ("dbus-1", "libdbus-1-3"),
)

NEEDS: tuple[Need, ...] = (
    Need("Python's venv module", _venv_package(), found=_has_ensurepip),
    Need("a C++ compiler (llama.cpp is built from source)", "g++", program="c++"),
    Need("PortAudio (sound input)", "libportaudio2", library="portaudio"),
    Need("the PulseAudio client library (meeting audio)", "libpulse0", library="pulse"),
    *(Need(f"Qt's X11 library {lib}", pkg, library=lib) for lib, pkg in _QT_X11),
    Need("Xvfb (real-window tests)", "xvfb", program="Xvfb", tests_only=True),
    Need("PulseAudio (meeting-audio tests)", "pulseaudio", program="pulseaudio", tests_only=True),
    Need("paplay (meeting-audio tests)", "pulseaudio-utils", program="paplay", tests_only=True),
    # The hotkey tests press keys as another X client through the XTEST extension.
    Need("libXtst (global-hotkey tests)", "libxtst6", library="Xtst", tests_only=True),
    Need("fc-list (font checks)", "fontconfig", program="fc-list", tests_only=True),
    Need(
        "a Chinese/Japanese font (CJK subtitle tests)",
        "fonts-noto-cjk",
        tests_only=True,
        found=_has_cjk_font,
    ),
    Need("Chromium (web-subtitle tests)", "chromium", program="chromium", tests_only=True),
    # PyInstaller bundles Python's shared library; Debian ships it apart from python3 (the
    # packaging test builds the installer's bundle).
    Need(
        "Python's shared library (installer bundle test)",
        f"libpython{_python_version()}",
        library=f"python{_python_version()}",
        tests_only=True,
    ),
)


def missing_needs(task: str, needs: Sequence[Need] | None = None) -> list[Need]:
    todo = NEEDS if needs is None else needs
    return [n for n in todo if (task == "test" or not n.tests_only) and not n.present()]


def _can_sudo() -> bool:
    if shutil.which("sudo") is None:
        return False
    try:
        probe = subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def apt_commands(packages: Sequence[str], as_root: bool) -> list[list[str]]:
    """The apt-get calls that install ``packages`` (``as_root``: no sudo in front)."""
    sudo = [] if as_root else ["sudo", "-n"]
    return [
        [*sudo, "apt-get", "update", "-qq"],
        [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ]


def ensure_system(task: str) -> int:
    """0 when the OS has what ``task`` needs (installing it if allowed), else 2 with a message."""
    if not sys.platform.startswith("linux"):
        return 0  # the macOS and Windows wheels carry PortAudio, Qt and the rest
    missing = missing_needs(task)
    if not missing:
        return 0
    packages = sorted({n.package for n in missing})
    names = "; ".join(n.what for n in missing)
    if shutil.which("apt-get") is None:
        print(
            f"[dev] missing system parts: {names}. Install them with your distribution's "
            f"package manager (Debian/Ubuntu names: {' '.join(packages)}), then run this again.",
            file=sys.stderr,
        )
        return 2
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not as_root and not _can_sudo():
        print(
            f"[dev] missing system parts: {names}.\n[dev] Install them with:\n\n"
            f"    sudo apt-get install -y {' '.join(packages)}\n\nthen run this again.",
            file=sys.stderr,
        )
        return 2
    print(f"[dev] installing system packages: {' '.join(packages)}", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in apt_commands(packages, as_root):
        if subprocess.run(cmd, env=env).returncode != 0:
            print(f"[dev] failed: {' '.join(cmd)}", file=sys.stderr)
            return 2
    still = missing_needs(task)
    if still:
        print(f"[dev] still missing after apt: {'; '.join(n.what for n in still)}", file=sys.stderr)
        return 2
    return 0


def venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def ensure_env(task: str) -> Path:
    py = venv_python()
    if not py.exists():
        print(f"[dev] creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    spec = EXTRAS[task]
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + spec.encode()).hexdigest()
    stamp = VENV / f".subtitler-{task}.stamp"
    if stamp.exists() and stamp.read_text() == digest:
        return py
    env = dict(os.environ)
    # llama-cpp-python compiles llama.cpp; the multimodal part is not used and doubles build time.
    env.setdefault("CMAKE_ARGS", "-DLLAVA_BUILD=OFF")
    print(f"[dev] installing subtitler{spec} (first run compiles llama.cpp: minutes)", flush=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, env=env)
    subprocess.run([str(py), "-m", "pip", "install", "-e", f"{ROOT}{spec}"], check=True, env=env)
    stamp.write_text(digest)
    return py


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__, file=sys.stderr)
        return 2
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs before any check
        print(f"subtitler needs Python 3.11 or newer (this is {sys.version.split()[0]})")
        return 2
    task, rest = argv[0], argv[1:]
    code = ensure_system(task)
    if code:
        return code
    try:
        py = ensure_env(task)
    except subprocess.CalledProcessError as e:
        print(f"[dev] failed ({e.returncode}): {' '.join(map(str, e.cmd))}", file=sys.stderr)
        return 2
    if task == "app":
        cmd = [str(py), str(ROOT / "main.py"), *rest]
        return subprocess.call(cmd, cwd=ROOT)
    env = dict(os.environ, **{SYSTEM_CHECKED_ENV: "1"})
    return subprocess.call([str(py), "-m", "pytest", *parallel(rest), *rest], cwd=ROOT, env=env)


def parallel(args: Sequence[str]) -> list[str]:
    """pytest-xdist's arguments for the whole suite: a worker per core, at most 4 (each may hold
    a real model), tests of one xdist_group in one worker; none when the caller chose."""
    chosen = any(a.startswith(("-n", "--numprocesses", "-p")) or a == "--dist" for a in args)
    workers = min(4, os.cpu_count() or 1)
    if chosen or workers < 2:
        return []
    return ["-n", str(workers), "--dist", "loadgroup"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
