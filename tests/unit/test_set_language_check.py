"""The speech language set in Settings against what Whisper hears (the rule alone; with real
speech and Whisper base: tests/integration/test_asr_multilingual.py)."""

from __future__ import annotations

from subtitler.asr.language import WRONG_RUN, SetLanguageCheck

SPANISH = (("es", 0.97), ("en", 0.01))
ENGLISH = (("en", 0.99), ("la", 0.001))
UNSURE = (("es", 0.6), ("en", 0.3))


def test_another_language_on_three_utterances_in_a_row_is_said_once() -> None:
    check = SetLanguageCheck("en")
    assert [check.heard(SPANISH, 4.0) for _ in range(WRONG_RUN + 2)] == [
        None,
        None,
        "es",
        None,
        None,
    ]


def test_the_set_language_an_unsure_or_short_utterance_or_no_ranking_is_no_evidence() -> None:
    check = SetLanguageCheck("en")
    heard = [
        check.heard(SPANISH, 4.0),
        check.heard(SPANISH, 4.0),
        check.heard(ENGLISH, 4.0),  # the run starts again
        check.heard(SPANISH, 4.0),
        check.heard(UNSURE, 4.0),
        check.heard(SPANISH, 4.0),
        check.heard(SPANISH, 4.0),
        check.heard(SPANISH, 1.0),  # too short to tell: neither for nor against
        check.heard((), 4.0),  # no ranking (silence, a failed call): against
        check.heard((("sv", 0.95),), 4.0),
        check.heard((("sv", 0.95),), 4.0),
        check.heard(SPANISH, 4.0),  # another language: a run of its own
    ]
    assert heard == [None] * len(heard)
