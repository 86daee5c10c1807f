"""Only text reaches the screen (issue 25): line ends, template markers written as text, loops and
echoes of the source, in the rules and in the decoder that applies them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from subtitler.mt.output_rules import (
    ECHO,
    LABEL,
    echoes,
    ends_line,
    marker_at,
    marker_cut,
    problem,
    without_markers,
    without_markup,
)
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Decoder, Method
from subtitler.mt.translator import StreamTranslator
from subtitler.repeats import LOOP, goes_round, loops
from tests.helpers.fake_lm import ScriptedLM, peaked

V, EOS = 60, 0
# Token texts of the fake model: 1 "\n", 2 "<|", 3 "im", 4 "_end", 5 "|>", 6 ".\n"; the rest
# "w<t> ".
PIECES = {1: b"\n", 2: b"<|", 3: b"im", 4: b"_end", 5: b"|>", 6: b".\n"}


class PieceLM(ScriptedLM):
    """A scripted model whose tokens have the texts above."""

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return b"".join(PIECES.get(t, f"w{t} ".encode()) for t in tokens)


def sequence_lm(out: list[int], prompt_len: int) -> PieceLM:
    """Writes ``out`` after a prompt of ``prompt_len`` tokens, then EOS."""

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        i = len(ctx) - prompt_len
        return peaked(V, {out[i] if 0 <= i < len(out) else EOS: 0.9})

    return PieceLM(V, EOS, fn)


PROMPT = [40, 41, 42]


def decode(out: list[int], draft: Sequence[int] = (), method: Method = Method.RT) -> list[int]:
    lm = sequence_lm(out, len(PROMPT))
    res = Decoder(lm).decode(PROMPT, draft, DecodeOptions(method, 0.2, max_new_tokens=40))
    return res.tokens


class TestRules:
    def test_line_ends(self) -> None:
        assert ends_line(b"\n") and ends_line(b".\r\n") and not ends_line(b" Haus")

    def test_markers(self) -> None:
        assert marker_at("Guten Tag<|im_end|>") == 9
        assert marker_at("Hallo <end_of_turn>") == 6
        assert marker_at("a < b | c") == -1
        assert without_markers("Guten Tag<|im_end|>\n<|im_start|>user") == "Guten Tag"
        assert without_markers("Zeile eins\nZeile zwei") == "Zeile eins"

    def test_a_marker_is_found_where_it_begins(self) -> None:
        def detok(ts: Sequence[int]) -> bytes:
            return b"".join(PIECES.get(t, f"w{t} ".encode()) for t in ts)

        assert marker_cut([10, 11, 2, 3, 4, 5], detok) == 2
        assert marker_cut([10, 11, 2, 3], detok) == 2  # "<|" is enough
        assert marker_cut([10, 11, 12], detok) == -1

    def test_loops(self) -> None:
        words = [7, 8]  # " words", ","
        assert not loops(words * 4)  # "words, words, words, words": a person says it
        assert loops(words * 6)
        assert loops([9] * 12) and not loops([9] * 11)
        assert loops([1, 2, 3] * 4) and not loops([1, 2, 3] * 3)
        assert not loops(list(range(30)))

    def test_echoes(self) -> None:
        src = "Peter Jones is furious after Holly Willoughby pulls out of the deal"
        assert echoes(src, src)
        assert echoes(src, src.upper() + "!")
        # Copying most of the source and stopping is an echo too.
        assert echoes(src, "Peter Jones is furious after Holly Willoughby")
        # Names kept in a translation are not.
        assert not echoes(src, "Peter Jones ist wütend, nachdem Holly Willoughby aussteigt")
        assert not echoes("Thank you", "Thank you")  # too short to tell
        assert not echoes(src, "Peter Jones.")

    def test_problem(self) -> None:
        src = "the committee will meet again next week"
        assert problem(src, src, [1, 2, 3], "en", "de") == ECHO
        assert problem(src, src, [1, 2, 3], "en", "en") == ""  # same language: no echo
        assert problem(src, "w w w", [5] * 12, "en", "de") == LOOP
        assert problem(src, "Der Ausschuss trifft sich", [1, 2, 3], "en", "de") == ""
        # A phrase of several tokens going round until the length limit stopped it.
        phrase = [1, 2, 3, 4, 5, 6, 7]  # ' in der Datei "userById.py"'
        circling = [20, 21, 22, *phrase, *phrase, 1, 2, 3]
        assert problem(src, "…", circling, "en", "de", hit_cap=True) == LOOP
        assert problem(src, "…", circling, "en", "de") == ""  # the model ended it itself

    def test_another_language(self) -> None:
        src = "We will meet again next week to discuss the budget"
        english = "The Language of the Hebrew Bible"  # Gemma 3 270M's "Hebrew"
        assert problem(src, english, [1, 2, 3], "en", "he").startswith(
            "the model wrote another language, not Hebrew"
        )
        assert problem(src, "10:00am-11:00am", [1, 2], "en", "ar") != ""
        assert problem(src, "נתראה בשבוע הבא", [1, 2], "en", "he") == ""
        assert problem(src, "Zoomで来週また会いましょう", [1, 2], "en", "ja") == ""
        assert problem("twenty twenty-seven", "2027", [1], "en", "ar") == ""  # no letters
        assert problem(src, "Wir treffen uns", [1, 2], "en", "de") == ""  # Latin: not judged
        assert problem(src, "OK", [1], "en", "ko") == ""  # (too little to tell)

    def test_markup_is_taken_out_of_the_pieces(self) -> None:
        pieces = [b"<", b"i", b"><", b"b", b">", "مكة".encode(), b"</", b"b", b"></", b"i", b">"]
        shown = without_markup(pieces)
        assert len(shown) == len(pieces) and b"".join(shown) == "مكة".encode()
        words = [b"<i>Guten", b" Tag</i>", b" <font color=red>alle", b"</font>"]
        assert b"".join(without_markup(words)) == b"Guten Tag alle"
        assert without_markup([b"Guten", b" Tag", b" <"]) == (b"Guten", b" Tag", b" ")
        assert without_markup([b"Guten", b" Tag", b" </i"]) == (b"Guten", b" Tag", b" ")
        assert without_markup([b"a", b" <", b" b"]) == (b"a", b" <", b" b")  # text, not a tag
        assert without_markup([b"x", b" <br>"]) == (b"x", b" <br>")  # (not markup of ours)

    def test_a_prompt_label_is_no_translation(self) -> None:
        src = "We will meet again next week to discuss the budget"
        assert problem(src, "English", [1], "en", "ar") == LABEL
        assert problem(src, "Deutsch:", [1, 2], "en", "de") == LABEL
        assert problem(src, "العربية", [1], "en", "ar") == LABEL
        assert problem("English", "English", [1], "en", "de") == ""  # said so
        assert problem(src, "Englisch", [1], "en", "de") == ""

    def test_goes_round(self) -> None:
        phrase = [1, 2, 3, 4, 5, 6, 7]
        assert goes_round([20, *phrase, *phrase]) and goes_round([*phrase, *phrase, 1])
        assert not goes_round([20, *phrase, 8, *phrase])  # said twice, not in a row
        assert not goes_round([1, 2, 3, 1, 2, 3, 1, 2])  # too short to tell
        assert goes_round([1, 2, 3] * 4)
        assert not goes_round(list(range(40)))


class TestDecoder:
    def test_a_line_break_ends_the_output_and_is_not_kept(self) -> None:
        assert decode([10, 11, 1, 12, 13]) == [10, 11]
        assert decode([10, 11, 6, 12]) == [10, 11]  # ".\n"

    def test_a_marker_written_as_text_is_cut_off(self) -> None:
        assert decode([10, 11, 2, 3, 4, 5, 12, 13]) == [10, 11]

    def test_a_loop_is_stopped(self) -> None:
        lm = sequence_lm([10] + [11] * 30, len(PROMPT))
        res = Decoder(lm).decode(PROMPT, [], DecodeOptions(Method.RT, max_new_tokens=40))
        assert res.stats.looped and len(res.tokens) == 13

    def test_a_draft_is_cut_before_a_line_break(self) -> None:
        lm = sequence_lm([10, 11, 12, 13], len(PROMPT))
        res = Decoder(lm).decode(PROMPT, [10, 11, 1, 12], DecodeOptions(Method.SSBD, 0.0))
        assert res.stats.draft_len == 2 and res.stats.accepted == 2
        assert res.tokens == [10, 11, 12, 13]

    @pytest.mark.parametrize("seed", range(20))
    def test_beta0_still_equals_rt_with_the_stop_rules(self, seed: int) -> None:
        """Random scripted models that write line breaks, markers and loops: SSBD at beta 0
        gives RT's output token for token, from any draft."""
        rng = np.random.default_rng(seed)
        table = {i: rng.random(V) for i in range(200)}

        def fn(ctx: tuple[int, ...]) -> np.ndarray:
            x = table[(sum(ctx[-3:]) * 31 + len(ctx)) % 200].copy()
            if len(ctx) % 5 == 0:
                x[11] += 1.5  # now and then a token said again and again
            return np.log(x / x.sum()).astype(np.float32) * 6

        lm = PieceLM(V, EOS, fn)
        dec = Decoder(lm)
        opts = DecodeOptions(Method.RT, 0.0, max_new_tokens=30)
        rt = dec.decode(PROMPT, [], opts).tokens
        draft = list(rng.integers(1, V, size=int(rng.integers(0, 20))))
        ssbd = dec.decode(PROMPT, draft, DecodeOptions(Method.SSBD, 0.0, max_new_tokens=30))
        assert ssbd.tokens == rt
        assert (
            ssbd.tokens
            == dec.decode(PROMPT, rt[:5], DecodeOptions(Method.SSBD, 0.0, max_new_tokens=30)).tokens
        )


def test_an_echo_is_a_failed_update_and_the_draft_stays_the_last_good_one() -> None:
    """A model that writes the source again: the translator reports the problem, shows
    nothing of it and drafts the next update from its last good translation."""
    good = [20, 21, 22]
    echo_text = "w30 w31 w32 w33"
    state = {"echo": False}

    class Model(PieceLM):
        def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
            return [3 + (ord(c) % 50) for c in text]

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        out = [30, 31, 32, 33] if state["echo"] else good
        # the output so far: what follows the prompt's last token 99 (set below)
        i = len(ctx) - (max(j for j, t in enumerate(ctx) if t == 99) + 1)
        return peaked(V, {out[i] if 0 <= i < len(out) else EOS: 0.9})

    lm = Model(V, EOS, fn)
    tr = StreamTranslator(lm, PromptBuilder("chatml", "en", "de"), DecodeOptions(Method.SSBD))
    tr.tokenize_prompt = lambda prompt: [40, 41, 99]  # type: ignore[method-assign]
    first = tr.update(0, "one two", False)
    assert first.problem == "" and list(first.tokens) == good
    state["echo"] = True
    second = tr.update(0, echo_text, False)
    assert second.problem == ECHO and second.text == "" and second.tokens == ()
    assert second.stats.retried  # decoded once more, and still no translation
    assert tr._draft == good  # the echo is no draft
    assert second.stats.draft_len == 3


def test_a_servers_answer_is_cut_at_the_line_end_or_a_marker() -> None:
    from subtitler.mt.output_rules import text_cut

    assert text_cut(["Guten", " Tag", "<|im", "_end|>"]) == ["Guten", " Tag"]
    assert text_cut(["Guten", " Tag.\nEnglish", ":"]) == ["Guten", " Tag."]
    assert text_cut(["Hallo", " Welt"]) == ["Hallo", " Welt"]
    assert text_cut(["\n", "x"]) == []


class WordLM(PieceLM):
    """Tokens are words "w<id>": the source's tokens are the ones the model may copy."""

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        return [int(w[1:]) if w[1:].isdigit() else 99 for w in text.split()]


def test_an_echo_is_decoded_once_more_without_copying_the_source() -> None:
    """The model's first choice copies the source word for word; its second is a translation.
    The retry keeps at most three copied tokens in a row (a name) and so translates."""
    source = [30, 31, 32, 33, 34, 35]

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        i = len(ctx) - (max(j for j, t in enumerate(ctx) if t == 99) + 1)
        if i >= len(source):
            return peaked(V, {EOS: 0.9})
        return peaked(V, {source[i]: 0.6, 10 + i: 0.3})

    lm = WordLM(V, EOS, fn)
    tr = StreamTranslator(lm, PromptBuilder("chatml", "en", "de"), DecodeOptions(Method.SSBD))
    tr.tokenize_prompt = lambda prompt: [40, 41, 99]  # type: ignore[method-assign]
    t = tr.update(0, " ".join(f"w{x}" for x in source), True)
    assert t.stats.retried and t.problem == ""
    # A name's worth copied, then its own word, then the source again for at most three.
    assert list(t.tokens) == [30, 31, 32, 13, 34, 35]


def test_a_loop_is_decoded_once_more_without_repeating_itself() -> None:
    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        i = len(ctx) - (max(j for j, t in enumerate(ctx) if t == 99) + 1)
        if i >= 12:
            return peaked(V, {EOS: 0.9})
        return peaked(V, {7 + i % 2: 0.5, 20 + i: 0.3, EOS: 0.01})  # "a b a b ..." first

    lm = WordLM(V, EOS, fn)
    tr = StreamTranslator(lm, PromptBuilder("chatml", "en", "de"), DecodeOptions(Method.RT))
    tr.tokenize_prompt = lambda prompt: [40, 41, 99]  # type: ignore[method-assign]
    t = tr.update(0, "w1 w2 w3", True)
    assert t.stats.retried and t.problem == "" and not loops(t.tokens)
    assert list(t.tokens[:4]) == [7, 8, 7, 8]  # "a b a b" once, then no 4-token run again
