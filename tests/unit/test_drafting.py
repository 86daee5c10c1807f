"""Issue 8 modes on the scripted LM: n-gram lookahead, resynchronisation, SpecDec verification,
the draft model."""

from __future__ import annotations

import numpy as np
import pytest

from subtitler.mt.drafting import (
    Chain,
    DraftModel,
    GuessGate,
    NgramTable,
    Resync,
    VocabularyMismatchError,
    check_same_vocabulary,
)
from subtitler.mt.ssbd import DecodeOptions, Decoder, Method, specdec_prefix
from tests.helpers.fake_lm import ScriptedLM, peaked

V, EOS = 50, 0
PROMPT = [10, 11, 12]
TARGET = [5, 6, 7, 8, 9, 20, 21, 22, 23, 24]  # what the model now says, then EOS


def target_lm() -> ScriptedLM:
    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        out = ctx[len(PROMPT) :]
        n = len(out)
        if list(out) == TARGET[:n] and n < len(TARGET):
            return peaked(V, {TARGET[n]: 0.9})
        return peaked(V, {EOS: 0.9})

    return ScriptedLM(V, EOS, fn)


def test_ngram_table() -> None:
    t = NgramTable(n=2, max_entries=4)
    t.add([1, 2, 3, 4, 5])
    assert t.propose([9, 2, 3], 2) == [4, 5]
    assert t.propose([3], 2) == [] and t.propose([7, 7], 2) == []
    t.add([2, 3, 9])  # the newest continuation wins
    assert t.propose([2, 3], 3) == [9]
    t.add(list(range(30, 40)))
    assert len(t) == 4  # bounded


def test_resync_finds_the_old_draft_again() -> None:
    old = [5, 6, 99, 8, 9, 20, 21]
    r = Resync(old, d=2)
    assert r.propose([5, 6, 7], 3) == [8, 9, 20]  # right after the correction: a substitution
    assert r.propose([5, 6, 7, 1, 8, 9], 3) == [20, 21]  # "7 1" replaced "99": resume after 8 9
    assert r.propose([5, 6, 7, 1, 2], 3) == []
    assert Chain(Resync(old, 2), NgramTable()).propose([5, 6, 7, 0, 8, 9], 1) == [20]


def test_specdec_rule() -> None:
    row = np.log(np.array([[0.5, 0.3, 0.15, 0.05] + [1e-9] * (V - 4)], dtype=np.float64))
    row = row.astype(np.float32)
    assert specdec_prefix(row, [1], top_b=3, tau=1.0) == 1  # rank 2, gap log(5/3) < 1
    assert specdec_prefix(row, [2], top_b=3, tau=1.0) == 0  # rank 3, but gap log(10/3) = 1.2
    assert specdec_prefix(row, [2], top_b=3, tau=1.3) == 1
    assert specdec_prefix(row, [3], top_b=3, tau=10.0) == 0  # rank 4 > b
    assert specdec_prefix(row, [0], top_b=1, tau=0.0) == 1  # b=1, tau=0 is greedy


def decode(lm: ScriptedLM, draft: list[int], dec: Decoder | None = None, **kw: object):  # type: ignore[no-untyped-def]
    opts = DecodeOptions(method=Method.SSBD, beta=0.0, max_new_tokens=30, **kw)  # type: ignore[arg-type]
    table = NgramTable(n=2)
    table.add([7, 8, 9, 20, 21, 22, 23, 24])  # an earlier translation of this meeting
    return (dec or Decoder(lm)).decode(PROMPT, draft, opts, proposer=table)


def test_lookahead_keeps_greedy_output_and_saves_steps() -> None:
    plain = decode(target_lm(), [5, 6])
    ahead = decode(target_lm(), [5, 6], lookahead=6)
    assert plain.tokens == ahead.tokens == TARGET
    assert ahead.stats.lookahead_accepted > 0
    assert ahead.stats.decode_steps < plain.stats.decode_steps


def test_resync_keeps_greedy_output_and_saves_steps() -> None:
    old = [5, 6, 99, 8, 9, 20, 21, 22, 23]  # one wrong token in the middle
    plain = decode(target_lm(), old)
    sync = decode(target_lm(), old, resync=True)
    assert plain.tokens == sync.tokens == TARGET
    assert sync.stats.accepted == 2 and sync.stats.lookahead_accepted == 6
    assert sync.stats.decode_steps < plain.stats.decode_steps


def test_wrong_guesses_are_cut_from_the_cache() -> None:
    lm = target_lm()
    table = NgramTable(n=1)
    table.add([5, 40, 41, 42])  # after 5 it guesses 40.. which the model rejects
    opts = DecodeOptions(method=Method.SSBD, beta=0.0, max_new_tokens=30, lookahead=3)
    r = Decoder(lm).decode(PROMPT, [], opts, proposer=table)
    assert r.tokens == TARGET and r.stats.lookahead_drafted >= 3
    assert list(lm.cached)[: len(PROMPT) + len(TARGET) - 1] == PROMPT + TARGET[:-1]


def test_previous_sentence_becomes_context_when_enabled() -> None:
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.translator import StreamTranslator

    tr = StreamTranslator(
        target_lm(),
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(method=Method.RT, max_new_tokens=5),
    )
    tr.update(0, "It rained.", final=True)
    assert tr.context == ""  # off by default
    tr.context_sentences = 1
    tr.update(1, "We stayed in.", final=True)
    assert tr.context == "We stayed in."
    lm = tr.lm
    with_ctx = tr.prompt_tokens("Then?")
    tr.context = ""
    assert len(with_ctx) > len(tr.prompt_tokens("Then?"))
    assert lm.tokenize("We stayed in.")[0] in with_ctx


def draft_lm(wrong_at: int = 6) -> ScriptedLM:
    """A weaker copy of the target: right except at output position ``wrong_at``."""

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        out = ctx[len(PROMPT) :]
        n = len(out)
        if n == wrong_at:
            return peaked(V, {33: 0.9})
        if n < len(TARGET):
            return peaked(V, {TARGET[n]: 0.9})
        return peaked(V, {EOS: 0.9})

    return ScriptedLM(V, EOS, fn)


def test_draft_model_guesses_greedily_and_stops_at_eos() -> None:
    dm = DraftModel(draft_lm())
    dm.start(PROMPT)
    assert dm.propose([5, 6], 3) == [7, 8, 9]
    assert dm.propose([5, 6, 7, 8, 9], 4) == [20, 33, 22, 23]  # its own mistake at position 6
    assert dm.propose(TARGET[:-1], 5) == [TARGET[-1]]  # then EOS: never proposed
    assert dm.propose([5], 0) == []


def test_draft_model_reuses_its_cache() -> None:
    lm = draft_lm()
    dm = DraftModel(lm)
    dm.start(PROMPT)
    dm.propose([5], 3)  # evaluates prompt + [5], then 6 and 7
    lm.calls.clear()
    # 6 and 7 were kept and 8 chosen: only 8 is new to the draft model's cache.
    assert dm.propose([5, 6, 7, 8], 2) == [9, 20]
    assert lm.calls[0] == (1, 1)


def test_draft_model_keeps_greedy_output_and_saves_target_passes() -> None:
    opts = DecodeOptions(method=Method.RT, max_new_tokens=30)
    plain_lm, spec_lm = target_lm(), target_lm()
    plain = Decoder(plain_lm).decode(PROMPT, [], opts)
    spec = Decoder(spec_lm).decode(
        PROMPT,
        [],
        DecodeOptions(method=Method.RT, max_new_tokens=30, lookahead=4),
        proposer=DraftModel(draft_lm()),
    )
    assert plain.tokens == spec.tokens == TARGET
    assert spec.stats.lookahead_accepted > 0
    assert spec.stats.lookahead_drafted > spec.stats.lookahead_accepted  # the wrong guess
    assert len(spec_lm.calls) < len(plain_lm.calls)
    assert 0 < spec.stats.guess_s <= spec.stats.decode_s


def test_translator_uses_the_draft_model_instead_of_ngrams() -> None:
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.translator import StreamTranslator

    class Counting(DraftModel):
        calls = 0

        def propose(self, out, k):  # type: ignore[no-untyped-def]
            Counting.calls += 1
            return super().propose(out, k)

    def sevens() -> ScriptedLM:
        # (A new token each step, none repeated within the 12: a token or a phrase over and
        # over to the length limit would be a loop, decoded again.)
        return ScriptedLM(V, EOS, lambda c: peaked(V, {7 + len(c) % 17: 0.9}))

    tr = StreamTranslator(
        sevens(),
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(method=Method.SSBD, max_new_tokens=12, lookahead=3),
        draft_model=Counting(sevens()),
    )
    t = tr.update(0, "Hi", final=False)
    assert Counting.calls > 0 and t.stats.lookahead_accepted > 0


def test_vocabulary_check() -> None:
    check_same_vocabulary(target_lm(), draft_lm())
    with pytest.raises(VocabularyMismatchError, match="tokens"):
        check_same_vocabulary(target_lm(), ScriptedLM(V + 1, EOS, lambda c: peaked(V + 1, {})))
    with pytest.raises(VocabularyMismatchError, match="ends"):
        check_same_vocabulary(target_lm(), ScriptedLM(V, 3, lambda c: peaked(V, {})))


@pytest.mark.parametrize("method", [Method.RT, Method.CD, Method.SSBD])
def test_draft_model_guesses_are_exact_whatever_beta_says(method: Method) -> None:
    """A draft model's guess the translator does not rank first is never kept: not in RT and
    CD (no bias; the app passes beta along in every mode) and not in SSBD either, whose bias
    is for text this meeting produced."""

    def unsure(ctx: tuple[int, ...]) -> np.ndarray:
        n = len(ctx) - len(PROMPT)
        # The model prefers TARGET but gives the draft model's wrong token 33 a fair share.
        if n < len(TARGET):
            return peaked(V, {TARGET[n]: 0.5, 33: 0.4})
        return peaked(V, {EOS: 0.9})

    opts = DecodeOptions(method=method, beta=0.4, max_new_tokens=30, lookahead=2)
    r = Decoder(ScriptedLM(V, EOS, unsure)).decode(
        PROMPT, [], opts, proposer=DraftModel(draft_lm(wrong_at=5))
    )
    assert r.tokens == TARGET
    assert r.stats.lookahead_drafted > r.stats.lookahead_accepted > 0


def test_guess_gate_measures_both_sides_then_keeps_the_faster() -> None:
    gate = GuessGate(explore_every=4, warmup=2)
    choices = []

    def run(n: int, on_rate: float, off_rate: float) -> None:
        for _ in range(n):
            use = gate.use_guesses()
            choices.append(use)
            gate.record(10, 10 / (on_rate if use else off_rate))

    run(4, on_rate=100.0, off_rate=200.0)  # guessing costs here
    assert choices == [True, True, False, False]  # two of each first
    choices.clear()
    run(8, on_rate=100.0, off_rate=200.0)
    # Exploit "off", but look at "on" again every 4th update.
    assert choices == [False, False, False, True, False, False, False, True]
    choices.clear()
    run(16, on_rate=400.0, off_rate=200.0)  # now guessing pays (a repetitive meeting)
    assert choices[-4:] == [True, True, True, False]


def test_guess_gate_ignores_updates_without_decoding() -> None:
    gate = GuessGate(warmup=1)
    assert gate.use_guesses() is True
    gate.record(0, 0.0)  # everything came from the draft: nothing learnt
    assert gate.seen == {True: 0, False: 0} and gate.use_guesses() is True


def test_translator_skips_guessing_when_the_gate_says_so() -> None:
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.translator import StreamTranslator

    def sevens() -> ScriptedLM:
        # (A new token each step, none repeated within the 12: a token or a phrase over and
        # over to the length limit would be a loop, decoded again.)
        return ScriptedLM(V, EOS, lambda c: peaked(V, {7 + len(c) % 17: 0.9}))

    class Off(GuessGate):
        def use_guesses(self) -> bool:
            self._last = False
            return False

    tr = StreamTranslator(
        sevens(),
        PromptBuilder("chatml", "en", "de"),
        DecodeOptions(method=Method.SSBD, max_new_tokens=12, lookahead=3),
        draft_model=DraftModel(sevens()),
    )
    tr.gate = Off()
    t = tr.update(0, "Hi", final=False)
    assert t.stats.lookahead_drafted == 0 and t.stats.output_len == 12
    assert tr.gate.seen[False] == 1  # and it learnt from the update


def test_ngram_guesses_get_ssbd_bias_but_not_in_rt() -> None:
    """n-gram guesses come from this meeting's translations: SSBD checks them like its draft."""

    def unsure(ctx: tuple[int, ...]) -> np.ndarray:
        n = len(ctx) - len(PROMPT)
        if n < len(TARGET):
            return peaked(V, {TARGET[n]: 0.5, 33: 0.4})
        return peaked(V, {EOS: 0.9})

    table = NgramTable(n=1)
    table.add([5, 33, 33, 33])  # after 5, guess 33s: the model's second choice
    kept = {}
    for method in (Method.SSBD, Method.RT):
        opts = DecodeOptions(method=method, beta=0.4, max_new_tokens=30, lookahead=2)
        r = Decoder(ScriptedLM(V, EOS, unsure)).decode(PROMPT, [], opts, proposer=table)
        kept[method] = r.stats.lookahead_accepted
        if method is Method.RT:
            assert r.tokens == TARGET
    assert kept[Method.SSBD] > 0 and kept[Method.RT] == 0
