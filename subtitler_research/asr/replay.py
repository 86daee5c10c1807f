"""Replay a recording (or a word-timestamped transcript) through the streaming recogniser.

    python -m subtitler_research.asr.replay FILE [--model small|DIR] [--json OUT.json] [--bench]
    python -m subtitler_research.asr.replay --oracle WORDS.tsv [--json OUT.json] [--bench]

By default the stream is simulated at 1x without waiting: audio "arrives" on its own clock,
and every recogniser call advances that clock by its measured compute time, so the timings
are those of a live run on this machine. ``--realtime`` instead plays the file at 1x through
the capture path's drop-oldest queue with the wall clock.

The app's speech settings are flags made from their declarations in ``subtitler.config`` (every
``asr`` field as ``--asr-field``, a few under their old names: ``--model``, ``--min-chunk``, ...),
checked and mapped to the policy and the recogniser as the app does; the research knobs the app
does not have (``--max-chunk``, ``--pad``, the oracle's) are flags of their own.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.asr.backend import (
    SAMPLE_RATE,
    AsrBackend,
    AsrError,
    Hypothesis,
    LanguageRanker,
    Samples,
)
from subtitler.asr.faster_whisper import WhisperSettings
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import SpeechProbabilities
from subtitler.audio.capture import DropOldestQueue
from subtitler.audio.sources import AudioFileError, FileSource
from subtitler.config import (
    SECTIONS,
    SETTING_DEST,
    AppConfig,
    AsrConfig,
    add_setting_flags,
    given_settings,
    specs,
    with_settings,
)
from subtitler.mt.languages import UnknownLanguageError, normalize_code
from subtitler.types import AsrUpdate, AudioBlock
from subtitler_research.asr.metrics import StreamReport, summarize

log = logging.getLogger("subtitler_research.asr.replay")


@dataclass
class ReplayResult:
    updates: list[AsrUpdate]
    report: StreamReport


class SteadyClock:
    """A clock on which only recogniser calls take time, each ``cost_s``: a replay on it makes
    the same calls on any machine, however busy (for comparing settings without a lock; its
    latencies are not the machine's)."""

    def __init__(self, cost_s: float) -> None:
        self.cost_s = cost_s
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def wrap(self, backend: AsrBackend) -> AsrBackend:
        """``backend`` whose every call advances this clock by ``cost_s``."""
        clock = self

        class Timed:
            # What the policy reads of the model (an English-only one's language is fixed).
            multilingual = bool(getattr(backend, "multilingual", True))

            def set_hotwords(self, hotwords: str) -> None:
                backend.set_hotwords(hotwords)

            def close(self) -> None:
                backend.close()

            def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
                if not isinstance(backend, LanguageRanker):
                    return ()
                out = backend.rank_languages(audio)
                clock.t += clock.cost_s
                return out

            def transcribe(
                self,
                audio: Samples,
                *,
                t0: float,
                prompt: str,
                language: str | None,
                prefix: str = "",
                rank_languages: bool = False,
            ) -> Hypothesis:
                out = backend.transcribe(
                    audio,
                    t0=t0,
                    prompt=prompt,
                    language=language,
                    prefix=prefix,
                    rank_languages=rank_languages,
                )
                clock.t += clock.cost_s
                return out

        return Timed()


def simulate(
    blocks: list[AudioBlock], rec: StreamingRecognizer, clock: Callable[[], float] | None = None
) -> ReplayResult:
    """1x stream on a simulated clock advanced by the compute time (measured, or ``clock``'s:
    a SteadyClock whose recogniser also counts on it)."""
    clock = clock or time.perf_counter
    now = compute = 0.0
    i = 0
    updates: list[AsrUpdate] = []

    def step(final: bool) -> None:
        nonlocal now, compute
        c0 = clock()
        ups = rec.finish(now) if final else rec.process(now)
        spent = clock() - c0
        now += spent
        compute += spent
        updates.extend(replace(u, emitted_at=now) for u in ups)

    while i < len(blocks):
        arrival = blocks[i].t0 + blocks[i].duration
        now = max(now, arrival)  # idle until the next block has been spoken
        c0 = clock()
        while i < len(blocks) and blocks[i].t0 + blocks[i].duration <= now + 1e-9:
            rec.insert_audio(blocks[i])  # everything that arrived while we were busy
            i += 1
        spent = clock() - c0
        now += spent
        compute += spent
        step(final=False)
    step(final=True)
    audio_s = sum(b.duration for b in blocks)
    return ReplayResult(updates, summarize(updates, rec.runs, audio_s, compute))


def realtime(source: FileSource, rec: StreamingRecognizer, queue_blocks: int) -> ReplayResult:
    """1x with the wall clock: a feeder thread plays the file into a drop-oldest queue."""
    q: DropOldestQueue[AudioBlock] = DropOldestQueue(queue_blocks)
    done = threading.Event()
    compute = 0.0
    updates: list[AsrUpdate] = []

    def feed() -> None:
        for b in source.blocks():
            q.put(b)
        done.set()

    t = threading.Thread(target=feed, name="replay-feed", daemon=True)
    t.start()
    while True:
        b = q.get(timeout=0.05)
        if b is None:
            if done.is_set() and q.qsize() == 0:
                break
            continue
        c0 = time.perf_counter()
        while b is not None:
            rec.insert_audio(b)
            b = q.get(timeout=0)
        ups = rec.process(source.clock() - source.started_at)
        compute += time.perf_counter() - c0
        updates += [replace(u, emitted_at=source.clock() - source.started_at) for u in ups]
    t.join(timeout=1.0)
    c0 = time.perf_counter()
    ups = rec.finish(0.0)
    compute += time.perf_counter() - c0
    updates += [replace(u, emitted_at=source.clock() - source.started_at) for u in ups]
    report = summarize(updates, rec.runs, source.duration, compute, q.dropped)
    return ReplayResult(updates, report)


def blocks_of(audio: np.ndarray[Any, Any], block_ms: int) -> list[AudioBlock]:
    return list(FileSource(audio, realtime=False, block_ms=block_ms).blocks())


# Old names of the settings' flags (the rest are --section-field, as the app's).
SHORT_FLAGS = {
    "asr.model": "--model",
    "asr.device": "--device",
    "asr.compute_type": "--compute-type",
    "asr.threads": "--threads",
    "asr.beam_size": "--beam-size",
    "asr.language": "--language",
    "asr.min_chunk_s": "--min-chunk",
    "asr.buffer_trim_s": "--buffer-trim",
    "asr.silence_end_s": "--silence-end",
    "audio.block_ms": "--block-ms",
    "audio.queue_blocks": "--queue-blocks",
}


# Flags kept from before that turn a setting off.
ALIASES = (
    ("--fixed-chunk", "asr.adaptive_chunk", "always --min-chunk: --asr-adaptive-chunk false"),
    ("--no-vad", "asr.vad", "no VAD, one endless utterance: --asr-vad false"),
)


def setting_keys() -> list[str]:
    """The settings this replay takes: every speech setting of the schema, and the audio
    block and queue."""
    return [f"asr.{f.name}" for f, _ in specs(SECTIONS["asr"])] + [
        "audio.block_ms",
        "audio.queue_blocks",
    ]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.asr.replay",
        description="Replay audio or a word-timestamped transcript through streaming ASR.",
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", type=Path, help="any audio file PyAV can decode")
    src.add_argument("--oracle", type=Path, help="WORDS.tsv: start<TAB>end<TAB>word per line")
    ap.add_argument("--json", type=Path, help="write the updates and the summary here")
    ap.add_argument("--bench", action="store_true", help="print only the benchmark summary")
    ap.add_argument("--realtime", action="store_true", help="play at 1x with the wall clock")
    ap.add_argument(
        "--steady-cost",
        type=float,
        help="every recogniser call takes this long (s) on the simulated clock, nothing else "
        "does: the same calls on any machine (for comparing settings; not a latency figure)",
    )
    # The app's settings, from their declarations in subtitler.config (defaults: the app's).
    g = ap.add_argument_group("settings (the app's)")
    add_setting_flags(g, only=setting_keys(), names=SHORT_FLAGS)
    for flag, key, doc in ALIASES:
        g.add_argument(flag, dest=SETTING_DEST + key, action="store_const", const=False, help=doc)
    # Research knobs the app does not have.
    g = ap.add_argument_group("recogniser (audio files; research only)")
    w = WhisperSettings()
    g.add_argument("--max-new-tokens", type=int, help="cap per call (random test models)")
    g.add_argument(
        "--hotwords", default="", help='words to expect (glossary terms), as "Subiaco. Pannartz."'
    )
    g.add_argument(
        "--pad", type=float, default=w.pad_s, help="silence after the window for the encoder (s)"
    )
    g.add_argument(
        "--timestamps", action="store_true", help="decode with Whisper's timestamp tokens"
    )
    g.add_argument(
        "--min-encoder", type=float, default=w.min_encoder_s, help="shortest encoder input (s)"
    )
    g.add_argument(
        "--encoder-window",
        type=float,
        default=w.encoder_window_s,
        help="fixed encoder input (s); 30 = faster-whisper's padding to 30 s",
    )
    g = ap.add_argument_group("oracle")
    g.add_argument("--flicker-p", type=float, default=0.5, help="chance a recent word changes")
    g.add_argument("--flicker-s", type=float, default=0.5, help="how recent (s)")
    g.add_argument("--seed", type=int, default=0)
    g = ap.add_argument_group("policy (research only)")
    d = StreamingOptions()
    g.add_argument("--max-chunk", type=float, default=d.max_chunk_s, help="longest cadence (s)")
    g.add_argument("--duty", type=float, default=d.duty, help="busy share the cadence aims at")
    g.add_argument("--context", type=float, default=d.context_s, help="finished text kept (s)")
    g.add_argument("--tail-guard", type=float, default=d.tail_guard_s)
    g.add_argument(
        "--lookback", type=float, default=d.lookback_s, help="window starts on earlier words (s)"
    )
    g.add_argument(
        "--bridge", type=float, default=d.bridge_s, help="longest doubted pause taken in (s)"
    )
    g.add_argument(
        "--bridge-doubt", type=float, default=d.bridge_doubt_s, help="doubted frames needed (s)"
    )
    g.add_argument(
        "--hear-before", type=float, default=d.hear_before_s, help="a line's last pass hears (s)"
    )
    g.add_argument(
        "--line-waits", type=float, default=d.line_waits_s, help="a line's words wait (s speech)"
    )
    return ap


def settings(a: argparse.Namespace) -> AppConfig:
    """The app's default settings with the setting flags given (a language as a code)."""
    given = given_settings(a)
    if given.get("asr.language") is not None:
        given["asr.language"] = normalize_code(given["asr.language"])
    return with_settings(AppConfig(), given)


def streaming_options(a: argparse.Namespace, cfg: AsrConfig) -> StreamingOptions:
    """The app's policy for ``cfg`` (StreamingOptions.from_config) and the research knobs."""
    return replace(
        StreamingOptions.from_config(cfg),
        max_chunk_s=a.max_chunk,
        duty=a.duty,
        context_s=a.context,
        tail_guard_s=a.tail_guard,
        lookback_s=a.lookback,
        bridge_s=a.bridge,
        bridge_doubt_s=a.bridge_doubt,
        hear_before_s=a.hear_before,
        line_waits_s=a.line_waits,
    )


def whisper_settings(a: argparse.Namespace, cfg: AsrConfig) -> WhisperSettings:
    """The app's recogniser settings for ``cfg`` (WhisperSettings.from_config) and the
    research knobs."""
    return replace(
        WhisperSettings.from_config(cfg),
        max_new_tokens=a.max_new_tokens,
        pad_s=a.pad,
        min_encoder_s=a.min_encoder,
        timestamps=a.timestamps,
        encoder_window_s=a.encoder_window,
        hotwords=a.hotwords,
    )


def _setup(
    a: argparse.Namespace, cfg: AsrConfig
) -> tuple[AsrBackend, SpeechProbabilities | None, Any]:
    """Backend, VAD and audio for the arguments; raises AsrError/AudioFileError."""
    if a.oracle is not None:
        from subtitler_research.asr.oracle import OracleBackend, OracleVad, read_words_tsv

        words = read_words_tsv(a.oracle)
        oracle = OracleBackend(words, a.flicker_s, a.flicker_p, a.seed)
        # Nothing to listen to: silent audio as long as the talk drives the clock.
        audio = np.zeros(round((words[-1].end + 1.5) * SAMPLE_RATE), dtype=np.float32)
        return oracle, OracleVad(words), audio
    from subtitler.asr.faster_whisper import (
        FasterWhisperBackend,
        decode_audio_file,
        silero_session,
    )
    from subtitler.asr.vad import SileroStream

    try:
        audio = decode_audio_file(a.file)
    except AsrError as e:
        raise AudioFileError(str(e)) from None
    backend = FasterWhisperBackend(whisper_settings(a, cfg))
    return backend, SileroStream(silero_session()), audio


def _print_update(u: AsrUpdate) -> None:
    tag = "FINAL" if u.final else "     "
    tail = f" | {u.tentative_text}" if u.tentative_text else ""
    print(
        f"{u.emitted_at:8.2f}s  seg {u.segment_id:3d} {tag} "
        f"[{u.audio_t0:7.2f}-{u.audio_t1:7.2f}]  {u.committed_text}{tail}"
    )


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = settings(a)
    except UnknownLanguageError as e:
        print(f"error: --language: {e}", file=sys.stderr)
        return 2
    try:
        backend, vad, audio = _setup(a, cfg.asr)
    except (AsrError, AudioFileError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    options = streaming_options(a, cfg.asr)
    steady = SteadyClock(a.steady_cost) if a.steady_cost is not None else None
    if steady is not None:
        if a.realtime:
            print("error: --steady-cost simulates the clock; not with --realtime", file=sys.stderr)
            return 2
        backend = steady.wrap(backend)
    rec = StreamingRecognizer(
        backend, options, vad if options.vad else None, cost_clock=steady or time.perf_counter
    )
    if a.realtime:
        src = FileSource(audio, realtime=True, block_ms=cfg.audio.block_ms)
        result = realtime(src, rec, cfg.audio.queue_blocks)
    else:
        result = simulate(blocks_of(audio, cfg.audio.block_ms), rec, steady)
    if not a.bench:
        for u in result.updates:
            _print_update(u)
    for line in result.report.lines():
        print(line)
    if a.json:
        research = {k: v for k, v in vars(a).items() if not k.startswith(SETTING_DEST)}
        payload = {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in research.items()},
            "settings": {k: _get(cfg, k) for k in setting_keys()},
            "summary": asdict(result.report),
            "updates": [asdict(u) for u in result.updates],
        }
        a.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


def _get(cfg: AppConfig, key: str) -> Any:
    section, name = key.split(".", 1)
    return getattr(getattr(cfg, section), name)


if __name__ == "__main__":
    sys.exit(main())
