"""Past meetings: the transcript files in the data folder, listed, read and searched."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import glob
import logging
import threading
import unicodedata
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from subtitler import user_files
from subtitler.pipeline.transcript import SegmentRecord, read_transcript

log = logging.getLogger(__name__)
STAMP = "%Y%m%d-%H%M%S"  # the transcript file name the app gives each run
QUARTER_S = 900  # every time zone's offset from UTC is a whole number of quarter hours
WIDEST_OFFSET_S = 14 * 3600  # UTC+14 (and -12): an offset beyond is no time zone's


@dataclass(frozen=True)
class Meeting:
    """One run of the app: one transcript file."""

    path: Path
    started: dt.datetime  # local time (the clock of the place and season it was held in)
    began: float  # when it started in epoch seconds (UTC): the order meetings happened in
    duration_s: float  # from the start of the run to the end of its last line
    languages: tuple[str, ...]  # "en → de" pairs, in order of first use
    records: tuple[SegmentRecord, ...]
    # Audio captured and not heard when the app stopped (kept beside the transcript as
    # NAME.unheard.wav, one per side): (file, seconds).
    unheard: tuple[tuple[Path, float], ...] = ()

    @functools.cached_property
    def folded(self) -> tuple[str, ...]:
        """Each line's texts as a search compares them (folded once, on the first search)."""
        return tuple(_fold("\n".join(_texts(r))) for r in self.records)

    @property
    def title(self) -> str:
        return self.started.strftime("%Y-%m-%d %H:%M")


def new_transcript(folder: Path, now: dt.datetime | None = None) -> Path:
    """A new meeting's transcript file in ``folder``: named for when it starts, with "-2",
    "-3"... where a meeting of that second is there already (a Start right after a stop,
    the clock set back): the second meeting was written into the first one's file."""
    stamp = (now or dt.datetime.now()).strftime(STAMP)
    n, name = 1, stamp
    while any(folder.glob(f"{glob.escape(name)}.*")):  # (its transcript, or its kept audio)
        n += 1
        name = f"{stamp}-{n}"
    return folder / f"{name}.jsonl"


def _stamped(path: Path) -> dt.datetime:
    """When the meeting of ``path`` started, by its name (ValueError: renamed)."""
    stamp, more = path.stem[:15], path.stem[15:]  # "YYYYmmdd-HHMMSS", then "" or "-N"
    if more and not (more[0] == "-" and more[1:].isdigit()):
        raise ValueError(path.stem)
    return dt.datetime.strptime(stamp, STAMP)


def _started(path: Path, records: tuple[SegmentRecord, ...]) -> dt.datetime:
    try:
        return _stamped(path)
    except ValueError:  # a file renamed by the user: its first line's clock, else the file's
        pass
    if records:
        with contextlib.suppress(OverflowError, OSError, ValueError):  # before 1970 on Windows
            return dt.datetime.fromtimestamp(records[0].wall_time - records[0].end)
    return dt.datetime.fromtimestamp(path.stat().st_mtime)


def _began(started: dt.datetime, utc: float | None) -> float:
    """When a meeting that ``started`` by the local clock began, in epoch seconds (UTC).
    ``utc`` is that moment told by its files' own times, a few seconds to minutes late (a
    line is written once translated): the offset the clock was read with is the difference,
    to the nearest quarter hour. Without them (or a difference no time zone has: a clock
    set wrong) the time zone this computer is in now."""
    clock = started.replace(tzinfo=dt.UTC).timestamp()  # (the reading, as if UTC)
    if utc is not None:
        offset = round((clock - utc) / QUARTER_S) * QUARTER_S
        if abs(offset) <= WIDEST_OFFSET_S:
            return clock - offset
    try:
        return started.timestamp()
    except (OverflowError, OSError, ValueError):  # (before 1970 on Windows)
        return clock


def _pairs(records: tuple[SegmentRecord, ...]) -> tuple[str, ...]:
    pairs: dict[str, None] = {}
    for r in records:
        into = [t for t in r.targets if t != r.src_lang]
        pairs.setdefault(f"{r.src_lang} → {', '.join(into)}" if into else r.src_lang)
    return tuple(pairs)


def targets_of(records: tuple[SegmentRecord, ...] | list[SegmentRecord]) -> tuple[str, ...]:
    """Every language a meeting's lines were translated into, in order of first use (the
    main target of its first line first): what its export can be made in."""
    seen: dict[str, None] = {}
    for r in records:
        for t in r.targets:
            seen.setdefault(t)
    return tuple(seen)


# Meetings read before, by file and its size and time: a file unchanged since is not read
# again (History opened on 500 hours read 115 MB each time, 3 s with the window frozen).
_read: dict[Path, tuple[tuple[int, int, int], Meeting]] = {}
# One list_meetings at a time holds it (History reads on a thread of its own: two windows, or
# a Refresh, must not change the dict under one another).
_reading = threading.Lock()


def load_meeting(path: Path) -> Meeting:
    """Read one transcript file (torn lines are skipped); raises OSError if it cannot be read.
    A file read before and unchanged since (its size, time and kept audio) is not read again."""
    st = path.stat()
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    known = _read.get(path)
    if known is not None and known[0] == key and known[1].unheard == _unheard(path):
        return known[1]
    meeting = _load(path)
    _read[path] = (key, meeting)
    return meeting


def _load(path: Path) -> Meeting:
    records = tuple(read_transcript(path))
    started = _started(path, records)
    # (each line's end in UTC less its time into the meeting; the soonest written is the best)
    utc = min((r.wall_time - r.end for r in records), default=None)
    return Meeting(
        path=path,
        started=started,
        began=_began(started, utc),
        duration_s=max((r.end for r in records), default=0.0),
        languages=_pairs(records),
        records=records,
        unheard=_unheard(path),
    )


def _unheard(path: Path) -> tuple[tuple[Path, float], ...]:
    """The audio kept beside a transcript at a stop that cut its recognition short."""
    out = []
    for wav in sorted(path.parent.glob(f"{glob.escape(path.stem)}.unheard*.wav")):
        try:
            # (a FIFO of that name would block History's listing for good)
            with user_files.open_regular(wav) as f, wave.open(f, "rb") as w:
                out.append((wav, w.getnframes() / w.getframerate()))
        except (OSError, EOFError, wave.Error, ZeroDivisionError):  # not ours, or damaged
            log.info("%s cannot be read as audio", wav, exc_info=True)
    return tuple(out)


def _audio_only(folder: Path, paths: list[Path]) -> list[Meeting]:
    """Meetings stopped before their first line, of which only the audio kept is left (the
    transcript file is made with the first line)."""
    kept: dict[Path, list[Path]] = {}
    for wav in folder.glob("*.unheard*.wav"):
        kept.setdefault(folder / (wav.name.split(".unheard")[0] + ".jsonl"), []).append(wav)
    out = []
    for path in sorted(set(kept) - set(paths)):
        unheard = _unheard(path)
        if not unheard:
            continue
        try:
            started = _stamped(path)
        except ValueError:  # renamed: the audio's own clock
            started = dt.datetime.fromtimestamp(min(w.stat().st_mtime for w in kept[path]))
        duration = max(seconds for _, seconds in unheard)
        # (kept at the stop, its first line never finished: it began as long before as the
        # audio is)
        utc = None
        with contextlib.suppress(OSError):
            utc = min(w.stat().st_mtime for w in kept[path]) - duration
        out.append(Meeting(path, started, _began(started, utc), duration, (), (), unheard))
    return out


def list_meetings(
    folder: Path, stopped: Callable[[], bool] = lambda: False
) -> tuple[list[Meeting], list[str]]:
    """Meetings with at least one line or audio kept, newest first, and one problem line per
    file that could not be read (a permission, a disk error, no regular file): those are
    named, not fatal. ``stopped`` is asked before each file: once it says True the read ends
    there, with what it has (the files read are kept for the next read)."""
    with _reading:
        return _list_meetings(folder, stopped)


def _list_meetings(folder: Path, stopped: Callable[[], bool]) -> tuple[list[Meeting], list[str]]:
    meetings: list[Meeting] = []
    problems: list[str] = []
    try:
        paths = sorted(folder.glob("*.jsonl"))
        meetings += _audio_only(folder, paths)
    except OSError as e:
        return [], [f"{folder}: {e.strerror or e}"]
    for path in paths:
        if stopped():
            return meetings, problems
        try:
            meeting = load_meeting(path)
        except Exception as e:  # whatever one file does, the others are listed
            log.info("meeting %s cannot be read", path, exc_info=True)
            problems.append(f"{path.name}: {_reason(e)}")
            continue
        if meeting.records or meeting.unheard:
            meetings.append(meeting)
    for gone in [p for p in _read if p.parent == folder and p not in paths]:
        del _read[gone]  # (removed from the folder: not kept in memory either)
    meetings.sort(key=lambda m: (m.began, _nth(m.path)), reverse=True)
    return meetings, problems


def _nth(path: Path) -> int:
    """Which meeting of its second a transcript is (new_transcript's "-N"; 1: the first)."""
    more = path.stem[15:]
    return int(more[1:]) if more[:1] == "-" and more[1:].isdigit() else 1


def _reason(e: Exception) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return user_files.one_line(e)


def _fold(text: str) -> str:
    """Case- and accent-free text, so "uber" finds "Über" and "cafe" finds "Café"."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    # (str.translate: a character at a time in Python cost 2.3 s per search on 500 hours)
    return unicodedata.normalize("NFKD", folded).translate(_combining())


@functools.cache
def _combining() -> dict[int, None]:
    """Every combining mark, to be deleted (built at the first search, not at start-up)."""
    return dict.fromkeys(c for c in range(0x110000) if unicodedata.combining(chr(c)))


def _texts(r: SegmentRecord) -> tuple[str, ...]:
    return (r.source, r.translation, *(text for _, text in r.extra))


def search(meetings: list[Meeting], query: str) -> list[tuple[Meeting, list[SegmentRecord]]]:
    """Meetings with a line whose source or a translation contains every word of the query,
    with those lines; an empty query matches every meeting (with no lines picked out)."""
    words = _fold(query).split()
    if not words:
        return [(m, []) for m in meetings]
    out = []
    for m in meetings:
        hits = [
            r for r, text in zip(m.records, m.folded, strict=True) if all(w in text for w in words)
        ]
        if hits:
            out.append((m, hits))
    return out


def format_duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return f"{round(seconds)} s"
    h, m = divmod(minutes, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"
