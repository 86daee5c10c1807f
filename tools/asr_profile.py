"""Where one recogniser run's time goes (research tooling, not shipped).

    python tools/asr_profile.py --model DIR --audio talk.wav [--threads 2] [--window 4]
        [--repeat 20] [--json OUT.json]

Windows of ``--window`` seconds are cut from the file every 7 s; each is recognised the way
``FasterWhisperBackend`` does it, timing every part separately: log-Mel features, the encoder
(on 30 s as faster-whisper pads it, and on the window plus padding as this project does),
beam-5 and greedy decoding, the word-alignment pass; plus Silero VAD over the same audio and
faster-whisper's own ``transcribe`` (word timestamps, beam 5, no fallback) for comparison.
Medians over the windows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from subtitler.asr.faster_whisper import (  # noqa: E402
    FasterWhisperBackend,
    WhisperSettings,
    decode_audio_file,
    silero_session,
)
from subtitler.asr.vad import SileroStream  # noqa: E402


def _time(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def profile(model: str, audio: np.ndarray, threads: int, window_s: float, n: int) -> dict[str, Any]:
    be = FasterWhisperBackend(WhisperSettings(model, device="cpu", threads=threads))
    full = FasterWhisperBackend(
        WhisperSettings(model, device="cpu", threads=threads, encoder_window_s=30.0)
    )
    vad = SileroStream(silero_session())
    step = 7 * 16000
    starts = [i * step for i in range(n) if i * step + window_s * 16000 <= len(audio)]
    rows: dict[str, list[float]] = {}

    def add(k: str, v: float) -> None:
        rows.setdefault(k, []).append(v)

    be.transcribe(audio[: int(window_s * 16000)], t0=0, prompt="", language="en")  # warm up
    full.transcribe(audio[: int(window_s * 16000)], t0=0, prompt="", language="en")
    fw = be._model
    for s0 in starts:
        x = audio[s0 : s0 + int(window_s * 16000)]
        tok = be._tokenizer("en")
        prompt = be._prompt(tok, "")
        t, _ = _time(lambda x=x: fw.feature_extractor(x))
        add("features", t)
        for name, b in (("encoder_window", be), ("encoder_30s", full)):
            t, (enc, content) = _time(lambda b=b, x=x: b._encode(x))
            add(name, t)
        enc, content = be._encode(x)
        t, res = _time(lambda enc=enc: be._decode(enc, tok, prompt, window_s))
        add("decode_beam5", t)
        from faster_whisper.transcribe import get_suppressed_tokens

        t, _ = _time(
            lambda enc=enc: fw.model.generate(
                enc,
                [prompt],
                beam_size=1,
                max_length=len(prompt) + 60,
                suppress_blank=True,
                suppress_tokens=get_suppressed_tokens(tok, [-1]),
            )
        )
        add("decode_greedy", t)
        from subtitler.asr.faster_whisper import _text_tokens

        text = _text_tokens(res.sequences_ids[0], tok, content / 100)
        add("tokens", float(len(res.sequences_ids[0])))
        t, _ = _time(lambda enc=enc, text=text: be._word_times(tok, text, enc, content))
        add("align", t)
        t, _ = _time(lambda x=x: be.transcribe(x, t0=0, prompt="", language="en"))
        add("run_total", t)
        t, _ = _time(lambda x=x: full.transcribe(x, t0=0, prompt="", language="en"))
        add("run_total_30s", t)

        def legacy(x: np.ndarray = x) -> None:
            segs, _ = fw.transcribe(
                x,
                language="en",
                beam_size=5,
                word_timestamps=True,
                temperature=0.0,
                condition_on_previous_text=False,
            )
            list(segs)

        t, _ = _time(legacy)
        add("faster_whisper_transcribe", t)
        vad.reset()
        t, _ = _time(lambda x=x: vad(x))
        add("vad", t)
    return {k: round(statistics.median(v), 4) for k, v in rows.items()} | {"windows": len(starts)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--audio", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--window", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=20, help="windows (one every 7 s)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    audio = decode_audio_file(a.audio)
    r = profile(a.model, audio, a.threads, a.window, a.repeat)
    print(json.dumps(r, indent=1))
    if a.json:
        a.json.write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
