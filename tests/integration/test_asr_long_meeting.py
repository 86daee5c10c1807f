"""The recogniser the app loads, over a meeting: nothing kept per recognition."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from subtitler.asr.loading import load_recognizer
from subtitler.asr.streaming import StreamingRecognizer
from subtitler.audio.sources import RATE, load_audio
from subtitler.config import AsrConfig
from subtitler.types import AudioBlock

CLIP = Path(__file__).resolve().parents[1] / "data" / "jfk.flac"


def test_the_apps_recogniser_keeps_no_record_per_recognition(tiny_en: Path) -> None:
    """Each recognition's record (for a benchmark's report) was kept in a list that grew by
    one every half second of speech for as long as the meeting lasted."""
    rec = load_recognizer(AsrConfig(model=str(tiny_en), language="en"), isolate=False)
    assert isinstance(rec, StreamingRecognizer)
    audio = np.concatenate([load_audio(CLIP)] * 2)
    n = RATE // 10
    try:
        words = []
        for i in range(0, len(audio), n):
            rec.insert_audio(AudioBlock(audio[i : i + n], i / RATE))
            words += [u.text for u in rec.process(now=(i + n) / RATE) if u.final]
        assert "country" in " ".join(words).lower()  # it heard the speech
        assert rec.recognitions > 10
        assert rec.runs == []
    finally:
        rec.close()
