"""Device/compute choice and model-dir checks of the faster-whisper backend (no model)."""

from __future__ import annotations

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
    with pytest.raises(AsrError, match=r"not a CTranslate2 Whisper model \(missing model.bin, "):
        check_model_dir(tmp_path)


def test_settings_come_from_config() -> None:
    cfg = AsrConfig(model="tiny", min_chunk_s=0.5, language="de", beam_size=5)
    assert WhisperSettings.from_config(cfg).beam_size == 5
    assert WhisperSettings.from_config(cfg).model == "tiny"
    opt = StreamingOptions.from_config(cfg)
    assert (opt.min_chunk_s, opt.language, opt.vad, opt.silence_end_s) == (0.5, "de", True, 0.8)
