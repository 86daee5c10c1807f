"""Both sides of a meeting on real speech with the real tiny.en: one loaded model for both
inputs, and the meeting's audio leaking into the microphone (-20 dB, 150 ms later) kept off
the user's lines while the user's own words stay."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from subtitler.audio.sources import load_audio
from subtitler.config import AppConfig, AsrConfig, AudioConfig, MtConfig
from subtitler.pipeline.echo import echoed, words
from subtitler.pipeline.events import Event
from subtitler.pipeline.factories import RealParts, real_factories
from subtitler.pipeline.pipeline import Pipeline
from subtitler.pipeline.transcript import read_transcript
from subtitler.types import OTHERS, YOU
from subtitler_research.asr.wer import HESITATIONS
from subtitler_research.pipeline.two_sided import Turn, render, write
from tests.conftest import DATA, speech_clips
from tests.unit.test_pipeline import wait_for

pytestmark = pytest.mark.xdist_group("real_speech")
TEXT = dict((p.name, t) for p, t in speech_clips())
COLD = "uh so this is the sick corpus uh i have a cold"  # its first words (tests/data/README.md)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")  # (Linux: an ended child not yet reaped is a zombie)
    return not stat.exists() or stat.read_text().split()[2] != "Z"


def test_both_inputs_share_one_loaded_speech_model(tiny_en: Path) -> None:
    parts = RealParts()
    make = real_factories(parts).recognizer
    theirs = make(AsrConfig(model=str(tiny_en), language="en"))
    mine = make(AsrConfig(model=str(tiny_en), language=None, vad=False))
    assert parts.shared.loaded == 1
    pid = mine.backend.pid  # type: ignore[attr-defined]
    assert pid is not None and theirs.backend.pid == pid  # type: ignore[attr-defined]
    # Each keeps its own words to expect; each call brings them.
    theirs.set_hotwords("Gutenberg")
    theirs.close()  # the other input still recognises with the model
    assert parts.shared.loaded == 1 and _alive(pid)
    clip = load_audio(DATA / "LJ001-0002.flac")
    hyp = mine.backend.transcribe(clip, t0=0.0, prompt="", language="en")  # type: ignore[attr-defined]
    assert "comparatively" in " ".join(w.text.lower() for w in hyp.words)
    mine.close()
    assert parts.shared.loaded == 0
    assert wait_for(lambda: not _alive(pid), timeout=10)
    # A recogniser asked for afterwards loads the model afresh.
    again = make(AsrConfig(model=str(tiny_en)))
    assert parts.shared.loaded == 1 and again.backend.pid != pid  # type: ignore[attr-defined]
    again.close()


def _meeting(tmp_path: Path) -> tuple[Path, Path, list[Turn]]:
    lj9, lj30 = "LJ001-0009.flac", "LJ001-0030.flac"
    turns = [
        Turn(OTHERS, 0.5, load_audio(DATA / lj9), TEXT[lj9]),
        Turn(YOU, 8.8, load_audio(DATA / "mfa_cold_corpus_0-13s.flac"), COLD),
        Turn(OTHERS, 21.1, load_audio(DATA / lj30), TEXT[lj30]),  # over the user's last second
    ]
    others, mic = render(turns, echo_db=-20.0, echo_delay_s=0.15)
    write(tmp_path, turns, others, mic)
    return tmp_path / "mic.wav", tmp_path / "others.wav", turns


def test_the_meetings_audio_heard_by_the_microphone_stays_the_meetings(
    tiny_en: Path, tmp_path: Path
) -> None:
    mic, meeting, turns = _meeting(tmp_path)
    cfg = AppConfig(
        audio=AudioConfig(source="file", file_path=str(mic), meeting_file=str(meeting)),
        # A recognition every 0.5 s of audio however busy the machine is: the same windows,
        # so the same words, on a slower one (only later).
        asr=AsrConfig(
            model=str(tiny_en), language="en", you_language="en", threads=2, adaptive_chunk=False
        ),
        mt=MtConfig(src_lang="en", tgt_lang="de"),  # no translator: lines as said
    )
    done = threading.Event()

    def on_event(ev: Event) -> None:
        if getattr(ev, "state", "") == "finished":
            done.set()

    parts = RealParts()
    p = Pipeline(cfg, on_event, real_factories(parts), transcript_path=tmp_path / "t.jsonl")
    p.start()
    assert wait_for(lambda: parts.shared.loaded == 1, timeout=60)
    assert done.wait(120)
    p.stop()
    records = read_transcript(tmp_path / "t.jsonl")
    said = {
        side: words(" ".join(r.source for r in records if r.side == side)) for side in (OTHERS, YOU)
    }
    theirs = words(" ".join(t.text for t in turns if t.side == OTHERS))
    # Whisper writes no hesitations ("uh"): of the user's words, those it can write.
    mine = [w for w in words(COLD) if w not in HESITATIONS]
    # Each side's speech is on its side: most of the meeting's words, the user's first ones.
    assert sum(echoed(theirs, said[OTHERS])) >= 0.6 * len(theirs)
    assert sum(echoed(mine, said[YOU])) >= 0.6 * len(mine), said[YOU]
    # The leak was heard by the microphone and kept off the user's lines: at most a few of
    # the meeting's words stay there (the recognisers need not agree on every word).
    assert p.echoes_dropped + p.echoes_cleaned >= 1
    assert sum(echoed(said[YOU], theirs)) <= 0.1 * len(theirs), said[YOU]


def test_a_language_an_english_only_model_cannot_hear_is_said(tiny_en: Path) -> None:
    """With meeting audio the microphone's language may differ from the meeting's: tiny.en
    would write German speech as English words, so the side's load says so."""
    make = real_factories(RealParts()).recognizer
    german = make(AsrConfig(model=str(tiny_en), language="de"))
    english = make(AsrConfig(model=str(tiny_en), language="en"))
    assert "recognises English only, not 'de'" in german.notice
    assert "English only" not in english.notice
    german.close()
    english.close()
