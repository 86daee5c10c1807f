from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


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
