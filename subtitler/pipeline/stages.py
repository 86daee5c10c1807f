"""The ASR and translation threads, written against small protocols so tests can drive them."""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from subtitler.asr.engine import Recognizer
from subtitler.audio.source import AudioSource
from subtitler.config import MtConfig
from subtitler.display.steadiness import OpenLines
from subtitler.mt.engine import Engine, EngineResult, EngineUnavailable
from subtitler.mt.glossary import Glossary
from subtitler.mt.languages import LANGUAGES
from subtitler.mt.output_rules import ANOTHER_LANGUAGE
from subtitler.mt.terms import present
from subtitler.pipeline.echo import EchoGate
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
from subtitler.pipeline.failures import FailureRun, Verdict, why
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.metrics import LiveMetrics
from subtitler.pipeline.sealing import FinishedLines
from subtitler.pipeline.sides import SegmentIds
from subtitler.pipeline.targets import TargetTurns
from subtitler.pipeline.transcript import TranscriptWriter
from subtitler.repeats import LOOP
from subtitler.types import (
    OTHERS,
    YOU,
    AsrUpdate,
    AudioBlock,
    EngineGone,
    EngineLost,
    UpdateStats,
)

log = logging.getLogger(__name__)
Emit = Callable[[Event], None]
Clock = Callable[[], float]

# Finished lines in a row that a model translates as nothing (or as a loop) before the reader
# is told its weights may be damaged: one such line happens ("Hmm." may translate as
# nothing), three of a few words each do not with a working model.
NOTHING_LINES = 3
# Audio a recogniser behind its input is given at a time when it must catch up at once (at a
# stop or a switch of input): one pass per piece on the open line, each piece's lines posted.
BACKLOG_PIECE_S = 5.0
# A finished line whose translation has run this long while newer lines wait gives way to them
# (put back, translated later): a hung engine held every later line, the lines as said too,
# off the screen (the worker ends one that then does not answer: isolation/worker.HUNG_S).
STUCK_S = 30.0
LOST_WHAT = "put it back (or choose another speech model in Settings) and press Start"
BEHIND = "translation is slower than the speech"
BEHIND_WHAT = "the newest lines are translated first, finished ones later for the transcript"
# Finished lines a translation server that is away could not translate, kept to translate once
# it answers: the newest this many (a day's outage must not grow memory without end; each is
# in the transcript as said already).
MISSED_KEPT = 200
# While such lines wait for a server that answers nothing (down, unreachable) and nothing else
# is to be translated (a meeting gone quiet), the oldest is asked again after these pauses
# (growing; or when the engine says it asks the server again): they waited for another line's
# translation, for good in a meeting gone silent.
MISSED_RETRY_S = (1.0, 2.0, 4.0, 8.0, 15.0)
# At a stop they are asked once more, until this long before the stop's deadline: the stop
# waits for nothing more (a server that stalls then is given up; they stay as said).
LAST_TRY_MARGIN_S = 0.2


def what_to_do(mt: MtConfig) -> str:
    """Where the user can fix a translator that was set aside (a server has no model file to
    choose: its address or model name is what to check)."""
    if mt.uses_server:
        return "check the translation server's address and model in Settings → Translation"
    return "choose a model in Settings"


class RecognitionStopped(RuntimeError):
    """Every recogniser call failed (failures.MAX_FAILED_CALLS in a row)."""


ModelLoader = Callable[[MtConfig], Engine]  # configured with the settings it was given


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
        *,
        side: str = "",
        ids: SegmentIds | None = None,
        gate: EchoGate | None = None,
    ) -> None:
        super().__init__(name=f"asr-{side}" if side else "asr", daemon=True)
        self.source, self.recognizer = source, recognizer
        # Who speaks on this input (lines are marked with it), the pipeline's one numbering of
        # lines, and (with two inputs) the echo gate between the sides.
        self.side, self.gate = side, gate
        self._ids = ids or SegmentIds()
        self._numbering = self._ids.numbering()
        self.mailbox, self.emit, self.clock, self.metrics = mailbox, emit, clock, metrics
        self._stop_ev = stop
        self._new_source: AudioSource | None = None  # switched to at the next turn
        self._new_recognizer: Recognizer | None = None
        self._close_requested = False  # finish the open segment at the next turn
        self._retired = False  # end after that (retire())
        self._ending = False  # the pipeline stops: finish what was captured, then end (end())
        self._lock = threading.Lock()
        self._source_lock = threading.Lock()  # source start/stop: UI thread vs this thread
        self.paused = False
        self.done = threading.Event()  # set when a file source is exhausted and flushed
        self._last_level = 0.0
        self._problem = ""  # the source's trouble last reported to the user
        self._failures = FailureRun("speech recognition")
        # The recogniser's notice the user has read: the load's is said by the pipeline, one
        # it finds later (the speech in another language than the one set) here.
        self._notice = recognizer.notice
        # Captured before the input ended and not heard yet (at a stop: kept, not lost).
        self._unheard: list[AudioBlock] = []

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

    def retire(self) -> None:
        """End this input for good (meeting audio turned on or off): its open line becomes
        final, its input stops, its recogniser is released and the thread ends."""
        with self._lock:
            self._close_requested = True
            self._retired = True

    def end(self) -> None:
        """The pipeline stops (its input is stopped first): what the input captured is
        recognised, the open line becomes final, and the thread ends."""
        with self._lock:
            self._ending = True

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
            u = dataclasses.replace(
                u, emitted_at=now, side=self.side, segment_id=self._numbering(u.segment_id)
            )
            if self.gate is None:
                self._deliver(u)
            elif self.side == YOU:
                for v in self.gate.mine(u):
                    self._deliver(v)
            else:
                self._deliver(u)
                for v in self.gate.heard(u):  # the user's lines it decides
                    self._deliver(v)

    def _deliver(self, u: AsrUpdate) -> None:
        """An update to the translator (and the UI's transcript view, and the metrics)."""
        self.metrics.on_asr(u)
        self.emit(AsrEvent(u))
        self.mailbox.put(u)

    def flush_gate(self) -> None:
        """The user's finished lines the echo gate holds go on now, decided on what the
        meeting's side has said (at stop, once every side has heard what it captured)."""
        if self.gate is not None and self.side == YOU:
            for v in self.gate.flush():
                self._deliver(v)

    def _release_due(self, wait: bool = False) -> None:
        """The user's finished lines whose wait for the meeting's side is over (``wait``: all
        of them, waiting for each as long as it may: the input has ended)."""
        if self.gate is None or self.side != YOU:
            return
        while True:
            for v in self.gate.due(self.clock()):
                self._deliver(v)
            if not (wait and self.gate.holding) or self._stop_ev.wait(0.05):
                return

    def _apply_swap(self) -> None:
        with self._lock:
            if not self._close_requested:
                return
            source, recognizer = self._new_source, self._new_recognizer
            self._new_source = self._new_recognizer = None
            self._close_requested = False
        # The open segment ends here.
        self._finish_captured()
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
            old_rec, self.recognizer = self.recognizer, recognizer
            self._notice = recognizer.notice  # (its load's: said by the pipeline)
            self._numbering = self._ids.numbering()  # it numbers its lines from 0 again
            close_recognizer(old_rec)

    def _finish_captured(self) -> None:
        """The open line ends here: what a device's queue still holds was said before now and
        is recognised first (a file just goes on with the next block)."""
        captured = self._queued()
        # Behind the input, a few seconds at a time: each piece's finished lines are posted as
        # they come, and a stop that cannot wait for all of it keeps them.
        pieces: list[list[AudioBlock]] = [[]]
        held = 0.0  # seconds in the last piece
        for block in captured:
            if held >= BACKLOG_PIECE_S - 1e-6:  # (a sum of 0.1 s blocks)
                pieces.append([])
                held = 0.0
            pieces[-1].append(block)
            held += block.duration
        with self._lock:
            self._unheard = list(captured)
        for piece in pieces[:-1]:
            if self._stop_ev.is_set():
                return  # the stop's time is up: its recogniser is closed
            self._post(self._recognize(functools.partial(self._feed, piece)))
            self._heard(piece)
        self._post(self._recognize(lambda: self._feed(pieces[-1], finish=True)))
        self._heard(pieces[-1])
        if self._failures.count:  # what the failed call made comes with the next
            self._post(self._recognize(lambda: self._feed([])))

    def _heard(self, piece: list[AudioBlock]) -> None:
        """A piece of the backlog was recognised (a call the stop cut short heard nothing)."""
        if not self._stop_ev.is_set():
            with self._lock:
                del self._unheard[: len(piece)]

    def unheard(self) -> list[AudioBlock]:
        """The audio this input captured that its recogniser had not heard when the stop's
        time ran out: the backlog it had not finished, and what the input still holds."""
        with self._lock:
            blocks = list(self._unheard)
        return blocks + self._queued()

    def _queued(self) -> list[AudioBlock]:
        """What a device's queue holds now, taken out of it (a file holds nothing)."""
        blocks = []
        while self.source.live and (block := self.source.read(0.0)) is not None:
            blocks.append(block)
        return blocks

    def close(self) -> None:
        """Release the recognisers (their worker processes); safe while run() is stuck in one."""
        with self._lock:
            pending, self._new_recognizer = self._new_recognizer, None
        for r in (self.recognizer, pending):
            close_recognizer(r)

    def _feed(self, blocks: list[AudioBlock], finish: bool = False) -> list[AsrUpdate]:
        for b in blocks:
            self.recognizer.insert_audio(b)
        now = self.clock()
        return self.recognizer.finish(now) if finish else self.recognizer.process(now)

    def _recognize(self, call: Callable[[], list[AsrUpdate]]) -> list[AsrUpdate]:
        """One recogniser call; a failure costs this update, not the meeting."""
        before = self.recognizer.recognitions
        try:
            out = call()
        except Exception as e:
            if self._stop_ev.is_set():
                return []  # stopping: its worker was closed under it
            if isinstance(e, EngineLost):  # said once, with what to do (not ten times)
                raise RecognitionStopped(f"{e}; {LOST_WHAT}") from e
            verdict = self._failures.failed(e)
            if verdict is Verdict.GIVE_UP:
                raise RecognitionStopped(
                    f"the last {self._failures.count} recognitions failed ({why(e)})"
                ) from e
            if verdict is Verdict.TELL:
                self.emit(ErrorEvent("asr", f"speech recognition skipped an update ({why(e)})"))
            return []
        # Most calls only buffer audio: the run of failures ends with a recognition that worked.
        if self.recognizer.recognitions > before:
            self._failures.succeeded()
        if self.recognizer.notice != self._notice:
            self._notice = self.recognizer.notice
            if self._notice:
                self.emit(ErrorEvent("asr", self._which() + self._notice))
        return out

    def _which(self) -> str:
        """With two inputs, which of them a notice is about (the other is still heard)."""
        return {YOU: "your microphone: ", OTHERS: "the meeting's audio: "}.get(self.side, "")

    def _say_broke_off(self) -> None:
        """A replay whose file was cut short (before or while it played): said (it ended
        as if the recording had); the lines heard so far are finished as at any end."""
        # (only a file source has it: not part of the AudioSource protocol)
        if why := getattr(self.source, "broke_off", ""):
            self.emit(ErrorEvent("audio", self._which() + why))

    def _report_problem(self) -> None:
        """Tell the user once when the input goes away (it is retried) and when it is back."""
        problem = self.source.problem
        if problem == self._problem:
            return
        self._problem = problem
        which = self._which()
        if problem:
            self.emit(ErrorEvent("audio", which + problem, lasting=True))
            # What was said up to the loss is a line of its own now (it stayed open, off the
            # transcript, until the input came back or the meeting stopped).
            self._post(self._recognize(functools.partial(self._feed, [], True)))
        elif not (self._ending or self._stop_ev.is_set() or self.paused):
            # (a stop or a pause ends the retrying too: the input is not back for that)
            self.emit(StatusEvent("running", f"{which}audio input is back"))

    def run(self) -> None:
        try:
            while not self._stop_ev.is_set():
                if self._ending:
                    # (its waiting lines are decided by the stop, once the meeting's side
                    # has heard its captured audio too: a leak it still holds is caught)
                    return self._finish_captured()
                self._apply_swap()
                if self._retired:
                    return self._retire()
                self._release_due()
                block = self.source.read(0.05)
                self._report_problem()
                if block is None:
                    if self.source.exhausted:
                        self._say_broke_off()
                        self._finish_captured()
                        self._release_due(wait=True)
                        self.done.set()
                        return
                    continue
                self._post(self._recognize(functools.partial(self._feed, [block])))
                if self.gate is not None and self.side == OTHERS:
                    # The meeting's side has run this far: the user's lines waiting for it.
                    for v in self.gate.fed(block.t0 + block.duration, self.clock()):
                        self._deliver(v)
                self.metrics.set_dropped(self.side, self.source.dropped)
                now = self.clock()
                if now - self._last_level >= 0.05:
                    self._last_level = now
                    latency, lag, waiting = self.metrics.status(now)
                    self.emit(
                        LevelEvent(
                            self.source.level,
                            self.metrics.dropped_blocks,
                            latency,
                            lag,
                            waiting,
                            side=self.side,
                        )
                    )
        except RecognitionStopped as e:
            self.emit(ErrorEvent("asr", f"speech recognition stopped: {e}", fatal=True))
            self.done.set()
        except Exception as e:  # the UI must hear about it; the app stays up
            log.exception("ASR stage failed")
            self.emit(ErrorEvent("asr", f"speech recognition stopped: {e}", fatal=True))
            self.done.set()
        finally:
            if not self._ending or self._stop_ev.is_set():  # (stopping: see above)
                self.flush_gate()

    def _retire(self) -> None:
        try:
            self.pause()  # (stops the input)
        except Exception as e:  # a vanished device must not keep the new one from opening
            log.warning("audio stop: %s", e)
        self._release_due(wait=True)
        close_recognizer(self.recognizer)
        self.done.set()


def _row(side: str, lang: str) -> str:
    """An open line on screen: one per side and target language."""
    return f"{side}:{lang}" if side else lang


def close_recognizer(recognizer: Recognizer | None) -> None:
    """Release a recogniser; a failure to is logged (releasing must not stop anything)."""
    if recognizer is None:
        return
    try:
        recognizer.close()
    except Exception as e:  # releasing must not stop anything else
        log.warning("closing the recogniser: %s", e)


class TranslationStage(threading.Thread):
    """Translates the newest update of the open segment; previous translation = SSBD draft.

    With several target languages (``MtConfig.targets``) each update is translated into each
    of them in turn, each with its own streaming translator and draft on the one engine. An
    update superseded by a newer one of its segment is not translated further, so with a
    translator slower than the recogniser not every target gets every update: the target
    whose last translation is the oldest goes first, so they take turns rather than the
    first one starving the others. A final update is translated into every target.
    """

    def __init__(
        self,
        mailbox: Mailbox,
        emit: Emit,
        clock: Clock,
        metrics: LiveMetrics,
        stop: threading.Event,
        mt: MtConfig,
        transcript: TranscriptWriter | None,
        *,
        sides: dict[str, MtConfig] | None = None,
    ) -> None:
        super().__init__(name="translation", daemon=True)
        self.mailbox, self.emit, self.clock, self.metrics = mailbox, emit, clock, metrics
        self._stop_ev = stop
        self._mt = mt
        # With two inputs, each side's settings (its source and target languages); the
        # model is given ``_mt``, which translates into every side's targets.
        self._side_mt: dict[str, MtConfig] = dict(sides or {})
        self._model: Engine | None = None
        self._next_model: Engine | None = None
        self._lock = threading.Lock()
        self.lines = FinishedLines(transcript, mailbox, emit, self._side_settings)
        self.idle = threading.Event()  # set while waiting with nothing to do
        # The inputs' ends (a replay's files): the stage finishes after the last of them.
        self.asr_done: list[threading.Event] = []
        self._bad_output: tuple[int, str] | None = None  # (segment, target) told of a bad output
        # Problems of the language pair rather than of one line, said once per target.
        self._pair_said: set[tuple[str, str]] = set()
        self._failures = FailureRun("translation")
        self._unavailable_said = False  # the current outage of a server was reported
        self._unavailable = False  # the last translation found the server unavailable
        self._notice = ""  # the engine's notice the user has read (it may change mid-run)
        self.model_lost = False  # the model was set aside (crashed, or failing every time)
        # Per target language and segment not finished yet: its last translation that worked
        # (its source, its text). When a later update of that segment fails (or its final
        # waits behind newer lines), it stays on screen and is what the transcript gets for
        # the line (marked "…" if it translated less than was said).
        self._last_good: dict[str, dict[int, tuple[str, str]]] = {}
        self._finals_done: dict[str, int] = {}  # per side: the newest line translated final
        # Finished lines a server that was away could not translate, keyed (side, segment):
        # written as said at once, translated once it answers again and written again. With
        # each, ``_answers`` when it last failed: a failure after the server answered other
        # lines since is the line's own (it is not asked again).
        self._missed: OrderedDict[tuple[str, int], tuple[AsrUpdate, int]] = OrderedDict()
        self._answers = 0  # translations the engine answered (counted, never reset)
        self._missed_dropped = 0  # the oldest of them given up for newer ones (MISSED_KEPT)
        self._retry_at = 0.0  # (monotonic) when they are asked again while the server is away
        self._unreachable = False  # the last failure reached no server (EngineUnavailable)
        self._retries = 0  # retries in a row that found it away (MISSED_RETRY_S)
        self._last_try = False  # they had their last try at a replay's end
        self._end_by = 0.0  # (monotonic) the stop's deadline, once it stops (end_by)
        self._behind_said = False  # the reader was told the translator is behind
        self._on_screen = OpenLines()  # per target: what its open line shows
        self._turns = TargetTurns()
        self._glossary = Glossary()
        self._glossary_given: Glossary | None = None  # what the current model was given
        self._mt_given: MtConfig | None = None  # the settings the current model has
        self._nothing = 0  # finished lines in a row the model translated as nothing
        self._nothing_said = False  # the reader was told (once per model)

    # -- settings, from any thread ---------------------------------------------------------
    def set_mt(self, mt: MtConfig, sides: dict[str, MtConfig] | None = None) -> None:
        """New beta / method / languages: used from the next update on (``sides``: each
        side's settings, with two inputs; ``mt`` then translates into all their targets)."""
        with self._lock:
            self._mt = mt
            self._side_mt = dict(sides or {})

    def set_glossary(self, glossary: Glossary) -> None:
        """Fixed translations: used from the next update on, by this model and the next."""
        with self._lock:
            self._glossary = glossary

    def set_model(self, model: Engine) -> None:
        """A freshly loaded model: swapped in between two updates (and given the settings of
        then); the old one is closed."""
        with self._lock:
            displaced, self._next_model = self._next_model, model
            self.model_lost = False
        if displaced is not None:  # loaded but never used (no speech since): close it now
            displaced.close()

    # -- the thread ------------------------------------------------------------------------
    def _engine(self) -> tuple[Engine | None, MtConfig]:
        with self._lock:
            mt, nxt, self._next_model = self._mt, self._next_model, None
            glossary = self._glossary
        if nxt is not None:
            old, self._model = self._model, nxt
            self._glossary_given = None
            self._mt_given = None
            self._failures.reset()
            self._nothing, self._nothing_said = 0, False
            self._notice = nxt.notice  # said by the pipeline when it loaded
            if old is not None:
                old.close()
        if self._model is not None and self._glossary_given is not glossary:
            self._model.set_glossary(glossary)
            self._glossary_given = glossary
        if self._model is not None and self._mt_given is not mt:  # new settings: said once
            self._model.configure(mt)
            self._mt_given = mt
        return self._model, mt

    def _drop_model(self, message: str) -> None:
        """The model cannot go on: say why once; lines are shown as said until another one is
        chosen (a model loaded meanwhile takes over at the next update)."""
        model, self._model = self._model, None
        self._failures.reset()
        self.model_lost = True
        if model is not None:
            model.close()
        self.emit(ErrorEvent("mt", message))

    def _what_to_do(self) -> str:
        return what_to_do(self._settings())

    def _settings(self) -> MtConfig:
        with self._lock:
            return self._mt

    def _side_settings(self, side: str = "") -> MtConfig:
        """The settings of the lines of ``side`` (their languages)."""
        with self._lock:
            return self._side_mt.get(side, self._mt)

    def _emit_final(
        self, u: AsrUpdate, translations: dict[str, str], targets: tuple[str, ...]
    ) -> None:
        self.lines.finish(u, translations, targets)
        m = self.metrics.finish_segment(u.segment_id, self.metrics.dropped_blocks)
        self.emit(MetricsEvent(m))
        log.info(
            "segment %d: latency %s, abandoned %d, A/D %s",
            u.segment_id,
            [round(x, 3) for x in m.translation_latency_s],
            m.abandoned,
            m.ad,
        )

    def _show(self, ev: SubtitleEvent) -> None:
        """Emit a subtitle; the main target's whole translations feed the live metrics."""
        if ev.partial:
            pass  # a prefix: it translates part of the source, so it is no one's latency
        elif ev.extra:
            self.metrics.on_extra_translation(ev)
        else:
            self.metrics.on_translation(ev)
        self.emit(ev)

    def _show_partial(
        self, u: AsrUpdate, lang: str, target: int, r: EngineResult, whole: Sequence[str] = ()
    ) -> None:
        """A decode's prefix so far (a slow one as it goes, or one given up for a newer
        update): on screen as the open line, where it shows more than the line does now."""
        row = _row(u.side, lang)
        shown = self._on_screen.show_prefix(row, u.segment_id, r.text, r.pieces, whole)
        if shown is None:
            return
        u = dataclasses.replace(u, final=False)  # (a final update's prefix is still open)
        self._show(self._subtitle(u, lang, target, r.text, shown, r.stats, partial=True))

    def _subtitle(
        self,
        u: AsrUpdate,
        lang: str,
        target: int,
        text: str,
        shown: tuple[str, ...],
        stats: UpdateStats | None = None,
        partial: bool = False,
    ) -> SubtitleEvent:
        """The subtitle of update ``u`` in one target language, ready now."""
        return SubtitleEvent(
            u.segment_id,
            u.text,
            text,
            shown,
            u.final,
            u.emitted_at,
            self.clock(),
            u.audio_t0,
            u.audio_t1,
            stats or UpdateStats(),
            lang=lang,
            target=target,
            partial=partial,
            side=u.side,
        )

    def _keep_last_good(
        self, u: AsrUpdate, lang: str, target: int, provisional: bool = False
    ) -> str:
        """A final update that could not be translated (or, ``provisional``, that waits behind
        newer lines): the segment's last good translation stays (on screen and in the
        transcript); without one, the line as said. Returns what the transcript gets."""
        good = self._last_good.get(lang, {}).get(u.segment_id)
        if good is None or not u.final:
            return self._untranslated(u, lang, target, provisional=provisional)
        source, text = good
        translation = text if source == u.text else f"{text}…"
        return self._untranslated(u, lang, target, translation, provisional)

    def _untranslated(
        self, u: AsrUpdate, lang: str, target: int, shown: str = "", provisional: bool = False
    ) -> str:
        """An update shown without a new translation: the source is the subtitle (``shown``: what
        the line reads; empty = fall back to the source on screen). ``provisional``: a finished
        line waiting behind newer ones, shown finished as it stands (its translation replaces
        it later); like a decode's prefix, it is nobody's latency."""
        self._show(
            self._subtitle(u, lang, target, shown, (shown,) * (MAX_K + 1), partial=provisional)
        )
        return shown

    def _superseded(self, u: AsrUpdate) -> bool:
        """A newer update of the segment waits (a final one never is), or the stage stops."""
        return self._stop_ev.is_set() or (not u.final and self.mailbox.has_newer(u.segment_id))

    def _late(self, u: AsrUpdate) -> bool:
        """Is ``u`` a finished line that newer finished lines overtook (the translator is
        behind)? It is translated for the transcript and gives way to newer work."""
        return u.final and (
            u.segment_id < self._finals_done.get(u.side, -1)
            or self.mailbox.has_later_final(u.segment_id, u.side)
        )

    def _close_overtaken(self, u: AsrUpdate, targets: tuple[str, ...]) -> None:
        """Before a newer line's update is shown: an older line still open on screen whose
        final waits behind it is shown finished as it stands (its translation follows)."""
        for lang in targets:
            row = _row(u.side, lang)
            seg = self._on_screen.segment(row)
            if seg is None or seg >= u.segment_id:
                continue
            final = self.mailbox.final_of(seg)
            if final is not None:
                self._on_screen.close(row)
                self._keep_last_good(final, lang, targets.index(lang), provisional=True)

    def _say_if_behind(self) -> None:
        """Tell the reader once when finished lines start waiting behind newer ones, and
        what would keep up; again after it has caught up and fallen behind anew."""
        waiting = self.mailbox.deferred()
        # (Behind a server that does not answer, that is what was said: not that translation
        # is slower than the speech.)
        if waiting and not self._behind_said and self._model is not None and not self._unavailable:
            self._behind_said = True
            here = "" if self._settings().uses_server else " on this computer"
            what = self._what_to_do_when_behind()
            self.emit(ErrorEvent("mt", f"{BEHIND}{here}: {BEHIND_WHAT} ({what})"))
        elif not waiting and not len(self.mailbox):
            self._behind_said = False

    def _what_to_do_when_behind(self) -> str:
        if self._settings().uses_server:
            return "a faster translation server or a smaller model on it would keep up"
        return (
            "a smaller translation model or a translation server would keep up: "
            "Settings → Translation"
        )

    def translate(self, u: AsrUpdate) -> None:
        """Translate one update into every target language (fewer when it is superseded
        meanwhile); a final one also reaches the transcript, with each target's text. A
        finished line that newer ones overtook gives way to them mid-decode and is put back."""
        mt = self._side_settings(u.side)
        targets = mt.targets
        late = self._late(u)
        if not late:
            self._close_overtaken(u, targets)
        # Least recently translated first (the main target on a tie).
        order = self._turns.order(targets)
        texts: dict[str, str] = {}
        for i, lang in enumerate(order):
            if i > 0 and not u.final and self._superseded(u):
                break  # the newer update comes first (this target goes first next time)
            if late and self.mailbox.has_later(u.segment_id, u.side):
                self.mailbox.put_back(u)  # newer work first; this line when there is time
                return
            done = self._translate_into(u, lang, targets.index(lang), mt.for_target(lang), late)
            # (None for a finished line: it gave way, late or stuck)
            if done is None and u.final and self.mailbox.has_later(u.segment_id, u.side):
                self.mailbox.put_back(u)
                return
            if done is not None:
                texts[lang] = done
        if u.final:
            self._finals_done[u.side] = max(self._finals_done.get(u.side, -1), u.segment_id)
            for good in self._last_good.values():
                good.pop(u.segment_id, None)
            self._emit_final(u, texts, targets)
        self._say_if_behind()

    def _translate_into(
        self, u: AsrUpdate, lang: str, target: int, mt: MtConfig, late: bool = False
    ) -> str | None:
        """One target's translation of an update, shown; a failure costs this update of this
        target. Returns what a final line's transcript gets (None: nothing, not final, or a
        ``late`` line given up for newer work)."""
        try:
            return self._translate_one(u, lang, target, mt, late)
        except EngineGone as e:  # its process died: this model is not used again
            self._gone(e)
        except EngineUnavailable as e:  # a server down or stalled: asked again later
            log.info("translation unavailable: %s", e)
            self._away(e)
            if u.final:
                self._keep_missed(u)
            if not (self._unavailable_said or e.announced):  # once per outage
                self._unavailable_said = True
                self.emit(ErrorEvent("mt", f"translation failed: {e}"))
            if not u.final:
                # The line being said is shown as said meanwhile (it was not shown at all
                # until the server answered: nothing on screen for a whole outage).
                self._untranslated(u, lang, target)
                return None
        except Exception as e:
            self._failed(u, e)
        # What was said stays on screen and in the transcript.
        return self._keep_last_good(u, lang, target) if u.final else None

    def _translate_one(
        self,
        u: AsrUpdate,
        lang: str,
        target: int,
        mt: MtConfig,
        late: bool = False,
        prefixes: bool = True,
        until: float | None = None,
    ) -> str | None:
        engine, _ = self._engine()
        # Whisper writes "...", "-" or "?" for noise: nothing to translate (a model would
        # invent a sentence for it).
        if engine is None or not any(ch.isalnum() for ch in u.text):
            return self._untranslated(u, lang, target)
        src = u.language if u.language in LANGUAGES else mt.src_lang
        if src == lang:
            # Someone speaks the target language already: shown as said, not "translated".
            return self._untranslated(u, lang, target, u.text)

        started = time.monotonic()
        # The fixed translations of the line's terms: an open line shows each whole or not at
        # all (mask-k showed "库伯" of 库伯内特斯).
        whole = [x for _, x in present(u.text, self._glossary.translations(src, lang))]

        def abort() -> bool:
            if until is not None:  # (a last try at a stop: the stop has begun)
                return time.monotonic() >= until
            # A late line gives way to newer work (it is put back and translated later), as
            # does a finished line stuck in its decode.
            gives_way = late or (u.final and time.monotonic() - started > STUCK_S)
            return self._superseded(u) or (
                gives_way and self.mailbox.has_later(u.segment_id, u.side)
            )

        def progress(r: EngineResult) -> None:
            self._show_partial(u, lang, target, r, whole)

        t = engine.translate(
            u.segment_id,
            u.text,
            u.final,
            lang,
            src,
            should_abort=abort,
            progress=progress if prefixes else None,
        )
        # It answered (a line it was not asked about says nothing of an outage: it was said
        # twice when one fell between).
        self._failures.succeeded()
        self._unavailable_said = self._unavailable = False
        self._retries = 0
        self._answers += 1
        self._say_dropped()
        if engine.notice != self._notice:  # e.g. a server stopped returning log-probabilities
            self._notice = engine.notice
            if self._notice:
                self.emit(ErrorEvent("mt", self._notice))
        if t.stats.aborted:
            self.metrics.on_abandoned(u.segment_id)
            if u.final and (until is not None or not self._stop_ev.is_set()):
                return None  # given way to newer work (put back by translate()), or too late
            if u.final:  # stopped mid-decode: what was said still reaches the transcript
                return self._untranslated(u, lang, target)
            if mt.partial_every_s > 0:  # the prefix decoded so far is shown, not lost
                self._show_partial(u, lang, target, t, whole)
            return None
        if u.final and target == 0:
            self._count_nothing(engine, u, t, mt)
        if t.problem:
            # Not a translation (the source again, a loop): the line keeps its last good text
            # and the reader is told why, once per line. The model stays: the next update
            # may well translate.
            if self._bad_output != (u.segment_id, lang) and self._first_of_pair(t.problem, lang):
                self._bad_output = (u.segment_id, lang)
                self.emit(ErrorEvent("mt", f"a line was not translated: {t.problem}"))
            return self._keep_last_good(u, lang, target) if u.final else None
        self._turns.served(lang)
        shown = self._on_screen.show(
            _row(u.side, lang),
            u.segment_id,
            t.text,
            t.pieces,
            u.final,
            cut=t.stats.hit_cap,
            whole=whole,
        )
        self._show(self._subtitle(u, lang, target, t.text, shown, t.stats))
        if t.text and not u.final:
            self._last_good.setdefault(lang, {})[u.segment_id] = (u.text, t.text)
        return t.text

    def _first_of_pair(self, problem: str, lang: str) -> bool:
        """Is ``problem`` worth saying: any problem of a line, but one that says the model
        cannot do the language pair only the first time (it was said for every line)."""
        if not problem.startswith(ANOTHER_LANGUAGE):
            return True
        if (problem, lang) in self._pair_said:
            return False
        self._pair_said.add((problem, lang))
        return True

    def _count_nothing(self, engine: Engine, u: AsrUpdate, t: EngineResult, mt: MtConfig) -> None:
        """A model whose every finished line comes out as nothing, or one phrase over and
        over, has weights damaged where no check looks (it loads and runs): said once."""
        if sum(any(ch.isalnum() for ch in w) for w in u.text.split()) < 2:
            return  # "Hmm." may well translate as nothing
        if t.text.strip() and not t.problem:
            self._nothing = 0
            return
        if t.problem not in ("", LOOP):
            return  # an echo: a prompt problem, said per line already
        self._nothing += 1
        if self._nothing >= NOTHING_LINES and not self._nothing_said:
            self._nothing_said = True
            where = (
                "the server's model may be damaged"
                if mt.uses_server
                else "its file may be damaged (`subtitler models verify` checks it)"
            )
            self.emit(
                ErrorEvent(
                    "mt",
                    f"{engine.name} translated none of the last {self._nothing} lines (it "
                    f"wrote nothing, or one phrase over and over): {where}; {what_to_do(mt)}",
                )
            )

    def run(self) -> None:
        while not self._stop_ev.is_set():
            u = self.lines.next_update(timeout=0.05)
            ended = bool(self.asr_done) and all(e.is_set() for e in self.asr_done)
            if u is None and self._missed_due(ended):
                self.idle.clear()  # (nothing newer waits: the server's time is theirs now)
                self._translate_missed()
                continue
            if u is None:
                self.idle.set()
                if ended and not len(self.mailbox):
                    self._say_dropped()
                    self.emit(StatusEvent("finished", "replay finished"))
                    return
                continue
            self.idle.clear()
            try:
                self.translate(u)
            finally:
                self.lines.done()
        self._say_dropped()
        self.lines.keep_queued()
        self._last_chance()

    def end_by(self, deadline: float) -> None:
        """The pipeline stops by ``deadline`` (monotonic): lines the server missed get a last
        try after the halt, until shortly before it (``_last_chance``)."""
        self._end_by = deadline

    def _last_chance(self) -> None:
        """At a stop, lines finished while the server was away are asked once more, oldest
        first, before the transcript is sealed: a server back during its pause (or in a
        meeting too short for it to be asked again) left them as said. Until LAST_TRY_MARGIN_S
        before the stop's deadline, and no further than a line it is away for again."""
        until = self._end_by - LAST_TRY_MARGIN_S
        while self._missed and self._model is not None and time.monotonic() < until:
            if not self._translate_missed(until):
                return

    def _missed_due(self, ended: bool) -> bool:
        """Is a line finished while the server was away to be asked again now (nothing else
        waits)? At once when the server answers again; while it is away, after a pause
        (MISSED_RETRY_S, or as long as the engine pauses); at a replay's end (``ended``) once
        more at once, whatever the pause."""
        if not self._missed or self._model is None:
            return False
        if ended and not self._last_try:
            self._last_try = True
            return True
        if not self._unavailable:
            return True
        # A server that answered with a failure may fail on that line alone: asked again as
        # before, once it translates another (asked over and over while the meeting was quiet,
        # each failure lengthened its pause, and the next line said found it refused).
        return self._unreachable and time.monotonic() >= self._retry_at

    def _away(self, e: EngineUnavailable) -> None:
        """The server did not answer: lines it misses are asked again after a pause."""
        self._unavailable = True
        self._unreachable = e.unreachable
        self._retries += 1
        pause = MISSED_RETRY_S[min(self._retries, len(MISSED_RETRY_S)) - 1]
        self._retry_at = time.monotonic() + (e.retry_in or pause)

    def _keep_missed(self, u: AsrUpdate) -> None:
        """A finished line the server could not translate, to translate once it answers: the
        newest MISSED_KEPT are kept (the oldest stay as said in the transcript)."""
        self._missed[(u.side, u.segment_id)] = (u, self._answers)
        while len(self._missed) > MISSED_KEPT:
            # The lowest segment id is the oldest line on either side: both inputs' lines share
            # one numbering, in the order they were heard (sides.SegmentIds); the order kept
            # is not it (a line asked again goes to the back).
            del self._missed[min(self._missed, key=lambda key: key[1])]
            self._missed_dropped += 1

    def _say_dropped(self) -> None:
        """Say once how many lines of an outage stay untranslated (MISSED_KEPT)."""
        if not self._missed_dropped:
            return
        n, self._missed_dropped = self._missed_dropped, 0
        self.emit(
            ErrorEvent(
                "mt",
                f"{n} line(s) finished while the translation server was away stay untranslated "
                f"in the transcript: only the last {MISSED_KEPT} are translated once it answers",
            )
        )

    def _gone(self, e: EngineGone) -> None:
        log.warning("translation engine gone: %s", e)
        self._drop_model(f"{e}; showing the transcript only ({self._what_to_do()})")

    def _translate_missed(self, until: float | None = None) -> bool:
        """The oldest line finished while the server was away, translated now that it answers:
        shown, and written to the transcript again (its later record is the one read). A
        failure of the line (or one after the server answered other lines since it was missed)
        leaves it as written, unsaid: a server failing on that very line would fail it at
        every turn. One the server is still away for waits behind the others (a line it can
        never take, too long for its context, holds none of them back); one that gives way
        to newer work waits for its turn. ``until`` (monotonic; at a stop): the
        decode is given up then, and nothing else makes it give way. False: the line waits
        (the server is away, or newer work came first)."""
        key, (u, answers) = self._missed.popitem(last=False)
        answered_since = answers != self._answers
        mt = self._side_settings(u.side)
        texts: dict[str, str] = {}
        for i, lang in enumerate(mt.targets):
            try:
                # (No prefixes: a line finished long ago is shown again only translated.)
                done = self._translate_one(
                    u, lang, i, mt.for_target(lang), True, False, until=until
                )
            except EngineGone as e:
                self._gone(e)
                return False
            except EngineUnavailable as e:
                self._away(e)
                if answered_since or not e.unreachable:  # (it may fail on this line alone)
                    log.info("line %d not translated again: %s", u.segment_id, e)
                    return False
                log.debug("line %d not translated again: %s", u.segment_id, e)
                self._missed[key] = (u, answers)  # still away: asked again after a pause
                return False
            except Exception as e:  # failing on this line
                self._unavailable = False
                log.info("line %d not translated again: %s", u.segment_id, e)
                return True
            if done is None:  # newer work came first (or the stop's time ran out)
                self._missed[key] = (u, answers)
                self._missed.move_to_end(key, last=False)
                return False
            texts[lang] = done
        self.lines.finish(u, texts, mt.targets)
        return True

    def _failed(self, u: AsrUpdate, e: Exception) -> None:
        """One failed translation costs this update (of this target); a model failing every
        time is set aside."""
        verdict = self._failures.failed(e, line=u.segment_id)
        if verdict is Verdict.GIVE_UP:
            self._drop_model(
                f"translation stopped: the last {self._failures.count} translations failed "
                f"({why(e)}); showing the transcript only ({self._what_to_do()})"
            )
        elif verdict is Verdict.TELL:  # once per line: a failing line is retried every update
            self.emit(ErrorEvent("mt", f"translation failed: {e}"))

    def seal(self) -> None:
        """At stop, from the stopping thread: see FinishedLines.seal."""
        self.lines.seal()

    def close(self) -> None:
        with self._lock:
            models = [m for m in (self._model, self._next_model) if m is not None]
            self._model = self._next_model = None
        for m in models:
            m.close()
