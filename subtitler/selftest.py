"""``subtitler --self-test``: load every native part of the app and run the tiny models once.

Checks, one output line each (``ok   name: detail`` or ``FAIL name: reason``):

- qt: the overlay renders a subtitle offscreen and its text reaches the pixels;
- audio: sounddevice finds PortAudio and lists the input devices (none is fine: CI machines
  have no sound card; the count is reported);
- vad: faster-whisper's bundled Silero model loads and finds speech in the bundled clip;
- whisper: the tiny Whisper model in assets/selftest loads, decodes the clip, and aligns the
  clip's known words (in order, inside the clip: true for any weights);
- llama: the tiny GGUF loads in llama.cpp and the StreamTranslator (SSBD) produces tokens;
- worker: both engines run in worker processes as the app runs them (multiprocessing "spawn":
  in the bundle, the executable started again as a worker).

The engines are built as the app builds them: the settings come from the session
(``subtitler.session``: defaults planned for this machine, the tiny models given as overrides)
and the parts from the pipeline's factories.

It exits non-zero when any check fails and never hangs: each check after Qt runs in a worker
thread with its own time limit, and a watchdog ends the process if the whole run overruns.
The models have random weights: the checks prove the libraries load and run, not quality, and
never depend on what random weights produce (that differs between CPUs).
"""

from __future__ import annotations

import itertools
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from subtitler import __version__
from subtitler.resources import asset_path

if TYPE_CHECKING:
    from subtitler.session import Session

CHECK_TIMEOUT_S = 90.0  # one check (the first llama.cpp / CTranslate2 load can be slow)
TOTAL_TIMEOUT_S = 240.0  # the whole run, Qt included
CLIP = "LJ001-0002.flac"  # LJSpeech, 1.9 s
CLIP_TEXT = "in being comparatively modern."
WHISPER_DIR = "whisper-random"
LLAMA_FILE = "llama-random-q8_0.gguf"
# The self-test's settings over the app's defaults ({"section.field": value}): the clip's
# language pair, the processor with one thread, short caps (random weights write on and on).
SETTINGS: dict[str, Any] = {
    "asr.device": "cpu",
    "asr.threads": 1,
    "asr.beam_size": 1,
    "asr.vad": False,  # (the vad check loads Silero on its own)
    "mt.template": "chatml",
    "mt.src_lang": "en",
    "mt.tgt_lang": "de",
    "mt.threads": 1,
    "mt.n_ctx": 512,
    "mt.n_ubatch": 32,
    "mt.max_new_tokens": 12,
}
WHISPER_MAX_NEW_TOKENS = 4  # a cap on one recognition (not a setting of the app)


def selftest_dir() -> Path:
    return asset_path("selftest")


def _required(name: str) -> Path:
    p = selftest_dir() / name
    if not p.exists():
        raise FileNotFoundError(f"self-test asset missing: {p}")
    return p


def _clip() -> Any:
    from subtitler.audio.sources import load_audio

    return load_audio(_required(CLIP))


def check_qt() -> str:
    # An entry point like app.py: it may start UI code (lazily, so other checks run without Qt).
    from subtitler.ui.selfcheck import check_qt as qt_check

    return qt_check()


def check_audio() -> str:
    import sounddevice as sd

    from subtitler.audio.capture import list_input_devices

    version = str(sd.get_portaudio_version()[1]).split(",")[0]
    devices = list_input_devices(sd)
    apis = sorted({d.hostapi for d in devices if d.hostapi})
    where = f" ({', '.join(apis)})" if apis else ""
    return f"{version}, {len(devices)} input device(s){where}; {check_meeting_audio(sd)}"


def check_meeting_audio(sd: Any) -> str:
    """The loopback inputs soundcard adds (ScreenCaptureKit's one on macOS 13+); on Windows a
    broken soundcard is a broken install."""
    from subtitler.audio.capture import list_input_devices
    from subtitler.audio.loopback import loopback_audio

    try:
        lb = loopback_audio(sd)
        if lb is None:
            # macOS before 13 (or an OS without a loopback API): BlackHole or the like.
            return "meeting audio through a virtual input device (no loopback API on this OS)"
        n = sum(d.loopback for d in list_input_devices(lb))
    except Exception as e:
        if sys.platform == "win32":
            raise RuntimeError(f"meeting audio (soundcard, WASAPI loopback) is broken: {e}") from e
        # Linux without a PulseAudio/PipeWire server (a CI machine): microphones still work.
        why = (str(e).splitlines() or [""])[0][:100]
        return f"meeting audio unavailable ({type(e).__name__}: {why})"
    return f"meeting audio: {n} loopback input(s)"


def check_vad() -> str:
    import numpy as np

    from subtitler.asr.faster_whisper import silero_session
    from subtitler.asr.vad import SileroStream, find_utterances

    audio = _clip()
    stream = SileroStream(silero_session())
    spans = find_utterances(stream, audio)
    stream.reset()
    peak = float(np.max(stream(audio), initial=0.0))
    if not spans:
        raise RuntimeError(f"no speech found in {CLIP} (peak speech probability {peak:.2f})")
    speech = sum(b - a for a, b in spans)
    return f"Silero found {speech:.1f} s of speech in {len(audio) / 16000:.1f} s (peak {peak:.2f})"


def session(settings: Mapping[str, Any] = {}, *, isolate: bool = False) -> Session:
    """The app's session as the self-test runs it: the default settings (the user's settings
    file is neither read nor written, so the run is the same on every machine), filled in for
    this machine's hardware, with the bundled tiny models, :data:`SETTINGS` and ``settings``
    over them; its parts are built by the app's factories (``isolate``: engines in worker
    processes)."""
    from subtitler.pipeline.factories import RealParts, real_factories
    from subtitler.session import Overrides, Session, prepare

    models = {
        "asr.model": str(_required(WHISPER_DIR)),
        "mt.model_path": str(_required(LLAMA_FILE)),
    }
    start = prepare(
        None, Overrides({**models, **SETTINGS, **settings}, replay=_required(CLIP)), defaults=True
    )
    parts = RealParts(isolate=isolate, asr_max_new_tokens=WHISPER_MAX_NEW_TOKENS)
    return Session(start.config, real_factories(parts), lambda _event: None)


def _whisper(rec: Any) -> Any:
    """The ASR backend under the streaming recogniser the session built (the loaded one, where
    recognisers share it)."""
    from subtitler.asr.shared import SharedBackend
    from subtitler.asr.streaming import StreamingRecognizer

    if not isinstance(rec, StreamingRecognizer):
        raise TypeError(f"the recogniser is a {type(rec).__name__}, not a StreamingRecognizer")
    backend = rec.backend
    return backend.inner if isinstance(backend, SharedBackend) else backend


def check_whisper() -> str:
    """Load the tiny model through the app's loader, decode the clip, and align its known
    words. Nothing here depends on what the random weights say (that differs between CPUs,
    CTranslate2 picking other kernels): the decode may produce any text, even none, and a
    forced alignment puts the clip's four words in order inside the clip with any weights."""
    audio = _clip()
    t0 = time.perf_counter()
    backend = _whisper(session().recognizer())
    hyp = backend.transcribe(audio, t0=0.0, prompt="", language="en")
    words = backend.align(audio, CLIP_TEXT, language="en")
    seconds = len(audio) / 16000
    got = [w.text.strip() for w in words]
    if got != CLIP_TEXT.split():
        raise RuntimeError(f"aligning {CLIP_TEXT!r} gave {got}")
    in_order = all(a.start <= b.start for a, b in itertools.pairwise(words))
    if not in_order or words[0].start < 0.0 or words[-1].end > seconds + 0.05:
        raise RuntimeError(f"word times out of order or outside the {seconds:.1f} s clip")
    return (
        f"tiny model on {backend.device} ({backend.compute_type}): decoded "
        f"{len(hyp.words)} word(s), aligned {len(words)} known words in "
        f"{time.perf_counter() - t0:.1f} s"
    )


def check_llama() -> str:
    s = session()
    mt = s.config.mt
    engine = s.translator()
    try:
        first = engine.translate(0, "in being comparatively", False, mt.tgt_lang, mt.src_lang)
        last = engine.translate(0, "in being comparatively modern.", True, mt.tgt_lang, mt.src_lang)
        if not last.tokens:
            raise RuntimeError("llama.cpp produced no tokens")
        stats = last.stats
        from subtitler.mt.llama_backend import LlamaLM

        lm = _lm(engine)
        accel = "GPU offload" if isinstance(lm, LlamaLM) and lm.gpu_offload else "CPU"
        return (
            f"tiny GGUF on {accel}: {len(first.tokens)} then {len(last.tokens)} token(s), "
            f"draft {stats.draft_len} accepted {stats.accepted}"
        )
    finally:
        engine.close()


def _lm(engine: Any) -> Any:
    from subtitler.mt.engine import LocalEngine

    if not isinstance(engine, LocalEngine):
        raise TypeError(f"the translator is a {type(engine).__name__}, not in this process")
    return engine.lm


def check_worker() -> str:
    from subtitler.asr.isolated import WorkerWhisper
    from subtitler.mt.isolated import WorkerEngine

    # The app's beam for Whisper; a shorter translation than the in-process check's.
    s = session({"asr.beam_size": 5, "mt.max_new_tokens": 8}, isolate=True)
    mt = s.config.mt
    t0 = time.perf_counter()
    engine = s.translator()
    try:
        if not isinstance(engine, WorkerEngine):
            raise TypeError(f"the translator is a {type(engine).__name__}, not in a worker")
        if engine.notice:  # its load's real test found damaged weights (the app goes on)
            raise RuntimeError(engine.notice)
        out = engine.translate(0, "in being comparatively modern.", True, mt.tgt_lang, mt.src_lang)
        pids = [engine.pid]
    finally:
        engine.close()
    if not out.tokens:
        raise RuntimeError("llama.cpp in the worker produced no tokens")
    rec = s.recognizer()
    whisper = _whisper(rec)
    try:
        if not isinstance(whisper, WorkerWhisper):
            raise TypeError(f"the recogniser is a {type(whisper).__name__}, not in a worker")
        hyp = whisper.transcribe(_clip(), t0=0.0, prompt="", language="en")
        pids.append(whisper.pid)
    finally:
        rec.close()
    return (
        f"llama.cpp and CTranslate2 in processes {pids[0]} and {pids[1]}: "
        f"{len(out.tokens)} token(s), {len(hyp.words)} word(s) in "
        f"{time.perf_counter() - t0:.1f} s"
    )


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("audio", check_audio),
    ("vad", check_vad),
    ("whisper", check_whisper),
    ("llama", check_llama),
    ("worker", check_worker),
]


def _line(ok: bool, name: str, detail: str) -> None:
    status = "ok" if ok else "FAIL"
    print(f"{status:<5}{name}: {' '.join(detail.split())}", flush=True)


def _error(e: BaseException) -> str:
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


def _run_in_thread(fn: Callable[[], str], timeout: float) -> tuple[bool, str, bool]:
    """(ok, detail, finished): runs ``fn`` in a daemon thread, waiting at most ``timeout``."""
    box: dict[str, tuple[bool, str]] = {}

    def target() -> None:
        try:
            box["r"] = (True, fn())
        except BaseException as e:  # a check must report, never take the run down
            box["r"] = (False, _error(e))

    th = threading.Thread(target=target, name="selftest", daemon=True)
    th.start()
    th.join(timeout)
    if th.is_alive():
        return False, f"timed out after {timeout:g} s", False
    return (*box["r"], True)


def _watchdog(seconds: float) -> threading.Timer:
    def fire() -> None:
        print(f"FAIL self-test: no result after {seconds:.0f} s, giving up", flush=True)
        os._exit(3)

    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()
    return t


def run_self_test(
    checks: list[tuple[str, Callable[[], str]]] | None = None,
    *,
    check_timeout: float = CHECK_TIMEOUT_S,
    total_timeout: float = TOTAL_TIMEOUT_S,
) -> int:
    """Run every check, print one line each; 0 when all passed, 1 otherwise."""
    if sys.stdout is None:  # a windowed Windows build has no console: the exit code still tells
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    # No window system is needed (or wanted): render offscreen unless told otherwise.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the self-test never downloads
    frozen = "bundle" if getattr(sys, "frozen", False) else "source"
    print(
        f"subtitler {__version__} self-test ({frozen}, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()})",
        flush=True,
    )
    watchdog = _watchdog(total_timeout)
    failed: list[str] = []
    stuck = False
    todo = CHECKS if checks is None else checks
    if checks is None:
        # Qt stays on the main thread (a QApplication must live there); it runs no event loop.
        try:
            _line(True, "qt", check_qt())
        except BaseException as e:
            _line(False, "qt", _error(e))
            failed.append("qt")
    for name, fn in todo:
        ok, detail, finished = _run_in_thread(fn, check_timeout)
        _line(ok, name, detail)
        if not ok:
            failed.append(name)
        stuck = stuck or not finished
    watchdog.cancel()
    if failed:
        print(f"self-test FAILED: {', '.join(failed)}", flush=True)
    else:
        print(f"self-test passed ({len(todo) + (1 if checks is None else 0)} checks)", flush=True)
    code = 1 if failed else 0
    if stuck:  # a native call is still running in a thread: do not wait for it at exit
        sys.stderr.flush()
        os._exit(code)
    return code
