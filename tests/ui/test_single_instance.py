"""One app per data folder: a second start wakes the first and exits; a crash leaves no lock."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalServer

from subtitler.ui.single_instance import (
    SingleInstance,
    private_dir_ok,
    server_name,
    socket_address,
    socket_ok,
)

ROOT = Path(__file__).resolve().parents[2]

# A pytest tmp_path is too long for a socket path, so the tests that use one put their socket
# in the real per-user folder in /tmp (subtitler-UID), as do the apps other modules start: no
# test empties it or hands it to another user (the other user's test has a temp folder of its
# own). Every test here runs in one worker (tools/dev.py: --dist loadgroup) all the same.
pytestmark = pytest.mark.xdist_group("tmp-subtitler-uid")


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


@pytest.mark.parametrize("kind", ["zeros", "fifo", "folder"])
def test_a_lock_file_that_is_none_is_set_aside_and_the_app_starts(
    tmp_path: Path, kind: str
) -> None:
    """A subtitler.lock with no process id in it (zeros after a power cut), a FIFO or a
    folder of that name: no instance's. The start said for good "subtitler is already
    running but does not answer" (a folder, a damaged file: QLockFile took it for one held),
    or never came up (it waited to read the FIFO). Set aside, the lock is taken."""
    lock = tmp_path / "subtitler.lock"
    if kind == "zeros":
        lock.write_bytes(bytes(64))
        os.utime(lock, (time.time() - 3600,) * 2)  # (not one being written this moment)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    code = (
        "from pathlib import Path\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "from subtitler.ui.single_instance import SingleInstance\n"
        "app = QCoreApplication([])\n"
        f"g = SingleInstance(Path({str(tmp_path)!r}))\n"
        "print(g.acquire(), repr(g.problem))\n"
        "g.release()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.split() == ["True", "''"], done.stderr[-2000:]
    (aside,) = tmp_path.glob("subtitler.lock.broken-*")
    assert (aside.read_bytes() == bytes(64)) if kind == "zeros" else not aside.is_file()


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


def test_a_second_start_with_work_to_do_says_it_is_not_done(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A second `subtitler --replay FILE` on the running app's data folder ended at once
    with nothing played and nothing said; options given to a second start were dropped
    in silence."""
    cmd = [sys.executable, str(ROOT / "main.py"), "--data-dir", str(tmp_path)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    first = SingleInstance(tmp_path)
    assert first.acquire()
    woken: list[bool] = []
    first.activated.connect(lambda: woken.append(True))
    clip = ROOT / "tests" / "data" / "LJ001-0008.flac"
    try:
        for extra, rc, said in (
            (
                ["--replay", str(clip)],
                1,
                "error: subtitler is already running with this data folder: quit it to replay "
                "LJ001-0008.flac, or give this run its own --data-dir",
            ),
            (
                ["--tgt-lang", "fr"],
                0,
                "subtitler is already running: it was brought forward without the options "
                "given here (quit it and start again to use them)",
            ),
            ([], 0, ""),
        ):
            proc = subprocess.Popen([*cmd, *extra], env=env, stderr=subprocess.PIPE, text=True)
            qtbot.waitUntil(lambda p=proc: p.poll() is not None, timeout=30_000)
            assert proc.stderr is not None
            err = [ln for ln in proc.stderr.read().splitlines() if "propagateSizeHints" not in ln]
            assert (proc.returncode, err) == (rc, [said] if said else [])
        qtbot.waitUntil(lambda: len(woken) == 3, timeout=3000)
    finally:
        first.release()


# -- a data folder that cannot be written is not "another instance" (issue 15, point 2) -------

AS_ROOT = sys.platform.startswith("linux") and os.geteuid() == 0


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    where.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@contextmanager
def unwritable(tmp_path: Path, with_data_folder: bool) -> Iterator[tuple[Path, str]]:
    """(a data folder nothing can be written in, the reason the OS gives): a read-only tmpfs
    as root (root ignores permission bits), else a folder without write permission."""
    base = tmp_path / "ro"
    if AS_ROOT:
        with tmpfs(base, "size=64k") as mnt:
            if with_data_folder:
                (mnt / "data").mkdir()
            subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
            yield mnt / "data", "Read-only file system"
    else:
        base.mkdir()
        if with_data_folder:
            (base / "data").mkdir()
        target = base / "data" if with_data_folder else base
        target.chmod(0o555)
        try:
            yield base / "data", "Permission denied"
        finally:
            target.chmod(0o755)


@pytest.fixture()
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder with a short path (a socket path over ~100 bytes is never used, which would
    hide where the socket goes) and no runtime folder to fall back on (macOS has none)."""
    import shutil
    import tempfile

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    folder = Path(tempfile.mkdtemp(prefix="st-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("exists", [True, False], ids=["read-only folder", "missing folder"])
def test_an_unwritable_data_folder_is_not_another_instance(
    qtbot, short_tmp: Path, exists: bool
) -> None:  # type: ignore[no-untyped-def]
    with unwritable(short_tmp, exists) as (data, reason):
        guard = SingleInstance(data)  # (raised for a missing folder on a read-only disk)
        assert not guard.acquire()
        assert guard.problem == (
            f"The data folder {data} cannot be written ({reason}): finished lines are kept "
            "in memory this session (export still has them)."
        )
        guard.listen()  # the app goes on; a later start still finds it
        later = SingleInstance(data)
        assert not later.acquire() and later.problem
        with qtbot.waitSignal(guard.activated, timeout=3000):
            assert later.wake_running()
        guard.release()


@pytest.mark.skipif(not AS_ROOT, reason="filling a small tmpfs needs root on Linux")
def test_a_full_data_folder_is_not_another_instance(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with tmpfs(tmp_path / "full", "size=64k") as mnt:
        with (mnt / "filler").open("wb", buffering=0) as f, contextlib.suppress(OSError):
            while True:
                f.write(b"x" * 4096)
        guard = SingleInstance(mnt)
        assert not guard.acquire()
        assert "(No space left on device)" in guard.problem and "running" not in guard.problem


def test_the_app_starts_on_a_read_only_data_folder(tmp_path: Path) -> None:
    """The real app: one line saying why, and it runs (it said 'already running but does
    not answer' in a modal box and exited)."""
    from subtitler_research.asr.tiny_model import build_tiny_whisper
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    whisper = build_tiny_whisper(tmp_path / "whisper")
    gguf = build_random_llama(tmp_path / "mt.gguf", PRESETS["tiny"], seed=5)
    with unwritable(tmp_path, True) as (data, reason):
        cmd = [
            sys.executable, str(ROOT / "main.py"),
            "--replay", str(ROOT / "tests/data/LJ001-0008.flac"),
            "--asr-model", str(whisper), "--mt-model", str(gguf), "--data-dir", str(data),
            "--config", str(tmp_path / "config.toml"),
        ]  # fmt: skip
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stderr is not None
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
        said = f"The data folder {data} cannot be written ({reason})"
        try:
            seen = []
            while not any(said in x for x in seen):
                seen.append(lines.get(timeout=60))  # (queue.Empty: it never said why)
            time.sleep(3)
            assert proc.poll() is None, "the app exited"
            assert not any("already running" in x for x in seen)
        finally:
            proc.terminate()
            proc.wait(20)


# -- the socket is private to the user (issue 15, point 9) -------------------------------------


def test_a_data_folder_named_through_a_link_is_the_same_instance(
    qtbot, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Started again through a link to its data folder, the app looked for the first one's
    socket elsewhere (the link is no private folder) and told the user to remove its lock."""
    shared = short_tmp / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))  # (so the data folder holds it)
    real = short_tmp / "data"
    link = short_tmp / "link"
    real.mkdir(mode=0o700)
    link.symlink_to(real)
    first = SingleInstance(real)
    assert first.acquire()
    try:
        assert socket_address(link) == socket_address(real) is not None
        second = SingleInstance(link)
        assert not second.acquire()
        with qtbot.waitSignal(first.activated, timeout=3000):
            assert second.wake_running()
    finally:
        first.release()


def test_private_folder_check(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    uid = os.getuid()
    assert private_dir_ok(mine, uid)
    assert not private_dir_ok(mine, uid + 1)  # someone else's
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    assert not private_dir_ok(shared, uid)
    (tmp_path / "link").symlink_to(mine)
    assert not private_dir_ok(tmp_path / "link", uid)
    assert not private_dir_ok(tmp_path / "none", uid)


# The socket's folder, and another user in the temp folder (one of its own, as /tmp is).
def test_the_socket_lives_in_a_private_folder(
    qtbot, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    tmp_path = short_tmp
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))  # a runtime folder others can write
    data = tmp_path / "data"
    guard = SingleInstance(data)
    assert guard.acquire()
    address = socket_address(data)
    assert address is not None and Path(address).parent == data  # not the shared folder
    st = os.lstat(address)
    assert st.st_uid == os.getuid() and stat.S_ISSOCK(st.st_mode)
    assert socket_ok(address)
    guard.release()
    Path(address).unlink(missing_ok=True)
    Path(address).write_text("not a socket")
    assert not socket_ok(address)
    assert not SingleInstance(data).wake_running()


ATTACKER = 54322
FIRST = """
import sys, time
from pathlib import Path
from PySide6.QtCore import QCoreApplication, QTimer
from subtitler.ui.single_instance import SingleInstance
app = QCoreApplication([])
g = SingleInstance(Path(sys.argv[1]))
print("acquired", g.acquire(), flush=True)
g.activated.connect(lambda: (print("activated", flush=True), app.quit()))
QTimer.singleShot(20000, app.quit)
app.exec()
"""
SECOND = """
import sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication
from subtitler.ui.single_instance import SingleInstance
app = QCoreApplication([])
g = SingleInstance(Path(sys.argv[1]))
print("acquired", g.acquire(), "woke", g.wake_running(), flush=True)
"""


def squat(data: Path, attacker: int, victim: int, tmp: Path) -> tuple[int, int]:
    """Another local user listening first where the app used to listen (a fixed name in the
    shared temp folder) and in the victim's would-be private folder there. A forked child that
    becomes ``attacker``: it needs no file of the checkout (which another user may not be able
    to read, a clone under /root say). Returns (pid, fd that reports "listening" and each
    connection)."""
    import select
    import socket

    name = server_name(data)
    own = tmp / f"subtitler-{victim}"
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return pid, r
    try:  # the child: only the standard library, then os._exit
        os.close(r)
        os.setgroups([])
        os.setgid(attacker)
        os.setuid(attacker)
        own.mkdir(mode=0o777, exist_ok=True)
        own.chmod(0o777)
        socks = []
        for address in (tmp / name, own / f"{name}.sock"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(address))
            address.chmod(0o777)
            sock.listen()
            socks.append(sock)
        os.write(w, b"listening\n")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select(socks, [], [], 0.2)
            for sock in ready:
                sock.accept()
                os.write(w, b"a victim connected\n")
    finally:
        os._exit(0)


@pytest.mark.skipif(not AS_ROOT, reason="playing another user needs root")
def test_another_user_cannot_stand_in_for_the_running_app(short_tmp: Path) -> None:
    """Another local user listens first on the name the app used to take in /tmp (and on its
    would-be private folder there): a second start still reaches the real first instance."""
    tmp_path = short_tmp
    tmp_path.chmod(0o755)  # (the other user reaches the temp folder below)
    # The temp folder of both users, as /tmp is (the real one holds the sockets of apps other
    # tests start meanwhile: emptied, their second starts found no first instance).
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    data = tmp_path / "data"
    data.mkdir()
    me = os.getuid()
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT), TMPDIR=str(tmp))

    def start(code: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", code, str(data)], env=env, cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    pid, reports = squat(data, ATTACKER, me, tmp)
    heard = os.fdopen(reports)
    first = None
    try:
        assert heard.readline().strip() == "listening"
        first = start(FIRST)
        assert first.stdout is not None
        assert first.stdout.readline().strip() == "acquired True"
        second = start(SECOND)
        out, err = second.communicate(timeout=30)
        assert out.strip() == "acquired False woke True", err
        assert first.stdout.readline().strip() == "activated"
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if first is not None:
            first.kill()
            first.wait(10)
        QLocalServer.removeServer(server_name(data))
    assert "a victim connected" not in heard.read()
