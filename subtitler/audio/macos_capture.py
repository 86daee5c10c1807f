"""Meeting audio on macOS 13+: what the Mac plays, captured through ScreenCaptureKit.

macOS has no loopback device: before ScreenCaptureKit's audio (macOS 13) the only way was a
virtual driver such as BlackHole. An SCStream over a display with ``capturesAudio`` delivers
the mix of every app's output (this app's own left out) as CMSampleBuffers; macOS asks the
user once for Screen Recording permission. :class:`SystemAudio` lists it as one more input
after sounddevice's own, behind the subset of the sounddevice API that
:class:`~subtitler.audio.capture.MicrophoneCapture` uses (as :mod:`subtitler.audio.loopback`
does for Windows and Linux), so listing, choosing by name, the drop-oldest queue and re-opening
work the same.

pyobjc is imported only by :func:`load_frameworks`; everything else takes the frameworks as an
argument, so tests drive this module with fakes. Untested on a real Mac.
"""

from __future__ import annotations

import logging
import platform
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

NAME = "System audio (all apps)"
HOSTAPI = "ScreenCaptureKit"
MIN_MACOS = (13, 0)  # SCStreamConfiguration.capturesAudio
RATES = (8000, 16000, 24000, 48000)  # the sample rates SCStreamConfiguration accepts
MAX_CHANNELS = 2
OPEN_TIMEOUT_S = 5.0  # how long start() waits for each of ScreenCaptureKit's answers
STOP_TIMEOUT_S = 2.0
USER_DECLINED = -3801  # SCStreamErrorUserDeclined: no Screen Recording permission
NO_PERMISSION = (
    "macOS refused Screen Recording permission, which capturing the system audio needs: "
    "allow subtitler in System Settings → Privacy & Security → Screen & System Audio "
    "Recording (Screen Recording before macOS 15), then restart subtitler"
)


def too_old(version: tuple[int, ...]) -> str:
    shown = ".".join(map(str, version)) or "unknown"
    return (
        f"capturing the system audio needs macOS 13 or later (this is {shown}): install "
        "BlackHole and choose it as the meeting input instead"
    )


@dataclass(frozen=True)
class Frameworks:
    """The pyobjc modules used here, and a maker of the object ScreenCaptureKit calls back."""

    sck: Any  # the ScreenCaptureKit module
    cm: Any  # the CoreMedia module
    # An SCStreamOutput + SCStreamDelegate whose calls go to a SystemAudioStream.
    make_output: Callable[[SystemAudioStream], Any]


_OUTPUT_CLASS: Any = None  # an Objective-C class can be defined once per process


def load_frameworks() -> Frameworks:
    """The real frameworks (pyobjc); raises ImportError where they are not installed."""
    import CoreMedia
    import objc
    import ScreenCaptureKit

    global _OUTPUT_CLASS
    if _OUTPUT_CLASS is None:
        protocols = []
        for name in ("SCStreamOutput", "SCStreamDelegate"):
            try:
                protocols.append(objc.protocolNamed(name))
            except objc.ProtocolError:  # not registered: the bridge's metadata still types it
                log.debug("protocol %s not found", name)

        base: Any = objc.lookUpClass("NSObject")

        class SubtitlerSystemAudioOutput(base, protocols=protocols):  # type: ignore[misc,call-arg]
            """Forwards ScreenCaptureKit's calls to a SystemAudioStream (set as ``receiver``)."""

            def stream_didOutputSampleBuffer_ofType_(
                self, _stream: Any, buffer: Any, kind: Any
            ) -> None:
                self.receiver.on_buffer(buffer, int(kind))

            def stream_didStopWithError_(self, _stream: Any, error: Any) -> None:
                self.receiver.on_stopped(error)

        _OUTPUT_CLASS = SubtitlerSystemAudioOutput

    def make_output(receiver: SystemAudioStream) -> Any:
        out = _OUTPUT_CLASS.alloc().init()
        out.receiver = receiver
        return out

    return Frameworks(ScreenCaptureKit, CoreMedia, make_output)


def macos_version() -> tuple[int, ...]:
    """(major, minor, ...) of this macOS; () elsewhere."""
    return tuple(int(p) for p in platform.mac_ver()[0].split(".") if p.isdigit())


def error_text(error: Any) -> str:
    """An NSError (or anything else ScreenCaptureKit returned) in one line for the user."""
    code = _call(error, "code")
    if code == USER_DECLINED:
        return NO_PERMISSION
    text = str(_call(error, "localizedDescription") or error)
    return " ".join(text.split()) + (f" (error {code})" if code is not None else "")


def _call(obj: Any, name: str) -> Any:
    fn = getattr(obj, name, None)
    return fn() if callable(fn) else None


def samples_of(cm: Any, buffer: Any) -> np.ndarray:
    """A CMSampleBuffer of ScreenCaptureKit's audio as float32 frames x channels.

    ScreenCaptureKit delivers 32-bit float PCM, one plane per channel (non-interleaved); the
    channel count follows from the data's length and the frame count.
    """
    frames = int(cm.CMSampleBufferGetNumSamples(buffer))
    block = cm.CMSampleBufferGetDataBuffer(buffer)
    if frames <= 0 or block is None:
        return np.zeros((0, 1), dtype=np.float32)
    length = int(cm.CMBlockBufferGetDataLength(block))
    # pyobjc fills the buffer passed for the output argument and returns it with the status.
    out = bytearray(length)
    status, data = cm.CMBlockBufferCopyDataBytes(block, 0, length, out)
    if status != 0:
        raise OSError(f"CoreMedia could not copy the audio (error {status})")
    flat = np.frombuffer(out if data is None else data, dtype=np.float32)
    channels = max(1, len(flat) // frames)
    return flat[: channels * frames].reshape(channels, frames).T


class SystemAudio:
    """sounddevice's inputs followed by one input: the system's audio output (macOS 13+)."""

    def __init__(self, sd: Any, frameworks: Frameworks, macos: tuple[int, ...]) -> None:
        self._sd = sd
        self._fw = frameworks
        self._macos = macos
        self._index = -1  # ours, at the last query_devices()

    @property
    def default(self) -> Any:
        return self._sd.default

    def query_hostapis(self) -> list[Any]:
        return [*self._sd.query_hostapis(), {"name": HOSTAPI}]

    def query_devices(self) -> list[Any]:
        devices = list(self._sd.query_devices())
        self._index = len(devices)
        ours = {
            "name": NAME,
            "hostapi": len(self._sd.query_hostapis()),
            "max_input_channels": MAX_CHANNELS,
            "max_output_channels": 0,
            "default_samplerate": 48000.0,
            "loopback": True,  # what the computer plays: the meeting
        }
        return [*devices, ours]

    def check_input_settings(
        self, device: int, *, samplerate: float | None = None, **kw: Any
    ) -> None:
        if device != self._index:
            self._sd.check_input_settings(device=device, samplerate=samplerate, **kw)
        elif samplerate is not None and int(samplerate) not in RATES:
            raise ValueError(f"Invalid sample rate {samplerate} (ScreenCaptureKit: {RATES})")

    def InputStream(self, *, device: int, **kw: Any) -> Any:  # sounddevice's name
        if device != self._index:
            return self._sd.InputStream(device=device, **kw)
        return SystemAudioStream(self._fw, self._macos, **kw)

    # MicrophoneCapture re-initialises PortAudio to see a device that came back.
    def _terminate(self) -> None:
        getattr(self._sd, "_terminate", lambda: None)()

    def _initialize(self) -> None:
        getattr(self._sd, "_initialize", lambda: None)()


class _Answer:
    """Waits for one completion handler's arguments (ScreenCaptureKit answers on its queue)."""

    def __init__(self) -> None:
        self.args: tuple[Any, ...] = ()
        self._done = threading.Event()

    def one(self, a: Any) -> None:
        self.args = (a,)
        self._done.set()

    def two(self, a: Any, b: Any) -> None:
        self.args = (a, b)
        self._done.set()

    def wait(self, what: str, timeout: float) -> tuple[Any, ...]:
        if not self._done.wait(timeout):
            raise RuntimeError(f"no answer from ScreenCaptureKit ({what}) in {timeout:.0f} s")
        return self.args


class SystemAudioStream:
    """An SCStream's audio delivered through ``callback`` like a sounddevice InputStream
    (blocks of ``blocksize`` frames, float32, frames x channels)."""

    def __init__(
        self,
        frameworks: Frameworks,
        macos: tuple[int, ...],
        *,
        samplerate: float,
        blocksize: int,
        callback: Callable[[Any, int, Any, Any], None],
        finished_callback: Callable[[], None] | None = None,
        channels: int = 1,
        dtype: str = "float32",
    ) -> None:
        if dtype != "float32":
            raise ValueError(f"system audio capture delivers float32, not {dtype}")
        if int(samplerate) not in RATES:
            raise ValueError(f"Invalid sample rate {samplerate} (ScreenCaptureKit: {RATES})")
        self.name = NAME
        self._fw, self._macos = frameworks, macos
        self._rate, self._block = int(samplerate), max(1, blocksize)
        self._channels = max(1, min(MAX_CHANNELS, channels))
        self._callback, self._finished = callback, finished_callback
        self._stream: Any = None
        self._output: Any = None  # kept: ScreenCaptureKit may hold it weakly
        self._pending = np.zeros((0, self._channels), dtype=np.float32)
        self._lock = threading.Lock()  # the end is reported once, by whoever comes first
        self._ended = False
        self._warned = False

    def start(self) -> None:
        """Start capturing; raises RuntimeError with a one-line reason if macOS refuses."""
        if self._macos < MIN_MACOS:
            raise RuntimeError(too_old(self._macos))
        sck, cm = self._fw.sck, self._fw.cm
        answer = _Answer()
        sck.SCShareableContent.getShareableContentWithCompletionHandler_(answer.two)
        content, error = answer.wait("shareable content", OPEN_TIMEOUT_S)
        if error is not None or content is None:
            raise RuntimeError(error_text(error))
        displays = list(content.displays() or [])
        if not displays:
            raise RuntimeError("ScreenCaptureKit lists no display to capture the audio of")
        # Audio comes with a display's stream; which display does not matter for the sound.
        content_filter = sck.SCContentFilter.alloc().initWithDisplay_excludingWindows_(
            displays[0], []
        )
        config = sck.SCStreamConfiguration.alloc().init()
        config.setCapturesAudio_(True)
        config.setExcludesCurrentProcessAudio_(True)  # our own sounds are not the meeting
        config.setSampleRate_(self._rate)
        config.setChannelCount_(self._channels)
        # The stream always captures video too: make it tiny and one frame a second.
        config.setWidth_(2)
        config.setHeight_(2)
        config.setMinimumFrameInterval_(cm.CMTimeMake(1, 1))
        self._output = self._fw.make_output(self)
        stream = sck.SCStream.alloc().initWithFilter_configuration_delegate_(
            content_filter, config, self._output
        )
        ok, error = stream.addStreamOutput_type_sampleHandlerQueue_error_(
            self._output, sck.SCStreamOutputTypeAudio, None, None
        )
        if not ok:
            raise RuntimeError(error_text(error))
        answer = _Answer()
        stream.startCaptureWithCompletionHandler_(answer.one)
        try:
            (error,) = answer.wait("start", OPEN_TIMEOUT_S)
            if error is not None:
                raise RuntimeError(error_text(error))
        except RuntimeError:
            # A start that answers late must not leave the Mac recording (its menu bar says
            # so) with nobody listening: whatever it delivers is dropped, and it is stopped.
            self._ended = True
            stream.stopCaptureWithCompletionHandler_(_Answer().one)
            raise
        self._stream = stream
        log.info("capturing the system audio at %d Hz, %d channel(s)", self._rate, self._channels)

    def on_buffer(self, buffer: Any, kind: int) -> None:
        """ScreenCaptureKit's sample handler (its queue): audio in, blocks out."""
        if kind != self._fw.sck.SCStreamOutputTypeAudio or self._ended:
            return  # video frames come through the same call
        try:
            data = samples_of(self._fw.cm, buffer)
        except Exception as e:  # one bad buffer: a gap, not the end of the meeting
            if not self._warned:
                log.warning("unreadable system audio buffer: %s", e)
                self._warned = True
            return
        if data.shape[1] != self._channels:  # down-mix (or spread mono) to what was asked
            data = np.repeat(data.mean(axis=1, keepdims=True), self._channels, axis=1)
        pending = np.concatenate([self._pending, data.astype(np.float32, copy=False)])
        n = len(pending) - len(pending) % self._block
        for i in range(0, n, self._block):
            self._callback(pending[i : i + self._block], self._block, None, None)
        self._pending = pending[n:]

    def on_stopped(self, error: Any) -> None:
        """ScreenCaptureKit ended the stream (permission taken back, display gone, ...)."""
        if not self._ended:
            log.warning("system audio capture ended: %s", error_text(error))
        self._end()

    def _end(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        if self._finished is not None:
            self._finished()

    def stop(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            answer = _Answer()
            stream.stopCaptureWithCompletionHandler_(answer.one)
            try:
                (error,) = answer.wait("stop", STOP_TIMEOUT_S)
            except RuntimeError as e:
                log.warning("%s", e)
            else:
                if error is not None:
                    log.debug("stopping the system audio capture: %s", error_text(error))
        self._end()

    def close(self) -> None:
        self.stop()


def system_audio(
    sd: Any, frameworks: Frameworks | None = None, macos: tuple[int, ...] | None = None
) -> SystemAudio | None:
    """``sd`` with the system audio input; None before macOS 13 (a virtual device such as
    BlackHole then). Raises ImportError where pyobjc's ScreenCaptureKit is not installed."""
    version = macos_version() if macos is None else macos
    if version < MIN_MACOS:
        return None
    return SystemAudio(sd, frameworks or load_frameworks(), version)
