"""Settings as documented dataclasses: one place for every tunable, its default and meaning.

Each field is declared once with :func:`setting`: its default, a label, one line of doc, what
it accepts (a range or a list of choices), whether a change needs its model loaded again
(``reload``) and where the settings pane shows it (``tab``). Validation of the settings file
(:mod:`subtitler.settings_store`), the settings pane's rows and limits, the command-line flags
(:func:`add_setting_flags`) and the pipeline's reload decision (:func:`reload_fields`) are all
derived from these declarations, so they can never disagree.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Final, NoReturn, Union, get_args, get_origin, get_type_hints


@dataclass(frozen=True)
class Spec:
    """What one setting means and accepts."""

    label: str  # short name for people ("Translation threads")
    doc: str = ""  # one line: what it does
    range: tuple[float, float] | None = None  # inclusive bounds of a number (None stays allowed
    # for optional fields); for a table of lists, of every number in it
    choices: tuple[Any, ...] | None = None  # the only values allowed
    language: bool = False  # a language code (checked against the languages Whisper knows)
    reload: bool = False  # a change needs the model loaded again (else it applies live)
    tab: str = ""  # the settings pane's tab that shows it ("": not in the pane)
    term: str = ""  # the exact technical term, where the label says it in plain words
    languages: bool = False  # language codes separated by commas (each checked as ``language``)

    @property
    def name(self) -> str:
        """The label, with the exact term after it where they differ (for messages)."""
        return f"{self.label} ({self.term})" if self.term else self.label

    @property
    def tooltip(self) -> str:
        """What the settings pane shows on hover: the exact term, then what it does."""
        return f"{self.term}: {self.doc}" if self.term and self.doc else self.term or self.doc

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
            return f"{self.name} must be {self.describe()} (is {value!r})"
        if self.range is not None and not all(_within(x, self.range) for x in _numbers(value)):
            return f"{self.name} must be {self.describe()} (is {_short(value)})"
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
            if (isinstance(value, float) and math.isnan(value)) or (value < 0 <= lo):
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


def base_code(code: str) -> str:
    """A language code as compared and used: lower case, without a region ("pt-BR" -> "pt")."""
    return code.strip().lower().replace("_", "-").split("-")[0]


def language_codes(text: str) -> list[str]:
    """The codes of a comma-separated list ("ja, FR" -> ["ja", "fr"]; spaces also separate),
    in their order, each once (not checked against the known languages)."""
    out: list[str] = []
    for part in text.replace(",", " ").split():
        code = base_code(part)
        if code and code not in out:
            out.append(code)
    return out


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
    reload: bool = False,
    tab: str = "",
    term: str = "",
    languages: bool = False,
) -> Any:
    """A dataclass field with its :class:`Spec` in ``metadata["spec"]``."""
    return field(
        default=default,
        metadata=about(label, doc, range, choices, language, reload, tab, term, languages),
    )


def about(
    label: str,
    doc: str = "",
    range: tuple[float, float] | None = None,
    choices: tuple[Any, ...] | None = None,
    language: bool = False,
    reload: bool = False,
    tab: str = "",
    term: str = "",
    languages: bool = False,
) -> dict[str, Spec]:
    """The metadata of a setting whose default needs a factory: ``field(default_factory=...,
    metadata=about(...))``."""
    return {"spec": Spec(label, doc, range, choices, language, reload, tab, term, languages)}


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
MAX_EXTRA_TARGETS = 4  # extra target languages: each costs a translation of every update
TEMPLATES = ("auto", "tower", "qwen3", "chatml", "gguf", "fewshot")
# What CTranslate2 accepts as a compute type ("auto": int8 on CPU, float16 on CUDA).
COMPUTE_TYPES = (
    "auto", "default", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
    "float16", "bfloat16", "float32",
)  # fmt: skip
# Window positions and sizes in pixels: far beyond any screen, far inside Qt's int range.
PIXELS = (-1_000_000, 1_000_000)


@dataclass(frozen=True)
class AudioConfig:
    """Where sound comes from."""

    source: str = setting("microphone", "Audio source", choices=("microphone", "file"))
    device: str | int | None = setting(
        None, "Input", "input device name or index; None = system default", tab="audio"
    )
    file_path: str = setting("", "Audio file", "audio file for source == 'file' (or --replay)")
    # The meeting's side: heard at the same time as the microphone, its lines marked "Others"
    # and the microphone's "You" (see subtitler.pipeline.sides).
    meeting_device: str | int | None = setting(
        None, "Meeting audio",
        "the meeting's sound, heard as well as the microphone (a loopback, monitor or system "
        "audio input); None = not heard", tab="audio",
    )  # fmt: skip
    meeting_file: str = setting(
        "", "Meeting audio file", "for source == 'file': the other side's recording (--replay's "
        "second file); empty = one side",
    )  # fmt: skip
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


@dataclass(frozen=True)
class AsrConfig:
    """Streaming speech recognition (faster-whisper)."""

    model: str = setting(
        "small",
        "Speech model",
        "a catalog size name or a local CTranslate2 model folder",
        tab="speech",
    )
    device: str = setting(
        "auto", "Recognise speech on",
        "auto, cpu (the processor) or cuda (an NVIDIA graphics card)",
        choices=("auto", "cpu", "cuda"), tab="speech", term="Whisper compute device",
    )  # fmt: skip
    compute_type: str = setting(
        "auto", "Compute type", "'auto': int8 on CPU, float16 on CUDA", choices=COMPUTE_TYPES
    )
    language: str | None = setting(
        None, "Speech language",
        "source language code (with meeting audio heard too: the meeting's); None = detect once "
        "per utterance",
        language=True, tab="translation",
    )  # fmt: skip
    you_language: str | None = setting(
        None, "You speak",
        "with meeting audio heard too: the microphone's language (None = detect); "
        "'Speech language' is then the meeting's", language=True, tab="audio",
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
        0.8,
        "Silence ends a line after",
        "silence that ends an utterance (s)",
        range=(0.2, 5.0),
        tab="speech",
    )
    threads: int = setting(
        1, "Processor cores for speech", "CPU threads for CTranslate2", range=THREADS,
        tab="speech", term="speech threads",
    )  # fmt: skip
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


@dataclass(frozen=True)
class MtConfig:
    """Translation (llama.cpp + SSBD)."""

    model_path: str = setting(
        "", "Translation model", "GGUF file or catalog id", reload=True, tab="translation"
    )
    template: str = setting(
        "auto", "How the model is asked",
        "auto: as the model file says (a model without a chat template is shown example "
        "translations: fewshot)", choices=TEMPLATES,
        reload=True, tab="translation", term="prompt template",
    )  # fmt: skip
    src_lang: str = setting(
        "en", "Source language", "used when ASR language is fixed or not yet detected",
        language=True,
    )  # fmt: skip
    tgt_lang: str = setting(
        "de", "Translate into", language=True, tab="translation", term="target language"
    )
    extra_targets: str = setting(
        "", "Also translate into",
        "more target languages shown under the first, as codes separated by commas (e.g. "
        f"'ja, fr'; at most {MAX_EXTRA_TARGETS}); each adds a translation of every update on "
        "the same loaded model",
        languages=True, tab="translation", term="extra target languages",
    )  # fmt: skip
    you_targets: str = setting(
        "", "Translate your speech into",
        "with meeting audio heard too: the languages your own lines are translated into (codes "
        "separated by commas); empty = the meeting's language",
        languages=True, tab="audio", term="your target languages",
    )  # fmt: skip
    method: str = setting(
        "SSBD", "How translations are updated",
        "SSBD: self-speculative biased decoding (fast, stable); RT: re-translation of the whole "
        "line; CD: continuous decoding (never rewrites)",
        choices=("SSBD", "RT", "CD"), tab="translation", term="decoding method",
    )  # fmt: skip
    beta: float = setting(
        0.2,
        "Stability",
        "SSBD's bias towards the translation already shown: 0 translates every update afresh "
        "(most rewriting), 0.2 ignores small changes, 0.5 and more never rewrites what is shown",
        range=(0.0, 1.0),
        tab="translation",
        term="bias β",
    )
    max_new_tokens: int = setting(
        256, "Longest translation", "hard cap on one translation's length (tokens)",
        range=(1, 4096),
    )  # fmt: skip
    len_ratio: float = setting(
        3.0, "Length ratio", "cap relative to the source's token count", range=(0.5, 20.0)
    )
    partial_every_s: float = setting(
        0.5, "Show a slow translation as it goes",
        "while one translation takes longer than this (s), the words decoded so far are shown "
        "this often, and a translation given up for a newer one leaves them on screen; "
        "0 shows only whole translations",
        range=(0.0, 10.0),
    )  # fmt: skip
    threads: int = setting(
        1,
        "Processor cores for translation",
        "CPU threads for llama.cpp (speech recognition gets the rest)",
        range=THREADS,
        reload=True,
        tab="translation",
        term="translation threads",
    )
    # At least 1024: a base model's prompt of examples is about 250 tokens (Gemma 3), and a
    # line of 40 words with its longest translation must fit beside it (at 256 every line
    # but its first words failed with "context is full").
    n_ctx: int = setting(
        2048, "Context length", "llama.cpp context (tokens)", range=(1024, 32768), reload=True
    )
    n_ubatch: int = setting(
        512, "Micro-batch", "llama.cpp physical batch", range=(32, 4096), reload=True
    )
    flash_attn: bool = setting(True, "Flash attention", reload=True)
    gpu_layers: int | None = setting(
        None, "Layers on the graphics card",
        "how much of the translation model runs on the GPU (Metal/CUDA builds): auto (-1) puts "
        "all of it there; fewer when it does not fit the GPU's memory; 0: the processor only",
        range=(-1, 999), reload=True, tab="translation", term="GPU layers (n_gpu_layers)",
    )  # fmt: skip
    context_sentences: int = setting(
        0, "Previous sentences as context", "previous sentences given to the prompt",
        range=(0, 3), tab="translation",
    )  # fmt: skip
    # A shared inference server instead of a local file (issue 19)
    backend: str = setting(
        "local", "Translate with",
        "local: the model file on this computer; server: a shared translation server "
        "(vLLM, llama-cpp-python) that returns prompt log-probabilities",
        choices=("local", "server"), reload=True, tab="translation",
        term="OpenAI-compatible completions server",
    )  # fmt: skip
    server_url: str = setting(
        "", "Server address", "the server's OpenAI API root, e.g. http://gpu-box:8000/v1",
        reload=True, tab="translation",
    )  # fmt: skip
    server_model: str = setting(
        "", "Server model", "a model name the server serves ('': the first it lists)",
        reload=True, tab="translation",
    )  # fmt: skip
    server_api_key: str = setting(
        "", "Server API key", "sent as 'Authorization: Bearer …' to that server only",
        reload=True, tab="translation",
    )  # fmt: skip
    server_timeout_s: float = setting(
        10.0, "Server timeout", "seconds an update may take on the server before it is given up",
        range=(1.0, 120.0), reload=True, tab="translation",
    )  # fmt: skip
    # Advanced (issue 8; measured in docs/BENCHMARKS.md, off by default: they did not win)
    lookahead: int = setting(
        0, "Guess ahead from phrases said before",
        "tokens guessed past the draft from this meeting's n-grams", range=(0, 16),
        tab="advanced", term="n-gram lookahead",
    )  # fmt: skip
    resync: bool = setting(
        False,
        "Re-use the rest of a changed translation",
        "after a divergence, try the rest of the old draft",
        tab="advanced",
        term="resync",
    )
    verify: str = setting(
        "biased", "How a guess is accepted", "SSBD's beta, or SpecDec's top-b within tau",
        choices=("biased", "specdec"), tab="advanced", term="verification rule",
    )  # fmt: skip
    top_b: int = setting(
        3,
        "Accept a guess among the most likely",
        "the guessed token must be among the b most likely",
        range=(1, 20),
        tab="advanced",
        term="SpecDec top-b",
    )
    tau: float = setting(
        1.0,
        "... and close to the best",
        "and within this log-likelihood of the most likely",
        range=(0.0, 10.0),
        tab="advanced",
        term="SpecDec τ (tau)",
    )
    draft_model_path: str = setting(
        "",
        "Helper model for guesses",
        "a smaller GGUF with the same vocabulary ('': none)",
        reload=True,
        tab="advanced",
        term="draft model",
    )
    draft_tokens: int = setting(
        4,
        "Helper model's guesses",
        "tokens the draft model guesses per verify pass",
        range=(1, 16),
        tab="advanced",
        term="draft tokens",
    )
    adaptive_guessing: bool = setting(
        True,
        "Adaptive guessing",
        "guess only while it measurably speeds decoding up",
        tab="advanced",
    )

    @property
    def targets(self) -> tuple[str, ...]:
        """Every language translated into: the main target first, then the extra ones in
        their order, each once."""
        out = [base_code(self.tgt_lang)]
        for code in language_codes(self.extra_targets):
            if code not in out:
                out.append(code)
        return tuple(out)

    def for_target(self, lang: str) -> MtConfig:
        """These settings as one target's translator sees them: ``lang`` is its target
        language, the others are its extra targets (so ``targets`` is the same set)."""
        others = [t for t in self.targets if t != lang]
        return dataclasses.replace(self, tgt_lang=lang, extra_targets=",".join(others))

    @property
    def uses_server(self) -> bool:
        return self.backend == "server"

    @property
    def translator_chosen(self) -> bool:
        """A model file, or a server to translate with, is set."""
        return bool(self.server_url.strip()) if self.uses_server else bool(self.model_path)


@dataclass(frozen=True)
class DisplayConfig:
    """The subtitle overlay."""

    mask_k: int = setting(
        3, "Hide the last words of an unfinished line",
        "the last k tokens of a line still being spoken are not shown until they settle "
        "(whole words; display only, the translation is not changed); 0 shows everything",
        range=(0, 10), tab="translation", term="mask-k",
    )  # fmt: skip
    lines: int = setting(
        2, "Lines", "rows of text per language; older ones roll up and out", range=(1, 6),
        tab="appearance",
    )  # fmt: skip
    line_chars: int = setting(
        42, "Characters per line",
        "at most this many characters in a row, as live captions do (32-42 reads best); "
        "a Chinese or Japanese character counts as two",
        range=(16, 120), tab="appearance",
    )  # fmt: skip
    status_line: bool = setting(
        False, "Status line",
        "a small line with the input level, the delay from speech to screen, how far the "
        "translation is behind and any audio lost",
        tab="appearance",
    )  # fmt: skip
    bilingual: bool = setting(
        False, "Bilingual", "source line small above the translation", tab="appearance"
    )
    font_family: str = setting("Sans Serif", "Font", tab="appearance")
    font_size: int = setting(26, "Font size", range=(8, 120), tab="appearance")
    text_color: str = setting("#ffffff", "Colour", tab="appearance")
    outline: bool = setting(True, "Outline", tab="appearance")
    background_opacity: float = setting(
        0.7, "Background opacity", "0 transparent .. 1 opaque", range=(0.0, 1.0), tab="appearance"
    )
    click_through: bool = setting(
        False,
        "Click-through",
        "mouse clicks pass through the overlay to the meeting",
        tab="appearance",
    )
    geometry: dict[str, list[int]] = field(
        default_factory=dict,
        metadata=about("Overlay geometry", "per-screen x, y, w, h", range=PIXELS),
    )
    screen: str = setting("", "Screen", "name of the screen the overlay was last on")
    hotkey_click_through: str = setting(
        "Ctrl+Shift+F9", "Toggle click-through", "hotkey (the tray menu does it too)", tab="hotkeys"
    )
    hotkey_pause: str = setting("Ctrl+Shift+F10", "Start / pause", "hotkey", tab="hotkeys")


@dataclass(frozen=True)
class WebConfig:
    """Subtitles as a web page (an OBS browser source, a second screen); off by default."""

    share: str = setting(
        "off",
        "Show subtitles in a browser",
        "off, local (this computer only) or network (the local network, token in the URL)",
        choices=("off", "local", "network"),
        tab="browser",
    )
    port: int = setting(
        8642,
        "Browser page port",
        "TCP port of the page (the same on every start, so a saved address keeps working)",
        range=(1024, 65535),
        tab="browser",
    )
    token: str = setting("", "Access key", 'for "network": made on first use, kept until renewed')


@dataclass(frozen=True)
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


def reload_fields(cls: type) -> tuple[str, ...]:
    """The fields of a section whose change needs its model loaded again."""
    return tuple(f.name for f, spec in specs(cls) if spec.reload)


def pane_fields(tab: str) -> list[tuple[str, Field[Any], Spec]]:
    """(section, field, spec) of every setting the settings pane shows on ``tab``."""
    return [
        (section, f, spec)
        for section, cls in SECTIONS.items()
        for f, spec in specs(cls)
        if spec.tab == tab
    ]


# -- the command line ----------------------------------------------------------------------
class OneLineErrorParser(argparse.ArgumentParser):
    """Argument errors as one ``error: ...`` line (argparse prints its usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def flag_of(section: str, name: str) -> str:
    """A setting's own command-line flag: ``mt.tgt_lang`` -> ``--mt-tgt-lang``."""
    return f"--{section}-{name.replace('_', '-')}"


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"not true or false: {text!r}")


def _int_or_text(text: str) -> int | str:
    return int(text) if text.strip().lstrip("-").isdigit() else text


def _converter(tp: Any) -> Callable[[str], Any] | None:
    """How a command-line value becomes the field's type (None: not settable from there)."""
    if get_origin(tp) in (Union, types.UnionType):
        kinds = [a for a in get_args(tp) if a is not type(None)]
        if set(kinds) == {str, int}:
            return _int_or_text
        return _converter(kinds[0]) if len(kinds) == 1 else None
    if tp is bool:
        return _parse_bool
    if tp in (int, float, str):
        return tp  # type: ignore[no-any-return]
    return None  # tables (geometry) stay in the settings file


def _arg_type(spec: Spec, convert: Callable[[str], Any]) -> Callable[[str], Any]:
    if convert in (int, float):
        return spec.arg_type(convert)

    def parse(text: str) -> Any:
        value = convert(text)
        if (why := spec.problem(value)) is not None:
            raise argparse.ArgumentTypeError(why)
        return value

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def _metavar(name: str, spec: Spec, convert: Callable[[str], Any]) -> str | None:
    if spec.choices:
        return None  # argparse lists them
    return "true|false" if convert is _parse_bool else name.upper()


SETTING_DEST = "setting:"  # argparse dest prefix of the flags made by add_setting_flags
# What a flag's value is where the command line asks for a setting's None (a speech language
# recognised, "auto"): None itself is argparse's "not given".
UNSET: Final = object()


def add_setting_flags(
    ap: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    only: Iterable[str] | None = None,
    names: Mapping[str, str] = {},
) -> None:
    """One flag per setting (``--section-field``; ``names`` gives some another name, "section.
    field" -> "--flag"), its value converted and checked by the declaration like the settings
    file's. Not given: None (the settings decide); read them back with :func:`given_settings`.
    """
    wanted = None if only is None else set(only)
    for section, cls in SECTIONS.items():
        hints = get_type_hints(cls)
        for f, spec in specs(cls):
            key = f"{section}.{f.name}"
            if wanted is not None and key not in wanted:
                continue
            convert = _converter(hints[f.name])
            if convert is None:
                continue
            flag = names.get(key, flag_of(section, f.name))
            doc = spec.doc or spec.label
            if spec.range is not None or spec.choices is not None:
                doc += f" ({spec.describe()})"
            ap.add_argument(
                flag,
                dest=SETTING_DEST + key,
                type=_arg_type(spec, convert),
                choices=spec.choices,
                default=None,
                metavar=_metavar(f.name, spec, convert),
                help=doc.replace("%", "%%"),
            )


def given_settings(ns: argparse.Namespace) -> dict[str, Any]:
    """{"section.field": value} of the setting flags that were given (:data:`UNSET`: None)."""
    return {
        k.removeprefix(SETTING_DEST): None if v is UNSET else v
        for k, v in vars(ns).items()
        if k.startswith(SETTING_DEST) and v is not None
    }


def with_settings(cfg: AppConfig, values: Mapping[str, Any]) -> AppConfig:
    """A copy of ``cfg`` with {"section.field": value} set."""
    sections: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = value
    return dataclasses.replace(
        cfg,
        **{sec: dataclasses.replace(getattr(cfg, sec), **kw) for sec, kw in sections.items()},
    )
