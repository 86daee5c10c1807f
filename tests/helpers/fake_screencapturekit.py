"""Fake ScreenCaptureKit and CoreMedia (as pyobjc exposes them) that play a real clip.

Like the real frameworks: completion handlers and sample buffers arrive on another thread;
audio comes as 32-bit float planes (one per channel) in buffers of 1024 frames, with the
stream's video frames through the same output call; a refused Screen Recording permission is
an NSError with code -3801 from SCShareableContent; pyobjc returns out-parameters (an error,
the filled output buffer) as a tuple with the result. Signatures follow pyobjc's metadata.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from subtitler.audio.macos_capture import Frameworks, SystemAudioStream

WAIT = 10.0  # seconds an event may take before the test fails (never a sleep)
SCREEN, AUDIO = 0, 1  # SCStreamOutputTypeScreen, SCStreamOutputTypeAudio
CHUNK = 1024  # frames per audio buffer, as ScreenCaptureKit sends them at 48 kHz


class NSError:
    def __init__(self, code: int, text: str) -> None:
        self._code, self._text = code, text

    def code(self) -> int:
        return self._code

    def domain(self) -> str:
        return "com.apple.ScreenCaptureKit.SCStreamErrorDomain"

    def localizedDescription(self) -> str:
        return self._text


DECLINED = NSError(-3801, "The user declined TCCs for application, window, display capture")


class BlockBuffer:
    def __init__(self, data: bytes) -> None:
        self.data = data


class SampleBuffer:
    """Audio: planes is channels x frames; a video frame has no audio data."""

    def __init__(self, planes: np.ndarray | None) -> None:
        self.planes = planes


class CoreMedia:
    """The CoreMedia functions the capture calls."""

    def __init__(self) -> None:
        self.copy_status = 0  # what CMBlockBufferCopyDataBytes returns (a test breaks it)

    def CMSampleBufferGetNumSamples(self, buf: SampleBuffer) -> int:
        return 1 if buf.planes is None else int(buf.planes.shape[1])

    def CMSampleBufferGetDataBuffer(self, buf: SampleBuffer) -> BlockBuffer | None:
        if buf.planes is None:
            return None
        return BlockBuffer(np.ascontiguousarray(buf.planes, dtype=np.float32).tobytes())

    def CMBlockBufferGetDataLength(self, block: BlockBuffer) -> int:
        return len(block.data)

    def CMBlockBufferCopyDataBytes(
        self, block: BlockBuffer, offset: int, length: int, destination: bytearray
    ) -> tuple[int, bytearray | None]:
        assert len(destination) == length  # the output buffer, filled as pyobjc does
        if self.copy_status:
            return self.copy_status, None
        destination[:] = block.data[offset : offset + length]
        return 0, destination

    def CMTimeMake(self, value: int, timescale: int) -> tuple[int, int]:
        return (value, timescale)


class Alloc:
    def __init__(self, make: Any) -> None:
        self._make = make

    def alloc(self) -> Any:
        return self._make()


class ContentFilter:
    def initWithDisplay_excludingWindows_(self, display: str, windows: list[Any]) -> Any:
        self.display, self.windows = display, windows
        return self


class Configuration:
    def init(self) -> Configuration:
        self.values: dict[str, Any] = {}
        return self

    def __getattr__(self, name: str) -> Any:
        if not (name.startswith("set") and name.endswith("_")):
            raise AttributeError(name)
        key = name[3].lower() + name[4:-1]  # setSampleRate_ -> sampleRate
        return lambda value: self.values.__setitem__(key, value)


class ShareableContent:
    def __init__(self, sck: ScreenCaptureKit) -> None:
        self._sck = sck

    def getShareableContentWithCompletionHandler_(self, handler: Any) -> None:
        sck = self._sck
        answer = (None, DECLINED) if sck.declined else (self, None)
        threading.Thread(target=handler, args=answer, daemon=True).start()

    def displays(self) -> list[str]:
        return list(self._sck.displays)


class Stream:
    """One SCStream: plays the clip to its audio output from a thread once started."""

    def __init__(self, sck: ScreenCaptureKit) -> None:
        self.sck = sck
        self.outputs: list[tuple[Any, int, Any]] = []
        self.stopped = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def initWithFilter_configuration_delegate_(
        self, content_filter: ContentFilter, config: Configuration, delegate: Any
    ) -> Stream:
        self.filter, self.config, self.delegate = content_filter, config.values, delegate
        self.sck.streams.append(self)
        return self

    def addStreamOutput_type_sampleHandlerQueue_error_(
        self, output: Any, kind: int, queue: Any, error: Any
    ) -> tuple[bool, Any]:
        assert error is None  # pyobjc returns the error instead
        self.outputs.append((output, kind, queue))
        return True, None

    def startCaptureWithCompletionHandler_(self, handler: Any) -> None:
        def run() -> None:
            handler(self.sck.start_error)
            if self.sck.start_error is None:
                self._play()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def _play(self) -> None:
        sck = self.sck
        assert self.config["sampleRate"] == 16000, "the clip plays at 16 kHz"
        clip = np.concatenate([sck.clip, np.zeros(2 * CHUNK, np.float32)])
        ((output, kind, _queue),) = self.outputs
        assert kind == AUDIO
        for i, pos in enumerate(range(0, len(clip), CHUNK)):
            if self._stop.is_set():
                return
            if i == sck.end_at_buffer:
                # ScreenCaptureKit ends the stream itself (permission taken back, ...).
                sck.on_end()
                self.delegate.stream_didStopWithError_(self, sck.end_error)
                return
            chunk = clip[pos : pos + CHUNK]
            planes = np.repeat(chunk[None, :], sck.channels_sent, axis=0)
            output.stream_didOutputSampleBuffer_ofType_(self, SampleBuffer(None), SCREEN)
            output.stream_didOutputSampleBuffer_ofType_(self, SampleBuffer(planes), AUDIO)
        # At the end of the clip the system just goes quiet; the stream stays open.

    def stopCaptureWithCompletionHandler_(self, handler: Any) -> None:
        self.stopped = True
        self._stop.set()
        if self._thread is not None and threading.current_thread() is not self._thread:
            self._thread.join(WAIT)
        threading.Thread(target=handler, args=(None,), daemon=True).start()


class ScreenCaptureKit:
    """The ScreenCaptureKit classes and constants the capture uses."""

    SCStreamOutputTypeScreen = SCREEN
    SCStreamOutputTypeAudio = AUDIO

    def __init__(self, clip: np.ndarray) -> None:
        self.clip = clip.astype(np.float32)
        self.declined = False
        self.displays = ["Built-in Retina Display"]
        self.channels_sent = 1  # ScreenCaptureKit honours channelCount; a test sends stereo
        self.end_at_buffer = -1
        self.end_error: Any = NSError(-3821, "The stream was stopped by the system")
        self.on_end: Callable[[], None] = lambda: None  # what else changes when it ends
        self.start_error: Any = None  # what startCapture answers
        self.streams: list[Stream] = []
        self.SCShareableContent = ShareableContent(self)
        self.SCContentFilter = Alloc(ContentFilter)
        self.SCStreamConfiguration = Alloc(Configuration)
        self.SCStream = Alloc(lambda: Stream(self))


class Output:
    """What load_frameworks' Objective-C class does: forward both calls to the receiver."""

    def __init__(self, receiver: SystemAudioStream) -> None:
        self.receiver = receiver

    def stream_didOutputSampleBuffer_ofType_(self, _stream: Any, buffer: Any, kind: int) -> None:
        self.receiver.on_buffer(buffer, int(kind))

    def stream_didStopWithError_(self, _stream: Any, error: Any) -> None:
        self.receiver.on_stopped(error)


def frameworks(clip: np.ndarray) -> tuple[Frameworks, ScreenCaptureKit, CoreMedia]:
    sck, cm = ScreenCaptureKit(clip), CoreMedia()
    return Frameworks(sck, cm, Output), sck, cm
