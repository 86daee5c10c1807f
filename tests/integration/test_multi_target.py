"""Several target languages on one loaded model (issue 19 point 4): each target a stream of
its own (a llama.cpp sequence of a shared context, or a context each) on the same weights."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler.mt.lm import LanguageModel
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.translator import LengthCap, StreamTranslator
from subtitler_research.bench.streams import prefixes
from subtitler_research.bench.targets import main

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
    assert all(alone["de"]) and all(alone["ja"]) and alone["de"] != alone["ja"]
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
