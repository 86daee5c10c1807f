"""Where one recogniser run's time goes (research tooling, not shipped).

    python tools/asr_profile.py --model DIR --audio talk.wav [--threads 2] [--window 4]
        [--repeat 20] [--json OUT.json]

Windows of ``--window`` seconds are cut from the file every 7 s; each is recognised the way
``FasterWhisperBackend`` does it, timing every part separately: log-Mel features, the encoder
(on 30 s as faster-whisper pads it, and on the window plus padding as this project does),
beam-5 and greedy decoding, the word-alignment pass; plus Silero VAD over the same audio and
faster-whisper's own ``transcribe`` (word timestamps, beam 5, no fallback) for comparison.
Medians over the windows. With several threads the recogniser first chooses each part's
threads (``threads_in_use`` in the output: encoder, decoding), as it does in the app.
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

    # Warm up, and let the first passes choose the threads of each part (the recogniser tries
    # each part on its threads and on one for six passes, then keeps the faster).
    for _ in range(6):
        be.transcribe(audio[: int(window_s * 16000)], t0=0, prompt="", language="en")
        full.transcribe(audio[: int(window_s * 16000)], t0=0, prompt="", language="en")
    fw = be._model
    tok = be._tokenizer("en")
    prompt = be._prompt(tok, "", [])
    from faster_whisper.transcribe import get_suppressed_tokens

    from subtitler.asr.faster_whisper import _text_tokens

    suppress = get_suppressed_tokens(tok, [-1])
    for s0 in starts:
        x = audio[s0 : s0 + int(window_s * 16000)]
        t = time.perf_counter()
        fw.feature_extractor(x)
        add("features", time.perf_counter() - t)
        for name, b in (("encoder_window", be), ("encoder_30s", full)):
            t = time.perf_counter()
            b._encode(x)
            add(name, time.perf_counter() - t)
        enc, content = be._encode(x)
        t = time.perf_counter()
        res = be._decode(enc, tok, prompt, window_s)
        add("decode_beam5", time.perf_counter() - t)
        t = time.perf_counter()
        fw.model.generate(
            enc,
            [prompt],
            beam_size=1,
            max_length=len(prompt) + 60,
            suppress_blank=True,
            suppress_tokens=suppress,
        )
        add("decode_greedy", time.perf_counter() - t)
        text = _text_tokens(res.sequences_ids[0], tok, content / 100)
        add("tokens", float(len(res.sequences_ids[0])))
        t = time.perf_counter()
        be._word_times(tok, text, enc, content)
        add("align", time.perf_counter() - t)
        for name, b in (("run_total", be), ("run_total_30s", full)):
            t = time.perf_counter()
            b.transcribe(x, t0=0, prompt="", language="en")
            add(name, time.perf_counter() - t)
        t = time.perf_counter()
        segs, _ = fw.transcribe(
            x,
            language="en",
            beam_size=5,
            word_timestamps=True,
            temperature=0.0,
            condition_on_previous_text=False,
        )
        list(segs)
        add("faster_whisper_transcribe", time.perf_counter() - t)
        vad.reset()
        t = time.perf_counter()
        vad(x)
        add("vad", time.perf_counter() - t)
    medians = {k: round(statistics.median(v), 4) for k, v in rows.items()}
    return medians | {"windows": len(starts), "threads_in_use": list(be.threads_in_use)}


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
