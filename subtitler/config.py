"""Settings as documented dataclasses: one place for every tunable, its default and meaning.

Each field is declared once with :func:`setting`: its default, a label, one line of doc and what
it accepts (a range or a list of choices). Validation of the settings file
(:mod:`subtitler.settings_store`), the settings pane's limits and the command line's checks are
all derived from these declarations, so the three can never disagree.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Spec:
    """What one setting means and accepts."""

    label: str  # short name for people ("Translation threads")
    doc: str = ""  # one line: what it does
    range: tuple[float, float] | None = None  # inclusive bounds of a number (None stays allowed
    # for optional fields); for a table of lists, of every number in it
    choices: tuple[Any, ...] | None = None  # the only values allowed
    language: bool = False  # a language code (checked against the languages Whisper knows)

    def describe(self) -> str:
        """What is accepted, for messages: '1..64' or 'one of SSBD, RT, CD'."""
        if self.range is not None:
            lo, hi = self.range
            return f"{_num(lo)}..{_num(hi)}"
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        return "any value"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is out of range or not a choice (None: it is fine). Types and language
        codes are checked by the settings store."""
        if value is None:
            return None
        if self.choices is not None and value not in self.choices:
            return f"{self.label} must be {self.describe()} (is {value!r})"
        if self.range is not None and not all(_within(x, self.range) for x in _numbers(value)):
            return f"{self.label} must be {self.describe()} (is {_short(value)})"
        return None

    def fixed(self, value: Any, default: Any) -> Any:
        """The nearest allowed value: a number clamped into its range, anything else reset to
        the default."""
        if self.problem(value) is None:
            return value
        if (
            self.range is not None
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        ):
            lo, hi = self.range
            # A negative count usually means "no limit" or "auto" in other tools
            # (max_new_tokens = -1): the default serves that better than the smallest value.
            if math.isnan(value) or (value < 0 <= lo):
                return default
            return type(value)(min(max(value, lo), hi))
        return default

    def arg_type(self, convert: Callable[[str], Any]) -> Callable[[str], Any]:
        """An argparse ``type=`` that converts and checks a command-line value the same way."""

        def parse(text: str) -> Any:
            try:
                value = convert(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
            if (why := self.problem(value)) is not None:
                raise argparse.ArgumentTypeError(why)
            return value

        parse.__name__ = convert.__name__  # argparse names the type in its messages
        return parse


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _within(x: float, bounds: tuple[float, float]) -> bool:
    return bounds[0] <= x <= bounds[1]  # NaN is never within


def _numbers(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _numbers(v)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def setting(
    default: Any = MISSING,
    label: str = "",
    doc: str = "",
    *,
    range: tuple[float, float] | None = None,
    choices: tuple[Any, ...] | None = None,
    language: bool = False,
) -> Any:
    """A dataclass field with its :class:`Spec` in ``metadata["spec"]``."""
    return field(default=default, metadata=about(label, doc, range, choices, language))


def about(
    label: str,
    doc: str = "",
    range: tuple[float, float] | None = None,
    choices: tuple[Any, ...] | None = None,
    language: bool = False,
) -> dict[str, Spec]:
    """The metadata of a setting whose default needs a factory: ``field(default_factory=...,
    metadata=about(...))``."""
    return {"spec": Spec(label, doc, range, choices, language)}


def spec_of(cls: type, name: str) -> Spec:
    """The declaration of ``cls.name`` (KeyError for a field without one)."""
    for f in fields(cls):
        if f.name == name:
            return f.metadata["spec"]  # type: ignore[no-any-return]
    raise KeyError(f"{cls.__name__} has no setting {name!r}")


def specs(cls: type) -> Iterator[tuple[Field[Any], Spec]]:
    """Every declared setting of a section."""
    for f in fields(cls):
        if "spec" in f.metadata:
            yield f, f.metadata["spec"]


THREADS = (1, 64)
TEMPLATES = ("auto", "tower", "qwen3", "chatml", "gguf")
# What CTranslate2 accepts as a compute type ("auto": int8 on CPU, float16 on CUDA).
COMPUTE_TYPES = (
    "auto", "default", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
    "float16", "bfloat16", "float32",
)  # fmt: skip
# Window positions and sizes in pixels: far beyond any screen, far inside Qt's int range.
PIXELS = (-1_000_000, 1_000_000)


@dataclass
class AudioConfig:
    """Where sound comes from."""

    source: str = setting("microphone", "Audio source", choices=("microphone", "file"))
    device: str | int | None = setting(
        None, "Input", "input device name or index; None = system default"
    )
    file_path: str = setting("", "Audio file", "audio file for source == 'file' (or --replay)")
    realtime: bool = setting(True, "Real time", "replay files at 1x (False: as fast as possible)")
    block_ms: int = setting(
        100, "Audio block", "audio block length handed from the callback (ms)", range=(10, 1000)
    )
    queue_blocks: int = setting(
        600,
        "Audio queue",
        "bounded queue between callback and ASR (oldest dropped when full)",
        range=(10, 6000),
    )


@dataclass
class AsrConfig:
    """Streaming speech recognition (faster-whisper)."""

    model: str = setting(
        "small", "Whisper model", "catalog size name or a local CTranslate2 model directory"
    )
    device: str = setting("auto", "Compute device", choices=("auto", "cpu", "cuda"))
    compute_type: str = setting(
        "auto", "Compute type", "'auto': int8 on CPU, float16 on CUDA", choices=COMPUTE_TYPES
    )
    language: str | None = setting(
        None, "Speech language", "source language code; None = detect once per utterance",
        language=True,
    )  # fmt: skip
    min_chunk_s: float = setting(
        0.5, "Update interval", "shortest cadence: new audio before the recogniser runs again (s)",
        range=(0.1, 10.0),
    )  # fmt: skip
    adaptive_chunk: bool = setting(
        True, "Adaptive interval", "run less often while the recogniser falls behind"
    )
    buffer_trim_s: float = setting(
        15.0, "Window length", "keep the rolling buffer under this many seconds (Whisper: 30)",
        range=(2.0, 28.0),
    )  # fmt: skip
    vad: bool = setting(True, "Voice detection", "Silero VAD: skip silence, end utterances")
    silence_end_s: float = setting(
        0.8, "Silence ends a line after", "silence that ends an utterance (s)", range=(0.2, 5.0)
    )
    threads: int = setting(1, "Speech threads", "CPU threads for CTranslate2", range=THREADS)
    beam_size: int = setting(
        5,
        "Beam size",
        "5 = Whisper's beam (offline accuracy); 1 = greedy, cheaper re-runs",
        range=(1, 10),
    )
    speech_pad_s: float = setting(
        0.2, "Speech padding", "audio kept around VAD speech so word edges are not cut (s)",
        range=(0.0, 1.0),
    )  # fmt: skip


@dataclass
class MtConfig:
    """Translation (llama.cpp + SSBD)."""

    model_path: str = setting("", "Translation model", "GGUF file or catalog id")
    template: str = setting("auto", "Prompt template", choices=TEMPLATES)
    src_lang: str = setting(
        "en", "Source language", "used when ASR language is fixed or not yet detected",
        language=True,
    )  # fmt: skip
    tgt_lang: str = setting("de", "Target language", language=True)
    method: str = setting("SSBD", "Decoding mode", choices=("SSBD", "RT", "CD"))
    beta: float = setting(
        0.2, "Bias β", "SSBD bias towards the previous translation", range=(0.0, 1.0)
    )
    max_new_tokens: int = setting(
        256, "Longest translation", "hard cap on one translation's length (tokens)",
        range=(1, 4096),
    )  # fmt: skip
    len_ratio: float = setting(
        3.0, "Length ratio", "cap relative to the source's token count", range=(0.5, 20.0)
    )
    threads: int = setting(
        1, "Translation threads", "CPU threads for llama.cpp (ASR gets the rest)", range=THREADS
    )
    n_ctx: int = setting(2048, "Context length", "llama.cpp context (tokens)", range=(256, 32768))
    n_ubatch: int = setting(512, "Micro-batch", "llama.cpp physical batch", range=(32, 4096))
    flash_attn: bool = setting(True, "Flash attention")
    gpu_layers: int | None = setting(
        None, "GPU layers", "None or -1: all when the build offloads (Metal/CUDA), else 0",
        range=(-1, 999),
    )  # fmt: skip
    context_sentences: int = setting(
        0, "Previous sentences as context", "previous sentences given to the prompt",
        range=(0, 3),
    )  # fmt: skip
    # A shared inference server instead of a local file (issue 19)
    backend: str = setting(
        "local", "Translate with",
        "local: the GGUF file above on this computer; server: an OpenAI-compatible "
        "completions server (vLLM, llama-cpp-python) that returns prompt log-probabilities",
        choices=("local", "server"),
    )  # fmt: skip
    server_url: str = setting(
        "", "Server address", "the server's OpenAI API root, e.g. http://gpu-box:8000/v1"
    )
    server_model: str = setting(
        "", "Server model", "a model name the server serves ('': the first it lists)"
    )
    server_api_key: str = setting(
        "", "Server API key", "sent as 'Authorization: Bearer …' to that server only"
    )
    server_timeout_s: float = setting(
        10.0, "Server timeout", "seconds without an answer before an update is given up",
        range=(1.0, 120.0),
    )  # fmt: skip
    # Advanced (issue 8; measured in docs/BENCHMARKS.md, off by default: they did not win)
    lookahead: int = setting(
        0, "N-gram lookahead", "tokens guessed past the draft from this meeting's n-grams",
        range=(0, 16),
    )  # fmt: skip
    resync: bool = setting(False, "Resync", "after a divergence, try the rest of the old draft")
    verify: str = setting(
        "biased", "Verification rule", "SSBD's beta, or SpecDec's top-b within tau",
        choices=("biased", "specdec"),
    )  # fmt: skip
    top_b: int = setting(
        3, "SpecDec top-b", "draft token must be among the b most likely", range=(1, 20)
    )
    tau: float = setting(
        1.0, "SpecDec τ", "... and within this log-likelihood of the best", range=(0.0, 10.0)
    )
    draft_model_path: str = setting(
        "", "Draft model", "a smaller GGUF with the same vocabulary ('': none)"
    )
    draft_tokens: int = setting(
        4, "Draft model tokens", "tokens the draft model guesses per verify pass", range=(1, 16)
    )
    adaptive_guessing: bool = setting(
        True, "Adaptive guessing", "guess only while it measurably speeds decoding up"
    )

    @property
    def uses_server(self) -> bool:
        return self.backend == "server"

    @property
    def translator_chosen(self) -> bool:
        """A model file, or a server to translate with, is set."""
        return bool(self.server_url.strip()) if self.uses_server else bool(self.model_path)


@dataclass
class DisplayConfig:
    """The subtitle overlay."""

    mask_k: int = setting(
        3, "Hide last k tokens", "display-only mask-k: hidden tokens of an unfinished line",
        range=(0, 10),
    )  # fmt: skip
    lines: int = setting(2, "Lines", "lines shown", range=(1, 6))
    bilingual: bool = setting(False, "Bilingual", "source line small above the translation")
    font_family: str = setting("Sans Serif", "Font")
    font_size: int = setting(26, "Font size", range=(8, 120))
    text_color: str = setting("#ffffff", "Colour")
    outline: bool = setting(True, "Outline")
    background_opacity: float = setting(
        0.55, "Background opacity", "0 transparent .. 1 opaque", range=(0.0, 1.0)
    )
    click_through: bool = setting(
        False, "Click-through", "mouse clicks pass through the overlay to the meeting"
    )
    geometry: dict[str, list[int]] = field(
        default_factory=dict,
        metadata=about("Overlay geometry", "per-screen x, y, w, h", range=PIXELS),
    )
    screen: str = setting("", "Screen", "name of the screen the overlay was last on")
    hotkey_click_through: str = setting(
        "Ctrl+Shift+F9", "Toggle click-through", "hotkey (the tray menu does it too)"
    )
    hotkey_pause: str = setting("Ctrl+Shift+F10", "Start / pause", "hotkey")


@dataclass
class WebConfig:
    """Subtitles as a web page (an OBS browser source, a second screen); off by default."""

    share: str = setting(
        "off",
        "Show subtitles in a browser",
        "off, local (this computer only) or network (the local network, token in the URL)",
        choices=("off", "local", "network"),
    )
    port: int = setting(
        8642,
        "Browser page port",
        "TCP port of the page (the same on every start, so a saved address keeps working)",
        range=(1024, 65535),
    )
    token: str = setting("", "Access key", 'for "network": made on first use, kept until renewed')


@dataclass
class AppConfig:
    audio: AudioConfig = field(default_factory=AudioConfig)
    asr: AsrConfig = field(default_factory=AsrConfig)
    mt: MtConfig = field(default_factory=MtConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    web: WebConfig = field(default_factory=WebConfig)


SECTIONS: dict[str, type] = {
    "audio": AudioConfig,
    "asr": AsrConfig,
    "mt": MtConfig,
    "display": DisplayConfig,
    "web": WebConfig,
}
