"""The faster-whisper recogniser: the only module that imports faster_whisper (lazily).

The model, its tokenizer, the log-Mel features and the word alignment are faster-whisper's;
one recognition is driven here instead of through ``WhisperModel.transcribe`` because that
call does three things wrong for a streaming window re-recognised every second:

- it pads the encoder input to 30 s whatever the window (``pad_or_trim``): for a 4 s window
  the encoder then spends most of its time on padding. Here the encoder sees the window plus
  ``pad_s`` of silence, rounded up to whole seconds (CTranslate2's Whisper encoder takes any
  length up to 30 s); ``encoder_window_s=30`` restores faster-whisper's behaviour;
- a window of a frame or two reaches CTranslate2's ``align``, which divides by zero for a
  one-frame window and can abort the process (OpenNMT/CTranslate2#2065), and faster-whisper's
  ``find_alignment`` raises IndexError on the empty alignment it gets back
  (SYSTRAN/faster-whisper#1460): windows too short to align are never sent;
- its temperature fallback can multiply a call's cost by six; a streaming re-run a second
  later is a cheaper retry, so decoding is one beam search (``beam_size``, Whisper's 5 by
  default), with Whisper's own no-speech rule.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from subtitler.asr.backend import MIN_WINDOW_S, SAMPLE_RATE, AsrError, Hypothesis, Samples
from subtitler.asr.faster_of import FasterOf
from subtitler.asr.repetition import lend_times, loop_words, plain
from subtitler.config import AsrConfig
from subtitler.types import Word

log = logging.getLogger(__name__)
_T = TypeVar("_T")

_MEDIAN_FILTER = 7  # faster-whisper's alignment median filter width (frames of 20 ms)
_FRAMES_PER_S = 100  # log-Mel frames per second (hop 160 at 16 kHz)
_MAX_FRAMES = 3000  # Whisper's 30 s window
_MAX_LENGTH = 448  # Whisper's decoder context
# faster-whisper's defaults for attaching punctuation to words.
_PREPEND = "\"'“¿([{-"
_APPEND = "\"'.。,，!！?？:：”)]}、"
# Whisper's no-speech rule: no words when the no-speech probability is high and the text
# improbable (openai/whisper transcribe.py, faster-whisper's defaults).
_NO_SPEECH = 0.6
_LOGPROB = -1.0
# Above this, no words however probable the text: over a rumble Silero heard as speech once
# lifted (asr/vad.py LIFT_DB), tiny.en wrote "Thank you." at 0.84-0.89 with -0.65 to -0.85
# per token, which the rule above lets through; no window of the development set's tune
# split scored over 0.38, nor of its report split played 20 dB quieter over 0.52
# (docs/benchmarks/asr.md, session O).
_NO_SPEECH_ALONE = 0.8
# Beam search may loop on a window; real speech is far below this many tokens per second.
_TOKENS_PER_S = 12.0
# Hotwords take at most this many of the prompt's tokens; the earlier text gets the rest.
_MAX_HOTWORD_TOKENS = _MAX_LENGTH // 4
_RANKED = 5  # languages a ranking lists (the rest count as unlikely)


@dataclass(frozen=True)
class WhisperSettings:
    """How the model is loaded and decoded."""

    model: str = "small"  # size name (downloaded once) or a local CTranslate2 model directory
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    compute_type: str = "auto"  # "auto": int8 on CPU, float16 on CUDA
    threads: int = 1  # CPU threads for CTranslate2
    beam_size: int = 5  # Whisper's beam: the same words as offline transcription
    max_new_tokens: int | None = None  # cap per call (tests with random weights need one)
    # Encoder input: the window plus at least pad_s of silence, rounded up to whole seconds
    # (at most 30 s). encoder_window_s = 30 pads every window to 30 s, as faster-whisper does.
    pad_s: float = 2.0
    min_encoder_s: float = 10.0  # the encoder never sees less than this (s)
    encoder_window_s: float | None = None
    # Text only, no timestamp tokens: fewer tokens, and after a prefix that ends a sentence
    # Whisper goes on with the next one instead of closing its timestamped segment. Word
    # times come from the alignment either way.
    timestamps: bool = False
    # Words to expect (glossary terms, as short sentences): they start the prompt, before the
    # earlier text, as faster-whisper's ``hotwords`` do. Changed live with set_hotwords().
    hotwords: str = ""

    @classmethod
    def from_config(cls, cfg: AsrConfig) -> WhisperSettings:
        return cls(
            model=cfg.model,
            device=cfg.device,
            compute_type=cfg.compute_type,
            threads=cfg.threads,
            beam_size=cfg.beam_size,
        )


# Where a device cannot run the requested compute type efficiently, the nearest one it can
# (faster-whisper would fail with CTranslate2's ValueError): settings copied from a GPU
# machine, or a model converted in float16, still load on a CPU.
_FALLBACK = {
    "int8_float16": ("int8_float16", "int8_bfloat16", "int8", "int8_float32", "float32"),
    "int8_bfloat16": ("int8_bfloat16", "int8_float16", "int8", "int8_float32", "float32"),
    "int8_float32": ("int8_float32", "int8", "float32"),
    "int8": ("int8", "int8_float32", "float32"),
    "int16": ("int16", "int8", "float32"),
    "float16": ("float16", "bfloat16", "int8_float16", "float32", "int8"),
    "bfloat16": ("bfloat16", "float16", "float32", "int8"),
    "float32": ("float32",),
}


def resolve_device(
    device: str, compute_type: str, cuda_devices: int, supported: set[str] | None = None
) -> tuple[str, str]:
    """Pick the device and compute type: never hard-code CUDA, say what was chosen.

    ``supported``: the compute types CTranslate2 offers on the chosen device; a requested
    type outside it becomes the nearest supported one (logged).
    """
    if device not in ("auto", "cpu", "cuda"):
        raise AsrError(f"unknown ASR device {device!r} (expected auto, cpu or cuda)")
    if device == "auto":
        device = "cuda" if cuda_devices > 0 else "cpu"
    elif device == "cuda" and cuda_devices == 0:
        raise AsrError("ASR device 'cuda' requested but no CUDA device is available")
    if compute_type == "auto":
        compute_type = "float16" if device == "cuda" else "int8"
    if compute_type not in _FALLBACK and compute_type not in ("default", "auto"):
        raise AsrError(
            f"unknown compute type {compute_type!r} (expected auto, default, "
            f"{', '.join(_FALLBACK)})"
        )
    if supported and compute_type in _FALLBACK and compute_type not in supported:
        pick = next((c for c in _FALLBACK[compute_type] if c in supported), "default")
        log.warning("%s cannot run %s efficiently: using %s", device, compute_type, pick)
        compute_type = pick
    return device, compute_type


def check_model_dir(path: Path) -> None:
    """Fail with one clear line unless ``path`` holds a CTranslate2 Whisper model that
    faster-whisper loads offline (vocabulary.txt or .json; preprocessor_config.json optional)."""
    from subtitler.models.validate import InvalidModelError, check_whisper_dir

    if not path.is_dir():
        raise AsrError(f"model directory not found: {path}")
    try:
        check_whisper_dir(path)
    except InvalidModelError as e:
        raise AsrError(str(e)) from None


def _looks_like_path(model: str) -> bool:
    return "/" in model or "\\" in model or model.startswith(".") or Path(model).exists()


def silero_session() -> Any:
    """The Silero VAD ONNX session bundled with faster-whisper (works offline)."""
    from faster_whisper.vad import get_vad_model

    return get_vad_model().session


def encoder_frames(
    content_frames: int, pad_s: float, window_s: float | None, min_s: float = 0.0
) -> int:
    """Frames the encoder sees for ``content_frames`` of audio (an even count, <= 30 s)."""
    if window_s is not None:
        want = round(window_s * _FRAMES_PER_S)
    else:
        want = max(content_frames + round(pad_s * _FRAMES_PER_S), round(min_s * _FRAMES_PER_S))
        want = -(-want // _FRAMES_PER_S) * _FRAMES_PER_S  # whole seconds: fewer shapes
    return max(2, min(_MAX_FRAMES, max(want, content_frames)))


class FasterWhisperBackend:
    """``AsrBackend`` over faster-whisper's model, tokenizer and aligner, with word times."""

    def __init__(self, settings: WhisperSettings) -> None:
        import ctranslate2
        from faster_whisper import WhisperModel

        self.settings = settings
        if _looks_like_path(settings.model):
            check_model_dir(Path(settings.model))
        cuda = ctranslate2.get_cuda_device_count()
        device = settings.device if settings.device != "auto" else ("cuda" if cuda else "cpu")
        try:
            supported = set(ctranslate2.get_supported_compute_types(device))
        except (ValueError, RuntimeError):
            supported = None  # resolve_device says why the device cannot be used
        self.device, self.compute_type = resolve_device(
            settings.device, settings.compute_type, cuda, supported
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
        want = int(self._model.model.n_mels)
        have = int(self._model.feature_extractor.mel_filters.shape[0])
        if want != have:
            given = Path(settings.model) / "preprocessor_config.json"
            why = f"says {have}" if given.is_file() else "is missing"
            raise AsrError(
                f"cannot load Whisper model {settings.model!r}: it expects {want} Mel bins but "
                f"the features have {have} (its preprocessor_config.json {why})"
            )
        self.multilingual = bool(self._model.model.is_multilingual)
        self._tokenizers: dict[str, Any] = {}
        self.hotwords = settings.hotwords
        # A second CTranslate2 thread can cost more than it brings, above all in the decoder's
        # steps (small matrices): on two 2-vCPU machines tiny.en's beam search took 0.07 s on
        # 2 threads against 0.06 s on 1, then 0.25 s against 0.09 s, to the token the same
        # output (docs/benchmarks/asr.md, session M). So with several CPU threads a copy of
        # the model on one thread is loaded, the first passes alternate the encoder and the
        # beam search between the two, each keeps the faster (language detection and the
        # alignment follow the beam search), and a copy neither part kept is let go.
        self._copies: list[Any] = [self._model]  # on all threads, then (if any) on one
        self.encode_choice: FasterOf | None = None
        self.step_choice: FasterOf | None = None
        if self.device == "cpu" and settings.threads > 1:
            try:
                one = WhisperModel(
                    settings.model,
                    device="cpu",
                    compute_type=self.compute_type,
                    cpu_threads=1,
                    local_files_only=True,
                )
            except Exception as e:  # memory, above all: the model loaded once is enough
                log.warning(
                    "recognising on %d threads only (no copy on one: %s)", settings.threads, e
                )
            else:
                self._copies.append(one)
                self.encode_choice, self.step_choice = FasterOf(), FasterOf()

    def _threads(self, choice: FasterOf | None) -> int | None:
        if self.device != "cpu":
            return None
        if choice is None:
            return self.settings.threads
        return None if choice.chosen is None else (1, self.settings.threads)[choice.chosen == 0]

    @property
    def threads_in_use(self) -> tuple[int | None, int | None]:
        """CPU threads of (the encoder, the decoder's steps); None while the first passes
        still compare them (or on a GPU)."""
        return self._threads(self.encode_choice), self._threads(self.step_choice)

    @property
    def models_held(self) -> int:
        """Copies of the model in memory: two while the first passes compare them, and
        after where the encoder and the steps each kept a different one."""
        return sum(m is not None for m in self._copies)

    def _copy(self, choice: FasterOf | None) -> Any:
        """The copy a part runs on: the chosen one, else the model on all its threads."""
        return self._copies[0 if choice is None or choice.chosen is None else choice.chosen]

    def _on(
        self, choice: FasterOf | None, run: Callable[[Any], _T], size: Callable[[_T], float]
    ) -> _T:
        """``run`` on the copy ``choice`` says; while the choice is open the copies take turns
        and the cost per unit of ``size(output)`` is counted."""
        if choice is None or choice.chosen is not None:
            return run(self._copy(choice))
        which = choice.next()
        start = time.perf_counter()
        out = run(self._copies[which])
        if choice.record(which, (time.perf_counter() - start) / max(size(out), 1.0)) is not None:
            self._settle()
        return out

    def _settle(self) -> None:
        """Once the encoder and the steps have each chosen, keeps only the copies they use."""
        choices = [c for c in (self.encode_choice, self.step_choice) if c is not None]
        kept = {c.chosen for c in choices}
        if None in kept:
            return
        self._copies = [m if i in kept else None for i, m in enumerate(self._copies)]
        # Features, tokenizer and prompt from a copy that stays.
        self._model = next(m for m in self._copies if m is not None)
        ms = [statistics.median(c) * 1000 for ch in choices for c in ch.costs]
        log.info(
            "recognising on %d + %d thread(s) (encoder + decoding): encoder %.2f / %.2f ms per "
            "frame, decoding %.1f / %.1f ms per token, on %d / 1 thread(s)",
            *self.threads_in_use,
            *ms,
            self.settings.threads,
        )

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect from the next recognition on (the glossary's terms)."""
        self.hotwords = hotwords

    def close(self) -> None:
        """Nothing to end: the model lives in this process and goes with this object."""

    # -- pieces --------------------------------------------------------------------------

    def _tokenizer(self, language: str) -> Any:
        tok = self._tokenizers.get(language)
        if tok is None:
            from faster_whisper.tokenizer import Tokenizer

            tok = Tokenizer(
                self._model.hf_tokenizer, self.multilingual, task="transcribe", language=language
            )
            self._tokenizers[language] = tok
        return tok

    def _encode(self, audio: Samples) -> tuple[Any, int]:
        """Encoder output for ``audio`` (padded with silence as the settings say) and the
        number of feature frames that hold audio."""
        s = self.settings
        feats = self._model.feature_extractor(audio)
        # The policy keeps windows far below Whisper's 30 s; beyond it nothing is heard.
        content = min(_MAX_FRAMES, feats.shape[-1] - 1, round(len(audio) / SAMPLE_RATE * 100))
        content = max(1, content)
        n = encoder_frames(content, s.pad_s, s.encoder_window_s, s.min_encoder_s)
        # Zeros after the audio, as faster-whisper's pad_or_trim pads its 30 s window.
        x = np.zeros((1, feats.shape[0], n), dtype=np.float32)
        x[0, :, :content] = feats[:, :content]
        # Cost per frame: the encoder's input grows with the window.
        encoded = self._on(self.encode_choice, lambda m: m.encode(x), lambda _: n)
        return encoded, content

    def _language(self, encoded: Any, language: str | None) -> str:
        if not self.multilingual:
            return "en"
        return language or self._ranked(encoded)[0][0]

    def _ranked(self, encoded: Any) -> tuple[tuple[str, float], ...]:
        """The languages ``encoded`` sounds like, most likely first (the first _RANKED)."""
        model = self._copy(self.step_choice).model
        found = model.detect_language(encoded)[0][:_RANKED]  # ("<|de|>", p), ...
        return tuple((str(token[2:-2]), float(p)) for token, p in found)

    def _prompt(self, tokenizer: Any, prompt: str, prefix: list[int]) -> list[int]:
        previous = tokenizer.encode(" " + prompt.strip()) if prompt.strip() else []
        hot = self.hotwords.strip()
        # Unlike faster-whisper (which drops hotwords when there is a prefix), kept with a
        # prefix too: in streaming nearly every window has one.
        hotwords = tokenizer.encode(" " + hot)[:_MAX_HOTWORD_TOKENS] if hot else []
        # Whisper's context is 448 tokens: the earlier text gives way to the prefix and to
        # room for new words.
        room = max(0, min(_MAX_LENGTH // 2 - 1, _MAX_LENGTH // 2 - len(prefix)) - len(hotwords))
        ts = self.settings.timestamps
        out: list[int] = self._model.get_prompt(
            tokenizer,
            hotwords + (previous[len(previous) - room :] if room else []),
            without_timestamps=not ts,
        )
        if prefix:  # as faster-whisper's get_prompt(prefix=...), from tokens
            out += [tokenizer.timestamp_begin, *prefix] if ts else prefix
        return out

    def _decode(self, encoded: Any, tokenizer: Any, prompt: list[int], seconds: float) -> Any:
        from faster_whisper.transcribe import get_suppressed_tokens

        s = self.settings
        cap = s.max_new_tokens or int(8 + _TOKENS_PER_S * seconds)
        return self._on(
            self.step_choice,
            lambda m: m.model.generate(
                encoded,
                [prompt],
                beam_size=s.beam_size,
                patience=1.0,
                length_penalty=1.0,
                max_length=min(_MAX_LENGTH, len(prompt) + cap),
                return_scores=True,
                return_no_speech_prob=True,
                suppress_blank=True,
                suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
                max_initial_timestamp_index=50,  # the first word starts within 1 s (Whisper's)
            )[0],
            lambda r: len(r.sequences_ids[0]) + 1,  # per token: longer texts cost more
        )

    def align(self, audio: Samples, text: str, language: str | None = None) -> list[Word]:
        """Word times of a known ``text`` in ``audio`` (forced alignment; any model weights
        give words in order inside the audio, so the self-test can rely on it)."""
        if len(audio) < MIN_WINDOW_S * SAMPLE_RATE:
            return []
        encoded, content = self._encode(np.asarray(audio, dtype=np.float32).reshape(-1))
        tokenizer = self._tokenizer(self._language(encoded, language))
        tokens = tokenizer.encode(" " + text.strip())
        return self._word_times(tokenizer, tokens, encoded, content)

    def _word_times(
        self, tokenizer: Any, tokens: list[int], encoded: Any, content: int
    ) -> list[Word]:
        return [w for w, _ in self._aligned(tokenizer, tokens, encoded, content)]

    def _aligned(
        self, tokenizer: Any, tokens: list[int], encoded: Any, content: int
    ) -> list[tuple[Word, int]]:
        """Aligned words of ``tokens``, each with the number of tokens it is made of."""
        from faster_whisper.transcribe import merge_punctuations

        # CTranslate2 halves the frames for the encoder stride and median-filters them.
        if not tokens or content // 2 <= _MEDIAN_FILTER:
            return []
        found = self._copy(self.step_choice).find_alignment(tokenizer, [tokens], encoded, content)
        alignment = found[0] if found else []
        if not alignment:
            return []
        merge_punctuations(alignment, _PREPEND, _APPEND)
        limit = content / _FRAMES_PER_S
        kept = [a for a in alignment if a["word"]]
        words = _shorten_long_words(
            [
                Word(
                    a["word"],
                    float(min(a["start"], limit)),
                    float(min(a["end"], limit)),
                    float(a["probability"]),
                )
                for a in kept
            ]
        )
        return [(w, len(a["tokens"])) for w, a in zip(words, kept, strict=True)]

    # -- AsrBackend ----------------------------------------------------------------------

    def transcribe(
        self,
        audio: Samples,
        *,
        t0: float,
        prompt: str,
        language: str | None,
        prefix: str = "",
        rank_languages: bool = False,
    ) -> Hypothesis:
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        if len(audio) < MIN_WINDOW_S * SAMPLE_RATE:
            return Hypothesis((), language if self.multilingual else "en")
        encoded, content = self._encode(audio)
        ranked = self._ranked(encoded) if self.multilingual and rank_languages else ()
        lang = ranked[0][0] if ranked and not language else self._language(encoded, language)
        hyp = self._recognise(encoded, content, lang, prompt, prefix, len(audio) / SAMPLE_RATE)
        return replace(hyp, language_probs=ranked)

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        if not self.multilingual or len(audio) < MIN_WINDOW_S * SAMPLE_RATE:
            return ()
        return self._ranked(self._encode(audio)[0])

    def _recognise(
        self, encoded: Any, content: int, lang: str, prompt: str, prefix: str, seconds: float
    ) -> Hypothesis:
        tokenizer = self._tokenizer(lang)
        fixed = tokenizer.encode(" " + prefix.strip()) if prefix.strip() else []
        prompt_tokens = self._prompt(tokenizer, prompt, fixed)
        result = self._decode(encoded, tokenizer, prompt_tokens, seconds)
        tokens: list[int] = result.sequences_ids[0]
        forced = prompt_tokens[len(prompt_tokens) - len(fixed) - self.settings.timestamps :]
        forced = forced if fixed else []
        if forced and tokens[: len(forced)] == forced:
            tokens = tokens[len(forced) :]  # CTranslate2 returns the prefix with the new text
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        silent = result.no_speech_prob > _NO_SPEECH and avg_logprob < _LOGPROB
        if silent or result.no_speech_prob > _NO_SPEECH_ALONE:
            return Hypothesis((), lang)
        text = _text_tokens(tokens, tokenizer, content / _FRAMES_PER_S)
        if not text:
            return Hypothesis((), lang)
        # The prefix is aligned with the new text (its words place the new ones in time),
        # then left out: the caller has it already.
        aligned = self._aligned(tokenizer, fixed + text, encoded, content)
        known, new = _split_prefix(aligned, len(fixed))
        # A phrase written twice whose audio the aligner split between the copies is one
        # phrase with that audio (asr/repetition.py).
        kept = lend_times(known + new, fixed=len(known))
        known, new = kept[: len(known)], kept[len(known) :]
        # After the prefix Whisper may say it again at the end of the audio ("... for your
        # country. What your country can do for you ..."), squeezed into the last moment.
        if _repeats(known, new):
            new = []
        # Copies of a phrase the audio does not hold are a decoder loop (or a word heard twice
        # at the prefix's end); copies a person said stay ("words, words, words").
        loop = loop_words(known + new, fixed=len(known))
        new = [w for i, w in enumerate(new, len(known)) if i not in loop]
        return Hypothesis(tuple(new), lang, after_prefix=True)


def _text_tokens(tokens: list[int], tokenizer: Any, seconds: float) -> list[int]:
    """The text tokens, up to a timestamp past the end of the audio (text after it was
    invented for the padding)."""
    out: list[int] = []
    begin = tokenizer.timestamp_begin
    for t in tokens:
        if t >= begin:
            if (t - begin) * 0.02 > seconds + 0.1:
                break
        elif t < tokenizer.eot:
            out.append(t)
    return out


def _split_prefix(words: list[tuple[Word, int]], n_prefix: int) -> tuple[list[Word], list[Word]]:
    """(words of the first ``n_prefix`` tokens, the words after them); a word the prefix
    ends inside counts as new."""
    count = 0
    for i, (_, n) in enumerate(words):
        count += n
        if count > n_prefix:
            return [w for w, _ in words[:i]], [w for w, _ in words[i:]]
    return [w for w, _ in words], []


def _repeats(known: list[Word], new: list[Word]) -> bool:
    """Do the new words (three or more) say the end of the known ones again, four in five
    words the same?"""
    if len(new) < 3 or len(known) < len(new):
        return False
    a = [plain(w) for w in known[-len(new) :]]
    b = [plain(w) for w in new]
    return sum(x == y for x, y in zip(a, b, strict=True)) >= 0.8 * len(new)


def _shorten_long_words(words: list[Word]) -> list[Word]:
    """faster-whisper's fix for words stretched over a pause: at a sentence boundary a word
    lasts at most twice the median word duration (capped at 0.7 s)."""
    durations = [w.end - w.start for w in words if w.end > w.start]
    if not durations:
        return words
    longest = 2 * min(0.7, float(np.median(durations)))
    out = list(words)
    for i, w in enumerate(out):
        if w.end - w.start <= longest:
            continue
        prev_end = i == 0 or out[i - 1].text.rstrip().endswith((".", "!", "?"))
        if prev_end:  # speech starting after a pause: the word ends where it ends
            out[i] = Word(w.text, w.end - longest, w.end, w.probability)
        elif w.text.rstrip().endswith((".", "!", "?")):
            out[i] = Word(w.text, w.start, w.start + longest, w.probability)
    return out


def decode_audio_file(path: str | Path) -> Samples:
    """Any file faster-whisper (PyAV) can decode, as 16 kHz mono float32."""
    p = Path(path)
    if not p.is_file():
        raise AsrError(f"audio file not found: {p}")
    from faster_whisper import decode_audio

    from subtitler.audio.sources import decoder_said

    try:
        audio = decode_audio(str(p), sampling_rate=SAMPLE_RATE)
    except Exception as e:  # PyAV raises its own error family per container/codec problem
        raise AsrError(f"cannot decode audio file {p}: {decoder_said(e)}") from e
    if len(audio) == 0:
        raise AsrError(f"cannot decode audio file {p}: no audio samples")
    return np.asarray(audio, dtype=np.float32)
