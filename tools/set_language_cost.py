"""What checking the speech language set costs the recogniser: one detect_language per
utterance, on the encoder output its final pass makes anyway.

    python tools/set_language_cost.py [--model DIR] [--threads 1] [--repeats 7]

With the multilingual Whisper base (``--model``; default: the research cache's copy), on
an English and a Spanish clip of tests/data, English set: the median time of a final pass
without and with the ranking, of detect_language alone, and of the encoder pass a ranking
of its own would cost instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from subtitler.asr.faster_whisper import (  # noqa: E402
    FasterWhisperBackend,
    WhisperSettings,
    decode_audio_file,
)

CLIPS = ("LJ001-0009.flac", "mls_es_13697_11991_000000.flac")


def _median_ms(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    if args.model is None:
        from subtitler_research.real_models import whisper_base

        args.model = whisper_base()
    b = FasterWhisperBackend(WhisperSettings(str(args.model), device="cpu", threads=args.threads))
    for name in CLIPS:
        print(_measured(b, name, args.repeats))


def _measured(b: FasterWhisperBackend, name: str, repeats: int) -> str:
    audio = decode_audio_file(ROOT / "tests" / "data" / name)
    b.transcribe(audio, t0=0.0, prompt="", language="en")  # (warm)
    plain = _median_ms(lambda: b.transcribe(audio, t0=0.0, prompt="", language="en"), repeats)
    ranked = _median_ms(
        lambda: b.transcribe(audio, t0=0.0, prompt="", language="en", rank_languages=True),
        repeats,
    )
    encoded, _ = b._encode(audio)
    detect = _median_ms(lambda: b._ranked(encoded), 3 * repeats)
    encode = _median_ms(lambda: b._encode(audio), repeats)
    return (
        f"{name} ({len(audio) / 16000:.1f} s): final pass {plain:.0f} ms, with the ranking "
        f"{ranked:.0f} ms; detect_language alone {detect:.1f} ms; an encoder pass {encode:.0f} ms"
    )


if __name__ == "__main__":
    main()
