"""The ASR and translation threads, written against small protocols so tests can drive them."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from subtitler.config import MtConfig
from subtitler.mt.drafting import DraftModel, GuessGate
from subtitler.mt.languages import LANGUAGES
from subtitler.mt.lm import LanguageModel
from subtitler.mt.masking import display_text
from subtitler.mt.prompts import ChatFormatter, PromptBuilder
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.translator import LengthCap, StreamTranslator
from subtitler.pipeline.events import (
    MAX_K,
    AsrEvent,
    ErrorEvent,
    Event,
    LevelEvent,
    MetricsEvent,
    StatusEvent,
    SubtitleEvent,
)
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.metrics import LiveMetrics
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
from subtitler.types import AsrUpdate, AudioBlock

log = logging.getLogger(__name__)
Emit = Callable[[Event], None]
Clock = Callable[[], float]


class AudioSource(Protocol):
    """Blocks of 16 kHz mono float32 audio, from a device or a file."""

    @property
    def dropped(self) -> int: ...

    @property
    def level(self) -> float: ...

    @property
    def exhausted(self) -> bool:
        """True once a file source has delivered its last block (never for a device)."""
        ...

    @property
    def problem(self) -> str:
        """Why no audio is coming now (a device unplugged and being retried), else ""."""
        ...

    @property
    def live(self) -> bool:
        """A device: what is said during a pause is not heard (a file just waits)."""
        ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def read(self, timeout: float) -> AudioBlock | None: ...


class Recognizer(Protocol):
    """The streaming policy over an ASR backend: feed audio, then ask for updates."""

    def insert_audio(self, block: AudioBlock) -> None: ...

    def process(self, now: float) -> list[AsrUpdate]: ...

    def finish(self, now: float) -> list[AsrUpdate]:
        """End of input: the open segment's final update."""
        ...


@dataclasses.dataclass
class LoadedModel:
    """A translation LM and the prompt template resolved for it."""

    lm: LanguageModel
    template: str
    formatter: ChatFormatter | None = None  # needed by the "gguf" template
    close: Callable[[], None] = lambda: None
    draft: DraftModel | None = None  # guesses past the draft (same vocabulary)
    notice: str = ""  # something the user should know about this load (not fatal)


ModelLoader = Callable[[MtConfig], LoadedModel]


class AsrStage(threading.Thread):
    """Drains audio, runs the recogniser, posts updates to the mailbox."""

    def __init__(
        self,
        source: AudioSource,
        recognizer: Recognizer,
        mailbox: Mailbox,
        emit: Emit,
        clock: Clock,
        metrics: LiveMetrics,
        stop: threading.Event,
    ) -> None:
        super().__init__(name="asr", daemon=True)
        self.source, self.recognizer = source, recognizer
        self.mailbox, self.emit, self.clock, self.metrics = mailbox, emit, clock, metrics
        self._stop_ev = stop
        self._new_source: AudioSource | None = None  # switched to at the next turn
        self._new_recognizer: Recognizer | None = None
        self._close_requested = False  # finish the open segment at the next turn
        self._lock = threading.Lock()
        self._source_lock = threading.Lock()  # source start/stop: UI thread vs this thread
        self.paused = False
        self.done = threading.Event()  # set when a file source is exhausted and flushed
        self._last_level = 0.0
        self._problem = ""  # the source's trouble last reported to the user

    def swap(self, source: AudioSource | None = None, recognizer: Recognizer | None = None) -> None:
        """Replace the source and/or recogniser at the next block boundary (a later call
        replaces only what it names: two quick changes both take effect)."""
        with self._lock:
            if source is not None:
                self._new_source = source
            if recognizer is not None:
                self._new_recognizer = recognizer
            self._close_requested = True

    def close_segment(self) -> None:
        """Make the open segment final at the next turn of the loop (even while paused)."""
        with self._lock:
            self._close_requested = True

    def pause(self) -> None:
        """Stop the input; a source switched in while paused is started by ``resume``."""
        with self._source_lock:
            self.paused = True
            self.source.stop()

    def resume(self) -> None:
        """Start the input again; raises (and stays paused) if it cannot be opened."""
        with self._source_lock:
            self.source.start()
            self.paused = False

    def _post(self, updates: list[AsrUpdate]) -> None:
        now = self.clock()
        for u in updates:
            u = dataclasses.replace(u, emitted_at=now)
            self.metrics.on_asr(u)
            self.emit(AsrEvent(u))
            self.mailbox.put(u)

    def _apply_swap(self) -> None:
        with self._lock:
            if not self._close_requested:
                return
            source, recognizer = self._new_source, self._new_recognizer
            self._new_source = self._new_recognizer = None
            self._close_requested = False
        # What a device's queue still holds was said before the change: recognise it first
        # (a file just goes on with the next block).
        while self.source.live and (block := self.source.read(0.0)) is not None:
            self.recognizer.insert_audio(block)
        self._post(self.recognizer.finish(self.clock()))  # the open segment ends here
        if source is not None:
            with self._source_lock:
                old = self.source
                old.stop()  # first: the new input may be the same device
                if self.paused:
                    self.source = source  # resume() starts it
                else:
                    try:
                        source.start()
                    except Exception as e:
                        log.warning("audio switch failed: %s", e)
                        self.emit(ErrorEvent("audio", f"{e} (kept the previous input)"))
                        old.start()  # if this fails too, run() says recognition stopped
                    else:
                        self.source = source
        if recognizer is not None:
            self.recognizer = recognizer

    def _report_problem(self) -> None:
        """Tell the user once when the input goes away (it is retried) and when it is back."""
        problem = self.source.problem
        if problem == self._problem:
            return
        self._problem = problem
        if problem:
            self.emit(ErrorEvent("audio", problem, lasting=True))
        else:
            self.emit(StatusEvent("running", "audio input is back"))

    def run(self) -> None:
        try:
            while not self._stop_ev.is_set():
                self._apply_swap()
                block = self.source.read(0.05)
                self._report_problem()
                if block is None:
                    if self.source.exhausted:
                        self._post(self.recognizer.finish(self.clock()))
                        self.done.set()
                        return
                    continue
                self.recognizer.insert_audio(block)
                self._post(self.recognizer.process(self.clock()))
                self.metrics.dropped_blocks = self.source.dropped
                now = self.clock()
                if now - self._last_level >= 0.05:
                    self._last_level = now
                    self.emit(LevelEvent(self.source.level, self.source.dropped))
        except Exception as e:  # the UI must hear about it; the app stays up
            log.exception("ASR stage failed")
            self.emit(ErrorEvent("asr", f"speech recognition stopped: {e}", fatal=True))
            self.done.set()


class TranslationStage(threading.Thread):
    """Translates the newest update of the open segment; previous translation = SSBD draft."""

    def __init__(
        self,
        mailbox: Mailbox,
        emit: Emit,
        clock: Clock,
        metrics: LiveMetrics,
        stop: threading.Event,
        mt: MtConfig,
        transcript: TranscriptWriter | None,
    ) -> None:
        super().__init__(name="translation", daemon=True)
        self.mailbox, self.emit, self.clock, self.metrics = mailbox, emit, clock, metrics
        self._stop_ev = stop
        self._mt = mt
        self._model: LoadedModel | None = None
        self._next_model: LoadedModel | None = None
        self._lock = threading.Lock()
        self.transcript = transcript
        self._translator: StreamTranslator | None = None
        self.idle = threading.Event()  # set while waiting with nothing to do
        self.asr_done: threading.Event | None = None
        self._failed_segment: int | None = None  # the segment whose failure was reported

    # -- settings, from any thread ---------------------------------------------------------
    def set_mt(self, mt: MtConfig) -> None:
        """New beta / method / languages: used from the next update on."""
        with self._lock:
            self._mt = mt

    def set_model(self, model: LoadedModel) -> None:
        """A freshly loaded model: swapped in between two updates; the old one is closed."""
        with self._lock:
            displaced, self._next_model = self._next_model, model
        if displaced is not None:  # loaded but never used (no speech since): close it now
            displaced.close()

    # -- the thread ------------------------------------------------------------------------
    def _translator_for(self, u: AsrUpdate) -> StreamTranslator | None:
        with self._lock:
            mt, nxt, self._next_model = self._mt, self._next_model, None
        if nxt is not None:
            old, self._model = self._model, nxt
            self._translator = None
            if old is not None:
                old.close()
        if self._model is None:
            return None
        src = u.language if u.language in LANGUAGES else mt.src_lang
        prompts = PromptBuilder(self._model.template, src, mt.tgt_lang, self._model.formatter)
        opts = DecodeOptions(
            method=Method(mt.method),
            beta=mt.beta,
            max_new_tokens=mt.max_new_tokens,
            verify=mt.verify,
            top_b=mt.top_b,
            tau=mt.tau,
            lookahead=mt.draft_tokens if self._model.draft is not None else mt.lookahead,
            resync=mt.resync,
        )
        tr = self._translator
        if tr is None or tr.lm is not self._model.lm:
            tr = StreamTranslator(
                self._model.lm,
                prompts,
                opts,
                cap=LengthCap(ratio=mt.len_ratio, hard=mt.max_new_tokens),
                draft_model=self._model.draft,
            )
            self._translator = tr
        else:
            tr.prompts, tr.options = prompts, opts
        if not mt.adaptive_guessing:
            tr.gate = None
        elif tr.gate is None:
            tr.gate = GuessGate()
        tr.context_sentences = mt.context_sentences
        if mt.context_sentences == 0:
            tr.context = ""
        return tr

    def _emit_final(self, u: AsrUpdate, translation: str) -> None:
        if self.transcript is not None and u.text:
            with self._lock:
                mt = self._mt
            try:
                self.transcript.append(
                    SegmentRecord(
                        u.segment_id,
                        u.audio_t0,
                        u.audio_t1,
                        u.text,
                        translation,
                        u.language or mt.src_lang,
                        mt.tgt_lang,
                        time.time(),
                    )
                )
            except OSError as e:
                waiting = self.transcript.waiting
                self.emit(
                    ErrorEvent(
                        "transcript",
                        f"could not write the transcript ({e}); {waiting} finished line(s) "
                        "kept in memory and written once that is fixed",
                    )
                )
        m = self.metrics.finish_segment(u.segment_id, self.metrics.dropped_blocks)
        self.emit(MetricsEvent(m))
        log.info(
            "segment %d: latency %s, abandoned %d, A/D %s",
            u.segment_id,
            [round(x, 3) for x in m.translation_latency_s],
            m.abandoned,
            m.ad,
        )

    def _untranslated(self, u: AsrUpdate, shown: str = "") -> None:
        """An update shown without a translation: the source is the subtitle (``shown``: what
        the line reads; empty = fall back to the source on screen)."""
        ev = SubtitleEvent(
            u.segment_id,
            u.text,
            shown,
            (shown,) * (MAX_K + 1),
            u.final,
            u.emitted_at,
            self.clock(),
            u.audio_t0,
            u.audio_t1,
        )
        self.metrics.on_translation(ev)
        self.emit(ev)
        if u.final:
            self._emit_final(u, shown)

    def translate(self, u: AsrUpdate) -> None:
        tr = self._translator_for(u)
        # Whisper writes "...", "-" or "?" for noise: nothing to translate (a model would
        # invent a sentence for it).
        if tr is None or not any(ch.isalnum() for ch in u.text):
            return self._untranslated(u)
        if tr.prompts.src_lang == tr.prompts.tgt_lang:
            # Someone speaks the target language already: shown as said, not "translated".
            return self._untranslated(u, u.text)

        def abort() -> bool:
            return self._stop_ev.is_set() or (not u.final and self.mailbox.has_newer(u.segment_id))

        t = tr.update(u.segment_id, u.text, u.final, should_abort=abort)
        if t.stats.aborted:
            self.metrics.on_abandoned(u.segment_id)
            if u.final:  # stopped mid-decode: what was said still reaches the transcript
                self._untranslated(u)
            return
        detok = tr.lm.detokenize
        shown = tuple(display_text(detok, t.tokens, k, u.final).strip() for k in range(MAX_K + 1))
        if u.final and t.stats.hit_cap:
            # The translation was cut at its length limit: say so rather than end mid-phrase.
            shown = tuple(f"{x}…" for x in shown)
        ev = SubtitleEvent(
            u.segment_id,
            u.text,
            t.text,
            shown,
            u.final,
            u.emitted_at,
            self.clock(),
            u.audio_t0,
            u.audio_t1,
            t.stats,
        )
        self.metrics.on_translation(ev)
        self.emit(ev)
        if u.final:
            self._emit_final(u, t.text)

    def run(self) -> None:
        while not self._stop_ev.is_set():
            u = self.mailbox.get(timeout=0.05)
            if u is None:
                self.idle.set()
                if self.asr_done is not None and self.asr_done.is_set() and not len(self.mailbox):
                    self.emit(StatusEvent("finished", "replay finished"))
                    return
                continue
            self.idle.clear()
            try:
                self.translate(u)
            except Exception as e:
                log.exception("translation failed")
                # Once per segment: a failing segment is retried at every update.
                if self._failed_segment != u.segment_id:
                    self._failed_segment = u.segment_id
                    self.emit(ErrorEvent("mt", f"translation failed: {e}"))
                if u.final:  # what was said stays on screen and in the transcript
                    self._untranslated(u)
        self._keep_queued_finals()

    def _keep_queued_finals(self) -> None:
        """At stop: lines that finished but were not translated yet go to the transcript."""
        while (u := self.mailbox.get(timeout=0)) is not None:
            if u.final:
                self._emit_final(u, "")

    def close(self) -> None:
        with self._lock:
            models = [m for m in (self._model, self._next_model) if m is not None]
            self._model = self._next_model = None
        for m in models:
            m.close()
