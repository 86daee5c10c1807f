"""The streaming policy: LocalAgreement-2 over a rolling buffer, pure and clock-free.

Insert audio, then ask for updates, passing the stream-clock time as data; the same object
serves the live ASR thread, the replay tool and the tests (after whisper_streaming's
``OnlineASRProcessor``). Words are committed once two consecutive hypotheses agree on them,
at the end of an utterance too (a second pass confirms what the last one heard first);
committed text is split into sentences, each sentence is one segment. A word away from
speech (by the VAD; a word Whisper is sure of may lie half a second from it) is not taken from
any hypothesis. An utterance's window starts on the words committed in the seconds before it
(their text is the prefix), so that a short utterance after a pause is heard in context, as
offline decoding hears it; it also takes in the pause before it where Silero doubted a voice
there (a drawled span of spontaneous speech scores under speech).

The cadence adapts to compute: the recogniser runs again once ``chunk_s`` of new audio is
in, where ``chunk_s`` is its recent cost divided by ``duty`` (the share of time it may keep
its cores busy), never below ``min_chunk_s`` nor above ``max_chunk_s``. A fast machine runs
every ``min_chunk_s``; a slow one runs less often on longer chunks, so it does not fall
further and further behind. Only the cost is measured (``cost_clock``); stream time is
still passed in as data.
"""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from subtitler.asr.backend import (
    MIN_WINDOW_S,
    SAMPLE_RATE,
    AsrBackend,
    Hypothesis,
    LanguageRanker,
    Samples,
)
from subtitler.asr.language import LanguageBelief, SetLanguageCheck, combined, likeliest
from subtitler.asr.sentences import ends_sentence, join_words
from subtitler.asr.vad import SpeechProbabilities, UtteranceDetector, VadEvent, VadOptions
from subtitler.config import AsrConfig
from subtitler.mt.languages import LANGUAGES
from subtitler.types import AsrUpdate, AudioBlock, EngineGone, Word

log = logging.getLogger(__name__)

_GAP_S = 0.05  # a block starting this much after the previous one ends marks lost audio
_MAX_OVERLAP_WORDS = 5  # longest re-recognised tail of committed text that is removed
_SPOKEN = re.compile(r"\w")  # a word holds at least one letter or digit (any script)
_CLAUSE_MARKS = (",", ";", ":", "，", "、", "；", "：")
# A word is taken from a hypothesis only where it lies within _NEAR_S of speech frames; one
# Whisper is at least _SURE_P sure of, within _SURE_NEAR_S. Silero can mark a soft word
# between louder ones silence (tiny.en 0.99 sure of the MFA speaker's fourth "word" in "word
# word word word word", a "But" after a pause): chosen on the development set's tune split
# (docs/benchmarks/asr.md, session I); what Whisper writes in a pause lies further from speech.
_NEAR_S = 0.1
_SURE_NEAR_S = 0.5
_SURE_P = 0.5
# Speech after the last committed word, before an utterance, that is more than the end of a
# word the aligner cut short: words of the utterance before that were never committed.
_UNCOMMITTED_S = 0.3
# An utterance's speech that a window looking back on the words before must hear something
# of; if it hears nothing, the utterance is heard alone.
_UNHEARD_S = 1.0
# Words after the prefix that lie on this much of the committed words' audio hear them again;
# less is the aligner squeezing a short new word against the prefix ("of the household":
# "the" given 0.02 s inside "of"; docs/benchmarks/asr.md, session Y).
_HEARD_AGAIN_S = 0.5


@dataclass(frozen=True)
class StreamingOptions:
    """Policy settings (a subset of AsrConfig, so tests can build them directly)."""

    min_chunk_s: float = 0.5  # shortest cadence: new audio needed before the next run
    max_chunk_s: float = 3.0  # longest cadence, however slow the recogniser
    adaptive: bool = True  # cadence from the measured cost (False: always min_chunk_s)
    # Share of the time the recogniser may be busy when adapting: it has cores of its own
    # (the planner gives the translator the others). Where a call costs 0.63 s (Whisper base
    # on one thread here), 0.85 against 0.5 took display latency p50 from 2.12 to 1.41 s and
    # commit delay from 3.26 to 2.38 s, WER 27.0% against 27.4% (docs/benchmarks/asr.md,
    # session S); a machine that runs every min_chunk_s either way is unchanged.
    duty: float = 0.85
    # A word that ended less than this before the end of the window may be cut off there
    # ("there" of "therefore"), or carry the full stop Whisper puts where the audio stops:
    # a run before the end of the utterance does not commit it yet.
    tail_guard_s: float = 0.5
    buffer_trim_s: float = 15.0  # the recognised window never grows beyond this
    # Finished sentences stay in the window (as context, passed as the prefix) until it is
    # longer than this; then it starts after the latest one.
    context_s: float = 8.0
    # An utterance's window starts this much earlier, on the committed words said just
    # before it (their text is the prefix): a short utterance is heard with the voice and
    # words around it, as offline decoding hears it, not alone.
    lookback_s: float = 8.0
    # A pause of up to bridge_s after the last committed word, in which Silero doubted at
    # least bridge_doubt_s of frames (a voice it scores under speech: a drawled or soft span
    # of spontaneous speech), is recognised with the utterance after it: the window starts
    # on that word's end. The pauses of the tune split's readers had at most 0.1 s of such
    # frames, a pause of hesitations 0.23 s (docs/benchmarks/asr.md, session N).
    bridge_s: float = 3.0
    bridge_doubt_s: float = 0.25
    vad: bool = True  # skip silence and end utterances with Silero VAD
    silence_end_s: float = 0.8  # silence that ends an utterance
    speech_pad_s: float = 0.2  # audio kept before speech starts and after it ends
    language: str | None = None  # fixed language, or None to detect once per utterance
    # Detection needs speech to go on: an utterance's language is decided on its first
    # window with this much speech (or its last, if shorter), with what the utterances before
    # said (asr/language.py); until then it is recognised in theirs. On a second or less,
    # Whisper base named a different language for nearly every Dutch line of the development
    # set and wrote English.
    language_speech_s: float = 2.0
    # With a backend that can rank any audio (LanguageRanker), that decision weighs the
    # languages of the stream's last language_context_s (this line and those before it,
    # pauses included) with the line's own window, which counts once per language_speech_s
    # of its speech: a 1-2 s line alone is often named wrong (the Dutch actors' lines as
    # Portuguese, Greek, Hindi), and the stream alone keeps a new language out (a 15 s
    # Spanish reading after Dutch, written in Dutch). Wrong decisions on the development
    # set with Whisper base: 8 of 78 -> 4 (tune split), 5 of 53 -> 2 (report split);
    # docs/benchmarks/asr.md, session U.
    language_context_s: float = 12.0
    prompt_chars: int = 200  # committed text handed to the recogniser as its prompt
    # A speaker who never ends a sentence still gets readable lines (and translations that
    # fit the model's context): a segment ends at a clause mark after clause_words words, and
    # in any case after max_words.
    clause_words: int = 24
    max_words: int = 40
    # A line none of whose words were committed before its end (a short line: its words
    # wait for its language; or one whose passes never agreed) is heard at its end once, in
    # a window over up to hear_before_s of the committed speech before it and without a
    # prefix, as offline decoding hears a line among those around it; the words on its own
    # audio are committed. Whisper base heard the development set's Dutch lines 10-11
    # points better with ten seconds before them than alone (asr.md, session AB); in the
    # stream the words before as a prefix carried their errors, and the two passes that must
    # agree heard the line alone (sessions X, AA). Measured: asr.md, session AC.
    hear_before_s: float = 10.0
    # Where the language is detected (no language set, a multilingual model), a line's words
    # wait until it has this much speech: a shorter one is heard at its end over the speech
    # before it (hear_before_s) as a whole, not committed in pieces its own short windows
    # heard (words of a short line already waited for its language until 2 s of speech).
    # Whisper base, three steady clocks: the Dutch parts 2-6 points better, the splits
    # 22.4% -> 21.7% (tune) and 23.0% -> 21.8% (report); commit delay p50 +0.25-0.57 s, display
    # latency +0.03-0.14 s (asr.md, session AD). tiny.en, its language fixed, lost with it
    # (report-en 12.0% -> 13.7%): an English-only model commits as before.
    line_waits_s: float = 4.0

    @classmethod
    def from_config(cls, cfg: AsrConfig) -> StreamingOptions:
        return cls(
            min_chunk_s=cfg.min_chunk_s,
            adaptive=cfg.adaptive_chunk,
            buffer_trim_s=cfg.buffer_trim_s,
            vad=cfg.vad,
            silence_end_s=cfg.silence_end_s,
            speech_pad_s=cfg.speech_pad_s,
            language=cfg.language,
        )


@dataclass(frozen=True)
class RunInfo:
    """One recogniser call, for the benchmark."""

    audio_end: float  # stream time the window reached
    window_s: float  # length of the audio recognised
    final: bool  # a pass at the end of an utterance
    cost_s: float = 0.0  # measured time of the recogniser call
    chunk_s: float = 0.0  # the cadence in force after this run


def _key(w: Word) -> str:
    # Agreement is on the exact written word (punctuation included): a comma that comes and
    # goes is a real change, and sentence ends are found from the punctuation.
    return w.text.strip()


def _loose(w: Word) -> str:
    """The word without case and punctuation, to recognise committed words heard again."""
    return re.sub(r"[^\w']+", "", w.text.lower())


def _in_window(w: Word, start: float) -> bool:
    """Is the committed word ``w`` inside a window from ``start`` (its prefix), not before
    it (its prompt)? A word the aligner gave no length at the window's start is inside: after
    a full stop the window starts where the sentence ended, and tiny.en's aligner put the
    next word, "All" of "All right, thanks.", there too; as the prompt's last word, Whisper
    wrote "right, thanks." to go on from it and then "All right, thanks." on its audio, and
    both were committed (report-en at 83 s, docs/benchmarks/asr.md, session AD)."""
    return w.end > start + 1e-6 or w.start >= start - 1e-6


def common_prefix(a: list[Word], b: list[Word], *, loose: bool = False) -> int:
    """How many words ``a`` and ``b`` begin with alike (``loose``: case and punctuation
    aside)."""
    key = _loose if loose else _key
    n = 0
    for x, y in zip(a, b, strict=False):
        if key(x) != key(y):
            break
        n += 1
    return n


@dataclass
class _Segment:
    words: list[Word] = field(default_factory=list)
    emitted: tuple[str, str] | None = None  # (committed, tentative) last sent


class StreamingRecognizer:
    """LocalAgreement-2 with VAD-delimited utterances and sentence segments (a
    :class:`subtitler.asr.engine.Recognizer`)."""

    def __init__(
        self,
        backend: AsrBackend,
        options: StreamingOptions | None = None,
        vad: SpeechProbabilities | None = None,
        cost_clock: Callable[[], float] = time.perf_counter,
        *,
        notice: str = "",
        keep_runs: bool = True,
    ) -> None:
        """``keep_runs`` False: no :class:`RunInfo` is kept per recognition (the app: a list
        of every one grew for as long as the meeting; a benchmark reads them)."""
        self.backend = backend
        self.notice = notice  # what loading it found for the user (see asr.engine)
        self.opt = options or StreamingOptions()
        if self.opt.language is None and not getattr(backend, "multilingual", True):
            self.opt = replace(self.opt, language="en")  # an English-only model (tiny.en)
        if self.opt.vad and vad is None:
            raise ValueError("options.vad is set: pass a speech-probability source")
        self._cost_clock = cost_clock
        self._cost = 0.0  # recent cost of a recogniser call (s), smoothed
        self.chunk_s = self.opt.min_chunk_s
        self._probs = vad if self.opt.vad else None
        self._detector = UtteranceDetector(VadOptions(silence_end_s=self.opt.silence_end_s))
        self.runs: list[RunInfo] = []  # every recognition (with keep_runs)
        self._keep_runs = keep_runs
        self._recognitions = 0
        # Audio: samples from _buf_t0 to _t_end (only what a pending or open utterance needs).
        # Positions are sample counts from the stream origin, so times do not drift.
        self._buf = np.zeros(0, dtype=np.float32)
        # The stream's last seconds, whatever the policy keeps, for telling the language: as
        # much again as the context, for utterances recognised behind the stream.
        self._recent: deque[Samples] = deque()  # blocks, newest last
        self._recent_n = 0  # samples in them
        self._origin: float | None = None  # stream time of sample 0
        self._n_buf0 = 0  # sample index of _buf[0]
        self._outbox: list[AsrUpdate] = []  # updates made inside insert_audio (at a gap)
        # Utterances: those ended but not yet recognised, and the open one.
        self._pending: list[tuple[float, float, bool]] = []  # (start, end, too_short)
        self._open: float | None = None  # start of the open utterance
        self._language: str | None = None  # the open utterance's, once detected
        self._prev_language: str | None = None  # the language of the utterances before
        self._history_language: str | None = None  # the language of the committed text
        self._history_run = 0  # its last words committed in that language
        self._heard_language: str | None = None  # the language of the last hypothesis
        self._belief = LanguageBelief()  # the languages heard, utterance by utterance
        self._stream_language: str | None = None  # the stream's last seconds', last ranked
        self._history: list[Word] = []  # committed words, for the prompt
        self._begin(0.0)
        self._segment_id = 0
        self._seg = _Segment()
        self._failure: Exception | None = None  # a failed backend call, raised by process()
        # A language set (not "auto") on a model that can rank others: is it the one spoken?
        multilingual = getattr(backend, "multilingual", True)
        language = self.opt.language
        self._set_check = SetLanguageCheck(language) if language and multilingual else None
        self._utt_ranked: tuple[tuple[str, float], ...] | None = None  # its final pass's

    @property
    def recognitions(self) -> int:
        """Backend calls that worked so far."""
        return self._recognitions

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect (the glossary's terms) from the next recognition on."""
        self.backend.set_hotwords(hotwords)

    # -- input -------------------------------------------------------------------------------

    def insert_audio(self, block: AudioBlock) -> None:
        """Append a block (16 kHz mono float32) of the stream."""
        if block.sample_rate != SAMPLE_RATE:
            raise ValueError(f"expected {SAMPLE_RATE} Hz audio, got {block.sample_rate} Hz")
        samples = np.asarray(block.samples, dtype=np.float32).reshape(-1)
        if self._origin is None:
            self._start_stream(block.t0)
        elif block.t0 > self._t_end + _GAP_S:
            # Audio was lost (device gone, queue overflow): recognise what was being said
            # now, while its audio is here, and start afresh so times stay right.
            log.info("gap in audio %.2f..%.2f s: ending the utterance", self._t_end, block.t0)
            self._end_open(self._t_end)
            self._outbox += self._drain_pending(self._t_end)
            self._start_stream(block.t0)
        self._buf = np.concatenate([self._buf, samples])
        self._keep_recent(samples)
        if self._probs is None:
            if self._open is None:  # without VAD the whole stream is one utterance
                self._open = self._buf_t0
                self._begin(self._buf_t0)
        else:
            for ev in self._detector.feed(self._probs(samples)):
                self._on_vad(ev)
        self._drop_unneeded_audio()

    @property
    def _buf_t0(self) -> float:
        return (self._origin or 0.0) + self._n_buf0 / SAMPLE_RATE

    @property
    def _t_end(self) -> float:
        return (self._origin or 0.0) + (self._n_buf0 + len(self._buf)) / SAMPLE_RATE

    def _keep_recent(self, samples: Samples) -> None:
        self._recent.append(samples)
        self._recent_n += len(samples)
        keep = 2 * self.opt.language_context_s * SAMPLE_RATE
        while self._recent and self._recent_n - len(self._recent[0]) >= keep:
            self._recent_n -= len(self._recent.popleft())

    def _start_stream(self, t0: float) -> None:
        self._buf = np.zeros(0, dtype=np.float32)
        self._recent.clear()
        self._recent_n = 0
        self._origin, self._n_buf0 = t0, 0
        self._detector.restart(t0)
        if self._probs is not None:
            self._probs.reset()

    def _on_vad(self, ev: VadEvent) -> None:
        if ev.kind == "start":
            self._open = ev.t
            if not self._pending:  # else it begins once the pending ones are recognised
                self._begin(ev.t)
        elif self._open is not None:
            self._pending.append((self._open, ev.t + self.opt.speech_pad_s, ev.short))
            self._open = None

    def _end_open(self, t: float) -> None:
        if self._probs is not None:
            for ev in self._detector.close():
                self._on_vad(ev)
        elif self._open is not None:
            self._pending.append((self._open, t, False))
            self._open = None

    def _drop_unneeded_audio(self) -> None:
        """Keep only audio a pending/open utterance needs, plus pre-roll for the next one."""
        self._detector.forget_before(self._buf_t0 - 1.0)
        if self._pending:
            keep_from = min(self._win_t0, self._pending[0][0] - self.opt.speech_pad_s)
        elif self._open is not None:
            keep_from = self._win_t0
        else:
            # Silence: the VAD reports a start up to ~a frame late, keep a second of pre-roll
            # (and what the next utterance's window looks back on or takes in).
            back = max(1.0, self.opt.lookback_s, self.opt.bridge_s)
            keep_from = self._t_end - self.opt.speech_pad_s - back
        cut = round((keep_from - self._buf_t0) * SAMPLE_RATE)
        if cut > 0:
            self._buf = self._buf[cut:]
            self._n_buf0 += cut

    def _audio(self, t0: float, t1: float) -> Samples:
        i0 = max(0, round((t0 - self._buf_t0) * SAMPLE_RATE))
        i1 = max(i0, round((t1 - self._buf_t0) * SAMPLE_RATE))
        return self._buf[i0:i1]

    # -- output ------------------------------------------------------------------------------

    @property
    def buffer_s(self) -> float:
        """Length of the window the recogniser would see now (s)."""
        if self._open is None:
            return 0.0
        return max(0.0, self._t_end - self._win_t0)

    def process(self, now: float) -> list[AsrUpdate]:
        """Recognise if due; ``now`` (stream clock) stamps the updates."""
        out = [replace(u, emitted_at=now) for u in self._outbox]
        self._outbox = []
        out += self._drain_pending(now)
        if self._open is not None and self._t_end - self._last_run >= self.chunk_s - 1e-9:
            out += self._run(self._t_end, now, final=False)
        self._drop_unneeded_audio()
        if self._failure is not None:
            # One failed recognition costs one update: the caller hears of it, and what this
            # call produced (segments closed with their committed words) comes with the next.
            e, self._failure = self._failure, None
            self._outbox = out
            raise e
        return out

    def close(self) -> None:
        """Release the backend (a worker process)."""
        self.backend.close()

    def finish(self, now: float) -> list[AsrUpdate]:
        """End of stream: close the open utterance and recognise everything left."""
        if self._origin is not None:
            self._end_open(self._t_end)
        return self.process(now)

    def _drain_pending(self, now: float) -> list[AsrUpdate]:
        out: list[AsrUpdate] = []
        while self._pending:
            start, end, short = self._pending.pop(0)
            out += self._finish_utterance(start, end, short, now)
        return out

    # -- the policy --------------------------------------------------------------------------

    def _begin(self, start: float) -> None:
        """Fresh recogniser state for an utterance whose speech starts at ``start``."""
        self._win_t0 = max(self._buf_t0, start - self.opt.speech_pad_s)
        self._last_commit_end = -1.0
        self._bridged = self._bridge(start)
        if self._bridged is not None:
            self._win_t0 = self._last_commit_end = self._bridged[0]
        self._utt_t0 = self._win_t0  # this utterance's own audio starts here
        self._detected = False  # its language told from its own audio
        back = self._look_back(start)
        if back is not None:
            self._win_t0 = back
            self._last_commit_end = self._history[-1].end
        # Latest end of a finished sentence inside the window; the words looked back on
        # count as one: the window gives them up once it is longer than context_s (they are
        # for a short utterance, and a longer window costs the encoder more).
        self._cut = self._utt_t0
        self._last_run = start  # the first run waits for min_chunk_s of speech
        self._tail: list[Word] = []  # previous hypothesis after the committed words
        self._prev_language = self._language or self._prev_language
        self._language = None
        self._utt_ranked = None

    def _bridge(self, start: float) -> tuple[float, float] | None:
        """The pause (from, to) between the last committed word and speech starting at
        ``start`` that this utterance's window takes in, or None: one of at most bridge_s,
        whose audio is still here, with bridge_doubt_s of frames Silero doubted."""
        if self._probs is None or not self._history or self.opt.bridge_s <= 0:
            return None
        end = self._history[-1].end
        if not (max(self._buf_t0, self._win_t0 - self.opt.bridge_s) <= end < self._win_t0):
            return None
        if self._detector.doubt_between(end, self._win_t0) < self.opt.bridge_doubt_s:
            return None
        return end, start

    def _look_back(self, start: float) -> float | None:
        """Where a window starting on the committed words before ``start`` begins: a tenth
        of a second before the first of them said within lookback_s, after a pause of that
        much, whose audio is still here; None if none.

        The aligner writes an utterance's words end to end and its first word at its
        window's start, where the audio kept begins: so the window looks back to the first
        pause inside the committed words said within lookback_s, and not at all when they
        have none. Looking back on the first committed word after the floor in any case
        was measured worse (docs/benchmarks/asr.md, session L)."""
        if self.opt.lookback_s <= 0 or not self._history:
            return None
        if self._history[-1].end > start or self._history[-1].end < start - self.opt.lookback_s:
            return None
        if self._probs is not None and (
            self._detector.speech_between(self._history[-1].end, start) > _UNCOMMITTED_S
        ):
            # The utterance before ended in words never committed (its passes disagreed):
            # a window over them, with only the committed words as its prefix, has Whisper
            # write them again as this utterance's first words.
            return None
        return self._pause_in_history(max(self._buf_t0, start - self.opt.lookback_s))

    def _pause_in_history(self, floor: float) -> float | None:
        """A tenth of a second before the first committed word said after ``floor`` that
        follows a pause of that much (or the end of the word before); None if none."""
        prev_end = -1.0
        for w in self._history:
            if w.start - 0.1 >= floor and w.start - 0.1 >= prev_end - 1e-6:
                return max(prev_end, w.start - 0.1)
            prev_end = w.end
        return None

    def _finish_utterance(
        self, start: float, end: float, short: bool, now: float
    ) -> list[AsrUpdate]:
        out: list[AsrUpdate] = []
        after = max(self._win_t0, self._last_commit_end)
        heard = not short and self._speech(after, end) > 0
        if self._seg.words or self._tail or heard:
            words = None if self._seg.words else self._heard_with_before(end)
            if words is not None:
                self._tail = []
                out = self._commit(words, now, end)
            else:
                out = self._run(end, now, final=True)
            self._check_set_language(self._speech(self._utt_t0, end))
        out += self._close_segment(now, end)
        following = self._pending[0][0] if self._pending else self._open
        self._begin(following if following is not None else end)
        return out

    def _heard_with_before(self, end: float) -> list[Word] | None:
        """The words of the utterance ending at ``end`` (none of them committed), heard in
        a window over the committed speech said up to hear_before_s before it, without a
        prefix: those on its own audio, as its last pass. None where there is no such
        speech in its language, or nothing was heard on it (its own passes then decide)."""
        if self.opt.hear_before_s <= 0 or not self._history:
            return None
        language = self.opt.language or self._language
        if language is None:
            told = self._tell_first(self._utt_t0, end, self._speech(self._utt_t0, end))
            if told is None:
                return None  # (a backend that cannot rank: told by its own last pass)
            language = self._settle(*told)
        if language is None or language != self._history_language:
            return None  # the words before are in another language: no help
        if self._history[-1].end > self._utt_t0 or not self._recent:
            return None
        recent_t0 = self._t_end - self._recent_n / SAMPLE_RATE
        t0 = self._pause_in_history(max(recent_t0, self._utt_t0 - self.opt.hear_before_s))
        if t0 is None:
            return None
        recent = np.concatenate(self._recent)
        i0, i1 = (max(0, round((t - recent_t0) * SAMPLE_RATE)) for t in (t0, end))
        if i1 - i0 < MIN_WINDOW_S * SAMPLE_RATE:
            return None
        check = self._set_check is not None and self._utt_ranked is None
        hyp = self._call(recent[i0:i1], t0, end, True, language, "", rank=check)
        if hyp is None:
            return []  # a failed final pass still closes its segment
        if check:
            self._utt_ranked = hyp.language_probs
        # Only the words on this utterance's audio: the aligner may end the words before
        # early (a repeated "word, word, word" committed over half of its audio), and they
        # would be heard again after the last committed one.
        own = max(self._history[-1].end, self._utt_t0)
        kept, self._last_commit_end = self._last_commit_end, self._history[-1].end
        words = [w for w in self._words_of(hyp, t0, "") if (w.start + w.end) / 2 > own]
        if not words:
            # Whisper may end its text on the words before (after their full stop).
            self._last_commit_end = kept
            log.debug("nothing heard after the speech before: %.1f-%.1f s", t0, end)
            return None
        return words

    def _speech(self, t0: float, t1: float) -> float:
        if self._probs is None:
            return max(0.0, t1 - t0)  # without VAD everything may be speech
        return self._detector.speech_between(t0, t1)

    def _prompt(self, start: float, language: str | None) -> str:
        """Committed text in ``language`` whose audio lies before the window.

        Only the words committed since the language last changed: text in another
        language is no prompt (Whisper would translate into it), and a prompt of Dutch lines
        then Spanish ones had Whisper base give a Spanish reading's window a no-speech
        probability of 0.81-0.87 against 0.25-0.47 with the Spanish alone: 23 words of it
        were lost (docs/benchmarks/asr.md, session W)."""
        if self._history_language not in (None, language):
            return ""
        run = self._history[len(self._history) - self._history_run :]
        done = [w.text for w in run if not _in_window(w, start)]
        return join_words(done)[-self.opt.prompt_chars :].lstrip()

    def _prefix(self, start: float) -> str:
        """Committed text whose audio lies inside the window (it begins the hypothesis)."""
        return join_words([w.text for w in self._history if _in_window(w, start)])

    def _recognise(self, t0: float, t1: float, final: bool) -> list[Word] | None:
        """Words of the window [t0, t1] on the stream clock, not yet committed and where
        someone spoke; None when the window is too short to recognise."""
        t0 = max(t0, self._win_t0)  # (a window that gave way to its utterance's own)
        language = self.opt.language or self._language
        own = self._speech(max(t0, self._utt_t0), t1)  # this utterance's speech
        # The language is decided once per utterance, from enough of its speech (or all of
        # a short one) with what the utterances before said; until then it is theirs.
        decide = language is None and (final or own >= self.opt.language_speech_s)
        told = self._tell_first(t0, t1, own) if decide and t0 < self._utt_t0 else None
        if told is not None:
            # Told before recognising: in the language of the words before, the window
            # looks back on them at once (a short line is heard with the line before it,
            # not alone); in another, it starts on its own speech (_settle).
            language, decide = self._settle(*told), False
            t0 = max(t0, self._win_t0)
        elif language is None:
            # Until it is told: the language of the stream's last seconds as ranked at the
            # decision before, else the languages heard so far. The belief pools each line's
            # own window and lags a change: after 300 s of English it had Dutch lines shown
            # in English until their end where the 12 s before them ranked Dutch 0.96
            # (passes shown in another language than their part's, Whisper base: 30 -> 13
            # and 16 -> 6 on the two splits' Dutch parts; docs/benchmarks/asr.md, session X).
            language = self._stream_language or self._belief.best() or self._prev_language
        if self.opt.language is None and not self._detected:
            # Until this utterance's language is told from its own audio, it is recognised
            # alone: a window that starts on the words before, in their language, would have
            # Whisper go on in it (and from short lines, say them again).
            t0 = max(t0, self._utt_t0)
        audio = self._audio(t0, t1)
        if len(audio) < MIN_WINDOW_S * SAMPLE_RATE:
            return None
        prefix = self._prefix(t0)
        # The language set is checked on each utterance's first final pass: its ranking is
        # one more decoder step on the encoder output that pass makes anyway.
        check = final and self._set_check is not None and self._utt_ranked is None
        hyp = self._call(audio, t0, t1, final, language, prefix, rank=decide or check)
        if check and hyp is not None:
            self._utt_ranked = hyp.language_probs
        if hyp is not None and decide:
            heard = dict(hyp.language_probs) or ({hyp.language: 1.0} if hyp.language else {})
            context = self._rank_context(t1) if heard else ()
            choice = self._choose(heard, context, own) or hyp.language
            self._settle(choice, heard)
            again = bool(choice) and choice != hyp.language
            if t0 < self._win_t0:  # a pause taken in went with the words before
                t0, again = self._win_t0, True
                audio, prefix = self._audio(t0, t1), self._prefix(t0)
            if again and len(audio) >= MIN_WINDOW_S * SAMPLE_RATE:
                # Whisper's first language for this window alone may not be the one this
                # utterance and those before make most likely: recognised again in that one.
                log.debug("language %s heard as %s", choice, hyp.language)
                hyp = self._call(audio, t0, t1, final, choice, prefix, rank=False)
            elif again:
                hyp = None  # the utterance's own speech is too short to recognise
        if hyp is None:
            return [] if final else None  # a failed final pass still closes its segment
        new = self._words_of(hyp, t0, prefix)
        if (
            not new
            and t0 < self._utt_t0
            and self._speech(self._utt_t0, t1) >= _UNHEARD_S
            and hyp.language
        ):
            # Whisper ended its text on the words looked back on (after their full stop),
            # though this utterance has said something: seven seconds of a Spanish reading
            # were lost so (asr.md, session V). From here on it is heard alone.
            log.debug("nothing heard after the words looked back on: %.1f-%.1f s", t0, t1)
            self._win_t0 = t0 = max(self._win_t0, self._utt_t0)
            audio, prefix = self._audio(t0, t1), self._prefix(t0)
            if len(audio) < MIN_WINDOW_S * SAMPLE_RATE:
                return [] if final else None
            hyp = self._call(audio, t0, t1, final, hyp.language, prefix, rank=False)
            if hyp is None:
                return [] if final else None
            new = self._words_of(hyp, t0, prefix)
        return new

    def _check_set_language(self, speech_s: float) -> None:
        """The utterance just ended, of ``speech_s`` of speech, against the language set:
        said once as the notice when the speech is clearly in another one."""
        if self._set_check is None or self._utt_ranked is None:
            return
        other = self._set_check.heard(self._utt_ranked, speech_s)
        if other is not None:
            name = LANGUAGES.get(self._set_check.language, self._set_check.language)
            self.notice = (
                f"the speech sounds like {LANGUAGES.get(other, other)}, but the speech "
                f"language is set to {name} (Settings)"
            )
            log.warning("%s", self.notice)

    def _words_of(self, hyp: Hypothesis, t0: float, prefix: str) -> list[Word]:
        """The words of a recognition of a window from ``t0`` (with the committed ``prefix``)
        not committed yet and where someone spoke, on the stream clock."""
        self._heard_language = hyp.language  # what updates say until then
        words = [Word(w.text, w.start + t0, w.end + t0, w.probability) for w in hyp.words]
        # A word away from speech was made up for silence or noise ("Thank you.").
        spoken = [w for w in words if self._spoken(w)]
        return self._new_words(spoken, after_prefix=hyp.after_prefix and bool(prefix))

    def _choose(
        self, heard: dict[str, float], context: tuple[tuple[str, float], ...], own: float
    ) -> str | None:
        """An utterance's language from its own window's languages (``heard``, from
        ``own`` seconds of its speech) and the stream's last seconds' (``context``)."""
        if context:
            weights = (1.0, own / self.opt.language_speech_s)
            return combined((dict(context), heard), weights)
        if own >= self.opt.language_speech_s and heard:
            # Enough speech to go on: Whisper's first language for it (a long utterance in
            # another language than an hour of speech before is that language).
            return likeliest(heard)
        return self._belief.best(heard)  # a short utterance: its language with those before

    def _settle(self, choice: str | None, heard: dict[str, float]) -> str | None:
        """Record an utterance's language, told from its own window's ``heard`` languages;
        returns it."""
        self._belief.add(heard)
        self._language, self._detected = choice, True
        if choice != self._history_language:
            # Another language than the words looked back on: the window starts with this
            # utterance (those words would be a prefix in the wrong language), and a pause
            # it took in after them goes with them (a voice Silero doubted there was
            # theirs): recognised from its own speech.
            self._win_t0 = max(self._win_t0, self._utt_t0)
            if self._bridged is not None:
                own = self._bridged[1] - self.opt.speech_pad_s  # its speech, padded
                self._bridged = None
                self._utt_t0 = self._win_t0 = max(self._win_t0, own)
        return choice

    def _tell_first(
        self, t0: float, t1: float, own: float
    ) -> tuple[str | None, dict[str, float]] | None:
        """The language of the utterance whose window ends at ``t1``, with its own audio's
        ranking, told from rankings alone (its own audio and the stream's last seconds)
        before it is recognised; None where the backend cannot rank or a ranking failed."""
        if not self._ranks_context:
            return None
        heard = dict(self._rank(self._audio(max(t0, self._utt_t0), t1)))
        context = self._rank_context(t1) if heard else ()
        if not context:
            return None
        return self._choose(heard, context, own), heard

    @property
    def _ranks_context(self) -> bool:
        """Can the stream's last seconds be ranked (a backend that ranks any audio, and
        seconds to rank)?"""
        return isinstance(self.backend, LanguageRanker) and self.opt.language_context_s > 0

    def _rank_context(self, t1: float) -> tuple[tuple[str, float], ...]:
        """The languages of the stream's last language_context_s up to ``t1`` (the first
        is kept as the stream's language); () from a backend that cannot rank them or where
        the call failed."""
        if not self._ranks_context:
            return ()
        recent = np.concatenate(self._recent) if self._recent else np.zeros(0, np.float32)
        end = max(0, len(recent) - max(0, round((self._t_end - t1) * SAMPLE_RATE)))
        ranked = self._rank(
            recent[max(0, end - round(self.opt.language_context_s * SAMPLE_RATE)) : end]
        )
        self._stream_language = likeliest(dict(ranked)) or self._stream_language
        return ranked

    def _rank(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        """The languages of ``audio``; () from a backend that cannot rank or where the call
        failed (its engine gone: that is raised by process())."""
        if not isinstance(self.backend, LanguageRanker):
            return ()
        try:
            return tuple(self.backend.rank_languages(audio))
        except EngineGone as e:
            # Closed at a stop, or crashed: process() raises it, as a recognition's failure.
            self._failure = self._failure or e
            return ()
        except Exception:
            # Only the ranking is lost: the utterance's own window still tells its language.
            log.warning(
                "ranking the languages of %.1f s failed", len(audio) / SAMPLE_RATE, exc_info=True
            )
            return ()

    def _spoken(self, w: Word) -> bool:
        """Does ``w`` lie where someone spoke (by the VAD)?"""
        near = _SURE_NEAR_S if w.probability >= _SURE_P else _NEAR_S
        if self._speech(w.start - near, w.end + near) > 0:
            return True
        # In a pause the window takes in, a word Whisper is sure of where Silero doubted.
        b = self._bridged
        return (
            b is not None
            and w.probability >= _SURE_P
            and b[0] <= w.start
            and w.end <= b[1]
            and self._detector.doubt_between(w.start, w.end) > 0
        )

    def _call(
        self,
        audio: Samples,
        t0: float,
        t1: float,
        final: bool,
        language: str | None,
        prefix: str,
        rank: bool,
    ) -> Hypothesis | None:
        """One recognition of ``audio`` (from ``t0``, the committed ``prefix`` inside it),
        timed; None if it failed (the failure is raised by process())."""
        prompt = self._prompt(t0, language)
        c0 = self._cost_clock()
        try:
            hyp = self.backend.transcribe(
                audio,
                t0=t0,
                prompt=prompt,
                language=language,
                prefix=prefix,
                rank_languages=rank,
            )
        except Exception as e:
            self._failure = self._failure or e
            return None
        cost = self._cost_clock() - c0
        self._cost = cost if not self._recognitions else 0.5 * self._cost + 0.5 * cost
        self._recognitions += 1
        if self.opt.adaptive:
            self.chunk_s = min(
                self.opt.max_chunk_s, max(self.opt.min_chunk_s, self._cost / self.opt.duty)
            )
        if self._keep_runs:
            self.runs.append(RunInfo(t1, len(audio) / SAMPLE_RATE, final, cost, self.chunk_s))
        return hyp

    def _run(self, t1: float, now: float, final: bool) -> list[AsrUpdate]:
        t0 = self._win_t0
        self._last_run = t1
        words = self._recognise(t0, t1, final)
        if words is None:
            return []
        # At the end of an utterance punctuation may still change ("hand," -> "hand."):
        # the words must agree, the last pass writes them.
        n = common_prefix(self._tail, words, loose=final)
        if not final and self.opt.language is None and not self._detected:
            # Until its own audio has told this utterance's language, its words are only
            # shown: the first passes are asked in the language before, and a line in
            # another language comes out translated or misheard into it; committed, those
            # words would stay in the transcript and be the prompt of every later pass.
            n = 0
        if not final and self._line_waits(t1):
            n = 0  # (it is heard whole at its end)
        if not final and self.opt.tail_guard_s > 0:
            while n and words[n - 1].end > t1 - self.opt.tail_guard_s:
                n -= 1
        before, self._tail = self._tail[n:], [] if final else words[n:]
        out = self._commit(words[:n], now, t1)
        if final and n < len(words):
            out += self._commit(self._confirm(words[n:], before, t0, t1), now, t1)
        out += self._trim(now, t1, final)
        if not final:
            upd = self._update(now, t1, final=False)
            if upd is not None:
                out.append(upd)
        return out

    def _line_waits(self, t1: float) -> bool:
        """Do this utterance's words wait for its end (line_waits_s), to be heard over the
        committed speech before it? Only where there is such speech: committed words within
        hear_before_s before it. (Its own words are not committed before then.)"""
        if self.opt.language is not None or self.opt.line_waits_s <= 0 or not self._history:
            return False
        if self.opt.hear_before_s <= 0:
            return False
        if self._history[-1].end < self._utt_t0 - self.opt.hear_before_s:
            return False
        return self._speech(self._utt_t0, t1) < self.opt.line_waits_s

    def _confirm(self, rest: list[Word], before: list[Word], t0: float, t1: float) -> list[Word]:
        """At an utterance end: the words after the agreed ones that a second pass over
        another window also hears, as the second pass writes them. ``rest`` is what the last
        pass heard there, ``before`` what the pass before it heard: the second pass must
        agree with one of them (two of the three passes agree on every committed word).

        The second window takes in the silence heard since the end was padded, or, when
        there is none, starts a second before the first unconfirmed word (the committed
        text before it is the prompt): the same audio would only repeat the same answer.
        """
        t0b, t1b = t0, min(self._t_end, t1 + self.opt.silence_end_s)
        if t1b - t1 < 0.1:
            t0b, t1b = max(t0, rest[0].start - 1.0), t1
            if t0b <= t0 + 1e-3:
                log.debug("no second window to confirm %d word(s)", len(rest))
                return []
        again = self._recognise(t0b, t1b, final=True) or []
        n = max(common_prefix(rest, again, loose=True), common_prefix(before, again, loose=True))
        if n < len(again) or n < len(rest):
            dropped = join_words([w.text for w in (again if len(again) > n else rest)[n:]])
            log.debug("not confirmed at the utterance end: %s", dropped)
        return again[:n]

    def _new_words(self, words: list[Word], *, after_prefix: bool = False) -> list[Word]:
        """Drop what was committed already.

        Without a prefix the hypothesis has every word of the window: by time, then by
        matching the committed tail, the end of the last committed word (outside the window)
        heard again at its start ("typography typography").

        After committed words inside the window (the prefix) the recogniser wrote only what
        follows them; it may still write the end of them again. The text cannot tell that
        from a person saying it again ("words, words, words"), the time can: a copy of the
        committed tail that starts on the committed words' audio (the aligner gave the
        prefix's copy no time and the new copy that audio) is dropped, one that lies after
        them stays. Words after the prefix that lie wholly on half a second or more of the
        committed words' audio hear them again, whatever their text: Whisper base, prompted
        with "Please enter your agent number followed by the pound key." twice, committed it
        a third time over "Please enter your password ..." (two passes agreed), then wrote
        the right sentence after it over the same audio: 9 words committed twice
        (docs/benchmarks/asr.md, session Y).
        """
        # A "word" without a letter or digit is no speech: over music Whisper writes "."
        # alone, which would be shown and translated as a line of its own.
        words = [w for w in words if _SPOKEN.search(w.text)]
        if not after_prefix:
            words = [w for w in words if w.start > self._last_commit_end - 0.1]
        else:
            again = [w for w in words if w.end <= self._last_commit_end]
            if again and again[-1].end - again[0].start >= _HEARD_AGAIN_S:
                words = [w for w in words if w.end > self._last_commit_end]
        near = bool(words) and abs(words[0].start - self._last_commit_end) < 1.0
        if words and self._history and (after_prefix or near):
            tail = [_loose(w) for w in self._history[-_MAX_OVERLAP_WORDS:]]
            for k in range(min(len(tail), len(words)), 0, -1):
                if tail[-k:] != [_loose(w) for w in words[:k]]:
                    continue
                if not after_prefix or words[k - 1].start < self._last_commit_end - 0.1:
                    return words[k:]
        return words

    def _commit(self, words: list[Word], now: float, t1: float) -> list[AsrUpdate]:
        out: list[AsrUpdate] = []
        if words:  # all in the language of the pass that heard them
            language = self.opt.language or self._language or self._prev_language
            same = language == self._history_language
            self._history_run = (self._history_run if same else 0) + len(words)
            self._history_language = language
        for w in words:
            self._seg.words.append(w)
            self._history.append(w)
            self._last_commit_end = w.end
            if ends_sentence(w.text) or self._long_enough(w):
                out += self._close_segment(now, t1, trim_at=w.end)
        if len(self._history) > 400:
            del self._history[:-200]
            self._history_run = min(self._history_run, len(self._history))
        return out

    def _long_enough(self, last: Word) -> bool:
        """Is the open segment, ending with ``last``, long enough to end without a full stop?"""
        n = len(self._seg.words)
        clause = last.text.rstrip().endswith(_CLAUSE_MARKS)
        return n >= self.opt.max_words or (n >= self.opt.clause_words and clause)

    def _trim(self, now: float, t1: float, final: bool) -> list[AsrUpdate]:
        """Cut the window at the latest finished sentence once it is longer than context_s,
        and keep it under buffer_trim_s even inside a long unpunctuated sentence."""
        if final:
            return []
        if t1 - self._win_t0 > self.opt.context_s and self._cut > self._win_t0:
            self._win_t0 = self._cut
        # Cut a chunk early: the next run adds up to a chunk before it can cut again.
        if t1 - self._win_t0 <= self.opt.buffer_trim_s - self.chunk_s:
            return []
        out: list[AsrUpdate] = []
        if self._last_commit_end <= self._win_t0:
            # Nothing committed inside the window: commit the tentative words heard long
            # enough ago (a min_chunk before the end) so there is a place to cut.
            old = [w for w in self._tail if w.end <= t1 - self.opt.min_chunk_s]
            self._tail = self._tail[len(old) :]
            out += self._commit(old, now, t1)
        if self._last_commit_end > self._win_t0:
            self._win_t0 = self._last_commit_end
        return out

    def _close_segment(
        self, now: float, t1: float, trim_at: float | None = None
    ) -> list[AsrUpdate]:
        out: list[AsrUpdate] = []
        if self._seg.words or self._seg.emitted is not None:
            upd = self._update(now, t1, final=True)
            assert upd is not None
            out.append(upd)
            self._segment_id += 1
        self._seg = _Segment()
        if trim_at is not None:
            self._cut = max(self._cut, trim_at)  # the window may start here from now on
        return out

    def _update(self, now: float, t1: float, final: bool) -> AsrUpdate | None:
        seg = self._seg
        committed = join_words([w.text for w in seg.words])
        tentative = "" if final else join_words([w.text for w in self._tail])
        if not final and seg.emitted == (committed, tentative):
            return None
        if not final and seg.emitted is None and not (committed or tentative):
            return None  # nothing heard yet; an emptied segment is still reported
        seg.emitted = (committed, tentative)
        first = seg.words or self._tail
        t0 = first[0].start if first else self._win_t0
        return AsrUpdate(
            segment_id=self._segment_id,
            committed_text=committed,
            tentative_text=tentative,
            final=final,
            audio_t0=t0,
            audio_t1=t1,
            emitted_at=now,
            committed_words=tuple(seg.words),
            language=self.opt.language
            or self._language
            or self._prev_language
            or self._heard_language,
        )
