"""Start, pause, resume and stop the audio -> ASR -> translation pipeline; change settings live."""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from subtitler.asr.engine import Recognizer
from subtitler.audio.source import AudioSource, Clock
from subtitler.audio.wav_file import write_wav
from subtitler.config import AppConfig, AsrConfig, AudioConfig, MtConfig, reload_fields
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.clock import StreamClock
from subtitler.pipeline.echo import EchoGate
from subtitler.pipeline.events import (
    ErrorEvent,
    Event,
    PipelineState,
    StatusEvent,
    TranslatorEvent,
)
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.metrics import LiveMetrics
from subtitler.pipeline.sides import (
    SAME_INPUT,
    SegmentIds,
    Side,
    engine_settings,
    same_input,
    sides_of,
)
from subtitler.pipeline.stages import AsrStage, ModelLoader, TranslationStage, close_recognizer
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter, latest
from subtitler.types import OTHERS

log = logging.getLogger(__name__)
T = TypeVar("T")

RETIRE_S = 5.0  # how long an input's stage may take to finish its open line when it ends
# Of stop()'s time, what the translator and the rest keep to end once the inputs' stages have
# recognised what was captured and made their open lines final.
HALT_S = 0.5
# Settings whose change needs the translation model loaded again (declared with reload=True).
MODEL_FIELDS = reload_fields(MtConfig)


@dataclass
class Factories:
    """How the pipeline makes its parts (real ones in subtitler.pipeline.factories)."""

    audio: Callable[[AudioConfig, Clock], AudioSource]
    recognizer: Callable[[AsrConfig], Recognizer]
    model: ModelLoader


class Pipeline:
    def __init__(
        self,
        config: AppConfig,
        on_event: Callable[[Event], None],
        factories: Factories,
        *,
        speed: float = 1.0,
        transcript_path: Path | None = None,
        echo_gate: bool = True,
        rescue_dirs: tuple[Path, ...] = (),
        keep_measures: bool = True,
    ) -> None:
        """``echo_gate`` False: the microphone's lines are kept even where they repeat the
        meeting's audio (what the gate is measured against). ``rescue_dirs``: where the
        transcript goes at the stop when its lines could not be written (the first that
        takes it). ``keep_measures`` False: the run's measurements are not kept for a
        summary (:class:`LiveMetrics`' ``keep_all``: the app's meeting may last all day)."""
        self.config = config
        self._echo_gate = echo_gate
        self.emit = on_event
        self.factories = factories
        self.clock = StreamClock(speed)
        self.metrics = LiveMetrics(keep_all=keep_measures)
        self.mailbox = Mailbox()
        self._stop = threading.Event()  # set at stop(): nothing starts or changes any more
        # Set once the inputs' stages have ended (or had their time) at stop(): the stages'
        # threads end, a decode in progress gives way.
        self._halt = threading.Event()
        self._transcript = (
            TranscriptWriter(transcript_path, rescue_dirs) if transcript_path else None
        )
        self.transcript_path = transcript_path
        # One ASR stage per input (side), started together; lines share one numbering, and
        # with two inputs the echo gate keeps the meeting's audio heard by the microphone
        # from being the user's line too.
        self._sides = sides_of(config)
        self._asrs: list[AsrStage] = []
        self._ids = SegmentIds()
        self._gate = self._new_gate(self._sides)
        self._mt = TranslationStage(
            self.mailbox,
            self._emit_and_watch,
            self.clock,
            self.metrics,
            self._halt,
            engine_settings(self._sides),
            self._transcript,
            sides=self._side_settings(self._sides),
        )
        self._boot: threading.Thread | None = None
        self._loaders: list[threading.Thread] = []
        # The lifecycle has one owner: the commands that change it (start-up's last step,
        # pause, resume, stop's look at what runs) queue up for one thread and run there one
        # after the other, whichever thread asked. ``state`` changes only in _set_state (and
        # to FINISHED when the replay ends).
        self.state = PipelineState.STOPPED
        self.finished = threading.Event()
        self._load_lock = threading.Lock()
        self._commands: queue.SimpleQueue[tuple[Callable[[], Any], list[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._owner = threading.Thread(target=self._run_commands, name="pipeline", daemon=True)
        self._queue_lock = threading.Lock()  # nothing is queued after stop's last command
        self._closed = False
        self._load_seq = 0  # the newest model load asked for; older ones are thrown away
        # Whether lines are translated (None: not known yet), said with a TranslatorEvent
        # when it changes.
        self._translator: TranslatorEvent | None = None
        self._translator_lock = threading.Lock()
        self.glossary = Glossary()

    @property
    def transcript_records(self) -> list[SegmentRecord]:
        """This run's finished lines, also those the disk did not take."""
        return latest(self._transcript.records) if self._transcript is not None else []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Load models in the background, then start audio; returns at once."""
        if self._boot is not None:
            raise RuntimeError("a pipeline starts once")
        self._set_state(PipelineState.LOADING, "loading models")
        if same := same_input(self.config.audio):
            self.emit(ErrorEvent("audio", SAME_INPUT.format(same)))
        self._owner.start()
        self._boot = threading.Thread(target=self._bootstrap, name="pipeline-start", daemon=True)
        self._boot.start()

    def _run_commands(self) -> None:
        """The lifecycle's owner: runs each command in the order they came; ends after stop."""
        while (item := self._commands.get()) is not None:
            fn, box = item
            try:
                box.append(fn())
            except BaseException as e:  # handed back to the caller
                box.append(e)
            finally:
                done = box[0]
                done.set()

    def _command(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the lifecycle's thread after the commands before it, and wait."""
        done = threading.Event()
        box: list[Any] = [done]
        with self._queue_lock:
            queued = threading.current_thread() is not self._owner and (
                self._owner.is_alive() and not self._closed
            )
            if queued:
                self._commands.put((fn, box))
        if not queued:
            return fn()  # on the owner, or before start / after stop (nothing to race with)
        done.wait()
        if isinstance(box[1], BaseException):
            raise box[1]
        return box[1]  # type: ignore[no-any-return]

    def _new_gate(self, sides: tuple[Side, ...]) -> EchoGate | None:
        return EchoGate() if len(sides) > 1 and self._echo_gate else None

    @staticmethod
    def _side_settings(sides: tuple[Side, ...]) -> dict[str, MtConfig]:
        return {s.name: s.mt for s in sides} if len(sides) > 1 else {}

    @property
    def echoes_dropped(self) -> int:
        """Lines of the microphone dropped as the meeting's audio heard through it."""
        return self._gate.dropped if self._gate is not None else 0

    @property
    def echoes_cleaned(self) -> int:
        """Lines of the microphone that kept the user's words, the meeting's cut out."""
        return self._gate.cleaned if self._gate is not None else 0

    def _bootstrap(self) -> None:
        cfg = self.config
        if cfg.mt.translator_chosen:
            self._load_model(engine_settings(self._sides), self._next_load())
        else:
            missing = (
                "no translation server address given: subtitles show the transcript only "
                "(give its address in Settings → Translation)"
                if cfg.mt.uses_server
                else "no translation model chosen: subtitles show the "
                "transcript only (choose one in Settings)"
            )
            self.emit(ErrorEvent("mt", missing))
            self._say_translator(False, missing)
        if self._stop.is_set():
            return
        # Settings applied while the model loaded: audio and speech use the newest ones.
        cfg = self.config
        self._sides = sides = sides_of(cfg)
        made: list[tuple[Side, AudioSource, Recognizer]] = []
        for side in sides:
            try:
                made.append(self._make_input(side))
            except _InputFailed as e:
                if len(sides) == 1:
                    return self._fail(e.where, e.error)
                self._side_lost(side, e.where, e.error)
        if not made:
            return self._fail("audio", RuntimeError("no input could be opened"))
        # A command: a stop() or pause() asked meanwhile comes after it and finds the stages
        # to act on (or, if it came first, nothing is started at all).
        if not self._command(lambda: self._open_inputs(made)):
            return None
        # Input or speech settings applied while this was starting up.
        now = self.config
        if now.audio != cfg.audio or now.asr != cfg.asr or now.mt != cfg.mt:
            self._apply_inputs(cfg, now)

    def _make_input(self, side: Side) -> tuple[Side, AudioSource, Recognizer]:
        """One side's recogniser and input (not started); raises _InputFailed."""
        try:
            recognizer = self.factories.recognizer(side.asr)
        except Exception as e:
            raise _InputFailed("asr", e) from e
        self._say_load_notice(recognizer)
        self._give_hotwords(recognizer, side.asr)
        try:
            source = self.factories.audio(side.audio, self.clock)
        except Exception as e:
            close_recognizer(recognizer)
            raise _InputFailed("audio", e) from e
        return side, source, recognizer

    def _side_lost(self, side: Side, where: str, e: Exception) -> None:
        """One of two inputs could not start: the other goes on alone, and the user is told."""
        log.info("%s input failed (%s): %s", side.name, where, e)
        what = "the meeting's audio" if side.name == OTHERS else "your microphone"
        self.emit(ErrorEvent(where, f"{what} is not heard: {e}"))

    def _stage(self, side: Side, source: AudioSource, recognizer: Recognizer) -> AsrStage:
        return AsrStage(
            source,
            recognizer,
            self.mailbox,
            self.emit,
            self.clock,
            self.metrics,
            self._halt,
            side=side.name,
            ids=self._ids,
            gate=self._gate,
        )

    def _open_inputs(self, made: list[tuple[Side, AudioSource, Recognizer]]) -> bool:
        """Start-up's last step (a command): the inputs open, the stages start."""
        if self._stop.is_set():
            for _, _, rec in made:
                close_recognizer(rec)
            return False
        self.clock.reset()
        try:
            stages = self._open_sources(made)
        except Exception as e:
            self._fail("audio", e)
            return False
        self._asrs = stages
        self._mt.asr_done = [a.done for a in stages]
        self._mt.start()
        for a in stages:
            a.start()
        self._set_state(PipelineState.RUNNING)
        return True

    def _open_sources(self, made: list[tuple[Side, AudioSource, Recognizer]]) -> list[AsrStage]:
        """Each side's input started and its stage made (not started). Of two, one that cannot
        start is said and left out; raises what the only one (or the last) said."""
        stages: list[AsrStage] = []
        for side, source, recognizer in made:
            try:
                source.start()
            except Exception as e:
                close_recognizer(recognizer)
                if len(made) == 1:
                    raise
                self._side_lost(side, "audio", e)
                continue
            stages.append(self._stage(side, source, recognizer))
        if not stages:
            raise RuntimeError("no input could be opened")
        return stages

    def _fail(self, where: str, e: Exception) -> None:
        """A part could not start: tell the user, and stop (the app stays up)."""
        log.info("start failed (%s): %s", where, e)
        self.emit(ErrorEvent(where, str(e), fatal=True))
        self._set_state(PipelineState.STOPPED, str(e))
        self.finished.set()

    def _emit_and_watch(self, ev: Event) -> None:
        """The translation stage's events: passed on, and watched for the end of a replay
        and for a model the stage set aside (then lines are not translated any more)."""
        self.emit(ev)
        if isinstance(ev, ErrorEvent) and ev.where == "mt" and self._mt.model_lost:
            self._say_translator(False, ev.message)
        if isinstance(ev, StatusEvent) and ev.state == PipelineState.FINISHED:
            self.state = PipelineState.FINISHED
            self.finished.set()

    def _next_load(self) -> int:
        with self._load_lock:
            self._load_seq += 1
            return self._load_seq

    def _load_model(self, mt: MtConfig, seq: int) -> bool:
        """Load in this thread; only the newest of several overlapping loads is used."""
        try:
            model = self.factories.model(mt)
        except Exception as e:
            log.info("translation model failed to load: %s", e)
            if seq == self._load_seq:
                self.emit(ErrorEvent("mt", str(e)))
                with self._translator_lock:
                    translating = self._translator is not None and self._translator.on
                if not translating:  # (else the model in use goes on)
                    self._say_translator(False, str(e))
            return False
        with self._load_lock:
            stale = self._stop.is_set() or seq != self._load_seq
            if not stale:
                self._mt.set_model(model)
        if stale:  # stopped meanwhile, or other settings were applied while it loaded
            model.close()
            return False
        self._say_translator(True)
        if model.notice:
            self.emit(ErrorEvent("mt", model.notice))
        return True

    def _say_translator(self, on: bool, why: str = "") -> None:
        """Whether lines are translated, said when it changes (from any thread)."""
        ev = TranslatorEvent(on, "" if on else why)
        with self._translator_lock:  # (said under it: in the order it changed)
            if ev != self._translator:
                self._translator = ev
                self.emit(ev)

    def pause(self) -> None:
        self._command(self._pause)

    def _pause(self) -> None:
        if self.state != PipelineState.RUNNING or not self._asrs:
            return
        for asr in self._asrs:
            asr.pause()
            if asr.source.live:
                # The sentence being spoken is cut here: show it as final now rather than
                # join it to whatever is said after the pause.
                asr.close_segment()
        self.clock.pause()
        self._set_state(PipelineState.PAUSED)

    def resume(self) -> None:
        self._command(self._resume)

    def _resume(self) -> None:
        if self.state != PipelineState.PAUSED or not self._asrs or self._stop.is_set():
            return
        started: list[AsrStage] = []
        for asr in self._asrs:
            try:
                asr.resume()
            except Exception as e:  # unplugged while paused: stay paused, say why
                log.warning("resume failed: %s", e)
                self.emit(ErrorEvent("audio", f"cannot resume: {e}"))
                for a in started:
                    a.pause()
                return
            started.append(asr)
        self.clock.resume()
        self._set_state(PipelineState.RUNNING)

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop every thread; True when all joined within ``timeout`` seconds.

        The inputs stop at once; what they captured before is still recognised and each
        open line becomes final (the sentence being said when the user quits is in the
        transcript), in all but HALT_S of the time: a recogniser still busy then is closed
        under its call, and what it had not heard yet is lost."""
        deadline = time.monotonic() + timeout
        self._stop.set()
        self._mt.end_by(deadline)  # (lines a translation server missed: a last try by then)
        # A command: waits for inputs that are being opened right now.
        asrs = self._command(lambda: list(self._asrs))
        with self._queue_lock:
            if not self._closed and self._owner.is_alive():
                self._commands.put(None)  # the owner's last command
            self._closed = True
        threads = [t for t in (self._boot, *asrs, self._mt, *self._loaders) if t is not None]
        if self._owner.ident is not None:  # (started)
            threads.append(self._owner)
        for asr in asrs:
            try:
                asr.pause()  # stops the input, and keeps a pending switch from starting one
            except Exception as e:  # a vanished device must not block shutdown
                log.warning("audio stop: %s", e)
            asr.end()
        for asr in asrs:
            if asr.is_alive() and asr is not threading.current_thread():
                asr.join(max(0.0, deadline - HALT_S - time.monotonic()))
        if any(asr.is_alive() for asr in asrs):
            log.warning("stop: speech recognition did not finish the audio captured in time")
        for asr in asrs:  # (before the mailbox closes)
            asr.flush_gate()
        self._halt.set()
        self.mailbox.close()
        for t in threads:
            if t.is_alive() and t is not threading.current_thread():
                t.join(max(0.0, deadline - time.monotonic()))
        ok = not any(t.is_alive() for t in threads)
        # A decode still running (one long native call) must not cost the finished lines:
        # they are written now, source text at least, and nothing after.
        self._mt.seal()
        for asr in asrs:
            asr.close()  # ends a recogniser process still busy with the last window
        self._keep_unheard(asrs)
        if not self._mt.is_alive():
            self._mt.close()
        if self._transcript is not None:
            self._transcript.close()
            if (kept := self._transcript.rescued) is not None:
                self.emit(
                    ErrorEvent(
                        "transcript",
                        f"the transcript could not be written to {self._transcript.path.parent}:"
                        f" the meeting's lines are kept in {kept}",
                    )
                )
        self._set_state(PipelineState.STOPPED)
        self.finished.set()
        return ok

    def _keep_unheard(self, asrs: list[AsrStage]) -> None:
        """What an input captured and its recogniser had not heard when the stop's time ran
        out is written beside the transcript (NAME.unheard.wav, a side's NAME.unheard-SIDE.wav),
        to be played again with ``--replay``: the stop does not wait for it, and it is not
        lost."""
        if self.transcript_path is None:
            return
        for asr in asrs:
            blocks = asr.unheard()
            if not blocks:
                continue
            suffix = f".unheard-{asr.side}.wav" if asr.side else ".unheard.wav"
            path = self.transcript_path.with_name(self.transcript_path.stem + suffix)
            try:
                seconds = write_wav(path, blocks)
            except OSError as e:
                log.warning("stop: the audio not heard in time could not be kept: %s", e)
            else:
                log.warning("stop: %.1f s of audio not heard in time kept in %s", seconds, path)

    # -- live settings ---------------------------------------------------------------------
    def set_glossary(self, glossary: Glossary) -> None:
        """Glossary terms and translations, applied from the next update (no model reload)."""
        self.glossary = glossary
        self._mt.set_glossary(glossary)
        for asr in list(self._asrs):
            self._give_hotwords(asr.recognizer, self._side(asr.side).asr)

    def _say_load_notice(self, recognizer: Recognizer) -> None:
        """What the speech model's load found for the user (its first-load test: weights
        that recognise no word of a clip of speech), as the translator's notice is said."""
        if recognizer.notice:
            log.warning("%s", recognizer.notice)
            self.emit(ErrorEvent("asr", recognizer.notice))

    def _give_hotwords(self, recognizer: Recognizer, asr: AsrConfig) -> None:
        recognizer.set_hotwords(self.glossary.hotwords(asr.language))

    def _side(self, name: str) -> Side:
        return next((s for s in self._sides if s.name == name), self._sides[0])

    def apply_config(self, new: AppConfig) -> None:
        """Take new settings without a restart: beta/method/languages from the next update,
        models reloaded in the background (the old ones keep working until then), audio
        source and ASR swapped at the next block."""
        old, self.config = self.config, new
        engine = engine_settings(sides_of(new))
        self._mt.set_mt(engine, self._side_settings(sides_of(new)))
        changed = any(getattr(old.mt, f) != getattr(new.mt, f) for f in MODEL_FIELDS)
        # A model set aside (its engine crashed) is loaded again when settings are applied.
        if changed or (self._mt.model_lost and new.mt.translator_chosen):
            seq = self._next_load()
            self._in_background(lambda: self._load_model(engine, seq), "mt-reload")
        if self._asrs and (old.audio != new.audio or old.asr != new.asr or old.mt != new.mt):
            self._in_background(lambda: self._apply_inputs(old, new), "asr-reload")

    def _apply_inputs(self, old: AppConfig, new: AppConfig) -> None:
        """New input or speech settings: each side's input and recogniser swapped where they
        changed. Meeting audio turned on or off changes which sides there are: the inputs
        heard so far end their open lines and give way to the new ones."""
        before, after = sides_of(old), sides_of(new)
        if [s.name for s in before] != [s.name for s in after]:
            return self._resides(after)
        self._sides = after
        for b, a in zip(before, after, strict=True):
            stage = next((x for x in self._asrs if x.side == a.name), None)
            if stage is not None and (b.audio != a.audio or b.asr != a.asr):
                self._swap_asr(stage, a, b.audio != a.audio, b.asr != a.asr)

    def _resides(self, sides: tuple[Side, ...]) -> None:
        """Meeting audio turned on or off: new stages for the new sides (their models loaded
        first: the speech model is shared, so this loads nothing new), then the old ones end
        their open lines and stop, and the new ones start."""
        made: list[tuple[Side, AudioSource, Recognizer]] = []
        for side in sides:
            try:
                made.append(self._make_input(side))
            except _InputFailed as e:
                self._side_lost(side, e.where, e.error)
        if not made:
            self.emit(ErrorEvent("audio", "no new input could be opened (kept the previous)"))
            return
        self._command(lambda: self._switch_sides(sides, made))

    def _switch_sides(
        self, sides: tuple[Side, ...], made: list[tuple[Side, AudioSource, Recognizer]]
    ) -> None:
        """(A command.) The old stages end, the new start (paused if the pipeline is)."""
        if self._stop.is_set() or self.state not in (PipelineState.RUNNING, PipelineState.PAUSED):
            for _, _, rec in made:
                close_recognizer(rec)
            return
        for old in self._asrs:
            old.retire()  # its open line ends, its input stops (the device may be reused)
        for old in self._asrs:
            old.join(RETIRE_S)
        self._sides = sides
        self._gate = self._new_gate(sides)
        try:
            stages = self._open_sources(made)
        except Exception as e:  # the app stays up; the user chooses another input
            self.emit(ErrorEvent("audio", f"no input is heard: {e}"))
            stages = []
        for stage in stages:
            stage.start()
            if self.state == PipelineState.PAUSED:
                stage.pause()
        self._asrs = stages
        self._mt.asr_done = [a.done for a in stages]

    def _swap_asr(self, stage: AsrStage, side: Side, audio: bool, asr: bool) -> None:
        try:
            rec = self.factories.recognizer(side.asr) if asr else None
            src = self.factories.audio(side.audio, self.clock) if audio else None
        except Exception as e:
            self.emit(ErrorEvent("audio" if audio else "asr", f"{e} (kept the previous one)"))
            return
        if rec is not None:
            self._say_load_notice(rec)
            self._give_hotwords(rec, side.asr)
        stage.swap(src, rec)

    def _in_background(self, fn: Callable[[], object], name: str) -> None:
        t = threading.Thread(target=fn, name=name, daemon=True)
        self._loaders = [x for x in self._loaders if x.is_alive()] + [t]
        t.start()

    def _set_state(self, state: PipelineState, message: str = "") -> None:
        self.state = state
        self.emit(StatusEvent(state, message))


class _InputFailed(Exception):
    """One side's recogniser (``where`` "asr") or input ("audio") could not be made."""

    def __init__(self, where: str, error: Exception) -> None:
        super().__init__(str(error))
        self.where, self.error = where, error


def replace_mt(cfg: AppConfig, **changes: object) -> AppConfig:
    """A copy of ``cfg`` with MtConfig fields changed."""
    return dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, **changes))  # type: ignore[arg-type]
