"""The one helper for the user's files (issue 29): a file that cannot be used is set aside and
the user told in one line; a write replaces a file whole or not at all, so a crash mid-write
leaves the old file. Settings, the glossary, a transcript's export and the models' manifest
are written through it (their own tests check them end to end)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from subtitler import settings_store, user_files
from subtitler.config import AppConfig
from subtitler.mt import glossary
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.transcript import SegmentRecord, export


def parse_number(text: str) -> int:
    return int(text.strip())


class TestLoad:
    def test_a_good_file_is_parsed(self, tmp_path: Path) -> None:
        (tmp_path / "n.txt").write_text("42\n", encoding="utf-8")
        got = user_files.load(tmp_path / "n.txt", parse_number, limit=user_files.KB)
        assert got == user_files.Loaded(42)
        assert got.notice("The number", "0 is used") == ""

    def test_a_missing_file_is_nothing_to_tell(self, tmp_path: Path) -> None:
        got = user_files.load(tmp_path / "n.txt", parse_number, limit=user_files.KB)
        assert got == user_files.Loaded(None) and got.notice("The number", "0 is used") == ""

    def test_a_corrupt_file_is_set_aside_and_the_user_told_in_one_line(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "n.txt"
        path.write_bytes(b"forty-two\nor so\n")
        got = user_files.load(path, parse_number, limit=user_files.KB)
        assert got.value is None and got.backup is not None and not path.exists()
        assert got.backup.parent == tmp_path and got.backup.name.startswith("n.txt.broken-")
        assert got.backup.read_bytes() == b"forty-two\nor so\n"  # kept, as it was
        said = got.notice("The number", "0 is used")
        assert said == (
            "The number could not be read (invalid literal for int() with base 10: "
            f"'forty-two\\nor so'). It was saved as {got.backup.name} and 0 is used."
        )
        assert "\n" not in said
        # The next start does not meet it again.
        assert user_files.load(path, parse_number, limit=user_files.KB) == user_files.Loaded(None)

    def test_a_file_too_large_or_not_text_is_set_aside(self, tmp_path: Path) -> None:
        for name, data, why in [
            ("big.txt", b"1" * 2000, "big.txt is larger than 1 kB (2,000 bytes)"),
            ("bin.txt", b"\xff\xfe1", "bin.txt is not UTF-8 text (byte 0)"),
        ]:
            (tmp_path / name).write_bytes(data)
            got = user_files.load(tmp_path / name, parse_number, limit=user_files.KB)
            assert got.problem == why and got.backup is not None
            assert got.backup.read_bytes() == data

    def test_a_file_that_cannot_be_read_now_is_left_where_it_is(self, tmp_path: Path) -> None:
        (tmp_path / "n.txt").mkdir()
        got = user_files.load(tmp_path / "n.txt", parse_number, limit=user_files.KB)
        assert got.problem == "n.txt is a folder, not a file" and got.backup is None
        assert (tmp_path / "n.txt").is_dir()
        assert got.notice("The number", "0 is used") == (
            "The number could not be opened (n.txt is a folder, not a file); 0 is used."
        )

    @pytest.mark.skipif(os.name != "posix", reason="symbolic links")
    def test_a_link_to_nothing_is_told_not_taken_for_no_file(self, tmp_path: Path) -> None:
        (tmp_path / "n.txt").symlink_to(tmp_path / "dotfiles" / "n.txt")  # (moved away)
        got = user_files.load(tmp_path / "n.txt", parse_number, limit=user_files.KB)
        assert (
            got.problem == f"n.txt points to {tmp_path / 'dotfiles' / 'n.txt'}, which is not there"
        )
        assert got.backup is None and (tmp_path / "n.txt").is_symlink()


class TestWriteAtomic:
    def test_writes_the_text_and_replaces_the_old_file(self, tmp_path: Path) -> None:
        path = tmp_path / "notes.txt"
        path.write_text("old", encoding="utf-8")
        assert user_files.write_atomic(path, "neu: Grüße\n", newline="") == path
        assert path.read_bytes() == "neu: Grüße\n".encode()
        assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]  # nothing else left

    @pytest.mark.skipif(os.name != "posix", reason="symbolic links")
    def test_a_link_stays_and_the_file_it_points_at_is_written(self, tmp_path: Path) -> None:
        """A settings file kept elsewhere (a dotfiles folder) and linked into place."""
        (tmp_path / "dotfiles").mkdir()
        target = tmp_path / "dotfiles" / "config.toml"
        target.write_text("old", encoding="utf-8")
        link = tmp_path / "config.toml"
        link.symlink_to(target)
        assert user_files.write_atomic(link, "new") == link
        assert link.is_symlink() and target.read_text(encoding="utf-8") == "new"
        assert sorted(p.name for p in tmp_path.rglob("*")) == [
            "config.toml",
            "config.toml",
            "dotfiles",
        ]

    @pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
    def test_a_private_file_is_the_users_alone_a_public_one_follows_the_umask(
        self, tmp_path: Path
    ) -> None:
        private = user_files.write_atomic(tmp_path / "config.toml", "x")
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
        old = os.umask(0o027)
        try:
            public = user_files.write_atomic(tmp_path / "t.srt", "x", mode=user_files.PUBLIC)
        finally:
            os.umask(old)
        assert stat.S_IMODE(public.stat().st_mode) == 0o640

    def test_a_failed_write_leaves_the_old_file_and_nothing_else(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = tmp_path / "glossary.csv"
        path.write_text("old", encoding="utf-8")
        for step in ("fsync", "replace"):

            def fail(*a: object, step: str = step) -> None:
                raise OSError(28, f"No space left on device ({step})")

            with monkeypatch.context() as m:
                m.setattr(os, step, fail)
                with pytest.raises(OSError, match=step):
                    user_files.write_atomic(path, "new " * 1000)
            assert path.read_text(encoding="utf-8") == "old"
            assert [p.name for p in tmp_path.iterdir()] == ["glossary.csv"]

    @pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kills a process")
    def test_a_crash_mid_write_leaves_the_old_file(self, tmp_path: Path) -> None:
        """A process killed after writing the new text and before the rename (no cleanup
        runs): the file is the old one, whole, and the next write and read are not upset by
        what the crash left beside it."""
        path = tmp_path / "config.toml"
        settings_store.save(AppConfig(), path)
        before = path.read_bytes()
        crash = textwrap.dedent(
            f"""
            import os, signal, sys
            from pathlib import Path
            from subtitler import user_files

            def die(fd):
                os.kill(os.getpid(), signal.SIGKILL)

            os.fsync = die  # the new file is written; the machine goes before it is renamed
            user_files.write_atomic(Path({str(path)!r}), "[mt]\\nbeta = 0.9\\n" * 10000)
            sys.exit("not killed")
            """
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-c", crash], env=env, timeout=60)
        assert done.returncode == -signal.SIGKILL
        assert path.read_bytes() == before
        left = [p for p in tmp_path.iterdir() if p != path]
        assert len(left) == 1 and left[0].name.startswith(".config-")  # the unfinished one
        assert settings_store.load(path).notice == ""  # the old settings, read as they were
        user_files.write_atomic(path, "[mt]\nbeta = 0.9\n")
        assert settings_store.load(path).config.mt.beta == 0.9


def test_every_user_file_is_written_through_the_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settings, the glossary and a transcript's export all replace their file whole: a write
    that fails leaves each as it was."""
    rec = SegmentRecord(0, 0.0, 1.0, "Hello.", "Hallo.", "en", "de", 0.0)
    paths = [tmp_path / "config.toml", tmp_path / "glossary.csv", tmp_path / "meeting.srt"]
    writes: list[Callable[[], object]] = [
        lambda: settings_store.save(AppConfig(), paths[0]),
        lambda: glossary.save(Glossary().with_pair("en", "de", [("Hello", "Hallo")]), paths[1]),
        lambda: export([rec], paths[2]),
    ]

    def io_error(*a: object) -> None:
        raise OSError(5, "I/O error")

    for path, write in zip(paths, writes, strict=True):
        path.write_text("old", encoding="utf-8")
        with monkeypatch.context() as m:
            m.setattr(os, "replace", io_error)
            with pytest.raises(OSError, match="I/O error"):
                write()
        assert path.read_text(encoding="utf-8") == "old"
        write()
        assert path.read_text(encoding="utf-8") != "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
