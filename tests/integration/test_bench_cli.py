"""``python -m subtitler_research.bench`` end to end on a model built from scratch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from subtitler_research.bench.cli import main

SRC = [
    "The meeting starts at nine tomorrow morning.",
    "Our team shipped the new release last week.",
    "Please send your questions before Friday.",
]
REF = [
    "Das Meeting beginnt morgen um neun Uhr.",
    "Unser Team hat letzte Woche die neue Version veröffentlicht.",
    "Bitte senden Sie Ihre Fragen vor Freitag.",
]


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    s, r = tmp_path / "src.en", tmp_path / "ref.de"
    s.write_text("\n".join(SRC) + "\n", encoding="utf-8")
    r.write_text("\n".join(REF) + "\n", encoding="utf-8")
    return s, r


def args(model: Path, src: Path, ref: Path, *extra: str) -> list[str]:
    return [
        "--model",
        str(model),
        "--source",
        str(src),
        "--reference",
        str(ref),
        "--src-lang",
        "en",
        "--tgt-lang",
        "de",
        "--step",
        "3",
        "--betas",
        "0,0.2,0.5",
        "--ks",
        "3",
        "--threads",
        "1",
        "--n-ubatch",
        "32",
        "--max-new-tokens",
        "24",
        "--no-progress",
        *extra,
    ]


def test_bench_end_to_end(
    tiny_gguf: Path, corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    assert main(args(tiny_gguf, *corpus, "--json", str(out))) == 0
    printed = capsys.readouterr().out
    assert "| method | chrF | BLEU | NE | A/D % | A/O % | TPS | speedup | latency ms |" in printed
    assert "ms / verified token" in printed
    data = json.loads(out.read_text())
    assert data["pair"] == "en-de" and data["template"] == "gguf"
    runs = data["runs"]
    keys = {
        "method",
        "beta",
        "mask",
        "k",
        "chrf",
        "bleu",
        "ne",
        "ad",
        "ao",
        "tps",
        "speedup",
        "latency_ms",
        "finals",
    }
    assert all(keys <= set(r) for r in runs)
    by = {(r["method"], r["beta"], r["mask"], r["k"]): r for r in runs}
    assert set(by) == {
        ("RT", None, "none", 0),
        ("SSBD", 0.0, "none", 0),
        ("SSBD", 0.2, "none", 0),
        ("SSBD", 0.5, "none", 0),
        ("CD", None, "none", 0),
        ("SSBD", 0.2, "output", 3),
        ("SSBD", 0.2, "display", 3),
    }
    rt = by[("RT", None, "none", 0)]
    assert rt["speedup"] == 1.0 and rt["ad"] is None and len(rt["finals"]) == 3
    # Exact settings: beta=0 reproduces RT, beta=0.5 reproduces CD, display mask keeps decoding.
    assert by[("SSBD", 0.0, "none", 0)]["finals"] == rt["finals"]
    assert by[("SSBD", 0.5, "none", 0)]["finals"] == by[("CD", None, "none", 0)]["finals"]
    assert by[("SSBD", 0.2, "display", 3)]["finals"] == by[("SSBD", 0.2, "none", 0)]["finals"]
    # CD never rewrites a token; NE counts words, so only a word still being extended can change.
    assert by[("SSBD", 0.5, "none", 0)]["ne"] < by[("RT", None, "none", 0)]["ne"]


def test_bench_with_a_draft_model(
    tiny_gguf: Path, corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The target's own file as draft model: every guess kept, outputs still RT's."""
    out = tmp_path / "out.json"
    extra = ["--draft-model", str(tiny_gguf), "--draft-tokens", "3", "--json", str(out)]
    assert main(args(tiny_gguf, *corpus, *extra)) == 0
    printed = capsys.readouterr().out
    assert "| RT + draft model 3 |" in printed
    runs = json.loads(out.read_text())["runs"]
    rt = next(r for r in runs if r["method"] == "RT" and not r["draft_model_tokens"])
    dm = [r for r in runs if r["draft_model_tokens"] == 3]
    assert [(r["method"], r["beta"], r["adaptive"]) for r in dm] == [
        ("RT", None, False),
        ("SSBD", 0.0, False),
        ("SSBD", 0.2, False),
        ("SSBD", 0.2, True),
    ]
    assert "| SSBD β=0.2 + draft model 3, adaptive |" in printed
    for r in dm[:2]:  # exact: plain speculative decoding and SSBD beta=0
        assert r["finals"] == rt["finals"]
        assert r["lookahead_drafted"] > 0 and r["lookahead_accepted"] == r["lookahead_drafted"]


@pytest.mark.parametrize("case", ["model", "lines", "lang", "draft"])
def test_bench_user_errors_exit_2_with_one_line(
    tiny_gguf: Path, corpus: tuple[Path, Path], tmp_path: Path, case: str
) -> None:
    src, ref = corpus
    model = tiny_gguf
    extra: list[str] = []
    if case == "model":
        model = tmp_path / "missing.gguf"
    elif case == "lines":
        ref.write_text("only one line\n", encoding="utf-8")
    elif case == "lang":
        extra = ["--tgt-lang", "xx"]
    else:
        vocab12k = Path(__file__).resolve().parents[2] / "fixtures" / "translator" / "model.gguf"
        extra = ["--draft-model", str(vocab12k)]
    cmd = [sys.executable, "-m", "subtitler_research.bench", *args(model, src, ref), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "Traceback" not in p.stderr
