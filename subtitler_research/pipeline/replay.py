"""``python -m subtitler_research.pipeline.replay``: the whole pipeline headless, on a file or
an oracle.

    python -m subtitler_research.pipeline.replay talk.wav --asr-model tiny-dir --mt-model M.gguf \
        --tgt-lang de --json out.json
    python -m subtitler_research.pipeline.replay --oracle words.tsv --mt-model M.gguf --speed 4
    python -m subtitler_research.pipeline.replay mic.wav --meeting others.wav ...  # two sides

Writes every segment (final source and translation), what was displayed over time, and the
live metrics: commit delay, translation latency, end-to-end, display latency, NE of the
displayed text next to how often it changed (the flicker rate) and how long a line being
spoken went without an update, abandoned decodes and the prefixes shown instead, how far the
display lagged behind the recogniser, memory.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from subtitler.config import (
    AppConfig,
    add_setting_flags,
    given_settings,
    language_codes,
    with_settings,
)
from subtitler.mt.languages import UnknownLanguageError, normalize_code
from subtitler.pipeline.events import (
    AsrEvent,
    ErrorEvent,
    Event,
    MetricsEvent,
    StatusEvent,
    SubtitleEvent,
)
from subtitler.pipeline.factories import RealParts, real_factories
from subtitler.pipeline.metrics import display_latencies, median_p90
from subtitler.pipeline.pipeline import Pipeline
from subtitler.session import Session
from subtitler_research.pipeline.display import display_report
from subtitler_research.pipeline.oracle import looped_words, oracle_factories
from subtitler_research.pipeline.slow import BATCH_SHARE, slowed

log = logging.getLogger("subtitler.replay")


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux /proc; Windows: the working set; macOS:
    the peak). NaN where it cannot be read: a report column, never a reason to fail."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, AttributeError):
        pass
    if sys.platform == "win32":
        return _windows_working_set_mb()
    try:
        import resource
    except ImportError:
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def workers_rss_mb() -> float:
    """Resident memory of the engine worker processes (the models live there), in MB; Linux
    only (0 elsewhere, where rss_mb covers this process alone)."""
    import multiprocessing

    total = 0
    for child in multiprocessing.active_children():
        try:
            with open(f"/proc/{child.pid}/statm") as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    try:
        return total * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, AttributeError, OSError):
        return 0.0


def app_rss_mb() -> float:
    """This process and its engine workers together."""
    return rss_mb() + workers_rss_mb()


def _windows_working_set_mb() -> float:
    if sys.platform != "win32":
        return float("nan")
    import ctypes
    from ctypes import wintypes

    class Counters(ctypes.Structure):  # PROCESS_MEMORY_COUNTERS
        _fields_ = [
            ("cb", wintypes.DWORD),
            ("PageFaultCount", wintypes.DWORD),
            ("PeakWorkingSetSize", ctypes.c_size_t),
            ("WorkingSetSize", ctypes.c_size_t),
            ("QuotaPeakPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t),
            ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
            ("PagefileUsage", ctypes.c_size_t),
            ("PeakPagefileUsage", ctypes.c_size_t),
        ]

    c = Counters()
    c.cb = ctypes.sizeof(c)
    try:
        psapi = ctypes.WinDLL("psapi")
        kernel32 = ctypes.WinDLL("kernel32")
        kernel32.GetCurrentProcess.restype = wintypes.HANDLE
        ok = psapi.GetProcessMemoryInfo(kernel32.GetCurrentProcess(), ctypes.byref(c), c.cb)
    except (OSError, AttributeError):
        return float("nan")
    return c.WorkingSetSize / 2**20 if ok else float("nan")


@dataclass
class Recorder:
    """Collects events from the worker threads."""

    k: int
    events: list[Event] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: threading.Event = field(default_factory=threading.Event)
    fatal: str = ""

    def __call__(self, ev: Event) -> None:
        with self.lock:
            self.events.append(ev)
        if isinstance(ev, ErrorEvent):
            if ev.fatal:  # main() prints it as the "error:" line
                self.fatal = ev.message
                self.done.set()
            else:
                log.warning("%s: %s", ev.where, ev.message)
        if isinstance(ev, StatusEvent) and ev.state in ("finished", "stopped"):
            self.done.set()


def target_latencies(events: list[SubtitleEvent], targets: tuple[str, ...]) -> dict[str, Any]:
    """Per target language: its updates and their latency (ASR update to that target's
    subtitle); with several, also the time until every target had an update (what a room
    reading all of them waits) and how many updates reached every target."""
    per: dict[str, list[float]] = {t: [] for t in targets}
    ready: dict[tuple[int, float], dict[str, float]] = defaultdict(dict)
    for e in events:
        lat = e.emitted_at - e.asr_emitted_at
        per.setdefault(e.lang, []).append(lat)
        ready[e.segment_id, e.asr_emitted_at][e.lang] = lat
    out: dict[str, Any] = {}
    for t, xs in per.items():
        med, p90 = median_p90(xs)
        out[t] = {"updates": len(xs), "latency_median_s": med, "latency_p90_s": p90}
    if len(targets) > 1:
        every = [max(d.values()) for d in ready.values() if set(targets) <= set(d)]
        med, p90 = median_p90(every)
        out["all"] = {"updates": len(every), "latency_median_s": med, "latency_p90_s": p90}
        out["updates_not_in_every_target"] = len(ready) - len(every)
    return {
        k: ({m: round(x, 4) if isinstance(x, float) else x for m, x in v.items()})
        if isinstance(v, dict)
        else v
        for k, v in out.items()
    }


def side_report(rec: Recorder, pipeline: Pipeline) -> dict[str, Any]:
    """With two inputs, per side: its finished lines, how long its words took to reach the
    screen (display latency), how long its updates waited for their translation (the lag;
    its largest says whether it stayed bounded), and the echoes dropped from the user's."""
    every = [e for e in rec.events if isinstance(e, SubtitleEvent) and not e.extra]
    asr = [e.update for e in rec.events if isinstance(e, AsrEvent)]
    out: dict[str, Any] = {}
    for side in sorted({u.side for u in asr}):
        subs = [e for e in every if e.side == side and not e.partial]
        mine = [u for u in asr if u.side == side]
        shown_med, shown_p90 = median_p90(display_latencies(mine, subs))
        waits = [e.emitted_at - e.asr_emitted_at for e in subs]
        wait_med, wait_p90 = median_p90(waits)
        out[side or "one"] = {
            "lines": len({e.segment_id for e in subs if e.final and e.source}),
            "display_latency_median_s": shown_med,
            "display_latency_p90_s": shown_p90,
            "translation_latency_median_s": wait_med,
            "translation_latency_p90_s": wait_p90,
            "translation_latency_max_s": max(waits, default=None),
        }
    out["echo_lines_dropped"] = pipeline.echoes_dropped
    out["echo_lines_cleaned"] = pipeline.echoes_cleaned
    return {
        k: ({m: round(x, 4) if isinstance(x, float) else x for m, x in v.items()})
        if isinstance(v, dict)
        else v
        for k, v in out.items()
    }


def summarize(rec: Recorder, tgt_lang: str, pipeline: Pipeline) -> dict[str, Any]:
    every = [e for e in rec.events if isinstance(e, SubtitleEvent)]
    subs = [e for e in every if not e.extra]  # the main target's (as with one target)
    asr = [e.update for e in rec.events if isinstance(e, AsrEvent)]
    displayed = [
        {
            "t": round(e.emitted_at, 3),
            "segment": e.segment_id,
            "final": e.final,
            "shown": e.shown(rec.k),
            "translation": e.translation,  # (display_rules shows it under other rules)
            **({"partial": True} if e.partial else {}),
        }
        for e in subs
    ]
    # Lag: ASR updates of the same segment that arrived after the one being shown and before
    # its translation was ready (0 or 1 means the display keeps up).
    asr_times: dict[int, list[float]] = defaultdict(list)
    for u in asr:
        asr_times[u.segment_id].append(u.emitted_at)
    lags = [
        sum(1 for t in asr_times[e.segment_id] if e.asr_emitted_at < t <= e.emitted_at)
        for e in subs
    ]
    extra = {(e.segment_id, e.lang): e.translation for e in every if e.extra and e.final}
    targets = pipeline.config.mt.targets
    segments = [
        {
            "id": e.segment_id,
            "start": round(e.audio_t0, 3),
            "end": round(e.audio_t1, 3),
            "source": e.source,
            "translation": e.translation,
            **({"side": e.side} if e.side else {}),
            **(
                {"more": {t: extra.get((e.segment_id, t), "") for t in targets[1:]}}
                if targets[1:]
                else {}
            ),
        }
        # (A line shown finished as it stood while newer ones went first is a prefix: its
        # translation follows. Lines in the order said, whenever they were translated.)
        for e in sorted(subs, key=lambda e: e.segment_id)
        if e.final and not e.partial and e.source  # (a line withdrawn as an echo: none)
    ]
    m: dict[str, Any] = {}
    # (A prefix of a decode translates part of its source: no word's time on screen.)
    whole = [e for e in subs if not e.partial]
    shown_median, shown_p90 = median_p90(display_latencies(asr, whole))
    for k, v in pipeline.metrics.summary().items():
        m[k] = v
        if k == "commit_delay_p90_s":  # first time on screen, next to when committed
            m["display_latency_median_s"], m["display_latency_p90_s"] = shown_median, shown_p90
    metrics = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items()}
    metrics.update(
        {
            **display_report(subs, asr, rec.k, tgt_lang),
            "interim_prefixes": sum(e.partial for e in subs),
            "max_lag_updates": max(lags, default=0),
            "asr_updates": len(asr),
            "translations": len(subs),
            "segments_final": len(segments),
            "segments_with_metrics": sum(isinstance(e, MetricsEvent) for e in rec.events),
            "guessed_tokens": sum(e.stats.lookahead_drafted for e in subs),
            "guessed_kept": sum(e.stats.lookahead_accepted for e in subs),
        }
    )
    metrics["targets"] = target_latencies(every, targets)
    if any(e.side for e in every):
        metrics["sides"] = side_report(rec, pipeline)
    notices = [e.message for e in rec.events if isinstance(e, ErrorEvent) and not e.fatal]
    return {"segments": segments, "displayed": displayed, "metrics": metrics, "notices": notices}


def translator_pace(rec: Recorder, speed: float) -> dict[str, float | None]:
    """How fast the translator was against the speech, in the talk's time: its median
    decoding step; the median work of an update translated whole, in decoding steps (a
    batched token counts as BATCH_SHARE of one: with --mt-step-ms X an update alone takes
    about work × X); the median time one took; and the median time between two recognised
    updates of a line (an update's decode longer than that is slower than the speech)."""
    subs = [e for e in rec.events if isinstance(e, SubtitleEvent) and not e.extra]
    whole = [e.stats for e in subs if not e.partial and e.stats.method]
    step, _ = median_p90([st.decode_s / st.decode_steps for st in whole if st.decode_steps])
    work, _ = median_p90(
        [st.decode_steps + BATCH_SHARE * max(st.prompt_tokens, st.verified_tokens) for st in whole]
    )
    took, _ = median_p90([st.prompt_s + st.verify_s + st.decode_s for st in whole])
    seen: dict[int, float] = {}
    intervals = []
    for e in rec.events:
        if isinstance(e, AsrEvent):
            u = e.update
            if u.segment_id in seen:
                intervals.append(u.emitted_at - seen[u.segment_id])
            seen[u.segment_id] = u.emitted_at
    interval, _ = median_p90(intervals)
    # The translator's work per second of speech, by kind (the planner's load model:
    # subtitler/models/hardware.py): tokens evaluated as prompt, verified in batches, decoded.
    talk_s = max((e.update.audio_t1 for e in rec.events if isinstance(e, AsrEvent)), default=0.0)
    every = [e.stats for e in subs if e.stats.method]
    per_s = {
        "mt_prompt_tokens_per_s": sum(st.prompt_tokens for st in every),
        "mt_verified_tokens_per_s": sum(st.verified_tokens for st in every),
        "mt_decode_steps_per_s": sum(st.decode_steps for st in every),
    }

    def r(x: float | None, scale: float = 1.0, nd: int = 4) -> float | None:
        return None if x is None else round(x * scale, nd)

    return {
        **{k: r(v / talk_s if talk_s else None, nd=2) for k, v in per_s.items()},
        "mt_step_ms": r(step, speed * 1000, 2),
        "mt_update_work_steps": r(work, nd=2),
        "mt_update_s": r(took, speed),
        "asr_interval_s": r(interval),
    }


SHORT_FLAGS = {
    "mt.model_path": "--mt-model",
    "mt.template": "--template",
    "mt.tgt_lang": "--tgt-lang",
    "mt.method": "--method",
    "mt.beta": "--beta",
    "display.mask_k": "--k",
    "mt.draft_model_path": "--draft-model",
    "mt.draft_tokens": "--draft-tokens",
    "asr.model": "--asr-model",
    "mt.threads": "--mt-threads",
    "asr.threads": "--asr-threads",
    "mt.max_new_tokens": "--max-new-tokens",
    "audio.meeting_file": "--meeting",  # the other side's recording (the file is the user's)
}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.pipeline.replay", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("file", nargs="?", type=Path, help="audio file to replay")
    ap.add_argument("--oracle", type=Path, help="word-timestamped transcript (start\\tend\\tword)")
    ap.add_argument("--src-lang", default="en", help="speech language (fixed) and source")
    ap.add_argument("--speed", type=float, default=1.0, help="replay speed (1 = real time)")
    ap.add_argument("--loop", type=int, default=1, help="play the input this many times")
    ap.add_argument("--timeout", type=float, default=None, help="give up after this many s")
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="run llama.cpp and CTranslate2 in this process, not in worker processes",
    )
    ap.add_argument(
        "--mt-step-ms",
        type=float,
        default=0.0,
        help="make the translator slower than the speech: each decoding step costs this many "
        "ms of the talk's time (a batch 0.37 of it per token; runs in this process)",
    )
    ap.add_argument(
        "--keep-echo",
        action="store_true",
        help="two sides: keep the microphone's lines that repeat the meeting (no echo gate)",
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--quiet", action="store_true")
    # Every setting from its declaration in subtitler.config (the defaults are the app's);
    # these keep the names they had before.
    add_setting_flags(ap.add_argument_group("settings"), names=SHORT_FLAGS)
    return ap


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    a = parser().parse_args(argv)
    if (a.file is None) == (a.oracle is None):
        print("error: give an audio file or --oracle WORDS.tsv (one of them)", file=sys.stderr)
        return 2
    given = given_settings(a)
    mt_model = str(given.get("mt.model_path", ""))
    meeting = str(given.get("audio.meeting_file", ""))
    files = (a.file, a.oracle, *(Path(x) for x in (mt_model, meeting) if x))
    for p in files:
        if p is not None and not p.exists():
            print(f"error: file not found: {p}", file=sys.stderr)
            return 2
    base = with_settings(AppConfig(), given)
    try:
        tgt = normalize_code(base.mt.tgt_lang)
        src = normalize_code(a.src_lang)
        extra = [normalize_code(c) for c in language_codes(base.mt.extra_targets)]
    except UnknownLanguageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.speed <= 0:
        print("error: --speed must be positive", file=sys.stderr)
        return 2
    cfg = with_settings(
        base,
        {
            "audio.source": "file" if a.file else "microphone",
            "audio.file_path": str(a.file or ""),
            "asr.language": src,
            "mt.src_lang": src,
            "mt.tgt_lang": tgt,
            "mt.extra_targets": ",".join(c for c in extra if c != tgt),
        },
    )
    rec = Recorder(cfg.display.mask_k)
    parts = RealParts(loop=max(1, a.loop), isolate=not a.in_process)
    factories = real_factories(parts)
    if a.oracle is not None:
        words = looped_words(a.oracle, parts.loop, parts.loop_gap_s)
        factories = oracle_factories(words, parts)
    if a.mt_step_ms > 0:
        factories = slowed(factories, a.mt_step_ms / 1000 / a.speed)
    # (settings not saved)
    session = Session(cfg, factories, rec, speed=a.speed, echo_gate=not a.keep_echo)
    rss0 = app_rss_mb()
    t0 = time.monotonic()
    pipe = session.start()
    rss_samples = [rss0]
    rss_times = [0.0]
    while not rec.done.wait(2.0):
        rss_samples.append(app_rss_mb())
        rss_times.append(time.monotonic() - t0)
        if a.timeout and time.monotonic() - t0 > a.timeout:
            log.warning("timeout: stopping")
            break
    wall = time.monotonic() - t0
    rss_workers = workers_rss_mb()  # (before stop ends them)
    # Recognitions that waited for the other input's on the shared speech model.
    asr_waits = [dataclasses.asdict(w) for w in parts.shared.waits()]
    rss_samples.append(app_rss_mb())
    rss_times.append(time.monotonic() - t0)
    session.stop(2.0)
    if rec.fatal:
        print(f"error: {rec.fatal}", file=sys.stderr)
        return 2
    out = summarize(rec, tgt, pipe)
    out["metrics"].update(translator_pace(rec, a.speed))
    # Growth in the steady state: from the first sample after 10% of the run (models loaded,
    # caches warm) to the end.
    warm = next(
        (r for t, r in zip(rss_times, rss_samples, strict=True) if t >= 0.1 * wall), rss_samples[-1]
    )
    out["run"] = {
        "wall_s": round(wall, 2),
        "speed": a.speed,
        "rss_start_mb": round(rss0, 1),
        "rss_end_mb": round(rss_samples[-1], 1),
        "rss_after_warmup_mb": round(warm, 1),
        "rss_growth_mb": round(rss_samples[-1] - warm, 1),
        "rss_max_mb": round(max(rss_samples), 1),
        "rss_workers_end_mb": round(rss_workers, 1),  # (the rss_* figures include them)
        "mt_model": cfg.mt.model_path,
        "pair": f"{src}-{tgt}",
        "targets": list(cfg.mt.targets),
        "method": cfg.mt.method,
        "beta": cfg.mt.beta,
        "k": cfg.display.mask_k,
        "draft_model": cfg.mt.draft_model_path,
        "asr_shared_waits": [
            {k: round(v, 3) if isinstance(v, float) else v for k, v in w.items()} for w in asr_waits
        ],
    }
    if not a.quiet:
        for s in out["segments"]:
            who = f"{s['side']}: " if s.get("side") else ""
            print(
                f"[{s['start']:7.2f}-{s['end']:7.2f}] {who}{s['source']}\n{'':17}{s['translation']}"
            )
        print(json.dumps({**out["metrics"], **out["run"]}, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
