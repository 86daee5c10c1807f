"""Settings as documented dataclasses: one place for every tunable, its default and meaning.

The settings pane, the CLI flags and the TOML file are all built from these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class AudioConfig:
    """Where sound comes from."""

    source: str = "microphone"  # "microphone" | "file"
    device: str | int | None = None  # input device name or index; None = system default
    file_path: str = ""  # audio file for source == "file" (or --replay)
    realtime: bool = True  # replay files at 1x (False: as fast as possible)
    block_ms: int = 100  # audio block length handed from the callback
    queue_blocks: int = 600  # bounded queue between callback and ASR (oldest dropped when full)


@dataclass
class AsrConfig:
    """Streaming speech recognition (faster-whisper)."""

    model: str = "small"  # catalog size name or a local CTranslate2 model directory
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    compute_type: str = "auto"  # "auto": int8 on CPU, float16 on CUDA
    language: str | None = None  # source language code; None = detect once per utterance
    min_chunk_s: float = 0.5  # shortest cadence: new audio before the recogniser runs again
    adaptive_chunk: bool = True  # run less often while the recogniser falls behind
    buffer_trim_s: float = 15.0  # keep the rolling buffer under this many seconds
    vad: bool = True  # Silero VAD: skip silence, end utterances
    silence_end_s: float = 0.8  # silence that ends an utterance
    threads: int = 1  # CPU threads for CTranslate2
    beam_size: int = 5  # Whisper's beam (offline accuracy); 1 = greedy, cheaper re-runs
    speech_pad_s: float = 0.2  # audio kept around VAD speech so word edges are not cut


@dataclass
class MtConfig:
    """Translation (llama.cpp + SSBD)."""

    model_path: str = ""  # GGUF translation model
    template: str = "auto"  # "auto" | "tower" | "qwen3" | "gguf"
    src_lang: str = "en"  # used when ASR language is fixed or not yet detected
    tgt_lang: str = "de"
    method: str = "SSBD"  # "SSBD" | "RT" | "CD"
    beta: float = 0.2  # SSBD bias towards the previous translation, 0..1
    max_new_tokens: int = 256  # hard cap on one translation's length
    len_ratio: float = 3.0  # cap relative to the source's token count
    threads: int = 1  # CPU threads for llama.cpp (ASR gets the rest)
    n_ctx: int = 2048
    n_ubatch: int = 512
    flash_attn: bool = True
    gpu_layers: int | None = None  # None: all when the build offloads (Metal/CUDA), else 0
    context_sentences: int = 0  # previous sentences given to the prompt as context
    # Advanced (issue 8; measured in docs/BENCHMARKS.md, off by default: they did not win)
    lookahead: int = 0  # tokens guessed past the draft from this meeting's n-grams, 0..16
    resync: bool = False  # after a divergence, try the rest of the old draft again
    verify: str = "biased"  # "biased" (SSBD's beta) | "specdec" (top-b within tau)
    top_b: int = 3  # specdec: draft token must be among the b most likely
    tau: float = 1.0  # specdec: ... and within this log-likelihood of the best
    draft_model_path: str = ""  # a smaller GGUF with the same vocabulary ("": none)
    draft_tokens: int = 4  # tokens the draft model guesses per verify pass, 1..16
    adaptive_guessing: bool = True  # guess only while it measurably speeds decoding up


@dataclass
class DisplayConfig:
    """The subtitle overlay."""

    mask_k: int = 3  # display-only mask-k: hidden tokens of an unfinished line, 0..10
    lines: int = 2  # lines shown
    bilingual: bool = False  # source line small above the translation
    font_family: str = "Sans Serif"
    font_size: int = 26
    text_color: str = "#ffffff"
    outline: bool = True
    background_opacity: float = 0.55  # 0 transparent .. 1 opaque
    click_through: bool = False  # mouse clicks pass through the overlay to the meeting
    geometry: dict[str, list[int]] = field(default_factory=dict)  # per-screen x, y, w, h
    screen: str = ""  # name of the screen the overlay was last on
    hotkey_click_through: str = "Ctrl+Shift+T"  # toggles click-through (the tray menu does too)
    hotkey_pause: str = "Ctrl+Shift+P"  # start / pause


@dataclass
class AppConfig:
    audio: AudioConfig = field(default_factory=AudioConfig)
    asr: AsrConfig = field(default_factory=AsrConfig)
    mt: MtConfig = field(default_factory=MtConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
