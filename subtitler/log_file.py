"""The app's log file (``subtitler.log`` in the data folder, rotated)."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import time
from pathlib import Path

RETRY_S = 60.0  # after a failed write the file is tried again this much later


class LogFile(logging.handlers.RotatingFileHandler):
    """A write that fails (a full disk, the folder gone) is said once on stderr and the file
    is tried again RETRY_S later: logging's own handling prints a traceback for every record,
    which on a full disk was a hundred and fifty a minute."""

    def __init__(self, path: Path, max_bytes: int = 2_000_000, backups: int = 2) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self._failed_at: float | None = None  # the last failed write (monotonic)
        self._failing = False  # the record being written failed

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
