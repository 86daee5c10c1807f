"""What a stop keeps: the line being said and the audio the recogniser had not heard yet.

    python tools/stop_bench.py --model MODEL_DIR [--threads 2] [--language en]
        [--cut 20.5] [--caught-up] [--timeout 2] [--json OUT.json]

The real pipeline (real recogniser in its worker process, no translator) hears a LibriVox
reader (tests/data/librivox_austen_sense_ch1.flac: five sentences, 27.2 s) from the tests'
fake sound device through the capture's real callback. The device delivers the whole clip
(or its first ``--cut`` seconds) at once, so at the stop it waits in the capture's queue, as
behind a recogniser far behind the speech; ``--caught-up`` first waits until the recogniser
has heard all of it (no update for a second), so only the open line is left: a stop in the
middle of a sentence. Then ``Pipeline.stop(timeout)`` (the app's Quit gives 2 s) and the
transcript: how long the stop took, the lines written (without a cut, their WER against the
clip's text).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the fake sound device and the clip's text are the tests'

from subtitler.audio.sources import load_audio  # noqa: E402
from subtitler.config import AppConfig, AsrConfig, AudioConfig, MtConfig  # noqa: E402
from subtitler.pipeline.factories import RealParts, real_factories  # noqa: E402
from subtitler.pipeline.pipeline import Pipeline  # noqa: E402
from subtitler.pipeline.transcript import read_transcript  # noqa: E402
from subtitler_research.asr.wer import word_error_rate  # noqa: E402
from tests.helpers.fake_sounddevice import FakeSoundDevice  # noqa: E402
from tests.integration.test_asr_new_speaker import AUSTEN, AUSTEN_TEXT  # noqa: E402
from tests.unit.test_pipeline import Events, wait_for  # noqa: E402

SR = 16000


def quiet(events: Events, for_s: float, timeout: float) -> bool:
    """Wait until no event came for ``for_s`` seconds."""
    deadline = time.monotonic() + timeout
    n, since = len(events.items), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if len(events.items) != n:
            n, since = len(events.items), time.monotonic()
        elif time.monotonic() - since >= for_s:
            return True
    return False


def run(args: argparse.Namespace) -> dict[str, object]:
    clip = load_audio(AUSTEN)
    if args.cut is not None:
        clip = clip[: round(args.cut * SR)]
    sd = FakeSoundDevice(clip)
    cfg = AppConfig(
        audio=AudioConfig(device="USB Mic"),
        asr=AsrConfig(model=args.model, language=args.language, threads=args.threads),
        mt=MtConfig(src_lang="en", tgt_lang="de"),  # no translator: lines as said
    )
    with tempfile.TemporaryDirectory() as tmp:
        return _stopped(args, sd, cfg, Path(tmp) / "t.jsonl")


def _stopped(
    args: argparse.Namespace, sd: FakeSoundDevice, cfg: AppConfig, out: Path
) -> dict[str, object]:
    """Start the pipeline on ``sd``, stop it as ``args`` say; what the transcript ``out`` kept."""
    events = Events()
    p = Pipeline(cfg, events, real_factories(RealParts(sounddevice=sd)), transcript_path=out)
    p.start()
    if not wait_for(lambda: bool(sd.streams) and sd.streams[0].done.is_set(), timeout=120):
        raise SystemExit(f"the pipeline did not start: {events.items}")
    if args.caught_up and not quiet(events, 1.0, timeout=300):
        raise SystemExit("the recogniser did not catch up")
    t0 = time.monotonic()
    joined = p.stop(args.timeout)
    took = time.monotonic() - t0
    records = read_transcript(out) if out.exists() else []
    unheard = out.with_name(out.stem + ".unheard.wav")  # what the stop could not wait for
    unheard_s = 0.0
    if unheard.exists():
        with wave.open(str(unheard), "rb") as w:
            unheard_s = w.getnframes() / w.getframerate()
    said = " ".join(r.source for r in records)
    # Against what was said: the whole text (with a cut, the lines say how far it got).
    wer = word_error_rate(AUSTEN_TEXT, said) if args.cut is None else None
    return {
        "model": args.model,
        "threads": args.threads,
        "cut_s": args.cut,
        "caught_up": args.caught_up,
        "timeout_s": args.timeout,
        "stop_s": round(took, 2),
        "joined": joined,
        "unheard_s": round(unheard_s, 1),
        "lines": [[round(r.start, 1), round(r.end, 1), r.source] for r in records],
        "wer": round(wer.wer, 3) if wer else None,
        "wer_line": wer.line() if wer else "",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a faster-whisper model folder")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--language", default=None, help="en for tiny.en; none: detected")
    ap.add_argument("--cut", type=float, default=None, help="the clip's first seconds only")
    ap.add_argument("--caught-up", action="store_true", help="stop once all of it is heard")
    ap.add_argument("--timeout", type=float, default=2.0, help="stop()'s time (Quit: 2 s)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    result = run(args)
    print(
        f"stop {result['stop_s']} s (joined: {result['joined']}), "
        f"{len(result['lines'])} lines, {result['wer_line']}"  # type: ignore[arg-type]
        f"{'; kept unheard: ' + str(result['unheard_s']) + ' s' if result['unheard_s'] else ''}"
    )
    for start, end, text in result["lines"]:  # type: ignore[attr-defined]
        print(f"  {start:6.1f}-{end:6.1f}  {text}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
