"""Several target languages on one loaded model (issue 19 point 4): each target a stream of
its own (a llama.cpp sequence of a shared context, or a context each) on the same weights."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.config import AppConfig, AsrConfig, MtConfig
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings, LlamaView
from subtitler.mt.lm import LanguageModel
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.streaming import LengthCap
from subtitler.mt.translator import StreamTranslator
from subtitler.pipeline.events import ErrorEvent, SubtitleEvent
from subtitler.pipeline.pipeline import Pipeline
from subtitler.pipeline.transcript import export, read_transcript
from subtitler_research.bench.streams import prefixes
from subtitler_research.bench.targets import main
from subtitler_research.pipeline.oracle import looped_words, oracle_factories
from tests.unit.test_pipeline import Events

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
DATA = ROOT / "tests" / "data"
OPTS = DecodeOptions(method=Method.SSBD, beta=0.2, max_new_tokens=40)
CAP = LengthCap(ratio=1.5, slack=4, hard=40)


def sources() -> list[str]:
    lines = (DATA / "translator_pairs.tsv").read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[1] for line in lines if line.startswith("de\t")][:3]


@pytest.fixture(scope="module")
def lm() -> Iterator[LlamaLM]:
    m = LlamaLM(LlamaSettings(str(FIXTURE), n_ctx=512, n_batch=256, n_ubatch=32, n_threads=1))
    yield m
    m.close()


def interleaved(lms: dict[str, LanguageModel]) -> dict[str, list[str]]:
    """Every update translated into each target in turn, as one stage would."""
    trs = {
        t: StreamTranslator(m, PromptBuilder("chatml", "en", t), OPTS, cap=CAP)
        for t, m in lms.items()
    }
    out: dict[str, list[str]] = {t: [] for t in lms}
    for i, s in enumerate(sources()):
        stream = prefixes(s, 2)
        for j, p in enumerate(stream):
            for t, tr in trs.items():
                out[t].append(tr.update(i, p, j == len(stream) - 1).text)
    return out


@pytest.mark.parametrize("layout", ["sequences", "contexts"])
def test_targets_sharing_a_model_translate_as_each_alone(lm: LlamaLM, layout: str) -> None:
    alone = {t: interleaved({t: lm})[t] for t in ("de", "ja")}
    de, ja = lm.views(2, layout)
    both = interleaved({"de": de, "ja": ja})
    assert both == alone  # token for token: the streams do not disturb each other's cache
    # (The fixture writes German for one line asked in Japanese: no translation, not shown.)
    assert all(alone["de"]) and any(alone["ja"]) and alone["de"] != alone["ja"]
    assert de.cached and ja.cached and de.cached != ja.cached
    de.truncate(3)  # cutting one stream's cache leaves the other's alone
    assert len(de.cached) == 3 and interleaved({"ja": ja}) == {"ja": alone["ja"]}


def test_an_unknown_layout_is_refused(lm: LlamaLM) -> None:
    with pytest.raises(ValueError, match="sequences or contexts"):
        lm.views(2, "threads")


def test_bench_targets_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src.en"
    src.write_text("\n".join(sources()) + "\n", encoding="utf-8")
    assert (
        main(["--model", str(FIXTURE), "--source", str(src), "--limit", "3", "--n-ctx", "512"]) == 0
    )
    printed = capsys.readouterr().out
    assert "| 2 targets (de,ja), sequences |" in printed
    assert "| 2 targets (de,ja), contexts |" in printed
    assert "| NO |" not in printed  # sharing the model changed no translation


# -- through the app's pipeline ------------------------------------------------------------


def test_a_local_engine_gives_each_target_a_stream_of_its_own(lm: LlamaLM) -> None:
    """The engine the pipeline uses: a target each on its own llama.cpp context, translating
    token for token as each target alone does."""
    from subtitler.mt.engine import LoadedModel, LocalEngine

    mt = MtConfig(max_new_tokens=40, len_ratio=1.5, extra_targets="ja", adaptive_guessing=False)
    engine = LocalEngine(LoadedModel(lm, "chatml"), mt)
    both: dict[str, list[str]] = {"de": [], "ja": []}
    for i, s in enumerate(sources()):
        stream = prefixes(s, 2)
        for j, p in enumerate(stream):
            for t in ("de", "ja"):
                r = engine.translate(i, p, j == len(stream) - 1, t, "en")
                both[t].append(r.text)
    de, ja = (engine._trs[t].lm for t in ("de", "ja"))
    assert de is lm and isinstance(ja, LlamaView) and ja.parent is lm
    for t in ("de", "ja"):
        one = dataclasses.replace(mt, tgt_lang=t, extra_targets="")
        alone = LocalEngine(LoadedModel(lm, "chatml"), one)
        got = [
            alone.translate(i, p, j == len(st) - 1, t, "en").text
            for i, s in enumerate(sources())
            for st in [prefixes(s, 2)]
            for j, p in enumerate(st)
        ]
        assert got == both[t], t
    assert both["de"] != both["ja"]


def run_pipeline(tmp_path: Path, mt_changes: dict[str, object]) -> tuple[list[SubtitleEvent], Path]:
    """The oracle talk's first sentences through the pipeline with the fixture translator in
    its worker process, as the app runs it."""
    words = tmp_path / "w.tsv"
    lines = (DATA / "ljspeech_talk.words.tsv").read_text().splitlines()[:40]
    words.write_text("\n".join(lines) + "\n")
    mt = MtConfig(model_path=str(FIXTURE), max_new_tokens=24, beta=0.0, n_ctx=512)
    cfg = AppConfig(mt=dataclasses.replace(mt, **mt_changes), asr=AsrConfig(language="en"))
    ev = Events()
    path = tmp_path / f"t-{'-'.join(map(str, mt_changes.values())) or 'one'}.jsonl"
    p = Pipeline(cfg, ev, oracle_factories(looped_words(words)), speed=8.0, transcript_path=path)
    p.start()
    assert p.finished.wait(120)
    assert p.stop(5.0)
    assert not [e for e in ev.of(ErrorEvent)]
    return ev.of(SubtitleEvent), path


def test_the_pipeline_translates_every_line_into_two_targets_on_one_model(
    tmp_path: Path,
) -> None:
    """de and ja on the fixture translator: every finished line in both, exactly as each
    target alone translates it (beta = 0: the final translation is the model's greedy one
    whatever updates came before), in the transcript and in the export of each language."""

    def finals(events: list[SubtitleEvent], lang: str) -> list[tuple[int, str]]:
        return [(e.segment_id, e.translation) for e in events if e.final and e.lang == lang]

    both, path = run_pipeline(tmp_path, {"tgt_lang": "de", "extra_targets": "ja"})
    got = {t: finals(both, t) for t in ("de", "ja")}
    alone = {t: finals(run_pipeline(tmp_path, {"tgt_lang": t})[0], t) for t in ("de", "ja")}
    assert got == alone and len(got["de"]) >= 2
    assert all(text for _, text in got["ja"]) and got["de"] != got["ja"]
    assert any(not e.final and e.lang == "ja" and e.translation for e in both)
    recs = read_transcript(path)
    assert [(r.segment_id, r.translation) for r in recs] == got["de"]
    assert [(r.segment_id, r.translation_in("ja")) for r in recs] == got["ja"]
    for t in ("de", "ja"):
        out = export(recs, tmp_path / f"meeting.{t}.srt", "translation", t).read_text()
        assert out.splitlines()[2::4] == [text for _, text in got[t]]


def test_the_replay_reports_each_target_and_both(tmp_path: Path) -> None:
    """The command docs/BENCHMARKS.md times two targets with: every line in both, and the
    latency of each target and until both were updated."""
    import json

    from subtitler_research.pipeline.replay import main as replay

    words = tmp_path / "w.tsv"
    lines = (DATA / "ljspeech_talk.words.tsv").read_text().splitlines()[:40]
    words.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.json"
    argv = ["--oracle", str(words), "--mt-model", str(FIXTURE), "--speed", "8", "--quiet"]
    assert replay([*argv, "--mt-extra-targets", "JA", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["run"]["targets"] == ["de", "ja"]
    assert d["segments"] and all(s["translation"] and s["more"]["ja"] for s in d["segments"])
    t = d["metrics"]["targets"]
    assert set(t) == {"de", "ja", "all", "updates_not_in_every_target"}
    assert t["de"]["updates"] == d["metrics"]["translations"]  # the main target's, as before
    assert t["all"]["latency_median_s"] >= t["de"]["latency_median_s"] > 0
    assert replay([*argv, "--mt-extra-targets", "xx"]) == 2
