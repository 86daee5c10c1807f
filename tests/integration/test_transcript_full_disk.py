"""The transcript on a disk that fills up and frees again: every finished line reaches the file
exactly once, in order, with no blank or torn line, and the export says each line once.

Two real ways to run out of room: a per-process file-size limit (RLIMIT_FSIZE, any user; the
kernel writes what fits and fails the rest, as a full disk does) and, as root on Linux, a small
tmpfs that is filled up and emptied again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from subtitler.pipeline.transcript import (
    SegmentRecord,
    TranscriptWriter,
    export,
    read_transcript,
    to_srt,
)

ROOT = Path(__file__).resolve().parents[2]


def record(i: int) -> SegmentRecord:
    # Multi-byte text: a cut inside a character must not survive either.
    return SegmentRecord(i, i, i + 0.5, f"line {i} — ünïcode", f"Zeile {i} — 東京", "en", "de", 1.5)


def check_file(path: Path, n: int) -> None:
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    assert lines[-1] == b"", "the file ends with a complete line"
    assert b"" not in lines[:-1], "no blank line"
    assert len(lines) - 1 == n, "each finished line once"
    assert read_transcript(path) == [record(i) for i in range(n)]


SCRIPT = """
import json, os, resource, signal, sys
from pathlib import Path
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
sys.path.insert(0, {tests!r})
from integration.test_transcript_full_disk import record

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
w = TranscriptWriter(Path({path!r}))
failures = []
for i in range(40):
    if i == 5:  # the disk fills up in the middle of a line
        resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize({path!r}) + 37, hard))
    if i == 31:  # room again
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    try:
        w.append(record(i))
    except OSError as e:
        failures.append(e.errno)
w.close()
print(json.dumps({{"failures": failures, "waiting": w.waiting, "records": len(w.records)}}))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_file_size_limit_hit_and_lifted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    code = SCRIPT.format(tests=str(ROOT / "tests"), path=str(path))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(out["failures"]) == 26 and set(out["failures"]) == {27}  # EFBIG, lines 5..30
    assert out["waiting"] == 0 and out["records"] == 40
    check_file(path, 40)
    srt = export(read_transcript(path), tmp_path / "t.srt")
    assert srt.read_text(encoding="utf-8") == to_srt([record(i) for i in range(40)])
    assert srt.read_text(encoding="utf-8").count("Zeile 7 —") == 1


def test_fsync_failure_is_retried_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written but not made durable (fsync reports ENOSPC/EIO): the bytes may not be on disk,
    so the retry writes them again, over themselves, not after them."""
    import subtitler.pipeline.transcript as tr

    path = tmp_path / "t.jsonl"
    w = TranscriptWriter(path)
    w.append(record(0))
    real_fsync = os.fsync
    fail = {"left": 2}

    def flaky_fsync(fd: int) -> None:
        if fail["left"]:
            fail["left"] -= 1
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(tr.os, "fsync", flaky_fsync)
    for i in (1, 2):
        with pytest.raises(OSError):
            w.append(record(i))
    w.append(record(3))
    w.close()
    check_file(path, 4)


def test_a_torn_line_left_by_a_crash_stays_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TranscriptWriter(path)
    w.append(record(0))
    w.close()
    with path.open("ab") as f:  # a killed process left half a line
        f.write(json.dumps(record(1).__dict__, ensure_ascii=False).encode()[:30])
    w = TranscriptWriter(path)
    w.append(record(2))
    w.close()
    assert read_transcript(path) == [record(0), record(2)]
    assert path.read_bytes().count(b"\n") == 3 and b"\n\n" not in path.read_bytes()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"),
    reason="mounting a tmpfs needs root on Linux",
)
def test_real_full_tmpfs(tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
    try:
        path = mnt / "transcripts" / "t.jsonl"
        w = TranscriptWriter(path)
        for i in range(3):
            w.append(record(i))
        # Fill the disk up to the last few bytes: the next line fits only in part.
        with (mnt / "filler").open("wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"x" * 512)
            except OSError:
                pass
        # The transcript's last page still has room for a few lines; then the disk is full.
        i, failures = 3, 0
        while failures < 6:
            assert i < 200, "the disk never filled up"
            try:
                w.append(record(i))
                assert failures == 0, "a line was written after the disk filled up"
            except OSError as e:
                assert e.errno == 28
                failures += 1
            i += 1
        assert w.waiting == 6
        (mnt / "filler").unlink()  # room again
        for _ in range(3):
            w.append(record(i))
            i += 1
        w.close()
        check_file(path, i)
        srt = export(read_transcript(path), tmp_path / "t.srt")
        assert srt.read_text(encoding="utf-8") == to_srt([record(j) for j in range(i)])
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("how", ["file removed", "folder removed", "another file"])
def test_a_transcript_removed_mid_meeting_is_written_again_whole(tmp_path: Path, how: str) -> None:
    """The writer opened the file once: removed (or replaced) mid-meeting, every later line
    went to a file no folder holds, and at the end there was none, with no word."""
    path = tmp_path / "transcripts" / "t.jsonl"
    w = TranscriptWriter(path)
    for i in range(3):
        w.append(record(i))
    if how == "file removed":
        path.unlink()
    elif how == "folder removed":
        shutil.rmtree(path.parent)
    else:
        path.unlink()
        path.write_bytes(b"")  # a file of the same name (a sync tool put its copy back)
    w.append(record(3))
    assert w.notice.endswith(f": the meeting's lines are written to {path} again")
    w.append(record(4))
    w.close()
    check_file(path, 5)


def test_a_transcript_renamed_mid_meeting_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TranscriptWriter(path)
    w.append(record(0))
    moved = tmp_path / "kept.jsonl"
    path.rename(moved)
    w.append(record(1))
    w.close()
    assert not path.exists() and not w.notice
    check_file(moved, 2)


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.geteuid() == 0), reason="a mount: root on Linux"
)
def test_a_folder_mounted_again_mid_meeting_gets_the_whole_transcript(tmp_path: Path) -> None:
    """A network share or a drive that reconnects under the same path: the open file is on
    the old mount, which no one sees again."""
    mnt = tmp_path / "share"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        path = mnt / "t.jsonl"
        w = TranscriptWriter(path)
        w.append(record(0))
        subprocess.run(["umount", "-l", str(mnt)], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
        w.append(record(1))
        w.close()
        assert "another drive" in w.notice
        check_file(path, 2)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
