"""Test workers side by side (pytest-xdist) make a shared model one at a time."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from subtitler_research.real_models import _one_at_a_time

HOLDER = """
import sys, time
from pathlib import Path
from subtitler_research.real_models import _one_at_a_time
out, log = Path(sys.argv[1]), Path(sys.argv[2])
with _one_at_a_time(out):
    log.write_text("held\\n")
    time.sleep(1.0)
    log.write_text("held\\nreleased\\n")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the lock is POSIX's flock")
def test_a_second_process_waits_until_the_first_has_made_the_model(tmp_path: Path) -> None:
    out, log = tmp_path / "cache" / "model.gguf", tmp_path / "log"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(log)])
    try:
        for _ in range(200):  # until the other process holds the lock
            if log.exists():
                break
            time.sleep(0.05)
        assert log.read_text() == "held\n"
        with _one_at_a_time(out):
            assert log.read_text() == "held\nreleased\n"
    finally:
        holder.wait(10)
    assert holder.returncode == 0
