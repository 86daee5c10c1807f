"""Microphone / loopback capture with sounddevice: callback -> bounded queue -> 16 kHz blocks.

Loopback inputs PortAudio cannot see come from :mod:`subtitler.audio.loopback` (and macOS's
system audio from :mod:`subtitler.audio.macos_capture`) behind the same interface.

The sounddevice module is injected (tests pass a fake that plays a real clip through the real
callback). The callback only copies into a bounded queue, dropping the oldest block when the
consumer falls behind; mixing down, resampling and the level meter run in ``read``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from subtitler.audio.level import level_dbfs
from subtitler.audio.resample import Samples, StreamResampler
from subtitler.config import AudioConfig
from subtitler.types import SILENCE_DBFS, AudioBlock

log = logging.getLogger(__name__)

RATE = 16000
T = TypeVar("T")


class AudioDeviceError(RuntimeError):
    """No usable input device; the message is meant for the user as is."""


class DropOldestQueue(Generic[T]):
    """A bounded queue whose ``put`` never blocks: when full, the oldest item goes."""

    def __init__(self, maxsize: int) -> None:
        self._q: queue.Queue[T] = queue.Queue(maxsize=max(1, maxsize))
        self.dropped = 0

    def put(self, item: T) -> None:
        while True:
            try:
                self._q.put_nowait(item)
                return
            except queue.Full:
                try:
                    self._q.get_nowait()
                    self.dropped += 1
                except queue.Empty:  # the consumer emptied it meanwhile
                    pass

    def get(self, timeout: float | None = None) -> T | None:
        try:
            return self._q.get(timeout=timeout)
        except queue.Empty:
            return None

    def qsize(self) -> int:
        return self._q.qsize()


@dataclass(frozen=True)
class InputDevice:
    """An input the user can pick (a microphone, or a loopback/monitor of an output)."""

    index: int
    name: str
    hostapi: str
    channels: int
    default_samplerate: float
    # captures what the computer plays (PulseAudio .monitor, WASAPI loopback, ScreenCaptureKit)
    loopback: bool
    is_default: bool = False


def _is_loopback(name: str) -> bool:
    n = name.lower()
    return n.endswith(".monitor") or n.startswith("monitor of") or "loopback" in n


def list_input_devices(sd: Any) -> list[InputDevice]:
    """Every device with input channels, loopback sources included where the platform has them."""
    hostapis = [h["name"] for h in sd.query_hostapis()]
    default_in = _default_input(sd)
    out = []
    for i, d in enumerate(sd.query_devices()):
        if int(d["max_input_channels"]) <= 0:
            continue
        api = d.get("hostapi", 0)
        out.append(
            InputDevice(
                index=i,
                name=str(d["name"]),
                hostapi=hostapis[api] if 0 <= api < len(hostapis) else "",
                channels=int(d["max_input_channels"]),
                default_samplerate=float(d["default_samplerate"]),
                # The macOS system audio input says so itself; others are known by name.
                loopback=bool(d.get("loopback")) or _is_loopback(str(d["name"])),
                is_default=i == default_in,
            )
        )
    return out


def _default_input(sd: Any) -> int:
    try:
        dev = sd.default.device
        idx = dev[0] if isinstance(dev, list | tuple) else dev
        return int(idx) if idx is not None else -1
    except (TypeError, ValueError, AttributeError):
        return -1


# A microphone's stream calls back every block (tens of milliseconds): this long without a
# call and it has stopped.
STALL_S = 5.0


def find_input_device(sd: Any, wanted: str | int | None, no_loopback: str = "") -> InputDevice:
    """The device for a config value: None = default, an index, or (part of) a name.
    ``no_loopback``: why this OS's meeting-audio inputs cannot be listed ("" where they can)."""
    devices = list_input_devices(sd)
    unlisted = isinstance(wanted, str) and not any(d.name == wanted for d in devices)
    if no_loopback and unlisted and _is_loopback(str(wanted)):
        # (not "is a microphone connected?": the sound server it comes from is missing)
        raise AudioDeviceError(f"cannot record the meeting's audio ({wanted!r}): {no_loopback}")
    if not devices:
        raise AudioDeviceError("no audio input device found (is a microphone connected?)")
    if wanted is None or wanted == "":
        return next((d for d in devices if d.is_default), devices[0])
    if isinstance(wanted, int) or str(wanted).isdigit():
        for d in devices:
            if d.index == int(wanted):
                return d
        raise AudioDeviceError(f"audio input device #{wanted} not found")
    exact = [d for d in devices if d.name == wanted]
    partial = [d for d in devices if str(wanted).lower() in d.name.lower()]
    if exact or partial:
        return (exact or partial)[0]
    names = ", ".join(d.name for d in devices)
    raise AudioDeviceError(f"audio input device {wanted!r} not found (available: {names})")


class MicrophoneCapture:
    """Capture from one input device; ``read`` returns 16 kHz mono blocks on the stream clock
    (an :class:`subtitler.audio.source.AudioSource`).

    The stream clock starts at 0 when ``start`` is called. Block times come from sample counts
    (drift-free); a dropped block or a lost device leaves a gap that the ASR sees as such.
    When the device disappears, ``read`` keeps trying to re-open it every ``reopen_s``.
    """

    def __init__(
        self,
        config: AudioConfig | None = None,
        sd: Any = None,
        clock: Callable[[], float] = time.monotonic,
        reopen_s: float = 1.0,
    ) -> None:
        self.config = config or AudioConfig()
        self._no_loopback = ""  # why meeting-audio inputs cannot be listed, for its errors
        if sd is None:
            import sounddevice

            from subtitler.audio.loopback import loopback_or_why

            sd, self._no_loopback = loopback_or_why(sounddevice)
        self._sd = sd
        self._clock = clock
        self.reopen_s = reopen_s
        self._queue: DropOldestQueue[tuple[int, int, Samples]] = DropOldestQueue(
            self.config.queue_blocks
        )
        self._stream: Any = None
        self._t_start = 0.0
        self._stopping = False
        self._lost = threading.Event()
        # start / stop (the UI's thread) and the re-open after a loss (the reader's thread)
        # change the stream one at a time.
        self._transition = threading.RLock()
        self._ready: deque[AudioBlock] = deque()  # converted blocks kept across a pause
        self._next_retry = 0.0
        self._generation = 0  # increments on each (re)open: stale blocks are recognised
        self._rate = RATE
        self._in_pos = 0  # device samples since this stream opened
        self._origin = 0.0  # stream time of this stream's first sample
        self._out_pos = 0  # 16 kHz samples handed out since this stream opened
        self._resampler = StreamResampler(RATE)
        self.device: InputDevice | None = None
        self.level = SILENCE_DBFS  # dBFS of the last block read
        self.state = "stopped"  # "running" | "lost" | "stopped"
        self.error = ""  # why the device is lost, for the UI
        self._overflows = 0  # input overflows PortAudio reported
        self._last_data = 0.0  # when the device last called back (the clock's time)
        self._said_not_finite = False

    live = True  # a device: what is said during a pause is not heard
    exhausted = False  # a device never runs out

    @property
    def dropped(self) -> int:
        """Blocks thrown away because the consumer fell behind, and the device's own losses
        (an input overflow: the machine too busy to take its audio in time)."""
        return self._queue.dropped + self._overflows

    @property
    def problem(self) -> str:
        """Why no audio comes now (the device went away and is being retried), else ""."""
        return self.error if self.state == "lost" else ""

    def start(self) -> None:
        """Open the configured device; raises AudioDeviceError with a user-facing message.

        After a ``stop`` (a pause) the stream clock goes on from where it stopped, like the
        pipeline's clock, which does not count paused time either.
        """
        with self._transition:
            self._close()  # a stream still open (start twice) is not left running
            # Blocks the device delivered before a pause were heard: keep them (on their own
            # stream's clock), and the new stream's time goes on after them.
            while (item := self._queue.get(timeout=0)) is not None:
                gen, pos, data = item
                if gen == self._generation:
                    self._ready.append(self._convert(pos, data))
            resume_at = self.stream_time
            self._t_start = self._clock() - resume_at
            self._stopping = False
            self._open(origin=resume_at)

    @property
    def stream_time(self) -> float:
        """Stream time of the end of the last block handed out (0 before the first)."""
        return self._origin + self._out_pos / RATE

    def stop(self) -> None:
        with self._transition:  # waits for a re-open in progress, then undoes it
            self._stopping = True
            self._close()
            self.state = "stopped"

    def _open(self, origin: float) -> None:
        sd = self._sd
        dev = find_input_device(sd, self.config.device, self._no_loopback)
        rate = RATE
        try:
            sd.check_input_settings(device=dev.index, channels=1, dtype="float32", samplerate=RATE)
        except Exception:  # PortAudio says "Invalid sample rate" in several ways
            rate = int(dev.default_samplerate)
            log.info("%s cannot capture at 16 kHz; resampling from %d Hz", dev.name, rate)
        self._rate = rate
        self._resampler = StreamResampler(rate, RATE)
        self._generation += 1
        self._in_pos = self._out_pos = 0
        self._origin = origin
        gen = self._generation

        def callback(indata: Any, frames: int, time_info: Any, status: Any) -> None:
            # Real-time thread: copy and enqueue, nothing else (no locks, no resampling).
            self._queue.put((gen, self._in_pos, np.array(indata, dtype=np.float32)))
            self._in_pos += frames
            self._last_data = self._clock()
            if status and getattr(status, "input_overflow", False):
                self._overflows += 1  # PortAudio lost input: said with the dropped blocks

        self._lost.clear()  # before start: the device may vanish the moment it starts
        try:
            stream = sd.InputStream(
                device=dev.index,
                channels=1,
                samplerate=rate,
                dtype="float32",
                blocksize=max(1, rate * self.config.block_ms // 1000),
                callback=callback,
                finished_callback=lambda: self._on_finished(gen),
            )
            stream.start()
        except Exception as e:
            raise AudioDeviceError(f"cannot open audio input {dev.name!r}: {e}") from e
        self._stream, self.device = stream, dev
        self._last_data = self._clock()
        self.state, self.error = "running", ""
        log.info("capturing from %s at %d Hz", dev.name, rate)

    def _on_finished(self, gen: int) -> None:
        # PortAudio ends the stream when the device goes away; a stop() we asked for is fine.
        if not self._stopping and gen == self._generation:
            self._lost.set()

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception as e:  # a vanished device can fail to close; nothing to save
                log.debug("closing the audio stream failed: %s", e)

    def _check_device(self) -> None:
        with self._transition:
            self._check_device_locked()

    def _check_device_locked(self) -> None:
        # Blocks captured before the loss are good audio: hand them out first.
        if self.state == "running" and self._queue.qsize() == 0:
            name = self.device.name if self.device else "?"
            why = "disappeared" if self._lost.is_set() else ""
            if not why and self._stalled():
                why = f"sent no audio for {STALL_S:.0f} s"
            if why:
                self.state, self.error = "lost", f"audio input {name!r} {why}; retrying"
                log.warning(self.error)
                self._close()
                self._next_retry = self._clock()
        if self.state == "lost" and self._clock() >= self._next_retry:
            try:
                self._rescan()
                self._open(origin=self._clock() - self._t_start)
                log.info("audio input re-opened")
            except AudioDeviceError as e:
                self.error = f"{e}; retrying"
                self._next_retry = self._clock() + self.reopen_s
            except Exception as e:
                # PortAudio itself, re-initialised to see the device again, may fail ("PortAudio
                # not initialized"): retried too (it stopped speech recognition for good).
                name = self.device.name if self.device else "?"
                self.error = f"audio input {name!r} cannot be opened again: {e}; retrying"
                log.warning("%s", self.error)
                self._next_retry = self._clock() + self.reopen_s

    def _stalled(self) -> bool:
        """A microphone's stream that stopped calling back without ending (a driver that hung,
        a headset gone without a word): nothing was said, the line stayed open. A loopback
        input is silent by design while nothing plays (WASAPI sends no packets then)."""
        if self.device is None or self.device.loopback:
            return False
        return self._clock() - self._last_data > STALL_S

    def _rescan(self) -> None:
        # PortAudio lists devices once per initialisation: re-initialise to see a device
        # that came back (sounddevice has no public call for it).
        terminate = getattr(self._sd, "_terminate", None)
        initialize = getattr(self._sd, "_initialize", None)
        if terminate is not None and initialize is not None:
            try:
                terminate()
                initialize()
            except Exception as e:  # an old PortAudio may refuse; the old list still works
                log.debug("PortAudio re-initialisation failed: %s", e)

    def read(self, timeout: float = 0.1) -> AudioBlock | None:
        """The next 16 kHz block, or None if none came within ``timeout`` seconds."""
        self._check_device()
        with self._transition:
            if self._ready:  # captured before a pause, handed out first
                return self._ready.popleft()
        while True:
            item = self._queue.get(timeout=timeout)
            if item is None:
                self._check_device()
                return None
            gen, pos, data = item
            with self._transition:
                if gen == self._generation:  # blocks of a stream closed since are stale
                    return self._convert(pos, data)

    def _convert(self, pos: int, data: Samples) -> AudioBlock:
        """A device block as a 16 kHz mono block on the stream clock."""
        mono = data.mean(axis=1) if data.ndim == 2 else data.reshape(-1)
        if not np.isfinite(mono).all():
            # A driver's glitch: NaN or inf would make every window they are in silence to
            # Silero and nothing to Whisper (a whole sentence lost); they are silence here.
            if not self._said_not_finite:
                self._said_not_finite = True
                log.warning("audio input delivered samples that are not numbers: made silence")
            mono = np.nan_to_num(mono, nan=0.0, posinf=0.0, neginf=0.0)
        # A dropped block shows as a jump in the device sample position: restart the
        # resampler there so the block's time stays exact.
        expected_in = round(self._out_pos * self._rate / RATE)
        if abs(pos - expected_in) > self._rate // 100:
            self._resampler = StreamResampler(self._rate, RATE)
            self._out_pos = round(pos * RATE / self._rate)
        out = self._resampler(mono.astype(np.float32))
        t0 = self._origin + self._out_pos / RATE
        self._out_pos += len(out)
        self.level = level_dbfs(out)
        return AudioBlock(out, t0, RATE)
