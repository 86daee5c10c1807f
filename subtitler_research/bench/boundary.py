"""``python -m subtitler_research.bench.boundary``: what the engine worker's process boundary costs
per translation update.

The same streaming updates (each sentence of a talk revealed a few words at a time, the last
one final) are translated by the engine in this process and by the engine in a worker
process, update by update in turn, so machine noise hits both alike. Per update it reports
the wall time of each, and the worker's transport cost: the time the call took minus the time
its handler ran in the worker (pickling, the pipe, waking up), and the CPU this process
spends waiting (it polls the abort check every few milliseconds).

    python -m subtitler_research.bench.boundary --model fixtures/translator/model.gguf \\
        --words tests/data/ljspeech_talk.words.tsv --step 3 --json out.json \\
        [--whisper WHISPER_DIR --clip SPEECH.flac --windows 1,5,10,15]

With ``--whisper`` it also times recognitions of 1 to 15 s windows in a Whisper worker: what
the audio's trip over the pipe costs next to the recognition itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from subtitler.config import MtConfig
from subtitler_research.bench.streams import prefixes


def sentences(words_tsv: Path, limit: int) -> list[str]:
    """The talk's sentences (a word ending in . ? ! closes one)."""
    from subtitler.asr.sentences import ends_sentence
    from subtitler_research.asr.oracle import read_words_tsv

    out, cur = [], []
    for w in read_words_tsv(words_tsv):
        cur.append(w.text.strip())
        if ends_sentence(w.text):
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out[:limit]


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summary(xs: list[float]) -> dict[str, float]:
    ms = [1000 * x for x in xs]
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p90_ms": round(pct(ms, 0.9), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
    }


def run(model: Path, words: Path, step: int, limit: int, threads: int) -> dict[str, Any]:
    from subtitler.mt.engine import LocalEngine
    from subtitler.mt.isolated import WorkerEngine
    from subtitler.mt.loading import load_translator

    mt = MtConfig(model_path=str(model), threads=threads, n_ubatch=512)
    local = LocalEngine(load_translator(mt), mt, model.name)
    worker = WorkerEngine(mt, model)
    updates = [
        (seg, text, i == len(ps) - 1)
        for seg, sent in enumerate(sentences(words, limit))
        for ps in [prefixes(sent, step)]
        for i, text in enumerate(ps)
    ]
    wall_local, wall_worker, transport = [], [], []
    same = 0
    cpu_waiting = 0.0  # this process's CPU time while the worker translated

    def never() -> bool:  # the pipeline always passes an abort check: the worker polls it
        return False

    try:
        for seg, text, final in updates:
            t0 = time.perf_counter()
            a = local.translate(seg, text, final, mt.tgt_lang, "en", should_abort=never)
            t1, c1 = time.perf_counter(), time.process_time()
            b = worker.translate(seg, text, final, mt.tgt_lang, "en", should_abort=never)
            t2, c2 = time.perf_counter(), time.process_time()
            wall_local.append(t1 - t0)
            wall_worker.append(t2 - t1)
            transport.append(t2 - t1 - worker.handler_s)
            cpu_waiting += c2 - c1
            same += a.tokens == b.tokens
    finally:
        local.close()
        worker.close()
    return {
        "model": str(model),
        "updates": len(updates),
        "identical_outputs": same,
        "in_process": summary(wall_local),
        "worker": summary(wall_worker),
        "transport": summary(transport),
        # Waiting costs CPU too (the abort check is polled): per ms the worker translated.
        "parent_cpu_per_worker_s": round(cpu_waiting / sum(wall_worker), 4),
    }


def run_whisper(model_dir: Path, clip: Path, windows: list[float], repeats: int) -> dict[str, Any]:
    """Transport cost of one recognition per window length (the audio goes over the pipe)."""
    import numpy as np

    from subtitler.asr.faster_whisper import WhisperSettings
    from subtitler.asr.isolated import WorkerWhisper
    from subtitler.audio.sources import load_audio

    speech = load_audio(clip)
    w = WorkerWhisper(WhisperSettings(str(model_dir), device="cpu", threads=1))
    out: dict[str, Any] = {"model": str(model_dir)}
    try:
        for seconds in windows:
            n = int(seconds * 16000)
            audio = np.resize(speech, n).astype(np.float32)  # the clip repeated to length
            wall, transport = [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                w.transcribe(audio, t0=0.0, prompt="", language="en")
                wall.append(time.perf_counter() - t0)
                transport.append(wall[-1] - w.handler_s)
            out[f"{seconds:g}s"] = {"recognition": summary(wall), "transport": summary(transport)}
    finally:
        w.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench.boundary", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--words", type=Path, required=True, help="word-timestamped talk (.tsv)")
    ap.add_argument("--step", type=int, default=3, help="source words revealed per update")
    ap.add_argument("--limit", type=int, default=40, help="sentences")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--whisper", type=Path, default=None, help="also a Whisper model folder")
    ap.add_argument("--clip", type=Path, default=None, help="speech for --whisper")
    ap.add_argument("--windows", default="1,5,10,15", help="--whisper window lengths (s)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    for p in (a.model, a.words):
        if not p.is_file():
            print(f"error: file not found: {p}", file=sys.stderr)
            return 2
    out = run(a.model, a.words, a.step, a.limit, a.threads)
    if a.whisper is not None:
        if a.clip is None or not a.clip.is_file():
            print("error: --whisper needs --clip AUDIO", file=sys.stderr)
            return 2
        windows = [float(x) for x in a.windows.split(",") if x.strip()]
        out["whisper"] = run_whisper(a.whisper, a.clip, windows, a.repeats)
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
