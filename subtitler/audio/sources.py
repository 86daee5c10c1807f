"""Replay an audio file as a stream of blocks, at 1x or as fast as possible.

Files are decoded with PyAV (FFmpeg: any format; faster-whisper's own decoder) where it is
installed, and otherwise with soundfile (libsndfile: WAV, FLAC, Ogg Vorbis and Opus, MP3),
which has no GPL parts: the installers leave PyAV out, since its wheels carry an FFmpeg built
with x264 and x265 (GPL; packaging/README.md, "FFmpeg").
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.audio.resample import Samples, StreamResampler
from subtitler.types import AudioBlock

RATE = 16000
log = logging.getLogger(__name__)


class AudioFileError(RuntimeError):
    """A file that is missing or cannot be decoded; the message is meant for the user."""


NO_SOUND = "it has no sound track (a video without sound, or a picture?)"


SOUNDFILE_BLOCK = 1 << 16  # frames read at a time without PyAV


@functools.cache
def pyav_available() -> bool:
    """Whether the real PyAV can be imported (the installers carry a stand-in: it lets
    faster-whisper import, and decodes nothing)."""
    if importlib.util.find_spec("av") is None:
        return False
    import av

    return not getattr(av, "SUBTITLER_STAND_IN", False)


def not_a_file(path: Path) -> str:
    """Why ``path`` cannot be played as a recording, in one line: nothing there, a folder, or
    no regular file (a FIFO or a device would block the decoder or never end); else ""."""
    if path.is_file():
        return ""
    if path.is_dir():
        return f"{path} is a folder, not an audio file"
    if path.exists():
        return f"{path} is not a regular file (a pipe or a device), not an audio file"
    return f"audio file not found: {path}"


def load_audio(path: str | Path, broke: Broke | None = None) -> Samples:
    """Decode a whole audio file to 16 kHz mono float32: as faster-whisper's ``decode_audio``
    does (PyAV) where PyAV is installed, else with soundfile. Unlike a file played as a
    stream, one that breaks off part way fails. A WAV file cut short before (its header
    promises more than it holds) gives the audio it holds, and says so in one line, as a
    replay of it does: in the log, and to ``broke``."""
    p = Path(path)
    if why := not_a_file(p):
        raise AudioFileError(why)
    short = _wav_cut_short(p)
    if pyav_available():
        got = list(_pyav_blocks(p, opening=True, whole=True))
    else:
        got = list(_soundfile_blocks(p, opening=True))
    n = sum(len(b) for b in got)
    if not n:
        raise AudioFileError(f"cannot decode audio file {p}: no audio samples")
    if short:
        # (the decoders read a cut file's end as the recording's end, without a word)
        cut = f"the file was cut short before it was read ({short})"
        why = f"audio file {p} ends at {n / RATE:.1f} s: {cut}"
        log.warning("%s", why)
        if broke is not None:
            broke(why)
    return np.concatenate(got)


def decoder_said(e: Exception) -> str:
    """A decoder's error in a few words: PyAV's message without its errno and the path
    ("Invalid data found when processing input"), libsndfile's first line; else its name."""
    text = str(e).strip()
    return getattr(e, "strerror", None) or (text.splitlines()[0] if text else type(e).__name__)


Broke = Callable[[str], None]  # told why a file's decoding stopped part way (one line)


def _soundfile_blocks(path: Path, opening: bool, broke: Broke | None = None) -> Iterator[Samples]:
    """A file decoded by libsndfile, as 16 kHz mono float32 blocks (channels averaged)."""
    import soundfile

    got = 0
    try:
        with soundfile.SoundFile(str(path)) as f:
            resample = StreamResampler(f.samplerate, RATE)
            # Fewer frames a read below 16 kHz, so that no block comes out larger than one
            # read at 16 kHz: a header whose rate says 1 Hz made each read of 65,536 frames a
            # billion samples (gigabytes, seconds of the processor, for the first block).
            frames = max(1, min(SOUNDFILE_BLOCK, SOUNDFILE_BLOCK * f.samplerate // RATE))
            for block in f.blocks(frames, dtype="float32", always_2d=True):
                out = resample(block.mean(axis=1))
                got += len(out)
                if len(out):
                    yield out
    except Exception as e:  # libsndfile's error for a format it cannot read, or a cut file
        if opening and got == 0:
            raise AudioFileError(f"cannot decode audio file {path}: {decoder_said(e)}") from e
        _stopped(path, got, e, broke)


def _stopped(path: Path, got: int, e: Exception, broke: Broke | None) -> None:
    """A decoding that broke off after ``got`` samples: logged, and told to ``broke``."""
    log.warning("%s: decoding stopped after %.1f s: %s", path, got / RATE, e)
    if broke is not None:
        broke(f"the file could not be read further ({decoder_said(e)})")


def rechunk(chunks: Iterable[Samples], n: int) -> Iterator[Samples]:
    """The same samples in blocks of exactly ``n`` (the last one shorter)."""
    pending: list[Samples] = []
    have = 0
    for c in chunks:
        if len(c) == 0:
            continue
        pending.append(c)
        have += len(c)
        if have < n:
            continue
        buf = np.concatenate(pending)
        cut = len(buf) - len(buf) % n
        for i in range(0, cut, n):
            yield buf[i : i + n]
        pending, have = ([buf[cut:]], len(buf) - cut) if cut < len(buf) else ([], 0)
    if have:
        yield np.concatenate(pending)


def silence(samples: int, n: int) -> Iterator[Samples]:
    """``samples`` of silence in blocks of ``n``, made as they are asked for."""
    for i in range(0, samples, n):
        yield np.zeros(min(n, samples - i), np.float32)


class AudioStream:
    """A file decoded as it is played, block by block (16 kHz mono float32): memory stays
    flat whatever the file's length (decoding it whole held 600 MB for a 2-hour file).

    The same decoding as faster-whisper's ``decode_audio`` (PyAV, resampled to 16-bit mono
    16 kHz, frames that fail to decode skipped), so the samples are the same; without PyAV,
    soundfile's (see the module's docstring). ``loop`` plays
    the file that many times with ``gap_s`` of silence between, decoding it afresh each time
    rather than holding copies. A file that is missing or cannot be decoded at all fails here,
    at open; one that breaks off later, or is cut short while it plays, ends there, and
    ``broke_off`` says why (a decoder cannot tell a file cut short from its end), as it does
    for a WAV file cut short before it played (its header promises more than it holds).
    """

    def __init__(self, path: str | Path, block: int, *, loop: int = 1, gap_s: float = 0.0):
        self.path = Path(path)
        if why := not_a_file(self.path):
            raise AudioFileError(why)
        self.block, self.loop, self.gap = block, max(1, loop), int(gap_s * RATE)
        self.broke_off = ""  # why the replay ended before the file's end (one line), or ""
        self._blocks = rechunk(self._played(), block)
        try:
            self._first: Samples | None = next(self._blocks)
        except StopIteration:
            raise AudioFileError(
                f"cannot decode audio file {self.path}: no audio samples"
            ) from None

    def __iter__(self) -> Iterator[Samples]:
        first, self._first = self._first, None
        if first is not None:
            yield first
        yield from self._blocks

    def _played(self) -> Iterator[Samples]:
        for i in range(self.loop):
            if i:
                yield from silence(self.gap, self.block)
            yield from self._pass(opening=i == 0)

    def _pass(self, opening: bool) -> Iterator[Samples]:
        """The file played once; ``broke_off`` said if it broke off, shrank meanwhile or was
        cut short before."""
        why: list[str] = []
        before = _size(self.path)
        short = _wav_cut_short(self.path)
        played = 0
        for chunk in self._decoded(opening, why.append):
            played += len(chunk)
            yield chunk
        after = _size(self.path)
        if before is not None and after is not None and after < before:
            # (the decoders read a cut file's end as the recording's end, without a word)
            cut = f"{_kb(before)}, then {_kb(after)}"
            why.insert(0, f"the file was cut short while it played ({cut})")
        elif short:
            why.insert(0, f"the file was cut short before it played ({short})")
        if why and not self.broke_off:
            self.broke_off = (
                f"the replay of {self.path.name} ended at {played / RATE:.1f} s: {why[0]}"
            )

    def _decoded(self, opening: bool, broke: Broke) -> Iterator[Samples]:
        if pyav_available():
            yield from _pyav_blocks(self.path, opening, broke=broke)
        else:
            yield from _soundfile_blocks(self.path, opening, broke)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:  # removed: what was open is still read to its end
        return None


def _kb(size: int) -> str:
    return f"{max(1, round(size / 1024))} KB"


UNKNOWN_SIZE = 0xFFFFFFFF  # a data size a WAV writer that could not seek back leaves


def _wav_cut_short(path: Path) -> str:
    """For a WAV file whose header promises more audio than the file holds (a copy broken
    off, a recording whose writer was killed): how much each, in a few words; else "" (not
    a WAV file, whole, or of a size its writer left unknown). The decoders play what there
    is and end as if the recording had."""
    try:
        with path.open("rb") as f:
            head = f.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return ""
            byte_rate = 0
            while chunk := f.read(8):
                if len(chunk) < 8:
                    return ""
                kind, size = chunk[:4], int.from_bytes(chunk[4:], "little")
                if kind == b"data":
                    held = _size(path)
                    if held is None or size in (0, UNKNOWN_SIZE):
                        return ""
                    held -= f.tell()
                    if held >= size:
                        return ""
                    if not byte_rate:
                        return f"its header promises {_kb(size)}, it holds {_kb(held)}"
                    return (
                        f"its header promises {size / byte_rate:.1f} s, "
                        f"it holds {held / byte_rate:.1f} s"
                    )
                body = f.read(min(size, 64)) if kind == b"fmt " else b""
                if len(body) >= 12:
                    byte_rate = int.from_bytes(body[8:12], "little")
                f.seek(size + (size & 1) - len(body), 1)  # (chunks are padded to even sizes)
    except OSError:
        pass
    return ""


def _pyav_blocks(
    path: Path, opening: bool, whole: bool = False, broke: Broke | None = None
) -> Iterator[Samples]:
    """A file decoded by PyAV as faster-whisper's ``decode_audio`` decodes it (resampled to
    16-bit mono 16 kHz, frames that fail to decode skipped), as float32 blocks. A failure
    before the first sample (``opening``), or anywhere for a ``whole`` file, raises; else
    the audio ends there, with a warning in the log."""
    import av

    got = 0
    try:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
        with av.open(str(path), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:  # (PyAV's decode(audio=0): an IndexError)
                raise ValueError(NO_SOUND)
            for frame in _valid_frames(container.decode(audio=0)):
                frame.pts = None  # as faster-whisper: no timestamp check
                for out in resampler.resample(frame):
                    got += out.samples
                    yield _to_float(out)
            for out in resampler.resample(None):  # what the resampler still holds
                got += out.samples
                yield _to_float(out)
    except Exception as e:  # PyAV raises its own error family per container/codec problem
        if whole or (opening and got == 0):
            raise AudioFileError(f"cannot decode audio file {path}: {decoder_said(e)}") from e
        _stopped(path, got, e, broke)


def _valid_frames(frames: Iterator[Any]) -> Iterator[Any]:
    """Skip frames that fail to decode (as faster-whisper does)."""
    import av

    while True:
        try:
            yield next(frames)
        except StopIteration:
            return
        except av.error.InvalidDataError:
            continue


def _to_float(frame: Any) -> Samples:
    samples: Samples = frame.to_ndarray().reshape(-1).astype(np.float32) / np.float32(32768.0)
    return samples


@dataclass
class FileSource:
    """Blocks of a decoded recording; with ``realtime`` each is released when it has 'played'.

    ``clock`` and ``sleep`` are injectable so tests run paced replays without waiting.
    """

    audio: Samples
    realtime: bool = True
    block_ms: int = 100
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    started_at: float = field(default=0.0, init=False)  # clock() when iteration began
    # Why the recording is shorter than its file says, in one line (load_audio's); "" if not.
    broke_off: str = ""

    @classmethod
    def open(cls, path: str | Path, realtime: bool = True, block_ms: int = 100) -> FileSource:
        why: list[str] = []
        audio = load_audio(path, broke=why.append)
        return cls(audio, realtime=realtime, block_ms=block_ms, broke_off="".join(why))

    @property
    def duration(self) -> float:
        return len(self.audio) / RATE

    def blocks(self) -> Iterator[AudioBlock]:
        n = max(1, RATE * self.block_ms // 1000)
        self.started_at = self.clock()
        for i in range(0, len(self.audio), n):
            chunk = np.asarray(self.audio[i : i + n], dtype=np.float32)
            t0 = i / RATE
            if self.realtime:
                # A block exists only once its last sample has been spoken; if the consumer
                # was slow we are late already and release it at once (catching up).
                wait = self.started_at + t0 + len(chunk) / RATE - self.clock()
                if wait > 0:
                    self.sleep(wait)
            yield AudioBlock(chunk, t0, RATE)

    def __iter__(self) -> Iterator[AudioBlock]:
        return self.blocks()
