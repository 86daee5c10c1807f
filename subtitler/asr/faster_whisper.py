"""The faster-whisper recogniser: the only module that imports faster_whisper (lazily)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.asr.backend import SAMPLE_RATE, AsrError, Hypothesis, Samples
from subtitler.config import AsrConfig
from subtitler.types import Word

log = logging.getLogger(__name__)

_MODEL_FILES = ("model.bin", "config.json", "vocabulary.json", "tokenizer.json")


@dataclass(frozen=True)
class WhisperSettings:
    """How the model is loaded and decoded."""

    model: str = "small"  # size name (downloaded once) or a local CTranslate2 model directory
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    compute_type: str = "auto"  # "auto": int8 on CPU, float16 on CUDA
    threads: int = 1  # CPU threads for CTranslate2
    beam_size: int = 1  # greedy by default: streaming re-runs often, latency beats the beam
    # No temperature fallback: a streaming re-run a second later is a cheaper retry, and
    # fallback multiplies the worst-case latency by up to six.
    temperature: float = 0.0
    max_new_tokens: int | None = None  # cap per call (tests with random weights need one)

    @classmethod
    def from_config(cls, cfg: AsrConfig) -> WhisperSettings:
        return cls(
            model=cfg.model,
            device=cfg.device,
            compute_type=cfg.compute_type,
            threads=cfg.threads,
            beam_size=cfg.beam_size,
        )


def resolve_device(device: str, compute_type: str, cuda_devices: int) -> tuple[str, str]:
    """Pick the device and compute type: never hard-code CUDA, say what was chosen."""
    if device not in ("auto", "cpu", "cuda"):
        raise AsrError(f"unknown ASR device {device!r} (expected auto, cpu or cuda)")
    if device == "auto":
        device = "cuda" if cuda_devices > 0 else "cpu"
    elif device == "cuda" and cuda_devices == 0:
        raise AsrError("ASR device 'cuda' requested but no CUDA device is available")
    if compute_type == "auto":
        compute_type = "float16" if device == "cuda" else "int8"
    return device, compute_type


def check_model_dir(path: Path) -> None:
    """Fail with one clear line unless ``path`` holds a CTranslate2 Whisper model."""
    if not path.is_dir():
        raise AsrError(f"model directory not found: {path}")
    missing = [f for f in _MODEL_FILES if not (path / f).is_file()]
    if missing:
        raise AsrError(f"{path} is not a CTranslate2 Whisper model (missing {', '.join(missing)})")


def _looks_like_path(model: str) -> bool:
    return "/" in model or "\\" in model or model.startswith(".") or Path(model).exists()


def silero_session() -> Any:
    """The Silero VAD ONNX session bundled with faster-whisper (works offline)."""
    from faster_whisper.vad import get_vad_model

    return get_vad_model().session


class FasterWhisperBackend:
    """``AsrBackend`` over ``faster_whisper.WhisperModel`` with word timestamps."""

    def __init__(self, settings: WhisperSettings) -> None:
        import ctranslate2
        from faster_whisper import WhisperModel

        self.settings = settings
        if _looks_like_path(settings.model):
            check_model_dir(Path(settings.model))
        self.device, self.compute_type = resolve_device(
            settings.device, settings.compute_type, ctranslate2.get_cuda_device_count()
        )
        log.info("loading Whisper %s on %s (%s)", settings.model, self.device, self.compute_type)
        try:
            self._model = WhisperModel(
                settings.model,
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=settings.threads,
                # Never a download of its own: models come through the verified downloader
                # (subtitler.models.download); a size name loads from the local cache only.
                local_files_only=True,
            )
        except Exception as e:  # ctranslate2 and the hub raise many types; the message matters
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise AsrError(f"cannot load Whisper model {settings.model!r}: {first}") from e
        self.multilingual = bool(self._model.model.is_multilingual)

    def transcribe(
        self, audio: Samples, *, t0: float, prompt: str, language: str | None
    ) -> Hypothesis:
        s = self.settings
        segments, info = self._model.transcribe(
            audio,
            language=language if self.multilingual else "en",
            beam_size=s.beam_size,
            temperature=s.temperature,
            word_timestamps=True,
            initial_prompt=prompt or None,
            condition_on_previous_text=False,  # the prompt carries the context explicitly
            vad_filter=False,  # our own streaming VAD already removed the silence
            max_new_tokens=s.max_new_tokens,
        )
        words: list[Word] = []
        for seg in segments:  # a generator: decoding happens while iterating
            for w in seg.words or ():
                words.append(Word(w.word, float(w.start), float(w.end), float(w.probability)))
        return Hypothesis(tuple(words), info.language)


def decode_audio_file(path: str | Path) -> Samples:
    """Any file faster-whisper (PyAV) can decode, as 16 kHz mono float32."""
    p = Path(path)
    if not p.is_file():
        raise AsrError(f"audio file not found: {p}")
    from faster_whisper import decode_audio

    try:
        audio = decode_audio(str(p), sampling_rate=SAMPLE_RATE)
    except Exception as e:  # PyAV raises its own error family per container/codec problem
        raise AsrError(f"cannot decode audio file {p}: {type(e).__name__}") from e
    if len(audio) == 0:
        raise AsrError(f"cannot decode audio file {p}: no audio samples")
    return np.asarray(audio, dtype=np.float32)
