"""The app's log file (``subtitler.log`` in the data folder, rotated)."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path
from typing import Any

RETRY_S = 60.0  # after a failed write the file is tried again this much later
# Opened without waiting for a reader: a FIFO of the log's name blocked the app's start for
# good (opening a FIFO to write waits for one); now it fails at once, as with no reader.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class LogFile(logging.handlers.RotatingFileHandler):
    """A write that fails (a full disk, the folder gone) is said once on stderr and the file
    is tried again RETRY_S later: logging's own handling prints a traceback for every record,
    which on a full disk was a hundred and fifty a minute."""

    def __init__(self, path: Path, max_bytes: int = 2_000_000, backups: int = 2) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self._failed_at: float | None = None  # the last failed write (monotonic)
        self._failing = False  # the record being written failed

    def _open(self) -> Any:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NONBLOCK | getattr(os, "O_BINARY", 0)
        fd = os.open(self.baseFilename, flags, 0o666)
        try:
            return open(fd, self.mode, encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise

    def emit(self, record: logging.LogRecord) -> None:
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_S:
            return  # (the record is lost with the file, as every record is while it fails)
        self._failing = False
        super().emit(record)
        if not self._failing and self._failed_at is not None:
            self._failed_at = None
            sys.stderr.write(f"subtitler: the log file {self.baseFilename} is written again\n")

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        first = self._failed_at is None
        self._failing, self._failed_at = True, time.monotonic()
        if first:
            sys.stderr.write(
                f"subtitler: the log file {self.baseFilename} cannot be written ({error}); "
                f"trying again every {RETRY_S:.0f} s\n"
            )
