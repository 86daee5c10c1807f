"""tools/dev.py: the newcomer's two commands find, install or name the system packages."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("subtitler_dev", ROOT / "tools" / "dev.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["subtitler_dev"] = mod  # dataclasses look their module up while building
    spec.loader.exec_module(mod)
    return mod


dev = _dev()


def _need(name: str, present: bool, tests_only: bool = False) -> object:
    return dev.Need(name, f"pkg-{name}", tests_only=tests_only, found=lambda: present)


@pytest.fixture()
def fake_needs(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    state = {"installed": False}
    needs = [
        dev.Need("there", "pkg-there", found=lambda: True),
        dev.Need("lib", "pkg-lib", found=lambda: state["installed"]),
        dev.Need("srv", "pkg-srv", tests_only=True, found=lambda: state["installed"]),
    ]
    monkeypatch.setattr(dev, "NEEDS", tuple(needs))
    monkeypatch.setattr(dev.sys, "platform", "linux")
    real_which = dev.shutil.which
    monkeypatch.setattr(
        dev.shutil, "which", lambda p: "/usr/bin/apt-get" if p == "apt-get" else real_which(p)
    )
    return [state, needs]  # type: ignore[list-item]


def test_app_needs_no_test_only_parts() -> None:
    needs = [_need("a", False), _need("b", True), _need("xvfb", False, tests_only=True)]
    assert [n.what for n in dev.missing_needs("app", needs)] == ["a"]
    assert [n.what for n in dev.missing_needs("test", needs)] == ["a", "xvfb"]


def test_without_root_or_sudo_it_prints_the_one_command_and_exits_2(
    fake_needs: list[object], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(dev.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(dev, "_can_sudo", lambda: False)
    ran: list[list[str]] = []
    monkeypatch.setattr(dev.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    assert dev.ensure_system("test") == 2
    err = capsys.readouterr().err
    assert "    sudo apt-get install -y pkg-lib pkg-srv\n" in err
    assert ran == []  # nothing was attempted
    assert dev.ensure_system("app") == 2
    assert "sudo apt-get install -y pkg-lib\n" in capsys.readouterr().err


def test_as_root_it_installs_with_apt_and_checks_again(
    fake_needs: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = fake_needs[0]
    assert isinstance(state, dict)
    monkeypatch.setattr(dev.os, "geteuid", lambda: 0)
    ran: list[list[str]] = []

    def apt(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
        ran.append(cmd)
        if cmd[:2] == ["apt-get", "install"]:
            state["installed"] = True
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(dev.subprocess, "run", apt)
    assert dev.ensure_system("test") == 0
    assert ran == [
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "pkg-lib", "pkg-srv"],
    ]
    ran.clear()
    assert dev.ensure_system("test") == 0 and ran == []  # present now: apt is not run again


def test_passwordless_sudo_is_used_and_a_failed_install_stops(
    fake_needs: list[object], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(dev.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(dev, "_can_sudo", lambda: True)
    ran: list[list[str]] = []

    def apt(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 100 if "install" in cmd else 0)

    monkeypatch.setattr(dev.subprocess, "run", apt)
    assert dev.ensure_system("app") == 2
    assert ran[0][:3] == ["sudo", "-n", "apt-get"] and ran[1][:4] == [
        "sudo",
        "-n",
        "apt-get",
        "install",
    ]
    assert "[dev] failed: sudo -n apt-get install" in capsys.readouterr().err


def test_other_linux_without_apt_names_what_is_missing(
    fake_needs: list[object], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(dev.shutil, "which", lambda p: None)
    assert dev.ensure_system("app") == 2
    err = capsys.readouterr().err
    assert "missing system parts: lib." in err and "pkg-lib" in err


def test_macos_and_windows_need_nothing_from_the_system(
    fake_needs: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(dev.sys, "platform", platform)
        assert dev.ensure_system("test") == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux system packages")
def test_this_machine_has_everything_the_list_names() -> None:
    """The real checks find what dev.py installed (the suite runs through it)."""
    missing = dev.missing_needs("test")
    assert missing == [], [n.what for n in missing]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux system packages")
def test_the_list_covers_what_qts_x11_plugin_links_to() -> None:
    """Every library Qt's xcb platform plugin needs resolves (what the list installs is enough
    for a real window)."""
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True)
    assert "not found" not in out.stdout, out.stdout
    needed = {ln.split()[0] for ln in out.stdout.splitlines() if "=>" in ln}
    listed = {f"lib{lib}.so" for lib, _ in dev._QT_X11}
    xcb_needed = {n.split(".so")[0] + ".so" for n in needed if n.startswith("libxcb-")}
    assert xcb_needed <= listed, xcb_needed - listed


def test_the_suite_runs_in_a_worker_per_core_unless_the_caller_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    assert dev.parallel([]) == ["-n", "2", "--dist", "loadgroup"]
    assert dev.parallel(["tests/unit", "-x"]) == ["-n", "2", "--dist", "loadgroup"]
    assert dev.parallel(["-n", "0"]) == []
    assert dev.parallel(["-p", "no:xdist"]) == []
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 32)
    assert dev.parallel([]) == ["-n", "4", "--dist", "loadgroup"]  # each may hold a real model
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 1)
    assert dev.parallel([]) == []


def test_tests_of_one_group_run_in_one_worker(tmp_path: Path) -> None:
    """What the suite's xdist_group marks rely on (tests that share the per-user folder in
    /tmp, or hold one real model): with pytest 9.2 and pytest-xdist 3.8, --dist loadgroup
    silently spread a group over the workers (pytest-dev/pytest-xdist#1386)."""
    (tmp_path / "test_grouped.py").write_text(
        "import os, pytest\n"
        "pytestmark = pytest.mark.xdist_group('one')\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_it(i):\n"
        "    with open('workers.txt', 'a') as f:\n"
        "        f.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n"
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += ["-n", "2", "--dist", "loadgroup"]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 8 and len(set(workers)) == 1, workers
