"""The translator owns its settings: one mapping from MtConfig (app and benchmark), applied by
``reconfigure`` when they change; the engine keeps the translator's state between updates."""

from __future__ import annotations

import dataclasses

from subtitler.config import MtConfig
from subtitler.mt.drafting import GuessGate
from subtitler.mt.engine import LoadedModel, LocalEngine
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.streaming import LengthCap
from subtitler.mt.translator import StreamTranslator, decode_options
from subtitler_research.bench.runner import RunSpec
from tests.helpers.fake_pipeline import echo_lm


def test_decode_options_map_every_decoding_setting() -> None:
    mt = MtConfig(method="CD", beta=0.4, max_new_tokens=99, verify="specdec", top_b=5, tau=2.0,
                  lookahead=3, draft_tokens=7, resync=True)  # fmt: skip
    want = DecodeOptions(Method.CD, 0.4, 99, True, "specdec", 5, 2.0, 3, True)
    assert decode_options(mt, draft_model=False) == want
    assert decode_options(mt, draft_model=True) == dataclasses.replace(want, lookahead=7)
    assert decode_options(mt, draft_model=True, fuse_prompt=False).fuse_prompt is False


def test_the_benchmark_decodes_with_the_apps_mapping() -> None:
    """The options the bench built by hand before, for its kinds of run."""
    for spec in (
        RunSpec(Method.SSBD, beta=0.3, lookahead=4, resync=True),
        RunSpec(Method.RT),
        RunSpec(Method.SSBD, beta=0.0, verify="specdec", top_b=2, tau=0.5),
        RunSpec(Method.SSBD, beta=0.2, draft_tokens=6, lookahead=2),
    ):
        old = DecodeOptions(
            method=spec.method,
            beta=spec.beta if spec.beta is not None else 0.0,
            max_new_tokens=64,
            fuse_prompt=False,
            verify=spec.verify,
            top_b=spec.top_b,
            tau=spec.tau,
            lookahead=spec.draft_tokens or spec.lookahead,
            resync=spec.resync,
        )
        mt = MtConfig(method=spec.method.value, beta=spec.beta or 0.0, max_new_tokens=64,
                      verify=spec.verify, top_b=spec.top_b, tau=spec.tau,
                      lookahead=spec.lookahead, draft_tokens=spec.draft_tokens,
                      resync=spec.resync)  # fmt: skip
        got = decode_options(mt, draft_model=bool(spec.draft_tokens), fuse_prompt=False)
        assert got == old, spec


def test_reconfigure_takes_pair_decoding_cap_guessing_and_context() -> None:
    tr = StreamTranslator(echo_lm(), PromptBuilder("chatml", "en", "de"), DecodeOptions())
    tr.context = "earlier"
    mt = MtConfig(tgt_lang="ja", method="RT", len_ratio=2.0, max_new_tokens=50,
                  adaptive_guessing=True, context_sentences=0)  # fmt: skip
    tr.reconfigure(mt, "fr")
    assert (tr.prompts.template, tr.prompts.src_lang, tr.prompts.tgt_lang) == ("chatml", "fr", "ja")
    assert tr.options == decode_options(mt, draft_model=False)
    assert tr.cap == LengthCap(ratio=2.0, hard=50)
    assert isinstance(tr.gate, GuessGate) and tr.context == ""
    gate = tr.gate
    tr.reconfigure(dataclasses.replace(mt, beta=0.5), "fr")
    assert tr.gate is gate  # what the gate learnt is kept
    tr.reconfigure(dataclasses.replace(mt, adaptive_guessing=False, context_sentences=2), "fr")
    assert tr.gate is None and tr.context_sentences == 2


def test_the_engine_reconfigures_only_when_the_settings_change() -> None:
    mt = MtConfig(tgt_lang="de")
    engine = LocalEngine(LoadedModel(echo_lm(), "chatml"), mt)
    calls: list[MtConfig] = []
    engine.translate(0, "Good morning.", False, mt.tgt_lang, "en")
    tr = engine._trs["de"]
    real = tr.reconfigure
    tr.reconfigure = lambda m, s: (calls.append(m), real(m, s))[-1]  # type: ignore[method-assign]
    engine.translate(0, "Good morning everyone.", True, mt.tgt_lang, "en")
    engine.configure(dataclasses.replace(mt))  # equal settings (a new object)
    engine.translate(0, "Good morning everyone.", True, mt.tgt_lang, "en")
    assert calls == []  # same settings: nothing to do
    engine.configure(dataclasses.replace(mt, beta=0.4))
    engine.translate(1, "Thanks.", True, mt.tgt_lang, "en")
    engine.translate(1, "Thanks again.", True, mt.tgt_lang, "en")
    assert [m.beta for m in calls] == [0.4] and tr.options.beta == 0.4  # told once
    # Another target language: a translator of its own (its own draft) on the stream the
    # target no longer chosen leaves.
    engine.configure(dataclasses.replace(mt, tgt_lang="ja"))
    engine.translate(2, "Thanks.", True, "ja", "en")
    ja = engine._trs["ja"]
    assert engine.targets == ("ja",) and ja is not tr and ja.lm is tr.lm
    assert ja.prompts.tgt_lang == "ja"


def test_a_server_translator_takes_the_settings_by_the_same_mapping() -> None:
    from subtitler.mt.remote import RemoteEngine, ServerAbilities, ServerRoute
    from tests.unit.test_remote_rules import _QuietServer

    mt = MtConfig(template="qwen3", backend="server", server_url="http://127.0.0.1:1/v1",
                  beta=0.3, len_ratio=2.0, max_new_tokens=50, context_sentences=2,
                  verify="specdec", lookahead=3)  # fmt: skip
    local = StreamTranslator(echo_lm(), PromptBuilder("qwen3", "en", "de"), DecodeOptions())
    local.reconfigure(mt, "en")
    engine = RemoteEngine(mt, client=_QuietServer())  # type: ignore[arg-type]
    tr = engine._configure("en", mt)
    assert (tr.options, tr.cap, tr.context_sentences) == (
        local.options,
        local.cap,
        local.context_sentences,
    )
    tr.context = "earlier"
    assert engine._configure("en", dataclasses.replace(mt, context_sentences=0)).context == ""
    # A server without prompt log-probabilities: RT instead of SSBD.
    engine.abilities = ServerAbilities(ServerRoute.COMPLETIONS, tokenizer=True)
    assert engine._configure("en", mt).options == dataclasses.replace(
        local.options, method=Method.RT
    )
