"""The repetition rule on word lists: copies the audio does not hold go, repeated speech stays.

Word times follow what the aligner gave on real speech (subtitler/asr/repetition.py): words a
person said take some time (0.04-0.8 s), copies the decoder made up are squeezed into no time,
mostly at the end of the window.
"""

from __future__ import annotations

import itertools

from subtitler.asr.repetition import lend_times, loop_words
from subtitler.types import Word


def said(text: str, t0: float = 0.0, each: float = 0.3) -> list[Word]:
    """Words spoken one after another, ``each`` seconds a word."""
    return [Word(" " + w, t0 + i * each, t0 + (i + 1) * each) for i, w in enumerate(text.split())]


def squeezed(text: str, at: float) -> list[Word]:
    """Words the aligner put into no time at ``at`` (text beyond the audio)."""
    return [Word(" " + w, at, at) for w in text.split()]


def kept(words: list[Word]) -> str:
    drop = loop_words(words)
    return " ".join(w.text.strip() for i, w in enumerate(words) if i not in drop)


def test_a_person_saying_words_words_words_keeps_every_word() -> None:
    # The sentence: the old rule cut it after the second "words," and lost the rest.
    text = "And here's some more words, words, words, words, and that should be all. Thanks."
    assert kept(said(text)) == text


def test_a_word_said_many_times_stays_however_often() -> None:
    text = "no, no, no, no, no, no, no, no, I said no."
    assert kept(said(text)) == text
    assert kept(said("I think that that is right")) == "I think that that is right"


def test_a_decoder_loop_keeps_its_first_copy_only() -> None:
    first = said("Printing then for our purpose,")
    loop = squeezed("printing then for our purpose, printing then for our purpose.", 1.5)
    assert kept(first + loop) == "Printing then for our purpose,"


def test_a_one_word_loop_and_a_copy_cut_off_by_the_token_limit() -> None:
    words = said("The forms of") + squeezed("the forms of the forms of the forms", 0.9)
    assert kept(words) == "The forms of"
    words = said("Here's some more word.") + squeezed("Word. Word. Word. Word. Word.", 1.2)
    assert kept(words) == "Here's some more word."


def test_a_copy_with_one_word_between() -> None:
    words = said("a position between Gothic and Roman.") + squeezed(
        "The position between Gothic and Roman.", 1.8
    )
    assert kept(words) == "a position between Gothic and Roman."


def test_real_repetition_followed_by_a_loop_keeps_what_was_said() -> None:
    # As tiny.en heard the MFA speaker: four real "words", then the sentence again in no time.
    text = "And here are some more words, words, words, words."
    words = said(text) + squeezed(text, 3.0)
    assert kept(words) == text


def test_an_unheard_first_copy_gives_way_to_a_heard_one() -> None:
    words = squeezed("thanks.", 0.0) + said("thanks. And that is all.", 0.0)
    assert kept(words) == "thanks. And that is all."


def test_a_word_heard_twice_at_the_window_end_is_one_word() -> None:
    # "typography" once in the prefix, once more squeezed after it.
    words = said("of fine typography") + squeezed("typography", 0.9)
    assert kept(words) == "of fine typography"
    # One word of a real repetition aligned to no time is not enough to call it a loop.
    words = [*said("very good,"), Word(" very", 0.6, 0.6), Word(" good.", 0.6, 0.9)]
    assert kept(words) == "very good, very good."


def test_two_words_without_time_stay_three_go() -> None:
    # Real speech had runs of two words aligned to no time ("Alright, thanks."), never three.
    words = said("So this is") + squeezed("alright, thanks.", 0.9)
    assert loop_words(words) == set()
    words = said("And I should be all.") + squeezed("And here are", 1.5) + said("some", 1.5)
    assert kept(words) == "And I should be all. some"
    assert loop_words([]) == set()


def test_a_loop_whose_copies_differ_in_a_word() -> None:
    text = "And here's some more words. Um, and that should be all."
    words = said(text) + squeezed("And here are some more words.", 3.3)
    assert kept(words) == text


def test_a_repeated_word_is_judged_word_by_word() -> None:
    # tiny.en on "here's some more word word word word word": the first heard, the decoder's
    # extra copies in no time, one more heard later; grouped in threes, the first group would
    # have counted as unheard and taken the heard word with it.
    words = [
        *said("Here's some more word."),
        *squeezed("Word. Word.", 1.2),
        Word(" Word.", 1.4, 1.5),
    ]
    words += squeezed("Word. Word. Word.", 1.6)
    assert kept(words) == "Here's some more word. Word."


def test_a_sentence_said_again_after_the_committed_text_is_a_loop_whatever_its_time() -> None:
    # Seen streaming tiny.en on the MFA speaker: the window held committed sentences as the
    # prefix and the decoder wrote them again after it, the aligner sharing their audio
    # between the two copies; the copy after the prefix was committed a second time.
    known = said("This is the acoustic corpus. I'm talking pretty fast here.", each=0.15)
    new = said("acoustic corpus. I'm talking pretty fast here. There's nothing", 1.5, each=0.15)
    drop = loop_words(known + new, fixed=len(known))
    assert " ".join(w.text.strip() for i, w in enumerate(new, len(known)) if i not in drop) == (
        "There's nothing"
    )
    # Committed words are never dropped, and two-word phrases said twice stay when heard.
    words = said("very good, very good.")
    assert loop_words(words, fixed=2) == set()


def kept_after_lending(words: list[Word], fixed: int = 0) -> list[Word]:
    lent = lend_times(words, fixed)
    drop = loop_words(lent, fixed)
    return [w for i, w in enumerate(lent) if i not in drop and i >= fixed]


def test_an_utterance_written_twice_keeps_the_audio_the_aligner_gave_its_second_copy() -> None:
    # tiny.en on the MFA speaker's last utterance (the development set's tune split, 218-225 s):
    # the window's text was the utterance twice, and the aligner gave its start to the first
    # copy and its end ("And I should be all. Thanks.") to the second. Before, the first copy's
    # end counted as unheard and the second went as a loop: the end was lost.
    first = [
        *said("And here are some more words, words,", 0.8),
        *squeezed("words, words. And I should be all. Thanks.", 3.7),
    ]
    second = [
        *squeezed("And here are some more words, words, words,", 3.7),
        Word(" words.", 4.68, 4.70),
        *said("And I should be all. Thanks.", 5.8, each=0.2),
    ]
    out = kept_after_lending(first + second)
    assert " ".join(w.text.strip() for w in out) == (
        "And here are some more words, words, words. And I should be all. Thanks."
    )
    assert out[-1].start == second[-1].start  # the end's audio, lent to the copy that stays
    assert all(a.start <= b.start for a, b in itertools.pairwise(out))
    # After committed words (the prefix), the same: the new words are the utterance's end.
    prefix = len(said("And here are some more words, words,"))
    tail = kept_after_lending(first + second, fixed=prefix)
    assert " ".join(w.text.strip() for w in tail) == "words. And I should be all. Thanks."


def test_lending_leaves_a_decoder_loop_and_repeated_speech_alone() -> None:
    # A loop's copies have no audio to lend: its first copy only, as before.
    first = said("Printing then for our purpose,")
    loop = squeezed("printing then for our purpose, printing then for our purpose.", 1.5)
    assert lend_times(first + loop) == first + loop
    # Speech that is all heard has nothing to borrow.
    words = said("And here's some more words, words, words, words, and that should be all.")
    assert lend_times(words) == words


def test_a_word_neither_copy_heard_does_not_stop_the_lending() -> None:
    # The same utterance at another cadence: the first copy heard up to the second "words,",
    # the second copy heard from its third "words," on, but for the fourth, which neither
    # copy has audio for.
    first = [*said("And here are some more words,", 0.8), Word(" words,", 2.3, 2.78)]
    first += squeezed("words, words. And I should be all. Thanks.", 2.78)
    second = squeezed("And here are some more words,", 2.78)
    second += [Word(" words,", 3.06, 3.42), Word(" words,", 3.72, 3.8), Word(" words.", 4.7, 4.7)]
    second += said("And I should be all. Thanks.", 5.74, each=0.2)
    prefix = len(said("And here are some more words, words,"))
    tail = kept_after_lending(first + second, fixed=prefix)
    # The fourth "words" has no audio in either copy and goes (as a copy of "words").
    assert " ".join(w.text.strip() for w in tail) == "words, And I should be all. Thanks."
