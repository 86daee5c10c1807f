"""The acceptance rule and the decoder's edge cases, on a scripted in-memory LM."""

from __future__ import annotations

import numpy as np
import pytest

from subtitler.mt.ssbd import DecodeOptions, Decoder, Method, accepted_prefix
from tests.helpers.fake_lm import ScriptedLM, peaked

V, EOS = 50, 0
PROMPT = [10, 11, 12]


def table_lm(table: dict[tuple[int, ...], dict[int, float]], prompt: list[int] = PROMPT):
    """Next-token probabilities after PROMPT + output; unknown outputs go to EOS."""

    def fn(ctx: tuple[int, ...]) -> np.ndarray:
        assert list(ctx[: len(prompt)]) == prompt
        return peaked(V, table.get(ctx[len(prompt) :], {EOS: 1.0}))

    return ScriptedLM(V, EOS, fn)


def opts(method: Method = Method.SSBD, beta: float = 0.0, cap: int = 20, fuse: bool = True):
    return DecodeOptions(method=method, beta=beta, max_new_tokens=cap, fuse_prompt=fuse)


# A model that now prefers 5, 6, 7 then EOS; 21 is a close second at the first position.
NOW = {(): {5: 0.55, 21: 0.45}, (5,): {6: 0.9}, (5, 6): {7: 0.9}, (5, 6, 7): {EOS: 0.9}}


class TestAcceptedPrefix:
    def rows(self, dists: list[dict[int, float]]) -> np.ndarray:
        return np.stack([peaked(V, d) for d in dists])

    def test_beta0_is_plain_argmax(self) -> None:
        rows = self.rows([{3: 0.6, 4: 0.4}, {3: 0.6, 4: 0.4}])
        assert accepted_prefix(rows, [3, 3], 0.0) == 2
        assert accepted_prefix(rows, [3, 4], 0.0) == 1
        assert accepted_prefix(rows, [4, 3], 0.0) == 0

    def test_bias_keeps_a_close_second(self) -> None:
        rows = self.rows([{3: 0.5, 4: 0.4}])
        # (1-b) p_y + b >= (1-b) p_max  <=>  0.8*0.4+0.2 = 0.52 >= 0.4
        assert accepted_prefix(rows, [4], 0.2) == 1
        assert accepted_prefix(rows, [4], 0.0) == 0

    def test_bias_rejects_a_clear_loser(self) -> None:
        rows = self.rows([{3: 0.9, 4: 0.05}])
        assert accepted_prefix(rows, [4], 0.2) == 0
        assert accepted_prefix(rows, [4], 0.45) == 0  # 0.55*0.05+0.45 < 0.55*0.9
        assert accepted_prefix(rows, [4], 0.49) == 1  # 0.51*0.05+0.49 > 0.51*0.9

    def test_exact_boundary_tie_goes_to_draft(self) -> None:
        # p_y = 0.2, p_max = 0.6, beta = 0.5*... choose beta so both sides are equal:
        # (1-b)*0.2 + b = (1-b)*0.6  <=>  b = 0.4/1.4
        p = np.log(np.array([0.6, 0.2] + [0.2 / (V - 2)] * (V - 2)))
        row = p[None, :].astype(np.float32)
        beta = 0.4 / 1.4
        assert accepted_prefix(row, [1], beta + 1e-6) == 1
        assert accepted_prefix(row, [1], beta - 1e-3) == 0

    def test_half_accepts_even_certain_rejections(self) -> None:
        row = np.full((1, V), -1e30, dtype=np.float32)
        row[0, 7] = 0.0  # p(7) = 1 exactly, p(others) = 0
        assert accepted_prefix(row, [8], 0.5) == 1
        assert accepted_prefix(row, [8], 0.49) == 0

    def test_empty_draft(self) -> None:
        assert accepted_prefix(np.zeros((1, V), np.float32), [], 0.3) == 0


class TestDecoder:
    def test_rt_greedy_until_eos(self) -> None:
        lm = table_lm(NOW)
        r = Decoder(lm).decode(PROMPT, [], opts(Method.RT))
        assert r.tokens == [5, 6, 7]
        assert r.stats.ended_by_eos and r.stats.decode_steps == 3
        assert r.stats.draft_len == 0 and r.stats.accepted == 0

    def test_empty_draft_equals_rt(self) -> None:
        for m in Method:
            r = Decoder(table_lm(NOW)).decode(PROMPT, [], opts(m, beta=0.3))
            assert r.tokens == [5, 6, 7]

    def test_full_accept_then_continue_from_verify_logits(self) -> None:
        lm = table_lm(NOW)
        r = Decoder(lm).decode(PROMPT, [5, 6], opts(beta=0.0))
        assert r.tokens == [5, 6, 7]
        assert r.stats.accepted == 2
        # 7 came from the verify pass's last row; only 7 itself was then decoded.
        assert r.stats.decode_steps == 1
        assert lm.calls[0] == (len(PROMPT) + 2, 3)

    def test_correction_token_from_verify_logits(self) -> None:
        lm = table_lm(NOW)
        r = Decoder(lm).decode(PROMPT, [5, 9, 9, 9], opts(beta=0.0))
        assert r.tokens == [5, 6, 7]
        assert r.stats.accepted == 1
        # After the verify pass the cache is cut after prompt + accepted, then 6 and 7 decoded.
        assert lm.calls[0] == (len(PROMPT) + 4, 5)
        assert r.stats.decode_steps == 2
        assert list(lm.cached) == [*PROMPT, 5, 6, 7]

    def test_draft_longer_than_new_output(self) -> None:
        lm = table_lm(NOW)
        r = Decoder(lm).decode(PROMPT, [5, 6, 7, 8, 9, 10], opts(beta=0.0))
        assert r.tokens == [5, 6, 7]
        assert r.stats.accepted == 3 and r.stats.ended_by_eos
        assert r.stats.decode_steps == 0
        assert list(lm.cached) == [*PROMPT, 5, 6, 7]

    def test_eos_at_position_zero(self) -> None:
        lm = table_lm({})
        for draft in ([], [4, 5]):
            r = Decoder(lm).decode(PROMPT, draft, opts(beta=0.2))
            assert r.tokens == [] and r.stats.ended_by_eos and r.stats.accepted == 0

    def test_eos_never_in_draft(self) -> None:
        r = Decoder(table_lm(NOW)).decode(PROMPT, [5, EOS, 6], opts(beta=0.0))
        assert r.stats.draft_len == 2  # the EOS was dropped from the draft
        assert r.tokens == [5, 6, 7]

    def test_length_cap(self) -> None:
        loop = {(): {5: 1.0}, **{(5,) * n: {5: 1.0} for n in range(1, 30)}}
        r = Decoder(table_lm(loop)).decode(PROMPT, [], opts(Method.RT, cap=4))
        assert r.tokens == [5, 5, 5, 5] and not r.stats.ended_by_eos
        assert r.stats.decode_steps == 3  # the 4th token is never fed back
        r = Decoder(table_lm(loop)).decode(PROMPT, [5] * 9, opts(beta=0.0, cap=4))
        assert r.tokens == [5, 5, 5, 5] and r.stats.draft_len == 4 and r.stats.decode_steps == 0
        r = Decoder(table_lm(loop)).decode(PROMPT, [5] * 3, opts(Method.CD, cap=0))
        assert r.tokens == []

    def test_bias_keeps_close_second_then_continues(self) -> None:
        table = {**NOW, (21,): {22: 0.9}, (21, 22): {EOS: 0.9}}
        assert Decoder(table_lm(table)).decode(PROMPT, [21, 22], opts(beta=0.0)).tokens == [5, 6, 7]
        r = Decoder(table_lm(table)).decode(PROMPT, [21, 22], opts(beta=0.2))
        assert r.tokens == [21, 22] and r.stats.accepted == 2

    def test_cd_takes_draft_unseen_with_one_logits_row(self) -> None:
        lm = table_lm({**NOW, (9, 9): {EOS: 1.0}})
        r = Decoder(lm).decode(PROMPT, [9, 9], opts(Method.CD))
        assert r.tokens == [9, 9] and r.stats.accepted == 2
        assert lm.calls[0] == (len(PROMPT) + 2, 1)

    def test_unfused_prompt_pass_is_timed_apart(self) -> None:
        lm = table_lm(NOW)
        r = Decoder(lm).decode(PROMPT, [5, 9], opts(beta=0.0, fuse=False))
        assert r.tokens == [5, 6, 7]
        assert lm.calls[0] == (len(PROMPT) - 1, 0)  # prompt tail without its last token
        assert lm.calls[1] == (3, 3)  # last prompt token + 2 draft tokens
        assert r.stats.verified_tokens == 2

    def test_prompt_prefix_is_reused(self) -> None:
        p2 = [*PROMPT, 13]

        def fn(ctx: tuple[int, ...]) -> np.ndarray:
            return peaked(V, {EOS: 1.0})

        lm = ScriptedLM(V, EOS, fn)
        dec = Decoder(lm)
        dec.decode(PROMPT, [], opts(Method.RT))
        r = dec.decode(p2, [], opts(Method.RT))
        assert r.stats.prompt_reused == len(PROMPT) and r.stats.prompt_tokens == 1
        # The same prompt again: its last token is re-evaluated for fresh logits.
        r = dec.decode(p2, [], opts(Method.RT))
        assert r.stats.prompt_reused == len(p2) - 1 and r.stats.prompt_tokens == 1

    def test_abort_keeps_what_was_decoded(self) -> None:
        loop = {(): {5: 1.0}, **{(5,) * n: {5: 1.0} for n in range(1, 30)}}
        calls = iter(range(100))
        r = Decoder(table_lm(loop)).decode(
            PROMPT, [5, 5], opts(beta=0.0, cap=20), should_abort=lambda: next(calls) >= 2
        )
        assert r.stats.aborted
        assert r.tokens == [5, 5, 5, 5, 5]  # 2 accepted + correction + 2 decoded before abort

    def test_empty_prompt_is_an_error(self) -> None:
        with pytest.raises(ValueError):
            Decoder(table_lm(NOW)).decode([], [], opts())
