"""The padded twin computes exactly the original's logits at a higher cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from subtitler.models.validate import read_gguf
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler_research.bench.padded_model import main, pad_llama


def _lm(path: Path) -> LlamaLM:
    return LlamaLM(LlamaSettings(str(path), n_ctx=256, n_ubatch=32, n_threads=1))


def test_padded_model_has_the_same_logits(tiny_gguf: Path, tmp_path: Path) -> None:
    slow = pad_llama(tiny_gguf, tmp_path / "slow.gguf", extra_layers=3)
    assert (
        read_gguf(slow).metadata["llama.block_count"]
        == read_gguf(tiny_gguf).metadata["llama.block_count"] + 3
    )
    a, b = _lm(tiny_gguf), _lm(slow)
    try:
        toks = a.tokenize("The budget review starts at nine.")
        ra = a.evaluate(toks, list(range(len(toks))))
        rb = b.evaluate(toks, list(range(len(toks))))
        assert np.array_equal(ra, rb)  # bit for bit: each extra layer adds exactly 0.0
        assert b.metadata["general.name"].endswith("+ 3 zero layers")
    finally:
        a.close()
        b.close()


def test_padding_cli_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "--model",
                str(tmp_path / "no.gguf"),
                "--extra-layers",
                "2",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.startswith("error: ")
