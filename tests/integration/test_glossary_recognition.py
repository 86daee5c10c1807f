"""Glossary terms as Whisper hotwords, with the real tiny.en on real speech.

LJ001-0031 (public domain, tests/data/README.md): "In fourteen sixty-five Sweynheim and
Pannartz began printing in the monastery of Subiaco near Rome," -- tiny.en hears
"Swainheim", "Panerps" and "Subiacul" without a glossary (measured here; docs/BENCHMARKS.md,
"Glossary"). With the three names as hotwords it hears them, offline, after a prefix (as in
streaming), through the streaming recogniser and in a worker process changed live; the other
clips are recognised no worse with those hotwords set.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from subtitler.asr.faster_whisper import (
    FasterWhisperBackend,
    WhisperSettings,
    decode_audio_file,
    silero_session,
)
from subtitler.asr.isolated import WorkerWhisper
from subtitler.asr.sentences import join_words
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import SileroStream
from subtitler.mt.glossary import Glossary
from subtitler.types import AsrUpdate
from subtitler_research.asr.replay import blocks_of
from subtitler_research.asr.wer import word_error_rate
from tests.conftest import speech_clips
from tests.integration.test_asr_real_speech import committed_text, steady_clock

DATA = Path(__file__).resolve().parents[1] / "data"
CLIP = DATA / "LJ001-0031.flac"
TEXT = (
    "In fourteen sixty-five Sweynheim and Pannartz began printing in the monastery of "
    "Subiaco near Rome,"
)
NAMES = ("Sweynheim", "Pannartz", "Subiaco")
HOTWORDS = Glossary().with_pair("en", "de", [(n, n) for n in NAMES]).hotwords("en")


def _names(text: str) -> set[str]:
    return {n for n in NAMES if re.search(rf"\b{n}\b", text)}


@pytest.fixture(scope="module")
def backend(tiny_en: Path) -> FasterWhisperBackend:
    return FasterWhisperBackend(WhisperSettings(str(tiny_en), device="cpu", threads=2))


def _heard(backend: FasterWhisperBackend, hotwords: str, prefix: str = "") -> str:
    backend.set_hotwords(hotwords)
    try:
        h = backend.transcribe(
            decode_audio_file(CLIP), t0=0.0, prompt="", language="en", prefix=prefix
        )
    finally:
        backend.set_hotwords("")
    return (
        join_words([prefix, *(w.text for w in h.words)])
        if prefix
        else join_words([w.text for w in h.words])
    )


def test_the_names_are_heard_only_with_the_glossary(backend: FasterWhisperBackend) -> None:
    assert HOTWORDS == "Sweynheim. Pannartz. Subiaco."
    before = _heard(backend, "")
    after = _heard(backend, HOTWORDS)
    assert _names(before) == set()  # "Swainheim and Panerps ... Subiacul"
    assert _names(after) == set(NAMES)
    assert word_error_rate(TEXT, after).wer < word_error_rate(TEXT, before).wer
    # After a prefix, as the streaming recogniser asks (faster-whisper's own transcribe
    # drops hotwords when there is a prefix).
    prefixed = _heard(backend, HOTWORDS, prefix="In fourteen sixty-five")
    assert _names(prefixed) == set(NAMES)


def test_other_speech_is_recognised_no_worse_with_the_hotwords(
    backend: FasterWhisperBackend,
) -> None:
    clips = speech_clips()
    reference = " ".join(t for _, t in clips)

    def wer(hotwords: str) -> float:
        backend.set_hotwords(hotwords)
        try:
            hyps = [
                join_words(
                    [w.text for w in backend.transcribe(
                        decode_audio_file(p), t0=0.0, prompt="", language="en"
                    ).words]
                )
                for p, _ in clips
            ]  # fmt: skip
        finally:
            backend.set_hotwords("")
        return word_error_rate(reference, " ".join(hyps)).wer

    # Measured here: 2.3% with the hotwords, 3.1% without (129 words); one word of room for
    # CPUs with other instruction sets.
    assert wer(HOTWORDS) <= wer("") + 1 / len(reference.split())


def stream(rec: StreamingRecognizer, audio: np.ndarray[Any, Any]) -> list[AsrUpdate]:
    """The clip through the recogniser on a fixed clock: each 100 ms block arrives at its own
    end time and the recogniser is asked right then, and every run costs 50 ms (steady_clock):
    the windows it recognises, and so the words, do not depend on the machine's speed (a
    replay on the measured compute time heard "Subiaco" without hotwords on a slow machine)."""
    updates: list[AsrUpdate] = []
    now = 0.0
    for block in blocks_of(audio, 100):
        rec.insert_audio(block)
        now = block.t0 + block.duration
        updates += rec.process(now)
    return updates + rec.finish(now)


def test_the_streaming_recogniser_passes_the_hotwords(backend: FasterWhisperBackend) -> None:
    audio = decode_audio_file(CLIP)
    texts = []
    for hotwords in ("", HOTWORDS):
        rec = StreamingRecognizer(
            backend, StreamingOptions(language="en"), SileroStream(silero_session()), steady_clock()
        )
        rec.set_hotwords(hotwords)
        texts.append(committed_text(stream(rec, audio)))
    backend.set_hotwords("")
    assert _names(texts[0]) == set() and _names(texts[1]) == set(NAMES), texts


def test_a_worker_process_takes_hotwords_live(tiny_en: Path) -> None:
    w = WorkerWhisper(WhisperSettings(str(tiny_en), device="cpu", threads=2))
    try:
        audio = decode_audio_file(CLIP)
        pid = w.pid

        def heard() -> str:
            h = w.transcribe(audio, t0=0.0, prompt="", language="en")
            return join_words([x.text for x in h.words])

        assert _names(heard()) == set()
        w.set_hotwords(HOTWORDS)
        assert _names(heard()) == set(NAMES)
        assert w.pid == pid  # the model was not loaded again
    finally:
        w.close()
