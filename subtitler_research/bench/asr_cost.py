"""Per-run cost of the streaming recogniser for Whisper's real shapes (random weights).

    python -m subtitler_research.bench.asr_cost --shapes tiny,base,small --threads 1,2 [--window 4]
        [--tokens 14] [--repeat 7] [--model DIR ...] [--cache DIR] [--json OUT.json]

One run is what ``FasterWhisperBackend.transcribe`` does for a window of ``--window`` seconds:
the encoder on the window plus padding, beam-5 decoding of ``--tokens`` tokens (about what
real speech gives in 4 s; random weights never stop by themselves, so the length is fixed),
and the word alignment of as many tokens. Random weights of the real shapes cost what the
real models cost (``--model`` adds real model folders to compare). The medians feed
``subtitler.models.hardware.WHISPER_RUN_COST``, from which the first-run planner chooses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

TEXT = " in being comparatively modern, has never been surpassed, than in the same operations"


def run_cost(model: Path, threads: int, window_s: float, tokens: int, repeat: int) -> float:
    """Median seconds of one recogniser run on ``window_s`` of audio."""
    from subtitler.asr.faster_whisper import FasterWhisperBackend, WhisperSettings

    be = FasterWhisperBackend(
        WhisperSettings(str(model), device="cpu", threads=threads, max_new_tokens=tokens)
    )
    rng = np.random.default_rng(0)
    audio = (rng.standard_normal(round(window_s * 16000)) * 0.1).astype(np.float32)
    tok = be._tokenizer("en")
    text = tok.encode(TEXT)[:tokens]
    prompt = be._prompt(tok, "", [])

    def once() -> float:
        t = time.perf_counter()
        encoded, content = be._encode(audio)
        be._decode(encoded, tok, prompt, window_s)
        be._word_times(tok, text, encoded, content)
        return time.perf_counter() - t

    once()  # the first call allocates
    return statistics.median(once() for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench.asr_cost", description=__doc__
    )
    ap.add_argument("--shapes", default="tiny,base,small")
    ap.add_argument("--model", action="append", default=[], help="a real model folder too")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--window", type=float, default=4.0)
    ap.add_argument("--tokens", type=int, default=14)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cache", type=Path, help="keep the random models here")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    from subtitler_research.asr.tiny_model import SHAPES, build_random_whisper

    cache = a.cache or Path(tempfile.mkdtemp(prefix="asr-cost-"))
    models: list[tuple[str, Path]] = []
    for name in [s for s in a.shapes.split(",") if s]:
        if name not in SHAPES:
            print(f"error: unknown shape {name!r} ({', '.join(SHAPES)})", file=sys.stderr)
            return 2
        d = cache / f"random-{name}"
        if not (d / "model.bin").is_file():
            build_random_whisper(d, SHAPES[name])
        models.append((f"{name} (random)", d))
    models += [(Path(m).name, Path(m)) for m in a.model]
    out: dict[str, Any] = {"window_s": a.window, "tokens": a.tokens, "costs": {}}
    for label, path in models:
        for t in (int(x) for x in a.threads.split(",")):
            c = run_cost(path, t, a.window, a.tokens, a.repeat)
            out["costs"][f"{label}, {t} thread(s)"] = round(c, 4)
            print(f"{label:>18}  {t} thread(s)  {c:.3f} s per run", flush=True)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
