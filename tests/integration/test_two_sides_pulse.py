"""Both sides captured for real: a private PulseAudio server with two null sinks, "meeting"
(what the meeting app plays) and "mic" (standing in for the microphone), each recorded from
its monitor by the app's own capture path, while real speech plays into them: the meeting's
speaker, and the user's (another speaker) with the meeting leaking into the microphone 20 dB
quieter. The whole pipeline runs with the real tiny.en; the transcript must hold each side's
words on its side and keep the leak off the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from subtitler.pipeline.echo import echoed, words
from tests.conftest import DATA, speech_clips
from tests.helpers.pulse import pulse_server
from tests.helpers.subproc import run_json
from tests.helpers.system import needs_programs

pytestmark = [
    needs_programs("pulseaudio", "paplay", why="PulseAudio meeting audio"),
    pytest.mark.xdist_group("real_speech"),
]
THEIRS = DATA / "LJ001-0009.flac"
MINE = DATA / "jfk.flac"

# Runs in its own process: soundcard connects to the server when it is imported.
MEETING = """
import json, os, sys, threading, time
from pathlib import Path
from subtitler.config import AppConfig, AsrConfig, AudioConfig
from subtitler.pipeline.factories import real_factories
from subtitler.pipeline.pipeline import Pipeline
from subtitler.pipeline.transcript import read_transcript
from tests.helpers.pulse import play


def main():
    tiny, theirs, mine, out = sys.argv[1:5]
    cfg = AppConfig(
        audio=AudioConfig(device="Monitor of Mic", meeting_device="Monitor of Meeting"),
        asr=AsrConfig(model=tiny, language="en", you_language="en", adaptive_chunk=False),
    )
    running = threading.Event()
    errors = []

    def on_event(ev):
        if getattr(ev, "state", "") == "running":
            running.set()
        if type(ev).__name__ == "ErrorEvent":
            errors.append(ev.message)

    p = Pipeline(cfg, on_event, real_factories(), transcript_path=Path(out))
    p.start()
    assert running.wait(60), errors
    env = dict(os.environ)  # (the server's: this process runs in it)
    players = [play(env, Path(theirs)), play(env, Path(theirs), "mic", volume=0.1)]
    time.sleep(6.0)  # the user answers before the meeting's speaker has quite finished
    players.append(play(env, Path(mine), "mic"))
    for pl in players:
        pl.wait(60)
    time.sleep(4.0)  # the last words' silence ends the lines
    p.stop()
    records = [{"side": r.side, "source": r.source} for r in read_transcript(Path(out))]
    print(json.dumps({"records": records, "dropped": p.echoes_dropped, "cleaned": p.echoes_cleaned,
                      "errors": errors}))


if __name__ == "__main__":  # (the engines' worker processes import this file)
    main()
"""


def test_both_sides_are_captured_and_the_leak_stays_the_meetings(
    tiny_en: Path, tmp_path: Path
) -> None:
    script = tmp_path / "meeting.py"
    script.write_text(MEETING)
    text = dict((p.name, t) for p, t in speech_clips())
    with pulse_server(tmp_path, sinks=("meeting", "mic")) as env:
        info = run_json(
            [str(script), str(tiny_en), str(THEIRS), str(MINE), str(tmp_path / "t.jsonl")],
            env,
            timeout=180,
        )
    said = {
        side: words(" ".join(r["source"] for r in info["records"] if r["side"] == side))
        for side in ("others", "you")
    }
    theirs, mine = words(text[THEIRS.name]), words(text[MINE.name])
    assert sum(echoed(theirs, said["others"])) >= 0.6 * len(theirs), info
    assert sum(echoed(mine, said["you"])) >= 0.6 * len(mine), info
    # The leak was heard by the microphone's side and kept off it.
    assert info["dropped"] + info["cleaned"] >= 1, info
    assert sum(echoed(said["you"], theirs)) <= 0.1 * len(theirs), info
