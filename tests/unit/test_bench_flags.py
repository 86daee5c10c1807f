"""The bench takes the app's translation settings from the one schema (each field a flag,
checked by its declaration, mapped to the model and the translators by the app's own mapping);
what it sweeps (methods, betas, k) and what translates (--model, --server) stay its own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from subtitler.config import SECTIONS, MtConfig, given_settings, setting
from subtitler.mt.llama_backend import LlamaSettings
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.remote import server_settings
from subtitler.mt.ssbd import Method
from subtitler_research.bench import cli
from subtitler_research.bench.runner import RunSpec, run_all
from tests.helpers.fake_lm import ScriptedLM, peaked

CORPUS = ["--model", "m.gguf", "--source", "s.en", "--reference", "r.de"]


@dataclass(frozen=True)
class MtWithHint(MtConfig):
    """MtConfig and one field more, declared the way every setting is."""

    patience_hint: float = setting(1.0, "Patience hint", "a setting added for this test",
                                   range=(0.5, 2.0))  # fmt: skip


def test_an_added_translation_setting_is_a_flag_of_the_bench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SECTIONS, "mt", MtWithHint)
    a = cli.parser().parse_args([*CORPUS, "--mt-patience-hint", "1.5"])
    assert given_settings(a) == {"mt.patience_hint": 1.5}
    with pytest.raises(SystemExit):
        cli.parser().parse_args([*CORPUS, "--mt-patience-hint", "3"])
    assert "Patience hint must be 0.5..2 (is 3.0)" in capsys.readouterr().err


def test_the_benchs_settings_are_the_apps_but_the_server_timeout() -> None:
    mt = cli.settings(cli.parser().parse_args(CORPUS))
    assert mt == dataclasses.replace(MtConfig(), server_timeout_s=30.0)
    # What the runs sweep, or --model/--server choose, is not a flag of its own.
    keys = set(cli.setting_keys())
    assert {"mt.method", "mt.beta", "mt.model_path", "mt.server_url"}.isdisjoint(keys)
    assert {"mt.n_ctx", "mt.len_ratio", "mt.context_sentences"} <= keys


def test_the_old_flags_set_the_settings_and_reach_the_model_as_the_apps_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    a = cli.parser().parse_args(
        [*CORPUS, "--src-lang", "EN", "--tgt-lang", "ja", "--threads", "2", "--n-ctx", "1024",
         "--n-ubatch", "32", "--gpu-layers", "0", "--no-flash-attn", "--max-new-tokens", "40",
         "--len-ratio", "1.2", "--template", "chatml", "--mt-context-sentences", "1"]
    )  # fmt: skip
    mt = cli.settings(a)
    want = MtConfig(src_lang="en", tgt_lang="ja", threads=2, n_ctx=1024, n_ubatch=32,
                    gpu_layers=0, flash_attn=False, max_new_tokens=40, len_ratio=1.2,
                    template="chatml", context_sentences=1, server_timeout_s=30.0)  # fmt: skip
    assert mt == want
    assert LlamaSettings.from_config(mt, "m.gguf", 1024) == LlamaSettings(
        "m.gguf", n_ctx=1024, n_ubatch=32, n_threads=2, n_gpu_layers=0, flash_attn=False
    )
    with pytest.raises(SystemExit):  # checked by the declaration, as in the settings file
        cli.parser().parse_args([*CORPUS, "--n-ctx", "100"])
    assert "Context length must be 1024..32768 (is 100)" in capsys.readouterr().err
    with pytest.raises(cli.UsageError, match="unknown language code 'xx'"):
        cli.settings(cli.parser().parse_args([*CORPUS, "--tgt-lang", "xx"]))


def test_the_server_flags_are_the_server_settings() -> None:
    a = cli.parser().parse_args(
        ["--server", "http://gpu:8000/v1", "--server-model", "q", "--api-key", "k",
         "--timeout", "20", "--source", "s.en", "--reference", "r.de"]
    )  # fmt: skip
    mt = cli.settings(a)
    assert mt.uses_server
    s = server_settings(mt)
    assert (s.base_url, s.model, s.api_key, s.timeout_s) == ("http://gpu:8000/v1", "q", "k", 20.0)


def test_a_run_takes_the_settings_with_its_own_decoding() -> None:
    spec = RunSpec(Method.SSBD, 0.3, lookahead=4, resync=True, adaptive=True)
    base = MtConfig(method="CD", max_new_tokens=40, tgt_lang="ja", adaptive_guessing=False)
    mt = spec.settings(base)
    assert (mt.method, mt.beta, mt.lookahead, mt.resync, mt.adaptive_guessing) == (
        "SSBD", 0.3, 4, True, True,
    )  # fmt: skip
    assert (mt.max_new_tokens, mt.tgt_lang) == (40, "ja")


def test_the_runs_are_capped_by_the_settings() -> None:
    """A model that never stops: each run's output is as long as the settings' length cap
    (len_ratio tokens per source token + 8, at most max_new_tokens)."""
    # (A new token each step: one token over and over would be a decoding loop, stopped early.)
    endless = ScriptedLM(40, 0, lambda ctx: peaked(40, {5 + len(ctx) % 31: 1.0}))
    prompts = PromptBuilder("chatml", "en", "de")
    sources = ["one two three four five six seven"]
    specs = [RunSpec(Method.RT), RunSpec(Method.SSBD, 0.2), RunSpec(Method.CD)]

    def longest(mt: MtConfig) -> set[int]:
        runs = run_all(endless, prompts, sources, specs, mt=mt, step=100)
        return {len(t) for r in runs for s in r.tokens for t in s}

    n = len(endless.tokenize(sources[0], add_bos=False, special=False))
    assert longest(MtConfig(len_ratio=1.0)) == {n + 8}
    assert longest(MtConfig(max_new_tokens=5)) == {5}
