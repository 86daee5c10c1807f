"""Re-translation (RT), self-speculative biased decoding (SSBD) and continuous decoding (CD).

All three are one engine over :class:`~subtitler.mt.lm.LanguageModel`:

* RT ignores the draft and decodes greedily after the prompt.
* SSBD evaluates prompt tail + draft in one pass, keeps draft token y_i while
  ``y_i == argmax((1 - beta) * p_i + beta * onehot(y_i))``, takes the correction token at the
  first rejected position from the logits already computed there, truncates the cache after
  the accepted prefix and resumes greedy decoding.
* CD accepts the whole draft without looking (logits only at its end) and continues.

A decode ends at end-of-generation, at a line break and where the model writes a chat
template's marker as text (mt/output_rules.py: neither is kept), in a decoding loop, or at the
length cap; a draft is cut before its first such token.

Tie-breaking: at beta == 0 the rule is plain greedy argmax (first index, like RT), so SSBD
reproduces RT token for token; at beta > 0 an exact tie goes to the draft token, so beta >= 0.5
accepts every token (== CD) even when float rounding makes probabilities tie.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field

import numpy as np

from subtitler.mt.drafting import Chain, Proposer, Resync
from subtitler.mt.lm import LanguageModel, Logits, common_prefix_len
from subtitler.mt.output_rules import ends_line, marker_cut
from subtitler.repeats import loops
from subtitler.types import UpdateStats

__all__ = [
    "DecodeOptions",
    "DecodeResult",
    "Decoder",
    "Method",
    "UpdateStats",
    "accepted_by_logprobs",
    "accepted_prefix",
]


class Method(enum.StrEnum):
    RT = "RT"
    SSBD = "SSBD"
    CD = "CD"


@dataclass(frozen=True)
class DecodeOptions:
    """How one update is decoded."""

    method: Method = Method.SSBD
    beta: float = 0.2  # bias towards the draft token in verification (SSBD only)
    max_new_tokens: int = 256  # length cap on the whole output, accepted + decoded
    fuse_prompt: bool = True  # evaluate prompt tail and draft in one pass (else two)
    verify: str = "biased"  # "biased" (SSBD's beta rule) | "specdec" (top-b within tau)
    top_b: int = 3  # specdec: the draft token must be among the b most likely
    tau: float = 1.0  # specdec: ... and within this log-likelihood of the most likely
    lookahead: int = 0  # tokens proposed past the draft per verify pass (0: off)
    resync: bool = False  # after a divergence, try the rest of the old draft again
    # Source tokens the output may not copy runs of more than COPY_RUN from (the retry of an
    # output that only wrote the source again, mt/translator.py): () = no constraint.
    no_copy: tuple[int, ...] = ()
    # ... nor repeat a run of COPY_RUN + 1 tokens it wrote already (the retry of a loop).
    no_repeat: bool = False


@dataclass
class DecodeResult:
    tokens: list[int]  # the output, without EOS; the next update's draft
    stats: UpdateStats = field(default_factory=UpdateStats)


EXACT = DecodeOptions(method=Method.RT, beta=0.0)


def accepted_prefix(rows: Logits, draft: Sequence[int], beta: float) -> int:
    """Number of leading draft tokens the biased rule accepts; rows[i] predicts draft[i]."""
    m = len(draft)
    if m == 0:
        return 0
    if beta >= 0.5:
        # (1-b)p_y + b >= 0.5 >= (1-b)max p for every distribution: always accepted.
        return m
    y = np.asarray(draft, dtype=np.intp)
    top = np.argmax(rows[:m], axis=1)
    # Where the draft token is the argmax the rule holds for every beta; only the other rows
    # need a softmax, and the scan ends at the first rejection.
    for i in np.flatnonzero(top != y):
        if beta <= 0.0:
            return int(i)
        x = rows[i]
        top_logit = x[top[i]]
        # exp in float32, summed in float64: the same decisions as a float64 softmax but for
        # ties within 1e-7, at half the cost on a 262k-token row.
        z = float(np.exp(x - top_logit).sum(dtype=np.float64))
        p_y = math.exp(float(x[y[i]]) - float(top_logit)) / z
        if (1.0 - beta) * p_y + beta < (1.0 - beta) / z:
            return int(i)
    return m


def accepted_by_logprobs(
    logprob: Sequence[float],
    best: Sequence[float],
    best_exact: Sequence[bool],
    beta: float,
) -> int:
    """:func:`accepted_prefix` for a server that returns log-probabilities instead of logits
    rows: the same rule on exact (not top-k renormalised) probabilities, y_i kept while
    ``(1 - beta) p(y_i) + beta >= (1 - beta) max p``; at beta = 0, while y_i is the best token.

    Where the best probability is unknown (``best_exact`` False), a token is kept only if the
    rule holds whatever the best token is: another token has at most ``1 - p(y_i)``, so
    ``(1 - beta) p + beta > (1 - beta) (1 - p)`` (strict, as a tie's winner is unknown).
    """
    m = len(logprob)
    if beta >= 0.5:
        return m  # as in accepted_prefix: every token, without looking
    for i in range(m):
        lp, lb = logprob[i], best[i]
        if best_exact[i]:
            if beta <= 0.0:
                ok = lp >= lb
            else:
                ok = (1.0 - beta) * math.exp(lp) + beta >= (1.0 - beta) * math.exp(lb)
        else:
            p = math.exp(lp)
            ok = (1.0 - beta) * p + beta > (1.0 - beta) * (1.0 - p)
        if not ok:
            return i
    return m


def specdec_prefix(rows: Logits, draft: Sequence[int], top_b: int, tau: float) -> int:
    """SpecDec's verification (Eq. 8-9): y_i is kept while it ranks within the top b and
    log p_max - log p(y_i) <= tau (log-probability gaps equal logit gaps)."""
    m = len(draft)
    if m == 0:
        return 0
    rows = rows[:m]
    y = np.asarray(draft, dtype=np.intp)
    ly = rows[np.arange(m), y]
    rank = (rows > ly[:, None]).sum(axis=1)
    ok = (rank < max(1, top_b)) & (rows.max(axis=1) - ly <= tau)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else m


def accept_count(rows: Logits, draft: Sequence[int], opts: DecodeOptions) -> int:
    if opts.verify == "specdec":
        return specdec_prefix(rows, draft, opts.top_b, opts.tau)
    return accepted_prefix(rows, draft, opts.beta)


def greedy(row: Logits) -> int:
    return int(np.argmax(row))


COPY_RUN = 3  # tokens of the source an output may copy in a row (a name) under no_copy


def copy_runs(source: Sequence[int]) -> frozenset[tuple[int, ...]]:
    """The source's runs of COPY_RUN + 1 tokens: what ``no_copy`` forbids the output to end in."""
    n = COPY_RUN + 1
    return frozenset(tuple(source[i : i + n]) for i in range(len(source) - n + 1))


def greedy_not_copying(row: Logits, out: Sequence[int], runs: Set[tuple[int, ...]]) -> int:
    """The most likely token that does not make the output's last COPY_RUN + 1 tokens a run of
    the source (among the 16 best; the best if all of them would)."""
    tail = tuple(out[len(out) - COPY_RUN :]) if len(out) >= COPY_RUN else None
    best = greedy(row)
    if tail is None or (*tail, best) not in runs:
        return best
    top = np.argpartition(row, -16)[-16:]
    for tok in top[np.argsort(row[top])[::-1]]:
        if (*tail, int(tok)) not in runs:
            return int(tok)
    return best


class Decoder:
    """Decodes one update of a streaming translation over a cached LM."""

    def __init__(self, lm: LanguageModel, clock: Callable[[], float] = time.perf_counter):
        self.lm = lm
        self._clock = clock
        self._breaks: dict[int, bool] = {}  # token -> its text breaks the line

    def _ends(self, tok: int, eos: frozenset[int]) -> bool:
        """Does ``tok`` end the output (end-of-generation or a line break)?"""
        if tok in eos:
            return True
        got = self._breaks.get(tok)
        if got is None:
            got = self._breaks[tok] = ends_line(self.lm.detokenize([tok]))
        return got

    def _reuse_prefix(self, prompt: Sequence[int]) -> int:
        """Drop the cache after the longest prefix shared with ``prompt``; return its length."""
        keep = common_prefix_len(self.lm.cached, prompt)
        # The last prompt token must be evaluated again: its logits predict the first output token.
        keep = min(keep, len(prompt) - 1)
        self.lm.truncate(keep)
        return keep

    def decode(
        self,
        prompt: Sequence[int],
        draft: Sequence[int],
        opts: DecodeOptions,
        should_abort: Callable[[], bool] | None = None,
        proposer: Proposer | None = None,
        on_step: Callable[[Sequence[int]], None] | None = None,
    ) -> DecodeResult:
        """One update; ``on_step`` sees the output so far after each decoding step (a slow
        decode can be shown as it goes: every prefix is a valid draft for the next update)."""
        if not prompt:
            raise ValueError("empty prompt")
        clock = self._clock
        eos = self.lm.eos_ids
        cap = max(0, opts.max_new_tokens)
        st = UpdateStats(method=str(opts.method))
        draft = [] if opts.method is Method.RT else [t for t in draft if t not in eos][:cap]
        # EOS is never part of a draft; a draft that contained one is cut before it, and
        # before a line break.
        ends = next((i for i, t in enumerate(draft) if self._ends(t, eos)), len(draft))
        draft = draft[:ends]
        st.draft_len = len(draft)

        reused = self._reuse_prefix(prompt)
        tail = list(prompt[reused:])
        st.prompt_reused, st.prompt_tokens = reused, len(tail)
        m = len(draft)

        if m == 0:
            t0 = clock()
            rows = self.lm.evaluate(tail, [len(tail) - 1])
            st.prompt_s = clock() - t0
            d, nxt_row = 0, rows[0]
        else:
            if opts.fuse_prompt:
                batch = tail + draft
                first = len(tail) - 1
                st.verified_tokens = len(batch)
            else:
                t0 = clock()
                if len(tail) > 1:
                    self.lm.evaluate(tail[:-1], [])
                st.prompt_s = clock() - t0
                st.prompt_tokens = len(tail)
                # The last prompt token goes with the draft: its logits verify draft[0].
                batch = tail[-1:] + draft
                first = 0
                st.verified_tokens = len(batch) - 1
            want = [first + m] if opts.method is Method.CD else list(range(first, first + m + 1))
            t0 = clock()
            rows = self.lm.evaluate(batch, want)
            if opts.method is Method.CD:
                d, nxt_row = m, rows[0]
            else:
                d = accept_count(rows, draft, opts)
                nxt_row = rows[d]
            if d < m:
                self.lm.truncate(len(prompt) + d)
            st.verify_s = clock() - t0
        st.accepted = d
        out = list(draft[:d])

        guess: Proposer | None = proposer if opts.lookahead > 0 else None
        if guess is not None:
            guess.start(prompt)
        if opts.resync and d < m and opts.method is Method.SSBD:
            sync = Resync(draft, d)
            guess = sync if guess is None else Chain(sync, guess)
        n_prompt = len(prompt)
        runs = set(copy_runs(opts.no_copy))
        if opts.no_repeat:
            runs |= copy_runs(out)
        t0 = clock()
        while len(out) < cap:
            tok = (
                greedy_not_copying(nxt_row, out, runs)
                if runs or opts.no_repeat
                else greedy(nxt_row)
            )
            if self._ends(tok, eos):
                st.ended_by_eos = True
                break
            out.append(tok)
            if opts.no_repeat and len(out) > COPY_RUN:
                runs.add(tuple(out[-COPY_RUN - 1 :]))
            if self._stopped(out, st):
                break
            if len(out) >= cap:
                break
            if should_abort is not None and should_abort():
                st.aborted = True
                break
            k = max(opts.lookahead, 8 if opts.resync else 0)
            extra = []
            if guess is not None:
                g0 = clock()
                extra = guess.propose(out, min(k, cap - len(out)))
                st.guess_s += clock() - g0
            extra = extra[: cap - len(out)]
            # A guess never ends the line: guesses stop before the first token that would.
            extra = extra[: next((i for i, t in enumerate(extra) if self._ends(t, eos)), None)]
            if extra:
                # Verify the guesses with the token just chosen, in one pass, by the same rule.
                rows = self.lm.evaluate([tok, *extra], list(range(len(extra) + 1)))
                # SSBD's bias is for text this meeting produced (n-grams, the old draft); a
                # draft model's guesses, and any guess in RT or CD, are kept only where greedy
                # decoding would have chosen them.
                trusted = opts.method is Method.SSBD and guess is not None and guess.trusted
                a = accept_count(rows, extra, opts if trusted else EXACT)
                out += extra[:a]
                st.lookahead_drafted += len(extra)
                st.lookahead_accepted += a
                if a < len(extra):
                    self.lm.truncate(n_prompt + len(out))
                if self._stopped(out, st):
                    st.decode_steps += 1
                    break
                nxt_row = rows[a]
            else:
                nxt_row = self.lm.evaluate([tok], [0])[0]
            st.decode_steps += 1
            if on_step is not None:
                on_step(out)
        st.decode_s = clock() - t0
        st.output_len = len(out)
        st.hit_cap = not st.ended_by_eos and not st.aborted and len(out) >= cap
        return DecodeResult(out, st)

    def _stopped(self, out: list[int], st: UpdateStats) -> bool:
        """After a token: a chat-template marker written as text is cut off and ends the
        output; a loop ends it as it is. The cache may hold more than ``out`` then (the
        next update's prompt match drops it)."""
        cut = marker_cut(out, self.lm.detokenize)
        if cut >= 0:
            del out[cut:]
            st.ended_by_eos = True
            return True
        if loops(out):
            st.looped = True
            return True
        return False
