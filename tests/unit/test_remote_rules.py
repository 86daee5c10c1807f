"""The biased rule on a server's log-probabilities, and reading them out of echo answers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from subtitler.mt.completions import DraftNotAligned, NoPromptLogprobs, ServerError, parse_echo
from subtitler.mt.ssbd import accepted_by_logprobs, accepted_prefix


def log_softmax(rows: np.ndarray) -> np.ndarray:
    x = rows.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("beta", [0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.8, 1.0])
def test_logprob_rule_equals_the_logits_rule(beta: float) -> None:
    rng = np.random.default_rng(int(beta * 100) + 1)
    for _ in range(300):
        m, vocab = int(rng.integers(1, 9)), 50
        rows = (rng.standard_normal((m + 1, vocab)) * rng.uniform(0.5, 4)).astype(np.float32)
        # Drafts that agree with the argmax for a while, then a random token.
        draft = [int(np.argmax(r)) for r in rows[:m]]
        cut = int(rng.integers(0, m + 1))
        for j in range(cut, m):
            draft[j] = int(rng.integers(0, vocab))
        lp = log_softmax(rows)
        logprob = [float(lp[i, y]) for i, y in enumerate(draft)]
        best = [float(lp[i].max()) for i in range(m)]
        got = accepted_by_logprobs(logprob, best, [True] * m, beta)
        assert got == accepted_prefix(rows, draft, beta)


@pytest.mark.parametrize("beta", [0.0, 0.1, 0.3, 0.45])
def test_unknown_best_accepts_only_what_the_rule_surely_accepts(beta: float) -> None:
    rng = np.random.default_rng(7)
    kept = 0
    for _ in range(2000):
        rows = (rng.standard_normal((1, 20)) * rng.uniform(0.5, 6)).astype(np.float32)
        y = int(rng.integers(0, 3)) if rng.random() < 0.5 else int(np.argmax(rows[0]))
        lp = log_softmax(rows)
        bounded = accepted_by_logprobs([float(lp[0, y])], [float(lp[0, y])], [False], beta)
        if bounded:
            kept += 1
            assert accepted_prefix(rows, [y], beta) == 1
    assert kept > 100  # confident tokens are still kept without knowing the best one


def test_beta_one_half_keeps_everything_without_looking() -> None:
    assert accepted_by_logprobs([-50.0, -80.0], [-0.1, -0.01], [True, False], 0.5) == 2


# -- echo answers --------------------------------------------------------------------------

PROMPT = [0, 11, 12, 1, 0, 21, 22, 1, 0, 31]  # ChatML-like: BOS-valued id 0 thrice
DRAFT = [41, 42, 43]
TEXT = "Der Hund läuft"  # pieces "Der", " Hund", " läuft"


def entry(label: str, value: float | None, top: dict[str, float] | None, off: int) -> Any:
    return (label, value, top, off)


def answer(entries: list[Any], prompt_tokens: int, completion: int, finish: str) -> Any:
    labels, values, tops, offs = (list(x) for x in zip(*entries, strict=True))
    return {
        "choices": [
            {
                "text": "…",
                "finish_reason": finish,
                "logprobs": {
                    "tokens": labels,
                    "token_logprobs": values,
                    "top_logprobs": tops,
                    "text_offset": offs,
                },
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion},
    }


def prompt_entries(count: int) -> list[Any]:
    return [entry("p", -1.0, {"x": -0.5, "p": -1.0}, i) for i in range(count)]


DRAFT_ENTRIES = [
    entry("Der", -0.1, {"Der": -0.1}, 100),
    entry(" Hund", -2.0, {" Katze": -0.3, " Hund": -2.0}, 103),
    entry(" läuft", -0.2, {" läuft": -0.2}, 108),
]


def test_openai_layout_every_prompt_token_then_the_generated_one() -> None:
    n = len(PROMPT) + len(DRAFT)
    ents = [entry("<s>", None, None, 0), *prompt_entries(n - 4), *DRAFT_ENTRIES]
    ents.append(entry(".", -0.05, {".": -0.05}, 114))
    got = parse_echo(answer(ents, n, 1, "length"), PROMPT + DRAFT, 3, TEXT, "srv")
    assert got.logprob == [-0.1, -2.0, -0.2]
    assert got.best == [-0.1, -0.3, -0.2]
    assert got.pieces == ["Der", " Hund", " läuft"]
    assert not got.next_is_eos


def test_llama_cpp_python_layout_skips_bos_valued_tokens_and_eos() -> None:
    n = len(PROMPT) + len(DRAFT)
    skipped = PROMPT.count(0)
    ents = [*prompt_entries(n - skipped - 3), *DRAFT_ENTRIES]  # no entry for the EOS
    got = parse_echo(answer(ents, n, 0, "stop"), PROMPT + DRAFT, 3, TEXT, "srv")
    assert got.logprob == [-0.1, -2.0, -0.2] and got.next_is_eos
    assert got.pieces == ["Der", " Hund", " läuft"]


def test_a_character_split_over_tokens_goes_to_the_token_that_completes_it() -> None:
    text = "ein Bär"  # "ä" over two byte tokens: labels '' and '' (decoded alone)
    draft = [51, 52, 53, 54]
    ents = [
        entry("ein", -0.1, {"ein": -0.1}, 50),
        entry(" B", -0.1, {" B": -0.1}, 53),
        entry("", -0.2, {"": -0.2}, 55),  # prefix "ein B" + half of ä: offset unchanged
        entry("", -0.3, {"": -0.3}, 55),
        entry("r", -0.1, {"r": -0.1}, 56),
    ]
    draft = [51, 52, 53, 54, 55]
    n = len(PROMPT) + len(draft)
    ents = [*prompt_entries(n - PROMPT.count(0) - 5), *ents, entry(".", -0.1, {".": -0.1}, 57)]
    got = parse_echo(answer(ents, n, 1, "length"), PROMPT + draft, 5, text, "srv")
    assert got.pieces == ["ein", " B", "", "ä", "r"]
    assert got.best_exact == [True, True, False, False, True]


def test_shifted_llama_cpp_python_layout_is_refused_not_misread() -> None:
    prompt = [5, 11, 12, 31]  # the first token is not the BOS token: nothing skipped
    n = len(prompt) + 3
    # One entry per prompt token, each paired with the *next* position's distribution.
    ents = [*prompt_entries(n - 3), *DRAFT_ENTRIES]
    ents[-1] = entry(" läuft", -4.0, {".": -0.1, " läuft": -4.0}, 108)
    with pytest.raises(NoPromptLogprobs, match="do not line up"):
        parse_echo(answer(ents, n, 1, "length"), prompt + DRAFT, 3, TEXT, "srv")


def test_answers_without_prompt_logprobs_or_counts_are_one_line_errors() -> None:
    no_lp = {"choices": [{"text": "x", "finish_reason": "length"}], "usage": {}}
    with pytest.raises(NoPromptLogprobs, match="no log-probabilities"):
        parse_echo(no_lp, PROMPT + DRAFT, 3, TEXT, "srv")
    n = len(PROMPT) + 3
    ents = [*prompt_entries(n - 3), *DRAFT_ENTRIES]
    with pytest.raises(ServerError, match="read the prompt as 12 tokens"):
        parse_echo(answer(ents, n - 1, 1, "length"), PROMPT + DRAFT, 3, TEXT, "srv")
    with pytest.raises(ServerError, match="without choices"):
        parse_echo({"choices": []}, PROMPT + DRAFT, 3, TEXT, "srv")


def sglang_answer(prompt_labels: list[str], draft_labels: list[str]) -> Any:
    """SGLang's ``to_openai_style_logprobs``: prompt entries (the first without values), the
    generated one; ``text_offset`` -1 throughout; each top dict holds the top token only."""
    labels = [*prompt_labels, *draft_labels, "."]
    values: list[float | None] = [None, *([-1.0] * (len(prompt_labels) - 1))]
    tops: list[Any] = [None, *([{"x": -0.5}] * (len(prompt_labels) - 1))]
    values += [-0.1, -2.0, -0.2, -0.05]
    tops += [{"Der": -0.1}, {" Katze": -0.3}, {" läuft": -0.2}, {".": -0.05}]
    return answer(
        list(zip(labels, values, tops, [-1] * len(labels), strict=True)),
        len(labels) - 1,
        1,
        "length",
    )


def test_without_a_tokenizer_the_draft_is_read_off_the_echo() -> None:
    """SGLang before /tokenize: the draft's entries are the last prompt entries whose texts
    make up the draft."""
    got = parse_echo(
        sglang_answer(["<s>", "Trans", "late", ":"], ["Der", " Hund", " läuft"]),
        None,
        None,
        TEXT,
        "srv",
    )
    assert got.logprob == [-0.1, -2.0, -0.2] and got.best == [-0.1, -0.3, -0.2]
    assert got.pieces == ["Der", " Hund", " läuft"] and got.prompt_tokens == 7


def test_a_draft_whose_first_token_spans_the_prompt_end_is_not_aligned() -> None:
    # ":Der" is one token: the draft does not start on a token of its own.
    with pytest.raises(DraftNotAligned):
        parse_echo(
            sglang_answer(["<s>", "Trans", "late"], [":Der", " Hund", " läuft"]),
            None,
            None,
            TEXT,
            "srv",
        )


class _QuietServer:
    """Just enough of CompletionsClient for RemoteEngine to connect (no verify support)."""

    where = "http://127.0.0.1:1/v1"
    model = ""

    def list_models(self) -> list[dict[str, object]]:
        return [{"id": "qwen3-4b"}]

    def find_tokenizer(self, deadline: object = None) -> bool:
        return True

    def tokenize(self, text: str) -> list[int]:
        return list(range(len(text.split())))

    def completion(self, *a: object) -> dict[str, object]:
        return {"choices": [{"text": "x", "finish_reason": "length"}]}  # no log-probabilities

    def verify(self, *a: object) -> None:
        raise AssertionError("not reached: the draft adds no token here")

    def close(self) -> None:
        pass


def test_a_glossary_reaches_a_servers_instruction_prompt() -> None:
    from subtitler.config import MtConfig
    from subtitler.mt.glossary import Entry, Glossary
    from subtitler.mt.remote import RemoteEngine

    mt = MtConfig(template="qwen3", backend="server", server_url="http://127.0.0.1:1/v1")
    engine = RemoteEngine(mt, client=_QuietServer())  # type: ignore[arg-type]
    text = "The press at Subiaco printed it."
    assert "Glossary" not in engine._configure("en", mt).prompts.build(text)
    engine.set_glossary(Glossary((Entry("en", "de", "Subiaco", "Subiaco (Italien)"),)))
    prompt = engine._configure("en", mt).prompts.build(text)
    assert "Subiaco (Italien)" in prompt and "Glossary" in prompt
    # Another pair's entries stay out of the prompt.
    assert "Glossary" not in engine._configure("fr", mt).prompts.build(text)
