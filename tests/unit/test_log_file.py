"""The log file on a disk that fills up: one line on stderr, no traceback per record, and the
file written again once it can be."""

from __future__ import annotations

import errno
import logging
from pathlib import Path
from typing import Any

import pytest

from subtitler import log_file
from subtitler.log_file import LogFile


class FullDisk:
    """A file object whose writes fail as on a full disk (until ``room``)."""

    def __init__(self) -> None:
        self.room = False
        self.text = ""

    def write(self, s: str) -> int:
        if not self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def seek(self, offset: int, whence: int = 0) -> int:  # (the rotation asks the size)
        return len(self.text)

    def tell(self) -> int:
        return len(self.text)

    def close(self) -> None:
        pass


def record(msg: str) -> logging.LogRecord:
    return logging.LogRecord("subtitler.x", logging.WARNING, __file__, 1, msg, None, None)


def test_a_full_disk_is_said_once_and_the_file_is_tried_again_later(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    now = [1000.0]
    monkeypatch.setattr(log_file.time, "monotonic", lambda: now[0])
    h = LogFile(tmp_path / "subtitler.log")
    disk = FullDisk()
    h.stream = disk  # type: ignore[assignment]
    for i in range(50):
        h.emit(record(f"line {i}"))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err
    assert "Traceback" not in err and "Logging error" not in err
    disk.room = True
    h.emit(record("still within the minute"))  # not tried yet
    now[0] += log_file.RETRY_S
    h.emit(record("room again"))
    assert disk.text == "room again\n"
    assert "written again" in capsys.readouterr().err
    h.stream = None  # type: ignore[assignment]
    h.close()


def test_a_fifo_named_as_the_log_does_not_hold_the_start(tmp_path: Path) -> None:
    """A FIFO named subtitler.log in the data folder: the app never started (opening a FIFO
    to write waits for a reader, no window, no word); now it starts without its log file."""
    import os

    from subtitler.app import setup_logging
    from tests.helpers.bounded import run_bounded

    os.mkfifo(tmp_path / "subtitler.log")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        run_bounded(lambda: setup_logging("INFO", tmp_path))
        fifo = str(tmp_path / "subtitler.log")
        assert not [h for h in root.handlers if getattr(h, "baseFilename", "") == fifo]
    finally:
        for h in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(h)
            h.close()
        root.setLevel(level)
    # A log file as it is meant to be is written as ever.
    (tmp_path / "subtitler.log").unlink()
    handler = LogFile(tmp_path / "subtitler.log")
    handler.emit(logging.makeLogRecord({"msg": "hello"}))
    handler.close()
    assert (tmp_path / "subtitler.log").read_text(encoding="utf-8") == "hello\n"
