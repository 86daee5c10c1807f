from __future__ import annotations

import os
from pathlib import Path

import pytest

# No screen in CI: Qt renders offscreen unless a test starts Xvfb itself.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never reach a model hub.
os.environ["HF_HUB_OFFLINE"] = "1"

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer llama (Q8_0) with the real GPT-2 tokenizer, built from scratch."""
    from subtitler.bench.random_model import PRESETS, build_random_llama

    out = tmp_path_factory.mktemp("models") / "tiny-q8_0.gguf"
    return build_random_llama(out, PRESETS["tiny"], tiktoken=DATA / "gpt2.tiktoken", seed=1234)
