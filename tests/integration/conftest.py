from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from subtitler.bench.random_model import PRESETS, build_random_llama

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer llama (Q8_0) with the real GPT-2 tokenizer, built from scratch."""
    out = tmp_path_factory.mktemp("models") / "tiny-q8_0.gguf"
    return build_random_llama(out, PRESETS["tiny"], tiktoken=DATA / "gpt2.tiktoken", seed=1234)


@pytest.fixture(scope="session")
def exact_lm(tiny_gguf: Path) -> Iterator[object]:
    """The settings under which batched logits equal token-by-token logits bit for bit."""
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    lm = LlamaLM(
        LlamaSettings(
            str(tiny_gguf), n_ctx=1024, n_batch=256, n_ubatch=32, n_threads=1, flash_attn=True
        )
    )
    yield lm
    lm.close()
