"""The language belief: Whisper's language probabilities of each utterance, pooled."""

from __future__ import annotations

from subtitler.asr.language import LanguageBelief, combined

# Whisper base's three likeliest languages for the first twelve lines of the development
# set's tune split, Dutch part (each line alone): seven of twelve put Dutch first.
DUTCH_LINES = [
    {"en": 0.63, "nn": 0.08, "ja": 0.05},
    {"nl": 0.66, "af": 0.07, "pl": 0.06},
    {"en": 0.51, "fr": 0.08, "nl": 0.08},
    {"nl": 0.54, "pt": 0.32, "la": 0.02},
    {"nl": 0.55, "bg": 0.07, "af": 0.04},
    {"nl": 0.98, "en": 0.01, "af": 0.0},
    {"af": 0.62, "nl": 0.22, "cy": 0.05},
    {"nl": 0.75, "en": 0.11, "pt": 0.06},
    {"ro": 0.23, "pl": 0.21, "el": 0.14},
    {"de": 0.85, "nl": 0.04, "yi": 0.02},
    {"nl": 0.86, "pt": 0.09, "en": 0.02},
    {"nl": 0.5, "en": 0.16, "de": 0.1},
]


def test_nothing_heard_names_no_language() -> None:
    b = LanguageBelief()
    assert b.best() is None
    b.add({})
    assert b.best() is None
    assert b.best({"fr": 0.4, "de": 0.3}) == "fr"  # the first evidence alone decides


def test_one_odd_line_does_not_switch_the_language_and_a_few_lines_do() -> None:
    b = LanguageBelief()
    for _ in range(10):
        b.add({"en": 0.97, "de": 0.01})  # a long English passage
    picks = []
    for probs in DUTCH_LINES:
        picks.append(b.best(probs))
        b.add(probs)
    # Line by line, Whisper's first language would be en nl en nl nl nl af nl ro de nl nl.
    assert picks == ["en"] * 5 + ["nl"] * 7


def test_after_a_long_passage_even_certain_lines_take_a_few_to_switch() -> None:
    """Why a long utterance is not decided by the belief (streaming.py): after a long
    English passage, lines heard as French with certainty switch only at the fourth; an
    utterance with enough speech of its own takes Whisper's language for it."""
    b = LanguageBelief()
    for _ in range(30):
        b.add({"en": 0.96, "cy": 0.03})
    picks = []
    for _ in range(5):
        picks.append(b.best({"fr": 1.0}))
        b.add({"fr": 1.0})
    assert picks == ["en", "en", "en", "fr", "fr"]


def test_the_belief_follows_the_newest_evidence_of_equal_weight() -> None:
    b = LanguageBelief()
    b.add({"en": 0.9})
    assert b.best() == "en"
    assert b.best({"fr": 0.9}) == "fr"  # one utterance each: the newer counts more
    b.add({"fr": 0.9})
    assert b.best() == "fr"
    assert b.best({"en": 0.5, "fr": 0.4}) == "fr"


def test_rankings_are_combined_by_weighted_log_probability() -> None:
    """The stream's last seconds say Dutch, a short line's own window Portuguese: Dutch
    (log 0.9 + 0.5 log 0.01 = -2.41 against log 0.01 + 0.5 log 0.95 = -4.63); a window that
    lists Dutch too tips a context split between two languages."""
    context, own = {"nl": 0.9, "en": 0.05}, {"pt": 0.95}
    assert combined((context, own), (1.0, 0.5)) == "nl"
    assert combined((context, own), (0.0, 1.0)) == "pt"
    assert combined(({"nl": 0.5, "es": 0.4}, {"es": 0.9, "nl": 0.05}), (1.0, 0.5)) == "es"
    assert combined(({}, {}), (1.0, 0.5)) is None
