"""The one reader and writer of files that a user (or a crash, a disk fault, another program)
may have written: settings, the glossary, transcripts and their exports, the model catalog,
model metadata.

Whatever is at the path, reading it ends, in bounded time and memory, in bytes or in a
:class:`FileProblem` with one line for the user: only regular files are read (a FIFO would
block the start for ever, a link to ``/dev/zero`` would read until memory runs out, a folder
or a device is no settings file), never more than the caller's size cap. :func:`load` adds
the policy the app applies to its own files: a file that cannot be decoded or parsed, with
*any* exception the parser raises, is set aside as ``NAME.broken-STAMP`` and the app goes on
without it, so the next start does not meet it again; :meth:`Loaded.notice` tells the user
in one line. :func:`write_atomic` replaces a file whole or not at all, so a crash mid-write
leaves the old one. (A transcript is an append-only log instead: its writer,
``pipeline/transcript.py``, makes each line durable as it finishes, and its reader skips a
torn line rather than setting the meeting aside.)
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

KB = 1024
MB = 1024 * KB
MAX_WHY = 200  # characters of a parser's message quoted in a notice
# Whether a file may be opened without waiting for a writer (a FIFO otherwise blocks open()).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
PRIVATE = 0o600  # a file only its user may read (settings hold a server's API key)
PUBLIC = 0o666  # as the user's umask allows a new file (an export to share)


class FileProblem(OSError):
    """A file cannot be used; ``str()`` is one line. ``set_aside``: what is there is not a
    usable file of its kind (not a regular file, too large, not text, not parsable) and may be
    moved out of the way; else the path could not be read now (permissions, a disk error, a
    folder in its place) and is left alone."""

    def __init__(self, message: str, *, set_aside: bool) -> None:
        super().__init__(message)
        self.set_aside = set_aside

    def __str__(self) -> str:
        return str(self.args[0])


class FileMissing(FileProblem):
    """Nothing at the path."""


def one_line(e: BaseException) -> str:
    """An exception as one short line: its message, else its class name (a parser's
    RecursionError or OverflowError says little more than its name)."""
    text = " ".join(str(e).split())
    if not text or not isinstance(e, ValueError | OSError):
        text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= MAX_WHY else text[: MAX_WHY - 1] + "…"


def first_line(e: BaseException) -> str:
    """An exception's first line of text, else its class name (an engine's error carries its
    native backtrace after the message)."""
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def size_text(n: int) -> str:
    return f"{n // MB} MB" if n >= MB else f"{n // KB} kB"


def read_bytes(path: Path, limit: int) -> bytes:
    """The whole file, if it is a regular file of at most ``limit`` bytes; else FileProblem
    (FileMissing when there is nothing there). Symbolic links are followed: what they point
    at must be a regular file too."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
    except FileNotFoundError:
        if os.path.islink(path):  # a link to a file moved away: not the same as no file
            where = os.path.join(os.path.dirname(path), os.readlink(path))
            raise FileProblem(
                f"{path.name} points to {where}, which is not there", set_aside=False
            ) from None
        raise FileMissing(f"{path.name} does not exist", set_aside=False) from None
    except OSError as e:
        why = e.strerror or str(e)
        raise FileProblem(f"{path.name} cannot be opened: {why}", set_aside=False) from e
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise FileProblem(f"{path.name} is a folder, not a file", set_aside=False)
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem(f"{path.name} is not a regular file", set_aside=True)
        if st.st_size > limit:
            raise FileProblem(
                f"{path.name} is larger than {size_text(limit)} ({st.st_size:,} bytes)",
                set_aside=True,
            )
        chunks: list[bytes] = []
        got = 0
        # Read to the end, not to st_size: a file still growing stops at the cap all the same.
        while chunk := os.read(fd, min(1 * MB, limit + 1 - got)):
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                raise FileProblem(f"{path.name} is larger than {size_text(limit)}", set_aside=True)
        return b"".join(chunks)
    except FileProblem:
        raise
    except OSError as e:
        raise FileProblem(f"{path.name} cannot be read: {e.strerror or e}", set_aside=False) from e
    finally:
        os.close(fd)


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file, else FileProblem (FileMissing when
    there is nothing there): for a file read in part (a WAV file's header), where a FIFO
    would block the open and the read for ever."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
    except FileNotFoundError:
        raise FileMissing(f"{path.name} does not exist", set_aside=False) from None
    except OSError as e:
        why = e.strerror or str(e)
        raise FileProblem(f"{path.name} cannot be opened: {why}", set_aside=False) from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder, not a file" if stat.S_ISDIR(mode) else "not a regular file"
            raise FileProblem(f"{path.name} is {kind}", set_aside=False)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text, with or without a byte-order mark (Notepad and Excel write one)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise FileProblem(f"{name} is not UTF-8 text (byte {e.start})", set_aside=True) from None


def read_text(path: Path, limit: int) -> str:
    """A regular UTF-8 text file of at most ``limit`` bytes (see :func:`read_bytes`)."""
    return decode_text(read_bytes(path, limit), path.name)


def set_aside(path: Path) -> Path:
    """Move a damaged file out of the app's way, next to where it was; returns its new path.
    Raises OSError (a read-only folder) and leaves it where it is."""
    backup = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while backup.exists() or backup.is_symlink():  # two in one second: keep both
        n += 1
        backup = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
    os.replace(path, backup)
    return backup


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """What :func:`load` found: the parsed value (None: missing, or not usable)."""

    value: T | None
    problem: str = ""  # one line: why the file is not used ("" when it is, or is missing)
    backup: Path | None = None  # where it was set aside
    kept: str = ""  # why it could not be set aside (a read-only folder)

    def notice(self, what: str, instead: str) -> str:
        """One line for the user ("" when the file was fine or missing): ``what`` ("Your
        settings file") could not be used, and ``instead`` ("the defaults are in use")."""
        if not self.problem:
            return ""
        if self.backup is not None:
            return (
                f"{what} could not be read ({self.problem}). It was saved as "
                f"{self.backup.name} and {instead}."
            )
        if self.kept:
            return (
                f"{what} could not be read ({self.problem}), nor set aside ({self.kept}); "
                f"{instead} for this session."
            )
        return f"{what} could not be opened ({self.problem}); {instead}."


def load(path: Path, parse: Callable[[str], T], *, limit: int) -> Loaded[T]:
    """Read a text file the app keeps (bounded, see :func:`read_bytes`) and parse it. A file
    that is not a regular file, too large, not UTF-8, or that ``parse`` rejects with *any*
    exception is set aside; one that could not be read now (permissions, a folder in its
    place) is left where it is. Either way the value is None and ``problem`` says why."""
    try:
        text = read_text(path, limit)
    except FileMissing:
        return Loaded(None)
    except FileProblem as e:
        if not e.set_aside:
            return Loaded(None, str(e))
        return _aside(path, str(e))
    try:
        return Loaded(parse(text))
    except Exception as e:  # whatever the parser raises: the file is what is wrong
        log.info("%s could not be parsed", path, exc_info=True)
        return _aside(path, one_line(e))


def _aside(path: Path, problem: str) -> Loaded[T]:
    try:
        backup = set_aside(path)
    except OSError as e:
        return Loaded(None, problem, kept=e.strerror or str(e))
    log.warning("%s set aside as %s: %s", path, backup.name, problem)
    return Loaded(None, problem, backup)


def write_atomic(path: Path, text: str, *, newline: str | None = None, mode: int = PRIVATE) -> Path:
    """Replace the file at ``path`` with ``text`` (UTF-8) whole or not at all: written to a new
    file beside it, flushed to the disk, then renamed over it, so that a crash at any moment
    leaves the old file or the new one, never part of either. ``newline`` as :func:`open`
    takes it (None: the platform's line ends); ``mode``: the new file's permissions (PRIVATE,
    or PUBLIC under the umask). Raises OSError with the old file as it was and no new file
    left behind (a crash, which runs no cleanup, may leave the hidden one it was writing);
    FileProblem, the file kept, where one is there that this user cannot read.
    A symbolic link stays: the file it points at is replaced (a settings file kept in a
    dotfiles folder)."""
    real = Path(os.path.realpath(path)) if os.path.islink(path) else path
    if (why := _unreadable(real)) is not None:
        # (a file the app could not read at its start, where it was left for the user to
        # mend: it must not be lost to the next save)
        raise FileProblem(
            f"the file there cannot be read: {why}; it is kept, not replaced", set_aside=False
        )
    fd, tmp = _new_beside(real, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _unreadable(path: Path) -> str | None:
    """Why the file at ``path`` cannot be opened for reading (a permission), or None: there
    is none, or it can."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
    except PermissionError as e:
        return e.strerror or str(e)
    except OSError:  # none there, a link to nowhere or in a loop: nothing to keep
        return None
    os.close(fd)
    return None


def _new_beside(path: Path, mode: int) -> tuple[int, Path]:
    """A new hidden file in the folder of ``path`` (a rename within one file system is atomic),
    open for writing."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
    while True:
        tmp = path.with_name(f".{path.stem}-{secrets.token_hex(4)}{path.suffix}")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:  # (one in four billion) another name
            continue
