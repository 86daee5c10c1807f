"""One app per data folder: a second start wakes the first and exits; a crash leaves no lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from subtitler.ui.single_instance import SingleInstance

ROOT = Path(__file__).resolve().parents[2]


def test_a_second_start_wakes_the_first(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = SingleInstance(tmp_path)
    assert first.acquire()
    second = SingleInstance(tmp_path)
    assert not second.acquire()
    with qtbot.waitSignal(first.activated, timeout=3000):
        assert second.wake_running()
    first.release()
    third = SingleInstance(tmp_path)  # after a normal exit: free again
    assert third.acquire()
    third.release()


def test_another_data_folder_is_another_instance(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = SingleInstance(tmp_path / "a"), SingleInstance(tmp_path / "b")
    assert a.acquire() and b.acquire()
    a.release()
    b.release()


def test_the_lock_of_a_crashed_instance_is_taken_over(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import sys, time; from pathlib import Path\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "from subtitler.ui.single_instance import SingleInstance\n"
        "app = QCoreApplication([])\n"
        f"g = SingleInstance(Path({str(tmp_path)!r}))\n"
        "print(g.acquire(), flush=True)\n"
        "time.sleep(60)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "True"
        assert not SingleInstance(tmp_path).acquire()  # held by a live process
        proc.send_signal(signal.SIGKILL)  # a crash: nothing cleans up
        proc.wait(10)
        guard = SingleInstance(tmp_path)
        deadline = time.monotonic() + 5
        ok = guard.acquire()
        while not ok and time.monotonic() < deadline:
            time.sleep(0.1)
            ok = guard.acquire()
        assert ok  # the dead process's lock was recognised as stale
        guard.release()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_toggle_from_the_command_line_reaches_the_running_app(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`subtitler --toggle ...`, as a shortcut in the desktop's keyboard settings runs it."""
    cmd = [sys.executable, str(ROOT / "main.py"), "--data-dir", str(tmp_path), "--toggle"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = SingleInstance(tmp_path)
    assert first.acquire()
    got: list[str] = []
    first.command.connect(got.append)
    for what in ("click-through", "pause"):
        proc = subprocess.Popen([*cmd, what], env=env)
        qtbot.waitUntil(lambda p=proc: p.poll() is not None, timeout=20_000)
        assert proc.returncode == 0
    qtbot.waitUntil(lambda: got == ["click-through", "pause"], timeout=3000)
    first.release()
    alone = subprocess.run([*cmd, "pause"], env=env, capture_output=True, text=True, timeout=20)
    assert alone.returncode == 1 and alone.stderr == "error: subtitler is not running\n"
