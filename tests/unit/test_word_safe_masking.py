"""Display-only mask-k never shows part of a word, and a line does not go blank or back
without cause (issue 17): exact outputs on fixed inputs, and invariants over every cut."""

from __future__ import annotations

import re

import pytest

from subtitler.display.masking import (
    MAX_K,
    display_text,
    inside_word,
    shown_by_k,
    word_safe,
)
from subtitler.display.steadiness import ELLIPSIS, OpenLines, steady
from subtitler.mt.scripts import unspaced
from subtitler_research.mt.metrics import normalized_erasure


@pytest.mark.parametrize(
    ("text", "cut", "shown"),
    [
        ("in der Dämmerung", 8, "in der"),  # the fragment "D" the overlay used to flash
        ("in der Dämmerung", 12, "in der"),  # "Dämmer"
        ("in der Dämmerung", 7, "in der"),
        ("in der Dämmerung", 6, "in der"),  # between words already
        ("in der Dämmerung", 16, "in der Dämmerung"),
        ("in", 1, ""),  # the only word, cut: nothing rather than a fragment
        ("don't stop", 4, ""),  # "don'"
        ("don't stop", 5, "don't"),
        ("E-Mail senden", 2, ""),  # "E-"
        ("Hallo, Welt", 5, "Hallo"),  # the comma is not part of the word
        ("Hallo, Welt", 6, "Hallo,"),
        ("Привет мир", 9, "Привет"),
        ("猫が好きです", 3, "猫が好"),  # Japanese: by character
        ("我爱你们", 2, "我爱"),  # Chinese: by character
        ("これはGoogleの", 5, "これは"),  # a Latin word inside Japanese stays whole
        ("これはGoogleの", 9, "これはGoogle"),
        ("กินข้าว", 1, ""),  # Thai: a vowel sign belongs to the consonant before it
        ("กินข้าว", 2, "กิ"),
        ("Cafe\u0301 au lait", 4, ""),  # a combining accent is never cut off its letter
        ("Cafe\u0301 au lait", 5, "Cafe\u0301"),
        ("beträgt 1.500.000 Euro", 13, "beträgt"),  # "1.500": another number
        ("beträgt 1.500.000 Euro", 14, "beträgt"),  # "1.500."
        ("beträgt 1.500.000 Euro", 17, "beträgt 1.500.000"),
        ("Um 10:30 Uhr", 5, "Um"),  # "10" of 10:30
        ("Um 10:", 5, "Um"),  # a number the text ends in may go on
        ("Punkt 1. Dann", 7, "Punkt 1"),  # before the full stop and a space: it has ended
        ("an anna@example.com", 7, "an"),  # "anna" of an address
        ("Hallo, Welt", 5, "Hallo"),
        ("会議は10:30に", 5, "会議は"),  # Japanese around it: "10" of 10:30 all the same
        ("会議は10:30に", 8, "会議は10:30"),
        ("ประชากร", 4, "ประ"),  # Thai: not "ประช" (its vowel า written after it)
        ("ไม่มี", 1, ""),  # nor a vowel written before its consonant, alone
        ("ไม่มี", 3, "ไม่"),
    ],
)
def test_word_safe_cut(text: str, cut: int, shown: str) -> None:
    assert word_safe(text, cut) == shown


def test_unspaced_scripts() -> None:
    assert all(unspaced(c) for c in "猫が好カナ。、我ก")
    assert not any(unspaced(c) for c in "aZäßЖ한1 ,.")  # Korean is written with spaces


# Token pieces as a subword tokenizer would make them: a leading space, up to 3 more letters.
def pieces(text: str) -> list[bytes]:
    return [p.encode() for p in re.findall(r"\s*\S{1,3}", text)]


SENTENCES = [
    "in der Dämmerung sahen wir den Leuchtturm über der Bucht",
    "Die Verhandlungsführerin erklärte, dass die E-Mail-Adresse nicht stimmt.",
    "会議は午後三時に始まりますが、資料はまだ届いていません。",
    "我们明天在上海开会，请大家准时到达。",
    "Сегодня мы обсуждаем бюджет нового офиса",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_every_cut_of_every_prefix_shows_whole_words(text: str) -> None:
    ps = pieces(text)

    for n in range(len(ps) + 1):
        full = b"".join(ps[:n]).decode().strip()
        by_k = shown_by_k(ps[:n], final=False)
        assert len(by_k) == MAX_K + 1 and by_k[0] == full
        for k, shown in enumerate(by_k):
            assert shown == display_text(ps[:n], k, final=False)
            assert full.startswith(shown)
            # Never more than the first n-k pieces, never a word cut in two.
            assert len(shown.encode()) <= len(b"".join(ps[: max(0, n - k)]).strip())
            assert not inside_word(full, len(shown))
            rest = full[len(shown) :]
            if shown and rest and not unspaced(shown[-1]) and not unspaced(rest[0]):
                assert not (shown[-1].isalnum() and rest[0].isalnum())  # no word fragment
        assert shown_by_k(ps[:n], final=True) == (full,) * (MAX_K + 1)


def test_a_cut_word_waits_and_then_appears_whole() -> None:
    ps = pieces("in der Dämmerung sahen wir")
    seen = [display_text(ps[:n], 1, final=False) for n in range(len(ps) + 1)]
    assert "in der D" not in seen and "in der Dä" not in seen and "in der Dämmer" not in seen
    assert "in der" in seen and "in der Dämmerung" in seen


class TestSteady:
    def test_first_translation_is_shown_as_masked(self) -> None:
        assert steady(("Guten Morgen", ""), "Guten Morgen", None) == ("Guten Morgen", "")

    def test_a_line_the_mask_empties_shows_the_words_two_translations_agree_on(self) -> None:
        before = ("Guten Morgen", ("Guten Morgen", ""))
        got = steady(("Guten Morgen zusammen", ""), "Guten Morgen zusammen", before)
        assert got == ("Guten Morgen zusammen", "Guten Morgen")

    def test_agreement_is_cut_at_a_word(self) -> None:
        before = ("Guten Morgen", ("Guten Morgen", ""))
        assert steady(("Guten Mittag", ""), "Guten Mittag", before)[1] == "Guten"

    def test_nothing_agreed_stays_blank(self) -> None:
        before = ("Hallo", ("Hallo", ""))
        assert steady(("Guten Tag", ""), "Guten Tag", before) == ("Guten Tag", "")

    def test_shown_words_that_still_start_the_line_stay(self) -> None:
        # The mask would take "habe" back although the new translation still has it.
        before = ("Ich habe den", ("Ich habe den", "Ich habe"))
        got = steady(("Ich habe gestern", "Ich"), "Ich habe gestern", before)
        assert got == ("Ich habe gestern", "Ich habe")

    def test_shown_words_that_changed_go(self) -> None:
        before = ("Ich habe den", ("Ich habe den", "Ich habe"))
        assert steady(("Wir haben", "Wir"), "Wir haben", before)[1] == "Wir"

    def test_a_shown_word_that_grew_is_not_kept_as_a_fragment(self) -> None:
        before = ("in der Nacht", ("in der Nacht", "in der"))
        assert steady(("in derselben", "in"), "in derselben", before)[1] == "in"


def test_steady_lowers_erasure_on_a_growing_line() -> None:
    """The same translations, shown with and without :func:`steady`: less is erased."""
    versions = ["Ich", "Ich habe den Hund", "Ich habe ihn", "Ich habe ihn gestern gesehen"]

    def masked(text: str) -> tuple[str, ...]:  # mask-2 by words, for this test
        words = text.split()
        return (text, " ".join(words[: max(0, len(words) - 1)]), " ".join(words[:-2]))

    plain, kept = [], []
    before: tuple[str, tuple[str, ...]] | None = None
    for v in versions:
        m = masked(v)
        s = steady(m, v, before)
        plain.append(m[2])
        kept.append(s[2])
        before = (v, s)
    assert normalized_erasure([plain], "de") > normalized_erasure([kept], "de")
    assert plain == ["", "Ich habe", "Ich", "Ich habe ihn"]
    assert kept == ["", "Ich habe", "Ich habe", "Ich habe ihn"]


class TestOpenLines:
    """What the pipeline shows of each translation of an open line, per target language."""

    def test_an_open_line_is_masked_and_kept_steady(self) -> None:
        lines = OpenLines()
        first = lines.show("de", 0, "Guten Morgen", pieces("Guten Morgen"), final=False)
        assert first == shown_by_k(pieces("Guten Morgen"), final=False)
        assert first[4] == ""  # mask-4 hides all four pieces ("Gut", "en", " Mor", "gen")
        again = lines.show("de", 0, "Guten Morgen all", pieces("Guten Morgen all"), final=False)
        assert shown_by_k(pieces("Guten Morgen all"), final=False)[4] == ""  # ("Gut")
        assert again[4] == "Guten Morgen"  # the words the last two translations agree on
        assert lines.segment("de") == 0 and lines.segment("fr") is None

    def test_another_line_or_language_starts_afresh(self) -> None:
        lines = OpenLines()
        lines.show("de", 0, "Guten Morgen", pieces("Guten Morgen"), final=False)
        assert lines.show("de", 1, "Guten Tag", pieces("Guten Tag"), final=False)[3] == ""
        assert lines.show("fr", 1, "Bonjour", pieces("Bonjour"), final=False)[3] == ""
        assert (lines.segment("de"), lines.segment("fr")) == (1, 1)

    def test_a_final_line_is_shown_in_full_and_ends_the_history(self) -> None:
        lines = OpenLines()
        lines.show("de", 0, "Guten Morgen", pieces("Guten Morgen"), final=False)
        done = lines.show("de", 0, "Guten Morgen.", pieces("Guten Morgen."), final=True)
        assert done == ("Guten Morgen.",) * (MAX_K + 1) and lines.segment("de") is None

    def test_a_final_line_cut_at_the_length_limit_ends_in_an_ellipsis(self) -> None:
        lines = OpenLines()
        got = lines.show("de", 0, "Guten Morgen", pieces("Guten Morgen"), True, cut=True)
        assert got == (f"Guten Morgen{ELLIPSIS}",) * (MAX_K + 1)
        # Only a finished line says so: an open one goes on.
        assert lines.show("de", 1, "Guten", pieces("Guten"), False, cut=True)[0] == "Guten"

    def test_a_prefix_is_shown_only_where_it_shows_something_new(self) -> None:
        lines = OpenLines()
        assert lines.show_prefix("de", 0, "", ()) is None
        shown = lines.show_prefix("de", 0, "Guten", pieces("Guten"))
        assert shown is not None and shown[0] == "Guten"
        assert lines.show_prefix("de", 0, "Guten", pieces("Guten")) is None  # on screen now
        assert lines.show_prefix("de", 1, "Guten", pieces("Guten")) is not None  # a new line

    def test_a_closed_line_has_no_history(self) -> None:
        lines = OpenLines()
        lines.show("de", 0, "Guten Morgen", pieces("Guten Morgen"), final=False)
        lines.close("de")
        assert lines.segment("de") is None
        assert lines.show("de", 0, "Guten Morgen all", pieces("Guten Morgen all"), False)[4] == ""
