"""Sentence ends in committed text."""

from __future__ import annotations

import pytest

from subtitler.asr.sentences import ends_sentence, join_words, split_sentences


@pytest.mark.parametrize(
    ("word", "ends"),
    [
        (" modern.", True),
        (" really?", True),
        (" stop!", True),
        (' "no."', True),
        (" 1455.", True),
        (" wait…", True),
        ("好。", True),
        (" Mr.", False),
        (" e.g.", False),
        (" J.", False),
        (" however,", False),
        (" word", False),
    ],
)
def test_ends_sentence(word: str, ends: bool) -> None:
    assert ends_sentence(word) is ends


def test_split_keeps_unfinished_tail() -> None:
    words = [" Hi", " Mr.", " Smith.", " How", " are", " you?", " I"]
    assert split_sentences(words) == [[" Hi", " Mr.", " Smith."], [" How", " are", " you?"], [" I"]]


def test_join_uses_the_recogniser_spacing() -> None:
    assert join_words([" Hello", " world,", " again."]) == "Hello world, again."
    assert join_words(["你好", "世界", "。"]) == "你好世界。"
    assert join_words([]) == ""
