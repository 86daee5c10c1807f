"""The installed Qt binding keeps Python's reference counts: PySide6-Essentials 6.12.0 on
Python 3.11 dropped a reference to None on each QWidget.update / QTimer.start, so a minute of
repainting subtitles ended the app with "deallocating None" (pyproject excludes it)."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication([])
w, t = QWidget(), QTimer()
before = sys.getrefcount(None)
for _ in range(300):  # few enough that a leaky binding can still report (not abort)
    w.update(); t.start(1000); t.stop()
print(before - sys.getrefcount(None))
"""


def test_void_calls_keep_none_alive() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) < 10, "None lost references: this PySide6 build leaks them"
