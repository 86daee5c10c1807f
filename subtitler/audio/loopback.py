"""Meeting audio: what the speakers play, as inputs, captured with the soundcard package.

PortAudio cannot record it on the two platforms where the OS allows it: sounddevice's bundled
PortAudio (19.7.0) lists no WASAPI loopback devices on Windows (that came to PortAudio after
its last release), and on Linux PortAudio talks to ALSA, which does not see PulseAudio /
PipeWire monitor sources. soundcard (BSD-3) records both (WASAPI loopback mode; PulseAudio
monitors). :class:`LoopbackAudio` puts those inputs after sounddevice's own, behind the subset
of the sounddevice API that :class:`~subtitler.audio.capture.MicrophoneCapture` uses, so
listing, choosing by name, resampling, the drop-oldest queue and re-opening an unplugged
device work the same for both. Windows speakers are listed as ``"<speaker> [Loopback]"``,
monitors under their own ``"Monitor of <sink>"`` name. macOS has no loopback API: from macOS 13
:mod:`subtitler.audio.macos_capture` records the system's output through ScreenCaptureKit
behind the same interface; before that a virtual device such as BlackHole is an ordinary input.
Both modules are injected: tests pass fakes.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from subtitler.audio import macos_capture  # imports no pyobjc until it is asked to capture

log = logging.getLogger(__name__)

SUFFIX = " [Loopback]"  # how PortAudio's own (unreleased) WASAPI loopback names its inputs
HOSTAPIS = {
    "win32": "Windows WASAPI (loopback)",
    "linux": "PulseAudio (monitor)",
    "darwin": macos_capture.HOSTAPI,
}
OPEN_TIMEOUT_S = 5.0  # how long start() waits for the sound system to open the speaker
# How often a recording looks that its input is still there. PulseAudio moves a recording
# whose source goes away to another one (on a desktop, the microphone) and says nothing: the
# user's own voice was heard as the meeting's, with no word that the meeting was not heard.
SOURCE_CHECK_S = 1.0


class LoopbackAudio:
    """sounddevice's inputs followed by one loopback input per speaker (soundcard)."""

    def __init__(self, sd: Any, sc: Any, hostapi: str = "loopback") -> None:
        self._sd = sd
        self._sc = sc
        self._hostapi = hostapi
        self._loopbacks: list[tuple[str, str, int]] = []  # (soundcard id, name, channels)
        self._n_sd = 0  # sounddevice's device count at the last query_devices()

    @property
    def default(self) -> Any:
        return self._sd.default

    def query_hostapis(self) -> list[Any]:
        return [*self._sd.query_hostapis(), {"name": self._hostapi}]

    def query_devices(self) -> list[Any]:
        devices = list(self._sd.query_devices())
        api = len(self._sd.query_hostapis())
        self._n_sd = len(devices)
        self._loopbacks = self._scan()
        return devices + [
            {
                "name": name,
                "hostapi": api,
                "max_input_channels": channels,
                "max_output_channels": 0,
                # WASAPI's shared mode converts to any rate we ask for (AUTOCONVERTPCM).
                "default_samplerate": 16000.0,
            }
            for _id, name, channels in self._loopbacks
        ]

    def _scan(self) -> list[tuple[str, str, int]]:
        try:
            # Listing runs in whichever thread asks (the UI's, or the pipeline's audio thread,
            # which has no COM apartment of its own).
            with com_apartment():
                found = []
                for m in self._sc.all_microphones(include_loopback=True):
                    if getattr(m, "isloopback", False):
                        name = str(m.name)
                        if "monitor" not in name.lower():
                            name += SUFFIX
                        found.append((str(m.id), name, max(1, int(m.channels))))
            return found
        except Exception as e:  # COM or driver trouble: the microphones still work
            log.warning("cannot list loopback inputs (meeting audio): %s", e)
            return []

    def _loopback(self, device: int) -> tuple[str, str, int] | None:
        j = device - self._n_sd
        return self._loopbacks[j] if 0 <= j < len(self._loopbacks) else None

    def check_input_settings(self, device: int, **kw: Any) -> None:
        if self._loopback(device) is None:
            self._sd.check_input_settings(device=device, **kw)

    def InputStream(self, *, device: int, **kw: Any) -> Any:  # sounddevice's name
        lb = self._loopback(device)
        if lb is None:
            return self._sd.InputStream(device=device, **kw)
        sc_id, name, _channels = lb
        return LoopbackStream(self._sc, sc_id, name, **kw)

    # MicrophoneCapture re-initialises PortAudio to see a device that came back; soundcard
    # lists its devices afresh on every query_devices() anyway.
    def _terminate(self) -> None:
        getattr(self._sd, "_terminate", lambda: None)()

    def _initialize(self) -> None:
        getattr(self._sd, "_initialize", lambda: None)()


class LoopbackStream:
    """One speaker recorded in loopback mode by a reader thread, delivered through ``callback``
    like a sounddevice InputStream (block by block, float32, frames x channels)."""

    def __init__(
        self,
        sc: Any,
        sc_id: str,
        name: str,
        *,
        samplerate: float,
        blocksize: int,
        callback: Callable[[Any, int, Any, Any], None],
        finished_callback: Callable[[], None] | None = None,
        channels: int = 1,
        dtype: str = "float32",
    ) -> None:
        if dtype != "float32":
            raise ValueError(f"loopback capture delivers float32, not {dtype}")
        self._sc, self._id, self.name = sc, sc_id, name
        self._rate, self._block, self._channels = int(samplerate), max(1, blocksize), channels
        self._callback, self._finished = callback, finished_callback
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="loopback-capture", daemon=True)

    def start(self) -> None:
        """Open the speaker in loopback mode; raises what the sound system said if it cannot."""
        self._thread.start()
        if not self._opened.wait(OPEN_TIMEOUT_S):
            self._stop.set()
            raise RuntimeError(f"no answer from the sound system in {OPEN_TIMEOUT_S:.0f} s")
        if self._error is not None:
            raise RuntimeError(str(self._error)) from self._error

    def _run(self) -> None:
        try:
            with com_apartment():
                mic = self._sc.get_microphone(self._id, include_loopback=True)
                rec = mic.recorder(
                    samplerate=self._rate, channels=self._channels, blocksize=self._block
                )
                with rec:
                    self._opened.set()
                    checked = time.monotonic()
                    while not self._stop.is_set():
                        # Blocks for one block of audio; soundcard returns zeros while the
                        # speaker plays nothing (WASAPI then delivers no packets at all).
                        data = rec.record(numframes=self._block)
                        if time.monotonic() - checked >= SOURCE_CHECK_S:
                            checked = time.monotonic()
                            if not self._still_there():
                                raise RuntimeError(
                                    "it is gone (the sound system moved its recording to "
                                    "another input)"
                                )
                        self._callback(data, len(data), None, None)
        except Exception as e:  # the speaker was unplugged or its format changed
            if not self._opened.is_set():
                self._error = e
            else:
                log.warning("loopback capture of %s ended: %s", self.name, e)
        finally:
            was_open = self._opened.is_set() and self._error is None
            self._opened.set()
            if was_open and self._finished is not None:
                self._finished()

    def _still_there(self) -> bool:
        """Is the input recorded still listed? (A listing that fails says nothing.)"""
        try:
            ids = {str(m.id) for m in self._sc.all_microphones(include_loopback=True)}
        except Exception as e:
            log.debug("cannot list inputs to check %s: %s", self.name, e)
            return True
        return self._id in ids

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)

    def close(self) -> None:
        self.stop()


@contextlib.contextmanager
def com_apartment() -> Iterator[None]:
    """COM for this thread (multithreaded apartment) on Windows; nothing elsewhere.

    soundcard joins the MTA only in the thread that imports it, and not at all when that is
    Qt's UI thread (already a single-threaded apartment), so every thread that talks to WASAPI
    through it enters COM here first. In a thread that is already an STA the call fails with
    RPC_E_CHANGED_MODE and the thread stays as it was, which works as well.
    """
    if sys.platform != "win32":
        yield
        return
    import ctypes

    ole32 = ctypes.windll.ole32
    hr = ole32.CoInitializeEx(None, 0)  # COINIT_MULTITHREADED
    try:
        yield
    finally:
        if hr in (0, 1):  # S_OK, S_FALSE: ours to balance
            ole32.CoUninitialize()


def loopback_audio(sd: Any) -> LoopbackAudio | macos_capture.SystemAudio | None:
    """``sd`` with this OS's loopback inputs; None where the OS has no loopback API (macOS
    before 13). Raises what importing soundcard (or pyobjc on macOS) raised (not installed, no
    PulseAudio server, COM)."""
    hostapi = HOSTAPIS.get(sys.platform)
    if hostapi is None:
        return None
    if sys.platform == "darwin":
        return macos_capture.system_audio(sd)
    try:
        import soundcard
    except AssertionError:
        # soundcard connects to the sound server at import and asserts that it answered
        # (soundcard/pulseaudio.py, 0.4.6): an empty AssertionError says nothing to a user.
        raise RuntimeError("no PulseAudio or PipeWire sound server is running") from None
    return LoopbackAudio(sd, soundcard, hostapi)


def with_loopback(sd: Any) -> Any:
    """sounddevice, plus the speakers' loopback / monitor inputs where soundcard can reach them,
    or the system audio input on macOS 13+ (ScreenCaptureKit)."""
    return loopback_or_why(sd)[0]


def loopback_or_why(sd: Any) -> tuple[Any, str]:
    """(:func:`with_loopback`'s ``sd``, why meeting audio cannot be recorded: "" where it can
    or where the OS has no API for it)."""
    try:
        lb = loopback_audio(sd)
    except Exception as e:  # not installed, no PulseAudio server, COM set-up failed
        log.warning("meeting audio (loopback inputs) is unavailable: %s", e)
        return sd, str(e) or type(e).__name__
    return (sd if lb is None else lb), ""
