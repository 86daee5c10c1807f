"""Finished segments on disk as they finish (crash-safe JSON lines) and export to SRT/VTT/text."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, TextIO

log = logging.getLogger(__name__)
Which = Literal["source", "translation", "both"]


@dataclass(frozen=True)
class SegmentRecord:
    segment_id: int
    start: float  # audio time of the segment start (s)
    end: float  # audio time of its end (s)
    source: str
    translation: str
    src_lang: str
    tgt_lang: str
    wall_time: float  # epoch seconds when it finished


class TranscriptWriter:
    """Appends one JSON line per finished segment and fsyncs it: a killed process loses at most
    the segment that was still open.

    Every record is also kept in memory (``records``). When the folder cannot be created or the
    disk is full, ``append`` raises ``OSError`` but keeps the lines that could not be written and
    writes them first on the next call: once there is room again, nothing is missing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[SegmentRecord] = []
        self._unwritten: list[str] = []
        self._f: TextIO | None = None
        self._torn = False  # a failed write may have left half a line at the end of the file

    def append(self, rec: SegmentRecord) -> None:
        self.records.append(rec)
        self._unwritten.append(json.dumps(asdict(rec), ensure_ascii=False) + "\n")
        self.flush()

    def flush(self) -> None:
        """Write the lines still waiting; raises OSError (and keeps them) if it cannot."""
        if not self._unwritten:
            return
        try:
            if self._f is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._f = self.path.open("a", encoding="utf-8")
            # A torn line is ended first so that it stays one unreadable line (skipped when read).
            self._f.write(("\n" if self._torn else "") + "".join(self._unwritten))
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError:
            self._torn = self._f is not None
            raise
        self._torn = False
        self._unwritten.clear()

    @property
    def waiting(self) -> int:
        """Finished segments not on disk yet."""
        return len(self._unwritten)

    def close(self) -> None:
        try:
            self.flush()
        except OSError as e:  # the records stay in memory (export still has them)
            log.error(
                "%d transcript line(s) could not be written to %s: %s", self.waiting, self.path, e
            )
        if self._f is not None and not self._f.closed:
            with contextlib.suppress(OSError):
                self._f.close()


def read_transcript(path: Path) -> list[SegmentRecord]:
    """Records of a transcript file; a torn last line (a crash mid-write) is ignored."""
    out: list[SegmentRecord] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(SegmentRecord(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return out


def _ts(t: float, sep: str) -> str:
    ms = max(0, round(t * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def _text(r: SegmentRecord, which: Which) -> str:
    if which == "source":
        return r.source
    if which == "translation":
        return r.translation
    return f"{r.source}\n{r.translation}"


def to_srt(records: list[SegmentRecord], which: Which = "translation") -> str:
    blocks = [
        f"{i}\n{_ts(r.start, ',')} --> {_ts(r.end, ',')}\n{_text(r, which)}\n"
        for i, r in enumerate(records, 1)
    ]
    return "\n".join(blocks)


def to_vtt(records: list[SegmentRecord], which: Which = "translation") -> str:
    blocks = [f"{_ts(r.start, '.')} --> {_ts(r.end, '.')}\n{_text(r, which)}\n" for r in records]
    return "WEBVTT\n\n" + "\n".join(blocks)


def to_text(records: list[SegmentRecord], which: Which = "translation") -> str:
    return "".join(_text(r, which) + "\n" for r in records)


def export(records: list[SegmentRecord], path: Path, which: Which = "translation") -> Path:
    """Write SRT, VTT or plain text, chosen by the file suffix."""
    fmt = {".srt": to_srt, ".vtt": to_vtt, ".txt": to_text}.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"unknown export format {path.suffix!r} (use .srt, .vtt or .txt)")
    path.write_text(fmt(records, which), encoding="utf-8")
    return path
