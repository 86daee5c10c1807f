"""Finished segments on disk as they finish (crash-safe JSON lines) and export to SRT/VTT/text."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Literal

from subtitler import sides, user_files

log = logging.getLogger(__name__)
Which = Literal["source", "translation", "both"]


@dataclass(frozen=True)
class SegmentRecord:
    segment_id: int
    start: float  # audio time of the segment start (s)
    end: float  # audio time of its end (s)
    source: str
    translation: str  # into tgt_lang, the main target language
    src_lang: str
    tgt_lang: str
    wall_time: float  # epoch seconds when it finished
    # (language, translation) of each extra target language, in their order (issue 19)
    extra: tuple[tuple[str, str], ...] = ()
    side: str = ""  # who spoke (types.YOU / types.OTHERS; "": one input, or an older file)

    @property
    def targets(self) -> tuple[str, ...]:
        """The languages this line was translated into, the main one first."""
        return (self.tgt_lang, *(lang for lang, _ in self.extra if lang != self.tgt_lang))

    def translation_in(self, lang: str | None) -> str:
        """The translation into ``lang`` (None: the main target); "" if it has none."""
        if lang is None or lang == self.tgt_lang:
            return self.translation
        return next((text for code, text in self.extra if code == lang), "")

    def to_json(self) -> str:
        data = asdict(self)
        if not self.extra:
            del data["extra"]  # a line with one target reads as before (older versions too)
        if not self.side:
            del data["side"]  # likewise a line heard on the only input
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: bytes) -> SegmentRecord:
        """Raises ValueError for a line that is no record: not JSON, a field missing, of the
        wrong type, or a time no clock reaches (a hand edit, a disk fault; 1e308 and inf
        made the history's dates and lengths raise OverflowError)."""
        try:
            data = json.loads(raw.decode("utf-8"))
        except RecursionError:  # the parser recurses once per level of nesting
            raise ValueError("nested too deeply") from None
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        extra = data.pop("extra", ())
        side = data.pop("side", "")
        if not isinstance(side, str):
            raise ValueError("side is not text")
        pairs = tuple(
            (str(x[0]), str(x[1]))
            for x in (extra if isinstance(extra, list) else ())
            if isinstance(x, list) and len(x) == 2
        )
        if set(data) != _FIELDS:
            raise ValueError(f"fields {sorted(set(data) ^ _FIELDS)} missing or unknown")
        if not _count(data["segment_id"]):
            raise ValueError("segment_id is not a count")
        for key in ("start", "end"):
            if not _time(data[key], MAX_AUDIO_S, -MAX_AUDIO_S):
                raise ValueError(f"{key} is no time in the audio")
        if not _time(data["wall_time"], MAX_WALL_TIME):
            raise ValueError("wall_time is no date")
        for key in ("source", "translation", "src_lang", "tgt_lang"):
            if not isinstance(data[key], str):
                raise ValueError(f"{key} is not text")
        return cls(**data, extra=pairs, side=side)


_FIELDS = {f.name for f in fields(SegmentRecord)} - {"extra", "side"}
MAX_AUDIO_S = 1e7  # 115 days into a meeting: anything later is damage
MAX_WALL_TIME = 1e11  # the year 5138: datetime reaches 9999, floats far further
MAX_BYTES = 256 << 20  # a transcript grows by about 1 MB per hour of speech


def _count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**53


def _time(x: object, limit: float, low: float = 0.0) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and low <= x <= limit


class TranscriptWriter:
    """Appends one JSON line per finished segment and fsyncs it: a killed process loses at most
    the segment that was still open.

    Every record is also kept in memory (``records``). When the folder cannot be created or the
    disk is full, ``append`` raises ``OSError`` but keeps the lines that could not be written and
    writes them first on the next call: once there is room again, nothing is missing.

    The writer knows how far the file is good (``_durable``: every byte before it written and
    fsynced). A failed attempt may have left part of a line, or whole lines that were never
    made durable, after that point; the retry cuts the file back to it and writes the waiting
    lines again, so no line is ever written twice and none is left torn or blank. Plain
    ``os.write`` rather than a buffered file: a buffered writer keeps what it could not write
    and writes it again on its next flush, after the retry (the duplicates this replaced).
    """

    def __init__(self, path: Path, rescue_dirs: tuple[Path, ...] = ()) -> None:
        self.path = path
        self.records: list[SegmentRecord] = []
        self._pending: list[bytes] = []  # encoded lines not yet known to be on disk
        self._fd: int | None = None
        self._durable = 0  # file offset up to which our lines are on disk
        self._dirty = False  # a failed attempt may have left bytes after _durable
        # Where the whole transcript goes, the first that takes it, when its lines cannot be
        # written at the close (the app: the home folder, then the temporary one).
        self._rescue_dirs = rescue_dirs
        self.rescued: Path | None = None  # where they went, then
        self.notice = ""  # for the reader: the file was found removed and written again

    def append(self, rec: SegmentRecord) -> None:
        self.records.append(rec)
        self._pending.append(_line(rec))
        self.flush()

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if end:
                os.lseek(fd, end - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    # A line torn by a crash: ours start on a line of their own, so that it
                    # stays one unreadable line (skipped when read).
                    self._pending.insert(0, b"\n")
        except OSError:
            os.close(fd)
            raise
        self._durable = end
        return fd

    def flush(self) -> None:
        """Write the lines still waiting; raises OSError (and keeps them) if it cannot."""
        if not self._pending:
            return
        try:
            if self._fd is not None and (why := self._lost(self._fd)):
                self._start_again(why)
            if self._fd is None:
                self._fd = self._open()
            fd = self._fd
            if self._dirty:
                os.ftruncate(fd, self._durable)
            os.lseek(fd, self._durable, os.SEEK_SET)
            data = memoryview(b"".join(self._pending))
            done = 0
            while done < len(data):
                # A nearly full disk takes part of a buffer: the rest goes in the next call,
                # which then fails with ENOSPC if nothing more fits.
                done += os.write(fd, data[done:])
            os.fsync(fd)
        except OSError:
            self._dirty = True
            raise
        self._durable += len(data)
        self._dirty = False
        self._pending.clear()

    def _lost(self, fd: int) -> str:
        """Why the open file is no longer the transcript at ``path`` ("" while it is): it was
        removed (with its folder, say), another file took its place, or its folder is now
        another file system (a drive or share mounted again). Lines written to it would be
        lost with no word; a file renamed on the same drive is followed as it is."""
        own = os.fstat(fd)
        if own.st_nlink == 0:
            return "the transcript file was removed"
        try:
            there = self.path.stat()
        except FileNotFoundError:
            try:
                folder = self.path.parent.stat()
            except FileNotFoundError:
                return ""  # its folder renamed: the file is followed
            return "" if folder.st_dev == own.st_dev else "its folder is on another drive now"
        if (there.st_dev, there.st_ino) != (own.st_dev, own.st_ino):
            return "another file took the transcript's place"
        return ""

    def _start_again(self, why: str) -> None:
        """The file at ``path`` is written anew with every line so far."""
        assert self._fd is not None
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd, self._durable, self._dirty = None, 0, False
        self._pending = [_line(r) for r in latest(self.records)]
        self.notice = f"{why}: the meeting's lines are written to {self.path} again"
        log.warning("%s", self.notice)

    @property
    def waiting(self) -> int:
        """Finished segments not on disk yet."""
        return sum(1 for b in self._pending if b != b"\n")

    def close(self) -> None:
        try:
            self.flush()
        except OSError as e:
            log.error(
                "%d transcript line(s) could not be written to %s: %s", self.waiting, self.path, e
            )
            self._rescue()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            if self._dirty:  # leave no part of a line behind
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._durable)
            with contextlib.suppress(OSError):
                os.close(fd)

    def _rescue(self) -> None:
        """The whole transcript where it can be written (the lines kept in memory were
        promised to be written, and the app is ending or starting anew)."""
        text = b"".join(_line(r) for r in latest(self.records)).decode("utf-8")
        for d in self._rescue_dirs:
            path = d / f"subtitler-{self.path.name}"
            try:
                user_files.write_atomic(path, text)
            except OSError as e:
                log.error("the transcript could not be kept in %s either: %s", d, e)
                continue
            self.rescued = path
            log.error("the whole transcript (%d lines) is kept in %s", len(self.records), path)
            return


def _line(rec: SegmentRecord) -> bytes:
    """A record as its line of the file."""
    return (rec.to_json() + "\n").encode()


def read_transcript(path: Path) -> list[SegmentRecord]:
    """Records of a transcript file in the order the lines were said, decoded line by line: a
    torn or damaged line (a crash mid-write, even inside a character; a hand edit) is skipped
    and the rest is read; OSError (FileProblem) when the file cannot be read at all. A
    record repeated verbatim (written twice by a version that retried a full disk that way) is
    read once, as is a line written again (``latest``). (A translator behind the speech
    writes a finished line after newer ones, and its words as said first.)"""
    out: list[SegmentRecord] = []
    # Through the app's bounded reader: a FIFO or a link to a device raise FileProblem (an
    # OSError) instead of blocking or reading without end.
    for raw in user_files.read_bytes(path, MAX_BYTES).splitlines():
        try:
            out.append(SegmentRecord.from_json(raw))
        except ValueError:  # (UnicodeDecodeError and JSON's errors are ValueErrors)
            continue
    return in_said_order(latest(out))


def in_said_order(records: Iterable[SegmentRecord]) -> list[SegmentRecord]:
    """Records (in the order written) in the order their lines were said: by number, within
    each run of numbers. A run ends where a line's number is not above every number of its
    side before it and the line starts after all of them ended: versions of 2026-11-23 to
    11-27 numbered a meeting's lines from 0 again when its speech settings changed (the
    recogniser loaded anew), into the same file, and those lines came between the earlier
    ones. (A line finished late, after newer ones, was said before them: it is not a run.)"""
    runs: list[tuple[int, SegmentRecord]] = []
    run = 0
    seen: dict[str, tuple[int, float]] = {}  # side -> its highest number, latest end in the run
    for rec in records:
        top = seen.get(rec.side)
        if top is not None and rec.segment_id <= top[0] and rec.start >= top[1]:
            run, seen, top = run + 1, {}, None
        seen[rec.side] = (
            (max(top[0], rec.segment_id), max(top[1], rec.end))
            if top
            else (rec.segment_id, rec.end)
        )
        runs.append((run, rec))
    runs.sort(key=lambda x: (x[0], x[1].segment_id))  # (stable: older files' order)
    return [rec for _, rec in runs]


def latest(records: Iterable[SegmentRecord]) -> list[SegmentRecord]:
    """Each line once: a line written again (translated once a server that was away answered
    again) is its last record, in its first one's place. The same line: its side, segment,
    times and words."""
    out: list[SegmentRecord] = []
    at: dict[tuple[str, int, float, float, str], int] = {}
    for rec in records:
        key = (rec.side, rec.segment_id, rec.start, rec.end, rec.source)
        if key in at:
            out[at[key]] = rec
        else:
            at[key] = len(out)
            out.append(rec)
    return out


def _ts(t: float, sep: str) -> str:
    ms = max(0, round(t * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def _text(r: SegmentRecord, which: Which, lang: str | None = None) -> str:
    """What a line exports: its source, its translation into ``lang`` (None: the main
    target), or both."""
    if which == "source":
        return r.source
    translation = r.translation_in(lang)
    if which == "translation":
        return translation
    same = r.src_lang == (lang or r.tgt_lang)
    if not translation or translation == r.source or same:
        return r.source  # one language (transcript only, or the same pair): not twice
    return f"{r.source}\n{translation}"


def _lines(
    records: list[SegmentRecord], which: Which, lang: str | None = None
) -> list[tuple[SegmentRecord, str]]:
    """Records with the text to export; lines with none (an untranslated line) are left out
    rather than written as empty cues."""
    return [(r, t) for r in records if (t := _text(r, which, lang).strip())]


def _voice(r: SegmentRecord, text: str) -> str:
    """A VTT cue's text with its speaker as WebVTT's voice span (``<v You>…</v>``, which
    players show or style as the speaker); unchanged for a line without a side."""
    name = sides.label(r.side)
    return f"<v {name}>{text}</v>" if name else text


def to_srt(
    records: list[SegmentRecord], which: Which = "translation", lang: str | None = None
) -> str:
    # SubRip has no speaker field: the name goes before the cue's first line ("You: …"), the
    # convention of subtitles for the hard of hearing, which every player shows as text.
    blocks = [
        f"{i}\n{_ts(r.start, ',')} --> {_ts(r.end, ',')}\n{sides.prefixed(r.side, t)}\n"
        for i, (r, t) in enumerate(_lines(records, which, lang), 1)
    ]
    return "\n".join(blocks)


def to_vtt(
    records: list[SegmentRecord], which: Which = "translation", lang: str | None = None
) -> str:
    blocks = [
        f"{_ts(r.start, '.')} --> {_ts(r.end, '.')}\n{_voice(r, t)}\n"
        for r, t in _lines(records, which, lang)
    ]
    return "WEBVTT\n\n" + "\n".join(blocks)


def to_text(
    records: list[SegmentRecord], which: Which = "translation", lang: str | None = None
) -> str:
    return "".join(sides.prefixed(r.side, t) + "\n" for r, t in _lines(records, which, lang))


def export(
    records: list[SegmentRecord],
    path: Path,
    which: Which = "translation",
    lang: str | None = None,
) -> Path:
    """Write SRT, VTT or plain text, chosen by the file suffix; the translation into
    ``lang`` (one of the meeting's target languages; None: each line's main one). A file
    already there is replaced whole (a crash mid-write leaves it as it was)."""
    fmt = {".srt": to_srt, ".vtt": to_vtt, ".txt": to_text}.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"unknown export format {path.suffix!r} (use .srt, .vtt or .txt)")
    said = in_said_order(records)  # (written in the order translated)
    return user_files.write_atomic(path, fmt(said, which, lang), mode=user_files.PUBLIC)
