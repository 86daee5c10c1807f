"""Create or reuse the project's virtual environment, install what a task needs, and run it.

    python tools/dev.py app  [main.py arguments]   # the desktop app
    python tools/dev.py test [pytest arguments]    # the whole test suite

Works the same on Linux, macOS and Windows with Python 3.11+. Installs are skipped while
pyproject.toml is unchanged (a hash stamp in the environment), so a second run starts at once.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("SUBTITLER_VENV", ROOT / ".venv"))
EXTRAS = {"app": "", "test": "[dev,bench]"}


def venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def ensure_env(task: str) -> Path:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs before any check
        sys.exit(f"subtitler needs Python 3.11 or newer (this is {sys.version.split()[0]})")
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
    task, rest = argv[0], argv[1:]
    py = ensure_env(task)
    if task == "app":
        cmd = [str(py), str(ROOT / "main.py"), *rest]
    else:
        cmd = [str(py), "-m", "pytest", *rest]
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
