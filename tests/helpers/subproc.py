"""Run a Python script in a fresh process (its own Qt platform, sound server...) and read the
JSON it prints last."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_json(args: list[str], env: dict[str, str], timeout: float) -> Any:
    """``python ARGS`` from the repository root; fails the test on a non-zero exit."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=dict(env, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
