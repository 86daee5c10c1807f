"""SSBD's invariants on the real llama.cpp backend, over many random prefix streams.

Run under the exact settings (Q8_0, flash attention, n_ubatch 32), where a verify pass yields the
same logits bit for bit as token-by-token decoding, so beta = 0 must reproduce RT exactly.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from subtitler.config import MtConfig
from subtitler.display.masking import display_text, inside_word
from subtitler.mt.drafting import (
    DraftModel,
    GuessGate,
    VocabularyMismatchError,
    check_same_vocabulary,
)
from subtitler.mt.engine import token_pieces
from subtitler.mt.lm import common_prefix_len
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.streaming import LengthCap
from subtitler.mt.translator import StreamTranslator
from subtitler_research.bench.runner import RunSpec, run_all
from subtitler_research.bench.streams import prefixes

WORDS = (
    "the a meeting we will start with budget review next quarter sales grew by ten percent "
    "our team in Berlin and Tokyo shipped new product features customers asked for faster "
    "support so hiring two engineers is planned please send questions before Friday thanks"
).split()
DATA = Path(__file__).resolve().parents[1] / "data"
CAP = LengthCap(ratio=1.5, slack=4, hard=40)


def random_sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 13))) + "." for _ in range(n)]


STREAMS = [prefixes(s, 2) for s in random_sentences(16, seed=7)]


class Recorder:
    """Passes every call to the LM and keeps each evaluate's inputs and logits."""

    def __init__(self, lm: Any) -> None:
        self.lm = lm
        self.log: list[tuple[list[int], list[int], np.ndarray]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.lm, name)

    @property
    def cached(self) -> Sequence[int]:
        return self.lm.cached  # type: ignore[no-any-return]

    @property
    def eos_ids(self) -> frozenset[int]:
        return self.lm.eos_ids  # type: ignore[no-any-return]

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> np.ndarray:
        rows = self.lm.evaluate(tokens, logits_at)
        self.log.append((list(tokens), list(logits_at), rows.copy()))
        return rows  # type: ignore[no-any-return]


def translator(lm: Any, method: Method, beta: float = 0.0, fuse: bool = True) -> StreamTranslator:
    prompts = PromptBuilder("qwen3", "en", "de")
    opts = DecodeOptions(method=method, beta=beta, max_new_tokens=64, fuse_prompt=fuse)
    return StreamTranslator(lm, prompts, opts, cap=CAP)


def same_as_rt(lm: Any, ext: StreamTranslator, streams: list[list[str]]) -> tuple[int, int]:
    """Run ``ext`` next to RT over ``streams``; every update must match RT token for token.
    Returns (guessed, kept) past the draft."""
    rt = translator(lm, Method.RT)
    guessed = kept = 0
    for i, stream in enumerate(streams):
        for j, src in enumerate(stream):
            final = j == len(stream) - 1
            a, b = rt.update(i, src, final), ext.update(i, src, final)
            assert a.tokens == b.tokens, f"stream {i} update {j}"
            guessed += b.stats.lookahead_drafted
            kept += b.stats.lookahead_accepted
    return guessed, kept


def run_stream(tr: StreamTranslator, seg: int, stream: list[str]) -> list[list[int]]:
    outs = []
    for j, src in enumerate(stream):
        outs.append(list(tr.update(seg, src, j == len(stream) - 1).tokens))
    return outs


def test_beta0_equals_rt_token_for_token(exact_lm: Any) -> None:
    rt, ssbd = translator(exact_lm, Method.RT), translator(exact_lm, Method.SSBD, 0.0)
    accepted = rejected = 0
    for i, stream in enumerate(STREAMS):
        a, b = run_stream(rt, i, stream), run_stream(ssbd, i, stream)
        assert a == b, f"stream {i} differs"
        for prev, cur in itertools.pairwise(b):
            lcp = common_prefix_len(prev, cur)
            accepted += lcp
            rejected += lcp < len(prev)
    # The streams exercise both paths: drafts partly kept and drafts rewritten.
    assert accepted > 0 and rejected > 0


@pytest.mark.parametrize("fuse", [True, False])
def test_beta0_unfused_and_fused_agree(exact_lm: Any, fuse: bool) -> None:
    rt = translator(exact_lm, Method.RT)
    ss = translator(exact_lm, Method.SSBD, 0.0, fuse=fuse)
    for i, stream in enumerate(STREAMS[:6]):
        assert run_stream(rt, i, stream) == run_stream(ss, i, stream)


@pytest.mark.parametrize("beta", [0.5, 0.7, 1.0])
def test_high_beta_never_rewrites_and_equals_cd(exact_lm: Any, beta: float) -> None:
    cd, ss = translator(exact_lm, Method.CD), translator(exact_lm, Method.SSBD, beta)
    for i, stream in enumerate(STREAMS):
        a, b = run_stream(cd, i, stream), run_stream(ss, i, stream)
        assert a == b
        for prev, cur in itertools.pairwise(b):
            assert cur[: len(prev)] == prev, "an earlier token was rewritten"


def biased_accept_count(rows: np.ndarray, draft: list[int], beta: float) -> int:
    """The rule written out on full distributions: argmax((1-b) p + b onehot(y)), ties to y."""
    d = 0
    for row, y in zip(rows, draft, strict=False):
        p = np.exp(row.astype(np.float64) - row.max())
        p /= p.sum()
        if beta == 0:
            ok = int(np.argmax(row)) == y
        else:
            q = (1 - beta) * p
            q[y] += beta
            ok = q[y] >= q.max()
        if not ok:
            break
        d += 1
    return d


@pytest.mark.parametrize("beta", [0.0, 0.1, 0.2, 0.3, 0.4])
def test_accepted_count_matches_numpy_rule(exact_lm: Any, beta: float) -> None:
    rec = Recorder(exact_lm)
    tr = translator(rec, Method.SSBD, beta)
    checked = partial = 0
    for i, stream in enumerate(STREAMS):
        for j, src in enumerate(stream):
            rec.log.clear()
            t = tr.update(i, src, j == len(stream) - 1)
            if t.stats.draft_len == 0:
                continue
            toks, at, rows = rec.log[0]  # the verify pass
            m = len(at) - 1
            draft = toks[at[0] + 1 :]
            assert len(draft) == m == t.stats.draft_len
            assert t.stats.accepted == biased_accept_count(rows[:m], draft, beta)
            checked += 1
            partial += t.stats.accepted < m
    assert checked > 30 and partial > 0


def test_display_mask_never_changes_what_the_decoder_sees(exact_lm: Any) -> None:
    prompts = PromptBuilder("qwen3", "en", "de")
    sources = random_sentences(8, seed=11)
    specs = [
        RunSpec(Method.SSBD, 0.2),
        RunSpec(Method.SSBD, 0.2, "display", 3),
        RunSpec(Method.SSBD, 0.2, "output", 3),
    ]
    mt = MtConfig(len_ratio=1.5, max_new_tokens=40)  # the cap: 1.5 per source token, 40
    plain, display, output = run_all(exact_lm, prompts, sources, specs, mt=mt, step=2)
    assert display.tokens == plain.tokens
    assert display.finals == plain.finals
    assert output.tokens != plain.tokens  # output mask-k does change the drafts
    # What is shown is the full translation minus 3 tokens, on whole characters.
    for stream_toks, stream_shown in zip(display.tokens, display.shown, strict=True):
        for n, (toks, shown) in enumerate(zip(stream_toks, stream_shown, strict=True)):
            final = n == len(stream_toks) - 1
            assert shown == display_text(token_pieces(exact_lm.detokenize, toks), 3, final)


def test_multibyte_text_is_never_split(exact_lm: Any) -> None:
    # GPT-2's byte-level BPE cuts these characters across tokens.
    text = " 日本語のテキストと中文字幕、Grüße 🦙"
    toks = exact_lm.tokenize(text, special=False)
    pieces = [exact_lm.detokenize([t]) for t in toks]
    assert any(
        p and p.decode("utf-8", errors="replace") != p.decode("utf-8", "ignore") for p in pieces
    ), "the tokenizer should split some characters"
    for n in range(len(toks) + 1):
        for k in range(6):
            shown = display_text(pieces[:n], k, final=False)
            assert "\ufffd" not in shown
            assert text.strip().startswith(shown)
            kept = exact_lm.detokenize(toks[: max(0, n - k)]).decode("utf-8", errors="ignore")
            # The complete characters of the kept tokens, less at most the one word the cut
            # fell in (Latin words whole, Japanese and Chinese by character), and nothing else.
            assert kept.strip().startswith(shown)
            assert " " not in kept.strip()[len(shown) :].strip()
            full = exact_lm.detokenize(toks[:n]).decode("utf-8", errors="ignore").strip()
            assert not inside_word(full, len(shown))
    assert display_text(pieces, 4, final=True) == text.strip()


@pytest.mark.parametrize(("lookahead", "resync"), [(8, False), (0, True), (8, True)])
def test_lookahead_and_resync_keep_beta0_equal_to_rt(
    exact_lm: Any, lookahead: int, resync: bool
) -> None:
    """Issue 8's drafters only guess: at beta = 0 the output is still exactly RT's."""
    prompts = PromptBuilder("qwen3", "en", "de")
    opts = DecodeOptions(
        method=Method.SSBD, beta=0.0, max_new_tokens=64, lookahead=lookahead, resync=resync
    )
    ext = StreamTranslator(exact_lm, prompts, opts, cap=CAP)
    guessed, _ = same_as_rt(exact_lm, ext, STREAMS)
    assert guessed > 0  # the guessing path really ran


@pytest.fixture(scope="module")
def other_tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Another random tiny llama with the same tokenizer: a (bad) draft model."""
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    out = tmp_path_factory.mktemp("draft") / "other.gguf"
    build_random_llama(out, PRESETS["tiny"], tiktoken=DATA / "gpt2.tiktoken", seed=99)
    lm = LlamaLM(LlamaSettings(str(out), n_ctx=1024, n_ubatch=32, n_threads=1))
    yield lm
    lm.close()


@pytest.fixture(scope="module")
def same_tiny_lm(tiny_gguf: Any) -> Any:
    """The target model's own file loaded a second time: a perfect draft model."""
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    lm = LlamaLM(
        LlamaSettings(
            str(tiny_gguf), n_ctx=1024, n_batch=256, n_ubatch=32, n_threads=1, flash_attn=True
        )
    )
    yield lm
    lm.close()


@pytest.mark.parametrize(
    ("method", "adaptive"), [(Method.RT, False), (Method.SSBD, False), (Method.SSBD, True)]
)
def test_draft_model_keeps_beta0_equal_to_rt(
    exact_lm: Any, other_tiny_lm: Any, method: Method, adaptive: bool
) -> None:
    """A draft model only guesses: at beta = 0 the output is still exactly RT's, also when
    the guess gate turns guessing on and off between updates."""
    check_same_vocabulary(exact_lm, other_tiny_lm)
    prompts = PromptBuilder("qwen3", "en", "de")
    opts = DecodeOptions(method=method, beta=0.0, max_new_tokens=64, lookahead=4)
    ext = StreamTranslator(exact_lm, prompts, opts, cap=CAP, draft_model=DraftModel(other_tiny_lm))
    if adaptive:
        ext.gate = GuessGate(explore_every=3, warmup=2)
    guessed, _ = same_as_rt(exact_lm, ext, STREAMS[:8])
    assert guessed > 0
    if ext.gate is not None:  # both sides really ran
        assert ext.gate.seen[True] > 0 and ext.gate.seen[False] > 0


def test_draft_model_never_changes_ssbd_output(exact_lm: Any, other_tiny_lm: Any) -> None:
    """Even at beta = 0.2 a draft model's guesses are checked with plain argmax, so SSBD with
    a draft model writes exactly what SSBD without one writes (only faster or slower)."""
    prompts = PromptBuilder("qwen3", "en", "de")
    plain = translator(exact_lm, Method.SSBD, beta=0.2)
    opts = DecodeOptions(method=Method.SSBD, beta=0.2, max_new_tokens=64, lookahead=4)
    ext = StreamTranslator(exact_lm, prompts, opts, cap=CAP, draft_model=DraftModel(other_tiny_lm))
    guessed = 0
    for i, stream in enumerate(STREAMS[:8]):
        for j, src in enumerate(stream):
            final = j == len(stream) - 1
            a, b = plain.update(i, src, final), ext.update(i, src, final)
            assert a.tokens == b.tokens, f"stream {i} update {j}"
            guessed += b.stats.lookahead_drafted
    assert guessed > 0


def test_target_as_its_own_draft_model_is_always_right(exact_lm: Any, same_tiny_lm: Any) -> None:
    """Under the exact settings a draft model identical to the target guesses exactly what
    greedy decoding then chooses, so every guess is kept and the output is still RT's."""
    prompts = PromptBuilder("qwen3", "en", "de")
    opts = DecodeOptions(method=Method.RT, max_new_tokens=64, lookahead=4)
    ext = StreamTranslator(exact_lm, prompts, opts, cap=CAP, draft_model=DraftModel(same_tiny_lm))
    drafted, kept = same_as_rt(exact_lm, ext, STREAMS[:6])
    assert drafted > 0 and kept == drafted


def test_draft_model_with_another_vocabulary_is_refused(exact_lm: Any) -> None:
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "translator" / "model.gguf"
    other = LlamaLM(LlamaSettings(str(fixture), n_ctx=256, n_threads=1))
    try:
        with pytest.raises(VocabularyMismatchError, match="12000 tokens"):
            check_same_vocabulary(exact_lm, other)
    finally:
        other.close()


def test_specdec_verification_runs_on_the_real_backend(exact_lm: Any) -> None:
    rec = Recorder(exact_lm)
    prompts = PromptBuilder("qwen3", "en", "de")
    opts = DecodeOptions(method=Method.SSBD, verify="specdec", top_b=3, tau=1.0, max_new_tokens=64)
    tr = StreamTranslator(rec, prompts, opts, cap=CAP)
    for i, stream in enumerate(STREAMS[:6]):
        for j, src in enumerate(stream):
            rec.log.clear()
            t = tr.update(i, src, j == len(stream) - 1)
            if not t.stats.draft_len:
                continue
            toks, at, rows = rec.log[0]
            m = len(at) - 1
            draft = toks[at[0] + 1 :]
            # Independently: keep y_i while rank < 3 and max logit - logit(y_i) <= 1.
            d = 0
            for row, y in zip(rows[:m], draft, strict=True):
                if (row > row[y]).sum() >= 3 or row.max() - row[y] > 1.0:
                    break
                d += 1
            assert t.stats.accepted == d
