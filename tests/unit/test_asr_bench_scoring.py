"""The speech benchmark's scoring (tools/asr_speech_bench.py): the longest stretch of speech
without a recognised word, per-part WER, and hesitations left out of WER."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from subtitler.types import Word
from subtitler_research.asr.degrade import degraded
from subtitler_research.asr.wer import normalize, word_error_rate

TOOL = Path(__file__).resolve().parents[2] / "tools" / "asr_speech_bench.py"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("asr_speech_bench", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["asr_speech_bench"] = module
    spec.loader.exec_module(module)
    return module


def timed(text: str, gap_after: int = -1) -> list[Word]:
    """Words 0.4 s apart; a 5 s pause after word ``gap_after``."""
    out, t = [], 0.0
    for i, w in enumerate(text.split()):
        out.append(Word(w, t, t + 0.3))
        t += 0.4 + (5.0 if i == gap_after else 0.0)
    return out


def test_longest_miss_spans_the_words_nobody_recognised() -> None:
    b = bench()
    ref = timed("one two three four five six seven eight")
    hit, _ = b.alignment([w.text for w in ref], "one two three seven eight".split())
    assert hit == [True, True, True, False, False, False, True, True]
    miss, where = b.longest_miss(ref, hit)
    assert miss == round(ref[5].end - ref[3].start, 2)  # four..six
    assert "'four'" in where
    assert b.longest_miss(ref, [True] * len(ref))[0] == 0.0


def test_a_pause_inside_a_miss_counts_half_a_second() -> None:
    b = bench()
    ref = timed("one two three four", gap_after=1)  # 5 s pause after "two"
    miss, _ = b.longest_miss(ref, [True, False, False, True])
    assert miss == round(0.3 + 0.5 + 0.3, 2)  # two, half a second of the pause, three


def test_a_substituted_word_is_not_recognised_and_hesitations_do_not_count() -> None:
    b = bench()
    ref = timed("so um this is the sick corpus")
    hit, owner = b.alignment([w.text for w in ref], "so this is the six corpus".split())
    assert hit[1] is None  # "um": the normaliser drops it, it neither ends nor starts a miss
    assert hit[5] is False and owner[4] == 5  # "six" stands for "sick", wrongly
    assert b.longest_miss(ref, hit)[0] == 0.3


def test_per_part_wer_follows_the_reference_times() -> None:
    b = bench()
    ref = timed("alpha beta gamma delta epsilon zeta", gap_after=2)
    parts = [{"name": "a", "t1": 2.0}, {"name": "b", "t1": 99.0}]
    hyp = "alpha beta gamma delta extra zeta".split()
    hit, owner = b.alignment([w.text for w in ref], hyp)
    out = b.per_part(parts, ref, hyp, hit, owner)
    assert out["a"]["wer"] == 0.0
    assert out["b"]["wer"] == round(1 / 3, 4)


def test_hesitations_are_left_out_of_wer() -> None:
    assert (
        normalize("uh so this is, um, the sick corpus hmm") == "so this is the sick corpus".split()
    )
    assert word_error_rate("uh i have a cold", "I have a cold.").wer == 0.0


def test_word_pieces_without_a_space_continue_the_word_before() -> None:
    b = bench()
    pieces = [b.HypWord(" d'", 1.0, 0.5, 0.0, 0.1), b.HypWord("agent", 2.0, 1.5, 0.1, 0.4)]
    pieces.append(b.HypWord(" suivi", 3.0, 2.5, 0.5, 0.8))
    words = b.merge_pieces(pieces)
    assert [w.text for w in words] == ["d'agent", "suivi"]
    assert (words[0].committed_at, words[0].shown_at, words[0].end) == (2.0, 1.5, 0.4)


def test_one_word_in_two_spellings_is_not_an_error() -> None:
    assert normalize("Alright, OK.") == normalize("all right okay") == ["all", "right", "okay"]
    result = word_error_rate("alright thanks ok so", "All right. Thanks. OK, so.")
    assert (result.wer, result.ref_words) == (0.0, 5)
    assert word_error_rate("okay", "oak").substitutions == 1  # a spelling, not a sound-alike


def test_numbers_are_spelt_in_the_language_of_their_part() -> None:
    b = bench()
    ref = timed("testar en två tre one two", gap_after=3)  # Swedish, 5 s, then English
    parts = [
        {"name": "sv", "language": "sv", "t1": 3.0},
        {"name": "en", "language": "en", "t1": 99.0},
    ]
    said = ["Testar", "1,", "2,", "3.", "1", "2."]
    hyp = [b.HypWord(t, 0.0, 0.0, w.start, w.end) for t, w in zip(said, ref, strict=True)]
    out = b.score(hyp, ref, rtf=None, lags=[], parts=parts)
    # "1" is "ett" (the reference's "en" is the article's spelling): one error of four, not
    # the three of "one, two, three"; English numbers as before.
    assert out["parts"]["sv"]["wer"] == 0.25
    assert out["parts"]["en"]["wer"] == 0.0
    assert out["wer"] == round(1 / 6, 4)
    assert normalize(b.spell_numbers("1984", "nl")) == ["negentien", "honderd", "vierentachtig"]
    assert b.spell_numbers("2", "xx") == "2"  # a language num2words lacks: as written


def test_a_degraded_talk_has_the_noise_and_band_asked_for() -> None:
    t = np.arange(16000 * 4) / 16000
    tone = 0.3 * np.sin(2 * np.pi * 1000 * t) * (t % 1 < 0.5)  # speech half the time
    noisy = degraded(tone, snr_db=10.0, band=None)
    noise = noisy - tone
    louder = tone[(t % 1 < 0.5)]
    assert 10 * np.log10((louder**2).mean() / (noise**2).mean()) == pytest.approx(10.0, abs=0.1)
    spectrum = np.abs(np.fft.rfft(noise)) ** 2
    hz = np.fft.rfftfreq(len(noise), 1 / 16000)
    low, high = spectrum[(hz > 100) & (hz < 200)].mean(), spectrum[(hz > 1000) & (hz < 2000)].mean()
    assert low / high == pytest.approx(10.0, rel=0.3)  # pink: power falls as 1/f
    mix = tone + 0.3 * np.sin(2 * np.pi * 100 * t) + 0.3 * np.sin(2 * np.pi * 5000 * t)
    bins = [int(f * len(t) / 16000) for f in (100, 1000, 5000)]
    for band, gains in (("telephone", (0.0014, 1.0, 0.099)), ("sharp", (0.0, 1.0, 0.0))):
        phone = degraded(mix, snr_db=None, band=band)
        gain = np.abs(np.fft.rfft(phone))[bins] / np.abs(np.fft.rfft(mix))[bins]
        np.testing.assert_allclose(gain, gains, atol=0.002)  # the band kept, the rest not


def test_a_reverberant_talk_decays_by_60_db_in_the_room_s_time() -> None:
    """A click in a room with RT60 0.5 s: the tail's level falls 6 dB every 0.05 s after the
    direct sound (-30 dB at 0.25 s), and the talk keeps its level."""
    click = np.zeros(16000)
    click[1600] = 0.5
    wet = degraded(click, snr_db=None, band=None, reverb_s=0.5)
    assert np.argmax(np.abs(wet)) == 1600  # the direct sound first
    level = [10 * np.log10((wet[1600 + a : 1600 + a + 400] ** 2).mean()) for a in (80, 4000)]
    assert level[0] - level[1] == pytest.approx(30 * (4000 - 80) / 4000, abs=3)
    assert (wet**2).mean() == pytest.approx((click**2).mean(), rel=1e-3)
