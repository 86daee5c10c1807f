"""Device/compute choice and model-dir checks of the faster-whisper backend (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subtitler.asr.backend import AsrError
from subtitler.asr.faster_whisper import WhisperSettings, check_model_dir, resolve_device
from subtitler.asr.streaming import StreamingOptions
from subtitler.config import AsrConfig


def test_auto_device_and_compute_type() -> None:
    assert resolve_device("auto", "auto", 0) == ("cpu", "int8")
    assert resolve_device("auto", "auto", 1) == ("cuda", "float16")
    assert resolve_device("cpu", "float32", 1) == ("cpu", "float32")
    with pytest.raises(AsrError, match="no CUDA device"):
        resolve_device("cuda", "auto", 0)
    with pytest.raises(AsrError, match="unknown ASR device 'metal'"):
        resolve_device("metal", "auto", 0)


def test_model_dir_must_be_a_ctranslate2_whisper(tmp_path: Path) -> None:
    with pytest.raises(AsrError, match="model directory not found"):
        check_model_dir(tmp_path / "none")
    (tmp_path / "config.json").write_text("{}")
    msg = r"not a CTranslate2 Whisper model folder \(missing model.bin, tokenizer.json, "
    with pytest.raises(AsrError, match=msg + r"vocabulary.json or vocabulary.txt\)$"):
        check_model_dir(tmp_path)


def _model_bin(path: Path) -> None:
    name = b"WhisperSpec\0"
    path.write_bytes((6).to_bytes(4, "little") + len(name).to_bytes(2, "little") + name)


@pytest.mark.parametrize("vocabulary", ["vocabulary.txt", "vocabulary.json"])
@pytest.mark.parametrize("preprocessor", [False, True])
def test_either_vocabulary_with_or_without_preprocessor_config(
    tmp_path: Path, vocabulary: str, preprocessor: bool
) -> None:
    """What faster-whisper loads: a text or JSON vocabulary; preprocessor_config.json optional."""
    _model_bin(tmp_path / "model.bin")
    (tmp_path / "config.json").write_text("{}")
    tokens = ["<|endoftext|>", "<|startoftranscript|>"]  # (a Whisper's has its start token)
    tokenizer = {
        "model": {"type": "BPE", "vocab": {"a": 0}},
        "added_tokens": [{"id": 1 + i, "content": t} for i, t in enumerate(tokens)],
    }
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer))
    text = json.dumps(tokens) if vocabulary.endswith(".json") else "\n".join(tokens) + "\n"
    (tmp_path / vocabulary).write_text(text)
    if preprocessor:
        (tmp_path / "preprocessor_config.json").write_text('{"feature_size": 80}')
    check_model_dir(tmp_path)
    (tmp_path / vocabulary).unlink()
    with pytest.raises(AsrError, match=r"\(missing vocabulary.json or vocabulary.txt\)$"):
        check_model_dir(tmp_path)


def test_a_compute_type_the_device_cannot_run_becomes_the_nearest_it_can() -> None:
    cpu = {"int8", "int8_float32", "float32"}
    assert resolve_device("cpu", "float16", 0, cpu) == ("cpu", "float32")
    assert resolve_device("cpu", "int8_float16", 0, cpu) == ("cpu", "int8")
    assert resolve_device("cpu", "bfloat16", 0, cpu) == ("cpu", "float32")
    assert resolve_device("cpu", "int8", 0, {"float32"}) == ("cpu", "float32")
    assert resolve_device("cpu", "default", 0, cpu) == ("cpu", "default")
    assert resolve_device("auto", "auto", 0, cpu) == ("cpu", "int8")
    with pytest.raises(AsrError, match="unknown compute type 'int4'"):
        resolve_device("cpu", "int4", 0, cpu)


def test_settings_come_from_config() -> None:
    cfg = AsrConfig(model="tiny", min_chunk_s=0.5, language="de", beam_size=5)
    assert AsrConfig().beam_size == 5 and WhisperSettings().beam_size == 5
    assert WhisperSettings.from_config(cfg).beam_size == 5
    assert WhisperSettings.from_config(cfg).model == "tiny"
    opt = StreamingOptions.from_config(cfg)
    assert (opt.min_chunk_s, opt.language, opt.vad, opt.silence_end_s) == (0.5, "de", True, 0.8)
