"""Non-English speech with the real multilingual Whisper base (issue 26), offline and streaming.

The model: OpenAI's Whisper base for CTranslate2 from the registry (``whisper_base`` fixture:
two packages joined, model.bin sha256-checked). The clips (tests/data/README.md): a Spanish
Multilingual LibriSpeech reading (CC BY 4.0) and a Swedish NST prompt (CC0). Bounds are stated
with the value measured here and leave room for CPUs with other instruction sets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from subtitler.asr.backend import Hypothesis
from subtitler.asr.faster_whisper import (
    FasterWhisperBackend,
    WhisperSettings,
    decode_audio_file,
    silero_session,
)
from subtitler.asr.sentences import join_words
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer
from subtitler.asr.vad import SileroStream
from subtitler_research.asr.replay import SteadyClock, blocks_of, simulate
from subtitler_research.asr.wer import word_error_rate
from tests.conftest import DATA, speech_clips

SR = 16000
SPANISH = (
    DATA / "mls_es_13697_11991_000000.flac",
    "la sorpresa y el disgusto que produjo a wentworth la substitución de una cuñada por otra "
    "el gesto que se dibujó en su fisonomía el asombro que manifestó y las palabras a duras "
    "penas reprimidas que asomaron a sus labios mientras le hablaba carlos",
)
SWEDISH = (
    DATA / "nst_sv_se10x016_u0016004.flac",
    "Vår husläkare börjar i och för sig bli gammal och skröplig, men han har ju ett sådant "
    "trevligt sätt!",
)
# Measured (int8, 1 thread): Spanish 20.5% offline, Swedish 26.3% on one machine and 36.8%
# on another with the same weights (int8 arithmetic differs with the CPU's instructions:
# "Hors huslekar det börja i och för sig blir gammal och skröplig..."); tiny.en cannot do
# either (it writes English).
WER_BOUND = 0.45


@pytest.fixture(scope="module")
def base(whisper_base: Path) -> FasterWhisperBackend:
    return FasterWhisperBackend(WhisperSettings(str(whisper_base), device="cpu", threads=1))


def test_base_loads_from_the_registry_packages_as_a_multilingual_model(
    whisper_base: Path, base: FasterWhisperBackend
) -> None:
    names = sorted(p.name for p in whisper_base.iterdir())
    assert names == ["config.json", "model.bin", "tokenizer.json", "vocabulary.json"]
    assert base.multilingual


@pytest.mark.parametrize(("clip", "language"), [(SPANISH, "es"), (SWEDISH, "sv")])
@pytest.mark.parametrize("given", [True, False], ids=["language given", "language detected"])
def test_non_english_speech_recognised_offline(
    base: FasterWhisperBackend, clip: tuple[Path, str], language: str, given: bool
) -> None:
    path, text = clip
    h = base.transcribe(
        decode_audio_file(path), t0=0.0, prompt="", language=language if given else None
    )
    assert h.language == language
    w = word_error_rate(text, join_words([x.text for x in h.words]))
    assert w.wer <= WER_BOUND, w.line()


def test_the_languages_of_any_audio_are_ranked(base: FasterWhisperBackend) -> None:
    """What the streaming policy asks of the seconds before a line: the clips' languages
    first, nothing from less audio than a window."""
    spanish, swedish = (decode_audio_file(clip[0]) for clip in (SPANISH, SWEDISH))
    assert base.rank_languages(spanish)[0][0] == "es"
    assert base.rank_languages(swedish)[0][0] == "sv"
    assert base.rank_languages(spanish[: SR // 10]) == ()


@pytest.mark.parametrize("given", [True, False], ids=["language given", "language detected"])
def test_streaming_spanish_with_base(base: FasterWhisperBackend, given: bool) -> None:
    path, text = SPANISH
    silence = np.zeros(SR, np.float32)
    audio = np.concatenate([silence, decode_audio_file(path), silence])
    clock = SteadyClock(0.1)
    rec = StreamingRecognizer(
        clock.wrap(base),
        StreamingOptions(language="es" if given else None),
        SileroStream(silero_session()),
        clock,
    )
    updates = simulate(blocks_of(audio, 100), rec, clock).updates
    finals = [u for u in updates if u.final]
    assert finals and {u.language for u in finals} == {"es"}
    w = word_error_rate(text, " ".join(u.committed_text for u in finals))
    assert w.wer <= WER_BOUND, w.line()


def _apart(pieces: list[np.ndarray]) -> np.ndarray:
    """``pieces`` one after the other, 1.5 s of silence around each: an utterance each."""
    silence = np.zeros(SR * 3 // 2, np.float32)
    return np.concatenate([x for p in pieces for x in (silence, p)] + [silence])


def _cut_in_three(audio: np.ndarray) -> list[np.ndarray]:
    """``audio`` cut at its quietest 50 ms near a third and two thirds of it."""
    frame = SR // 20
    energy = np.array([np.abs(audio[i : i + frame]).mean() for i in range(0, len(audio), frame)])
    cuts = []
    for third in (1, 2):
        mid = len(energy) * third // 3
        cuts.append(frame * (mid - 20 + int(np.argmin(energy[mid - 20 : mid + 20]))))
    return [audio[a:b] for a, b in zip([0, *cuts], [*cuts, len(audio)], strict=True)]


class _Ranked:
    """The backend, with the ranking of each recognition that asked for one kept."""

    def __init__(self, backend: FasterWhisperBackend) -> None:
        self.backend = backend
        self.ranked: list[tuple[tuple[str, float], ...]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.backend, name)

    def transcribe(self, audio: np.ndarray, **kw: Any) -> Hypothesis:
        hyp = self.backend.transcribe(audio, **kw)
        if kw.get("rank_languages"):
            self.ranked.append(hyp.language_probs)
        return hyp


def _streamed(
    base: FasterWhisperBackend, audio: np.ndarray, language: str
) -> tuple[StreamingRecognizer, list[str]]:
    """The recogniser after ``audio`` streamed with ``language`` set, and the language each
    utterance's check ranked first."""
    clock = SteadyClock(0.1)
    ranked = _Ranked(base)
    rec = StreamingRecognizer(
        clock.wrap(ranked),
        StreamingOptions(language=language),
        SileroStream(silero_session()),
        clock,
    )
    simulate(blocks_of(audio, 100), rec, clock)
    return rec, [r[0][0] for r in ranked.ranked if r]


@pytest.mark.parametrize(
    ("clip", "code", "name"),
    [(SPANISH, "es", "Spanish"), (SWEDISH, "sv", "Swedish")],
    ids=["Spanish", "Swedish"],
)
def test_speech_in_another_language_than_the_one_set_is_said(
    base: FasterWhisperBackend, clip: tuple[Path, str], code: str, name: str
) -> None:
    """The speech language fixed to English, people speaking Spanish (Swedish): Whisper
    wrote nonsense or a translation, and the user was never told. Three utterances that
    Whisper ranks as another language (>= 0.8) say so, once."""
    audio = decode_audio_file(clip[0])
    pieces = _cut_in_three(audio) if name == "Spanish" else [audio] * 3
    rec, heard = _streamed(base, _apart(pieces), "en")
    assert heard[:3] == [code] * 3
    assert rec.notice == (
        f"the speech sounds like {name}, but the speech language is set to English (Settings)"
    )


def test_speech_in_the_language_set_or_silence_says_nothing(base: FasterWhisperBackend) -> None:
    """English speech with English set (the LJSpeech readings, a speech), the Spanish
    reading with Spanish set, and noise: no notice."""
    english = [decode_audio_file(p) for p, _ in speech_clips()]
    assert len(english) >= 3
    rec, heard = _streamed(base, _apart(english), "en")
    assert rec.notice == "" and len(heard) >= 3 and set(heard) == {"en"}
    rec, heard = _streamed(base, _apart(_cut_in_three(decode_audio_file(SPANISH[0]))), "es")
    assert rec.notice == "" and heard == ["es"] * 3
    noise = np.random.default_rng(0).normal(0, 0.01, SR * 20).astype(np.float32)
    rec, heard = _streamed(base, noise, "en")
    assert rec.notice == "" and heard == []  # (no speech: no utterance to check)
