"""The LocalAgreement-2 policy against a scripted recogniser: exact commits, trims and finals."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from subtitler.asr.backend import AsrError, Hypothesis, Samples
from subtitler.asr.streaming import StreamingOptions, StreamingRecognizer, common_prefix
from subtitler.asr.vad import FRAME, FRAME_S
from subtitler.types import AsrUpdate, AudioBlock, Word
from subtitler_research.asr.oracle import OracleVad
from subtitler_research.asr.replay import SteadyClock

SR = 16000


@dataclass
class Call:
    t0: float
    t1: float
    prompt: str
    language: str | None
    prefix: str = ""


@dataclass
class ScriptedBackend:
    """Returns the given hypotheses in order; words are given in stream time. ``languages``:
    the language each call hears (the last one for the calls after); a call recognises in
    the language it is asked for, or else in the one it hears, and ranks the one it hears at
    ``confidence`` when asked to. ``after_prefix``: its words are those after the prefix, as
    the real backend's."""

    script: list[list[tuple[str, float, float] | tuple[str, float, float, float]]]
    languages: list[str] = field(default_factory=lambda: ["en"])
    confidence: float = 0.9
    after_prefix: bool = False
    calls: list[Call] = field(default_factory=list)
    hotwords: list[str] = field(default_factory=list)  # every set_hotwords, in order
    closed: bool = False

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
        t1 = round(t0 + len(audio) / SR, 3)
        self.calls.append(Call(round(t0, 3), t1, prompt, language, prefix))
        words, heard = self.hears(t0, t1, language)
        return Hypothesis(
            tuple(Word(" " + w[0], w[1] - t0, w[2] - t0, *w[3:]) for w in words),
            language or heard,
            language_probs=((heard, self.confidence),) if rank_languages else (),
            after_prefix=self.after_prefix,
        )

    def hears(
        self, t0: float, t1: float, language: str | None
    ) -> tuple[Sequence[tuple[str, float, float] | tuple[str, float, float, float]], str]:
        """The words this call hears in the window [t0, t1], and the language it hears."""
        n = len(self.calls)
        words = self.script[n - 1] if n <= len(self.script) else []
        return words, self.languages[min(n, len(self.languages)) - 1]

    def set_hotwords(self, hotwords: str) -> None:
        self.hotwords.append(hotwords)

    def close(self) -> None:
        self.closed = True


def feed(
    rec: StreamingRecognizer, t_from: float, t_to: float, block_s: float = 0.1
) -> list[AsrUpdate]:
    """Insert silence-valued blocks and ask for updates after each, like the live thread."""
    out: list[AsrUpdate] = []
    n = round((t_to - t_from) / block_s)
    for k in range(n):
        t0 = t_from + k * block_s
        rec.insert_audio(AudioBlock(np.zeros(round(block_s * SR), np.float32), t0))
        out += rec.process(now=round(t0 + block_s, 3))
    return out


def view(ups: list[AsrUpdate]) -> list[tuple[float, int, str, str, bool]]:
    return [(u.emitted_at, u.segment_id, u.committed_text, u.tentative_text, u.final) for u in ups]


# The scripts below were written for a fixed 1 s cadence, sentences cut from the window at
# once, commits up to the window's end and a window of its own per utterance; the tests further
# down change one at a time.
CLASSIC = {
    "min_chunk_s": 1.0,
    "adaptive": False,
    "tail_guard_s": 0.0,
    "context_s": 0.0,
    "lookback_s": 0.0,
    "hear_before_s": 0.0,
}


def no_vad(**kw: object) -> StreamingOptions:
    return StreamingOptions(vad=False, **(CLASSIC | kw))  # type: ignore[arg-type]


def with_vad(**kw: object) -> StreamingOptions:
    return StreamingOptions(**(CLASSIC | kw))  # type: ignore[arg-type]


def test_common_prefix_compares_written_words() -> None:
    a = [Word(" the", 0, 1), Word(" cat,", 1, 2), Word(" sat", 2, 3)]
    b = [Word("the", 0, 1), Word(" cat,", 1, 2), Word(" sat.", 2, 3)]
    assert common_prefix(a, b) == 2
    assert common_prefix(a, []) == 0


def test_commits_longest_common_prefix_of_last_two_hypotheses() -> None:
    be = ScriptedBackend(
        [
            [("hello", 0.1, 0.4), ("world", 0.5, 0.8), ("thi", 0.85, 1.0)],
            [("hello", 0.1, 0.4), ("world", 0.5, 0.8), ("this", 0.85, 1.1), ("is", 1.2, 1.4)],
            [
                ("hello", 0.1, 0.4),
                ("world", 0.5, 0.8),
                ("this", 0.85, 1.1),
                ("is", 1.2, 1.4),
                ("a", 1.5, 1.6),
                ("test", 1.7, 2.0),
            ],
        ]
    )
    rec = StreamingRecognizer(be, no_vad(min_chunk_s=1.0))
    ups = feed(rec, 0.0, 3.0)
    assert view(ups) == [
        (1.0, 0, "", "hello world thi", False),
        (2.0, 0, "hello world", "this is", False),
        (3.0, 0, "hello world this is", "a test", False),
    ]
    # The recogniser ran once per second of new audio, always on the whole window.
    assert [(c.t0, c.t1) for c in be.calls] == [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]
    assert ups[-1].committed_words[-1] == Word(" is", 1.2, 1.4)
    assert ups[-1].audio_t0 == 0.1 and ups[-1].audio_t1 == 3.0
    # End of stream: everything in the last hypothesis is committed and the segment is final.
    be.script.append([(w.text.strip(), w.start, w.end) for w in ups[-1].committed_words])
    be.script[-1] += [("a", 1.5, 1.6), ("test", 1.7, 2.0)]
    fin = rec.finish(now=3.5)
    assert view(fin) == [(3.5, 0, "hello world this is a test", "", True)]


def test_sentence_end_finalises_segment_trims_buffer_and_removes_overlap() -> None:
    be = ScriptedBackend(
        [
            [("One", 0.1, 0.3), ("two", 0.35, 0.6), ("three.", 0.65, 0.9)],
            [("One", 0.1, 0.3), ("two", 0.35, 0.6), ("three.", 0.65, 0.9), ("Four", 1.2, 1.5)],
            # The trimmed window starts at 0.9 s; Whisper hears the tail of "three." again.
            [("three.", 0.85, 0.95), ("Four", 1.2, 1.5), ("five", 1.6, 1.9)],
            [("Four", 1.2, 1.5), ("five", 1.6, 1.9), ("six", 2.0, 2.3)],
        ]
    )
    rec = StreamingRecognizer(be, no_vad())
    ups = feed(rec, 0.0, 4.0)
    assert view(ups) == [
        (1.0, 0, "", "One two three.", False),
        (2.0, 0, "One two three.", "", True),
        (2.0, 1, "", "Four", False),
        (3.0, 1, "Four", "five", False),
        (4.0, 1, "Four five", "six", False),
    ]
    assert [(c.t0, c.t1) for c in be.calls] == [(0.0, 1.0), (0.0, 2.0), (0.9, 3.0), (0.9, 4.0)]
    # Text whose audio left the window becomes the prompt.
    assert [c.prompt for c in be.calls] == ["", "", "One two three.", "One two three."]
    assert ups[1].committed_words[-1].end == 0.9 and ups[3].audio_t0 == 1.2


def test_several_sentences_in_one_commit_each_become_a_final_segment() -> None:
    words = [("Yes.", 0.1, 0.3), ("No!", 0.4, 0.6), ("Maybe", 0.7, 0.9)]
    be = ScriptedBackend([words, [*words, ("so", 1.1, 1.3)]])
    rec = StreamingRecognizer(be, no_vad())
    ups = feed(rec, 0.0, 2.0)
    assert view(ups) == [
        (1.0, 0, "", "Yes. No! Maybe", False),
        (2.0, 0, "Yes.", "", True),
        (2.0, 1, "No!", "", True),
        (2.0, 2, "Maybe", "so", False),
    ]


def test_window_stays_under_trim_limit_without_punctuation() -> None:
    # A 40 s monologue without sentence ends: one word every 0.5 s; the newest word flickers.
    def hyp(t0: float, t1: float) -> list[tuple[str, float, float]]:
        out = []
        for k in range(int(t1 / 0.5)):
            s, e = k * 0.5 + 0.05, k * 0.5 + 0.45
            if e <= t1 and s >= t0 - 0.05:
                out.append((f"w{k}" if e < t1 - 0.5 else f"x{k}", s, e))
        return out

    class Monologue(ScriptedBackend):
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
            self.script.append(hyp(t0, t0 + len(audio) / SR))
            return super().transcribe(audio, t0=t0, prompt=prompt, language=language)

    be = Monologue([])
    rec = StreamingRecognizer(be, no_vad(buffer_trim_s=15.0))
    ups = feed(rec, 0.0, 40.0)
    assert max(r.window_s for r in rec.runs) <= 15.0 + 1e-6
    assert max(c.t1 - c.t0 for c in be.calls) <= 15.0 + 1e-6
    assert be.calls[-1].t0 > 20.0  # the window really moved
    # Lines of at most max_words (40) words; together every word, in order, none lost.
    last: dict[int, AsrUpdate] = {}
    for u in ups:
        last[u.segment_id] = u
    segments = [[w.text.strip() for w in last[i].committed_words] for i in sorted(last)]
    assert all(last[i].final for i in sorted(last)[:-1])
    assert [len(s) for s in segments[:-1]] == [40] * (len(segments) - 1)
    committed = [w for s in segments for w in s]
    assert committed == [f"w{k}" for k in range(len(committed))]
    assert len(committed) >= 75


def test_a_long_sentence_ends_at_a_clause_mark_or_at_max_words() -> None:
    words = [(f"w{k}," if k == 29 else f"w{k}", 0.1 + 0.3 * k, 0.3 + 0.3 * k) for k in range(100)]
    be = ScriptedBackend([words, words])
    rec = StreamingRecognizer(be, no_vad(buffer_trim_s=60.0))
    ups = feed(rec, 0.0, 31.0, block_s=1.0)
    ups += feed(rec, 31.0, 32.0, block_s=1.0)
    finals = [u.committed_text for u in ups if u.final]
    # A comma after 24 words ends the line; without one, 40 words do.
    assert finals[0] == " ".join(w for w, _, _ in words[:30])
    assert finals[1] == " ".join(w for w, _, _ in words[30:70])


def speech_probs(spans: list[tuple[float, float]]) -> OracleVad:
    return OracleVad([Word("x", s, e) for s, e in spans])


def test_vad_skips_silence_and_ends_the_utterance() -> None:
    be = ScriptedBackend(
        [
            [("Good", 0.5, 0.8), ("morn", 0.9, 1.4)],  # first run: 1.0 s after speech began
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all", 1.8, 2.4)],
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all", 1.8, 2.5)],  # utterance end
            [("Bonjour", 5.0, 5.6)],  # second utterance: a regular run at 6.0 s ...
            [("Bonjour", 5.0, 5.6)],  # ... and the final pass at the end of the stream
        ],
    )
    vad = speech_probs([(0.5, 2.5), (5.0, 5.6)])
    rec = StreamingRecognizer(be, with_vad(silence_end_s=0.8, speech_pad_s=0.2), vad)
    ups = feed(rec, 0.0, 6.0)
    ups += rec.finish(now=6.0)
    assert view(ups) == [
        (1.5, 0, "", "Good morn", False),
        (2.5, 0, "Good", "morning all", False),
        (3.4, 0, "Good morning all", "", True),  # 0.8 s after the last speech frame
        (6.0, 1, "", "Bonjour", False),
        (6.0, 1, "Bonjour", "", True),
    ]
    # Silence never reached the recogniser: windows are speech plus 0.2 s of padding, on the
    # VAD's 32 ms frame grid (speech frames 0.480-2.528 s and 4.992-5.600 s).
    assert [(c.t0, c.t1) for c in be.calls] == [
        (0.28, 1.5),
        (0.28, 2.5),
        (0.28, 2.728),
        (4.792, 6.0),
        (4.792, 5.8),
    ]
    # The language was detected until the utterance had 2 s of speech, then kept; the second
    # utterance (0.6 s of speech, too little to tell) is asked in the language before (and
    # its final pass ranks the languages: test_language_belief.py).
    assert [c.language for c in be.calls] == [None, None, "en", "en", "en"]
    assert [u.language for u in ups] == ["en", "en", "en", "en", "en"]
    assert ups[1].audio_t0 == 0.5


def test_a_long_enough_utterance_in_another_language_switches_and_drops_the_prompt() -> None:
    be = ScriptedBackend(
        [
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.4)],
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.4)],
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.4)],
            [("Goede", 5.0, 5.4)],  # 1 s into the next utterance: still English
            [("Goede", 5.0, 5.4), ("morgen", 5.4, 5.8)],  # 2 s: asked in English, heard Dutch
            [("Goedemorgen", 5.0, 5.8), ("allemaal.", 6.0, 6.8)],  # so recognised in Dutch
            [("Goedemorgen", 5.0, 5.8), ("allemaal.", 6.0, 6.8)],
        ],
        languages=["en", "en", "en", "en", "nl"],
    )
    vad = speech_probs([(0.5, 2.5), (4.5, 7.0)])
    rec = StreamingRecognizer(be, with_vad(silence_end_s=0.8, speech_pad_s=0.2), vad)
    ups = feed(rec, 0.0, 7.0)
    ups += rec.finish(now=7.0)
    assert [c.language for c in be.calls][3:] == ["en", "en", "nl", "nl"]
    assert [u.committed_text for u in ups if u.final] == [
        "Good morning all.",
        "Goedemorgen allemaal.",
    ]
    assert ups[-1].language == "nl"
    # English committed text is the prompt for English, not for the Dutch that follows.
    assert be.calls[3].prompt == "Good morning all."
    assert be.calls[4].prompt == "Good morning all."
    assert be.calls[5].prompt == be.calls[6].prompt == ""


def test_fixed_language_is_always_passed() -> None:
    be = ScriptedBackend([[("hola", 0.1, 0.5)]] * 3, languages=["es"])
    rec = StreamingRecognizer(be, no_vad(language="es"))
    feed(rec, 0.0, 2.0)
    assert [c.language for c in be.calls] == ["es", "es"]


def test_too_short_blip_is_not_recognised() -> None:
    be = ScriptedBackend([[("uh", 1.0, 1.1)]])
    rec = StreamingRecognizer(be, with_vad(), speech_probs([(1.0, 1.1)]))
    ups = feed(rec, 0.0, 3.0) + rec.finish(now=3.0)
    assert ups == [] and be.calls == []


def test_gap_in_the_audio_closes_the_utterance() -> None:
    be = ScriptedBackend([[("before", 0.1, 0.6)], [("before", 0.1, 0.6)], [("after", 5.2, 5.6)]])
    rec = StreamingRecognizer(be, no_vad())
    ups = feed(rec, 0.0, 1.0)
    ups += feed(rec, 5.0, 6.0)  # four seconds were lost (device gone, queue overflow)
    assert view(ups) == [
        (1.0, 0, "", "before", False),
        (5.1, 0, "before", "", True),
        (6.0, 1, "", "after", False),
    ]
    assert [(c.t0, c.t1) for c in be.calls] == [(0.0, 1.0), (0.0, 1.0), (5.0, 6.0)]


def test_retracted_words_are_reported_and_repeats_are_not() -> None:
    be = ScriptedBackend([[("uhm", 0.1, 0.5)], [], []])
    rec = StreamingRecognizer(be, no_vad())
    ups = feed(rec, 0.0, 3.0)
    # Run 2 no longer hears "uhm": the segment is emptied; run 3 changes nothing: no update.
    assert view(ups) == [(1.0, 0, "", "uhm", False), (2.0, 0, "", "", False)]
    assert len(be.calls) == 3


def test_vad_required_when_enabled() -> None:
    with pytest.raises(ValueError, match="speech-probability"):
        StreamingRecognizer(ScriptedBackend([]), StreamingOptions(vad=True))
    with pytest.raises(ValueError, match="16000 Hz"):
        StreamingRecognizer(ScriptedBackend([]), no_vad()).insert_audio(
            AudioBlock(np.zeros(10, np.float32), 0.0, 8000)
        )


def test_window_is_cut_even_when_hypotheses_never_agree() -> None:
    # Every run hears different words (a hopeless recogniser): nothing agrees, so before the
    # window passes the limit the words heard a chunk ago are committed to make a cut.
    class Babble(ScriptedBackend):
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
            t1 = t0 + len(audio) / SR
            n = len(self.calls)
            words = [(f"b{n}_{k}", t0 + k, t0 + k + 0.5) for k in range(int(t1 - t0))]
            self.script.append(words)
            return super().transcribe(audio, t0=t0, prompt=prompt, language=language)

    be = Babble([])
    rec = StreamingRecognizer(be, no_vad(buffer_trim_s=5.0))
    ups = feed(rec, 0.0, 12.0)
    assert max(c.t1 - c.t0 for c in be.calls) <= 5.0 + 1e-6
    # Run 5 (window 0-5 s) passed trim_s - min_chunk_s: the words that ended by 4 s were
    # committed and the window now starts at the last one's end.
    assert [c.t0 for c in be.calls][:7] == [0.0, 0.0, 0.0, 0.0, 0.0, 3.5, 3.5]
    assert (ups[4].committed_text, ups[4].tentative_text) == ("b4_0 b4_1 b4_2 b4_3", "b4_4")


# -- issue 14: windows too short to align, agreement at utterance ends, speech only, the tail
# guard, finished sentences as prefix, the adaptive cadence.


def test_a_window_too_short_to_align_never_reaches_the_recogniser() -> None:
    """A 10 ms window made faster-whisper raise IndexError in find_alignment (and can make
    CTranslate2 divide by zero); the policy sent one when the stream ended right after a
    block (and after a gap): it must not."""
    be = ScriptedBackend([[("uh", 0.0, 0.01)]] * 4)
    rec = StreamingRecognizer(be, no_vad())
    rec.insert_audio(AudioBlock(np.zeros(160, np.float32), 0.0))  # 10 ms, then the end
    assert rec.finish(now=0.1) == []
    rec.insert_audio(AudioBlock(np.zeros(4000, np.float32), 5.0))  # 0.25 s after a gap
    rec.insert_audio(AudioBlock(np.zeros(160, np.float32), 9.0))  # and another gap
    rec.finish(now=9.1)
    assert be.calls == []


def test_words_heard_only_by_the_last_pass_need_a_second_opinion() -> None:
    """ "Thank you." heard in the trailing silence by the pass at the utterance end alone (the
    passes before agreed on "Good morning" only) is not confirmed by a second pass over more
    of the silence, so it is never committed."""
    be = ScriptedBackend(
        [
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.5)],
            [("Good", 0.5, 0.8), ("morning", 0.9, 1.5)],
            [("Good", 0.5, 0.8), ("morning.", 0.9, 1.5), ("Thank", 1.55, 1.7), ("you.", 1.7, 1.8)],
            [("Good", 0.5, 0.8), ("morning.", 0.9, 1.5)],  # the confirming pass
        ]
    )
    opts = with_vad(tail_guard_s=0.5, language="en")
    rec = StreamingRecognizer(be, opts, speech_probs([(0.5, 1.8)]))
    ups = feed(rec, 0.0, 4.0)
    assert view(ups) == [
        (1.5, 0, "", "Good morning", False),
        (2.5, 0, "Good morning", "", False),
        (2.7, 0, "Good morning", "", True),
    ]
    # The final pass ends 0.2 s after the speech; the second one takes in the silence heard
    # since, with the committed words as its prefix.
    assert [(c.t0, c.t1, c.prefix) for c in be.calls[-2:]] == [
        (0.28, 2.024, "Good morning"),
        (0.28, 2.7, "Good morning"),
    ]


def test_confirmed_words_take_the_second_pass_punctuation() -> None:
    be = ScriptedBackend(
        [
            [("Rounder", 0.5, 1.2)],
            [("Rounder", 0.5, 1.2), ("and", 1.3, 1.5)],  # final pass: "and" not agreed yet
            [("Rounder.", 0.5, 1.2), ("and", 1.3, 1.5)],  # second pass hears it too
        ]
    )
    rec = StreamingRecognizer(be, with_vad(), speech_probs([(0.5, 1.5)]))
    ups = feed(rec, 0.0, 3.5)
    assert [u.committed_text for u in ups if u.final] == ["Rounder and"]


def test_a_word_over_silence_is_not_taken() -> None:
    be = ScriptedBackend([[("one", 0.5, 0.9), ("you", 1.5, 1.9)]] * 2)
    vad = speech_probs([(0.5, 0.9), (2.5, 3.9)])  # nobody spoke between 0.9 and 2.5 s
    rec = StreamingRecognizer(be, with_vad(min_chunk_s=0.5), vad)
    ups = feed(rec, 0.0, 2.2)
    assert {u.tentative_text for u in ups} | {u.committed_text for u in ups} <= {"", "one"}


def test_a_confident_word_beside_speech_is_taken_a_doubtful_one_is_not() -> None:
    # Silero can mark a soft word between louder ones silence (the MFA speaker's fourth
    # "word" in "word word word word word", tiny.en 0.99 sure of it): a word Whisper is sure
    # of is taken within 0.5 s of speech, one it doubts only where it overlaps speech.
    for p, expected in ((0.9, "one more two"), (0.3, "one two")):
        vad = speech_probs([(0.5, 1.1), (1.6, 2.6)])
        words = [("one", 0.5, 0.9, 0.9), ("more", 1.25, 1.45, p), ("two", 1.9, 2.3, 0.9)]
        opts = with_vad(min_chunk_s=0.5, language="en")
        rec = StreamingRecognizer(ScriptedBackend([words] * 8), opts, vad)
        ups = feed(rec, 0.0, 4.0)
        assert [u.committed_text for u in ups if u.final] == [expected]


def test_the_last_words_wait_until_they_are_clear_of_the_window_end() -> None:
    be = ScriptedBackend([[("so", 0.1, 0.4), ("there", 0.5, 0.9)]] * 3)
    rec = StreamingRecognizer(be, no_vad(tail_guard_s=0.5))
    ups = feed(rec, 0.0, 2.0)
    # Run 2 (at 1.0 s) agrees on both, but "there" ended 0.1 s before the window's end (it may
    # be "therefore" cut off): only "so" is committed.
    assert view(ups)[:2] == [(1.0, 0, "", "so there", False), (2.0, 0, "so there", "", False)]
    rec2 = StreamingRecognizer(
        ScriptedBackend([[("so", 0.1, 0.4), ("there", 0.5, 0.98)]] * 2),
        no_vad(tail_guard_s=0.5, min_chunk_s=1.0),
    )
    ups2 = feed(rec2, 0.0, 2.0)
    assert view(ups2) == [(1.0, 0, "", "so there", False), (2.0, 0, "so there", "", False)]


def test_finished_sentences_stay_in_the_window_as_the_prefix() -> None:
    be = ScriptedBackend(
        [
            [("One", 0.1, 0.3), ("two.", 0.4, 0.6)],
            [("One", 0.1, 0.3), ("two.", 0.4, 0.6), ("Three", 1.2, 1.5)],
            [("Three", 1.2, 1.5), ("four", 1.6, 1.9)],  # (a prefix-aware backend's answer)
            [("Three", 1.2, 1.5), ("four", 1.6, 1.9), ("five", 2.2, 2.6)],
            [("four", 1.6, 1.9), ("five", 2.2, 2.6)],
        ]
    )
    rec = StreamingRecognizer(be, no_vad(context_s=3.5))
    feed(rec, 0.0, 5.0)
    # The window keeps starting at 0: the committed text inside it is the prefix, not the
    # prompt, until the window is longer than 3.5 s; then it starts after "two." (0.6 s).
    assert [(c.t0, c.prompt, c.prefix) for c in be.calls] == [
        (0.0, "", ""),
        (0.0, "", ""),
        (0.0, "", "One two."),
        (0.0, "", "One two. Three"),
        (0.6, "One two.", "Three four"),
    ]


def costing(seconds: float) -> Callable[[], float]:
    """A cost clock on which every recogniser call takes ``seconds``."""
    ticks = itertools.count(0.0, seconds)
    return lambda: float(next(ticks))


def test_the_cadence_follows_the_recogniser_cost() -> None:
    """0.5 s of new audio between runs while a run costs little; longer when it costs more
    (a run may keep the recogniser busy 85% of the time); never above max_chunk_s."""
    for cost, chunk in ((0.05, 0.5), (0.425, 0.5), (0.68, 0.8), (1.7, 2.0), (4.0, 3.0)):
        be = ScriptedBackend([[("la", 0.1, 0.3)]] * 100)
        opts = no_vad(adaptive=True, min_chunk_s=0.5)
        rec = StreamingRecognizer(be, opts, cost_clock=costing(cost))
        feed(rec, 0.0, 20.0)
        assert rec.chunk_s == pytest.approx(chunk)
        ends = [r.audio_end for r in rec.runs]
        gaps = [round(b - a, 3) for a, b in itertools.pairwise(ends)][2:]
        assert min(gaps) >= chunk - 0.1 + 1e-9 and max(gaps) <= chunk + 0.1 + 1e-9
    # Without adapting it is always min_chunk_s.
    be = ScriptedBackend([[("la", 0.1, 0.3)]] * 100)
    rec = StreamingRecognizer(be, no_vad(min_chunk_s=1.0), cost_clock=costing(4.0))
    feed(rec, 0.0, 5.0)
    assert rec.chunk_s == 1.0 and len(rec.runs) == 5


def test_a_word_the_last_pass_misheard_is_confirmed_by_the_passes_around_it() -> None:
    """Two of three passes must agree: the pass before the end and the second pass hear
    "rounder", the final pass alone "rounded"; "rounder." is committed."""
    be = ScriptedBackend(
        [
            [("simpler,", 0.5, 1.2), ("rounder", 1.8, 2.3)],
            [("simpler,", 0.5, 1.2), ("rounder", 1.8, 2.3)],  # "rounder" too near the end
            [("simpler,", 0.5, 1.2), ("rounded", 1.8, 2.4)],  # final pass
            [("simpler,", 0.5, 1.2), ("rounder.", 1.8, 2.3)],  # second pass
        ]
    )
    opts = with_vad(tail_guard_s=0.5, language="en")
    rec = StreamingRecognizer(be, opts, speech_probs([(0.5, 2.4)]))
    ups = feed(rec, 0.0, 4.0)
    assert view(ups)[1] == (2.5, 0, "simpler,", "rounder", False)
    assert [u.committed_text for u in ups if u.final] == ["simpler, rounder."]


def test_the_last_committed_word_heard_again_after_the_prefix_is_dropped() -> None:
    """A prefix-aware recogniser returns only words after the committed text; at a window
    that starts where "typography" ended it may still hear the word's end again."""
    be = ScriptedBackend(
        [
            [("fine", 0.1, 0.4), ("typography.", 0.5, 1.0)],
            [("fine", 0.1, 0.4), ("typography.", 0.5, 1.0)],
            [("typography,", 1.0, 1.2), ("the", 1.3, 1.5)],  # after the prefix
            [("typography,", 1.0, 1.2), ("the", 1.3, 1.5)],
        ],
        after_prefix=True,
    )
    rec = StreamingRecognizer(be, no_vad())
    ups = feed(rec, 0.0, 4.0)
    assert [u.committed_text for u in ups if u.final] == ["fine typography."]
    assert ups[-1].committed_text == "the"


def test_a_line_heard_again_over_the_committed_words_after_the_prefix_is_dropped() -> None:
    """After committed words inside the window (the prefix) Whisper may write the line they
    misheard again, rightly, over their own audio: Whisper base, after a prompt of "Please
    enter your agent number followed by the pound key." twice, committed it a third time
    over "Please enter your password followed by the pound key." (two passes agreed), then
    wrote that sentence after it with the same times (docs/benchmarks/asr.md, session Y).
    Words wholly on half a second or more of the committed words' audio are not new; one
    that starts on it and ends after it is."""
    line = [("Please", 0.1, 0.4), ("enter", 0.4, 0.7), ("your", 0.7, 0.9)]
    wrong = [*line, ("agent", 0.9, 1.3), ("number.", 1.3, 1.8)]
    again = [*line, ("password.", 0.9, 1.75), ("Thanks.", 1.75, 2.3)]
    be = ScriptedBackend(
        [
            wrong[:2],
            wrong,
            wrong[2:],  # after the prefix "Please enter"
            again,  # after the prefix "Please enter your agent number."
            again,
        ],
        after_prefix=True,
    )
    rec = StreamingRecognizer(be, no_vad(context_s=8.0))
    ups = feed(rec, 0.0, 5.0)
    assert [c.prefix for c in be.calls] == [
        "",
        "",
        "Please enter",
        "Please enter your agent number.",
        "Please enter your agent number.",
    ]
    assert [u.committed_text for u in ups if u.final] == [
        "Please enter your agent number.",
        "Thanks.",
    ]


def test_a_short_word_the_aligner_squeezed_onto_the_committed_words_is_new() -> None:
    """tiny.en's aligner gave "the" of "representatives of the household" 0.02 s inside
    the committed "of" (tune-en at 130.9 s): one short word on the committed
    audio is the aligner's squeeze, not the words heard again, and stays."""
    be = ScriptedBackend(
        [
            [("All", 0.1, 0.4), ("of", 0.4, 0.9)],
            [("All", 0.1, 0.4), ("of", 0.4, 0.9), ("the", 0.9, 1.0)],
            [("the", 0.88, 0.9), ("house.", 0.9, 1.5)],  # after the prefix "All of"
            [("house.", 0.9, 1.5)],
        ],
        after_prefix=True,
    )
    rec = StreamingRecognizer(be, no_vad(context_s=8.0))
    ups = feed(rec, 0.0, 4.0)
    assert [c.prefix for c in be.calls] == ["", "", "All of", "All of the"]
    assert [u.committed_text for u in ups if u.final] == ["All of the house."]


def test_a_word_the_aligner_put_at_the_window_start_is_its_prefix_not_its_prompt() -> None:
    """After "good." the window starts where that sentence ended; tiny.en's aligner gave the
    next word, "All", no length there (report-en at 83 s). It is committed and inside the
    window: the prefix, which Whisper goes on from, not the prompt's last word, after which
    it wrote "right, thanks." and then "All right, thanks." on its audio (both committed)."""
    first = [("probably", 0.1, 0.3), ("good.", 0.3, 0.6), ("All", 0.6, 0.6)]
    be = ScriptedBackend(
        [
            first,
            [*first, ("right,", 1.2, 1.5)],
            [("right,", 1.2, 1.5), ("thanks.", 1.6, 1.9)],  # after the prefix "All"
            [("right,", 1.2, 1.5), ("thanks.", 1.6, 1.9)],
        ],
        after_prefix=True,
    )
    rec = StreamingRecognizer(be, no_vad(context_s=1.0))
    ups = feed(rec, 0.0, 4.0)
    assert [(c.t0, c.prompt, c.prefix) for c in be.calls] == [
        (0.0, "", ""),
        (0.0, "", ""),
        (0.6, "probably good.", "All"),
        (0.6, "probably good.", "All right,"),
    ]
    assert [u.committed_text for u in ups if u.final] == ["probably good.", "All right, thanks."]


def test_the_recogniser_hands_hotwords_to_its_backend_and_closes_it() -> None:
    be = ScriptedBackend([])
    rec = StreamingRecognizer(be, no_vad(), notice="speech model x: damaged")
    rec.set_hotwords("Subiaco. Mozilla.")
    assert be.hotwords == ["Subiaco. Mozilla."]
    assert rec.notice == "speech model x: damaged"
    assert not be.closed
    rec.close()
    assert be.closed


def test_recognitions_count_the_backend_calls_that_worked() -> None:
    """Most calls only buffer audio, and a failed recognition is no recognition: the failure
    policy reads this count to know when a run of failures ended."""

    class Failing(ScriptedBackend):
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
            if len(self.calls) == 1:
                self.calls.append(Call(t0, t0, prompt, language, prefix))
                raise IndexError("time_indices[jumps]")
            return super().transcribe(audio, t0=t0, prompt=prompt, language=language, prefix=prefix)

    be = Failing([[("one", 0.0, 0.3)]] * 5)
    rec = StreamingRecognizer(be, no_vad(min_chunk_s=1.0, adaptive=False))
    feed(rec, 0.0, 0.9)
    assert rec.recognitions == 0 and be.calls == []  # buffering only
    feed(rec, 0.9, 1.0)
    assert rec.recognitions == 1
    with pytest.raises(IndexError):
        feed(rec, 1.0, 2.0)
    assert rec.recognitions == 1 and len(be.calls) == 2
    feed(rec, 2.0, 3.0)
    assert rec.recognitions == 2


# -- issue 26: an utterance heard with the words said just before it


def test_a_new_utterance_is_recognised_with_the_words_said_just_before_it() -> None:
    """lookback_s: a new utterance's window starts on the committed words said within
    lookback_s before it (their text is the prefix, what came earlier the prompt), so a short
    utterance is not recognised alone; after a longer pause it starts on its own speech."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    hello, bye = [("Hello.", 4.0, 4.5)], [("Bye.", 14.0, 14.5)]
    be = ScriptedBackend([first, first, first, hello, hello, bye, bye])
    vad = speech_probs([(0.5, 2.5), (4.0, 4.5), (14.0, 14.5)])
    rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0, language="en"), vad)
    ups = feed(rec, 0.0, 16.0)
    ups += rec.finish(now=16.0)
    # "morning" began 3.1 s before the second utterance, "all." within 3 s: the window starts
    # just before "all.". The third utterance comes 9.5 s after the second: its own window.
    assert [(c.t0, c.prompt, c.prefix) for c in be.calls[3:]] == [
        (1.7, "Good morning", "all."),
        (1.7, "Good morning", "all."),
        (13.784, "Good morning all. Hello.", ""),
        (13.784, "Good morning all. Hello.", ""),
    ]
    assert [u.committed_text for u in ups if u.final] == ["Good morning all.", "Hello.", "Bye."]
    # Without it the second utterance is recognised alone (before issue 26: always).
    be2 = ScriptedBackend([first, first, first, hello])
    rec2 = StreamingRecognizer(be2, with_vad(language="en"), speech_probs([(0.5, 2.5), (4.0, 4.5)]))
    feed(rec2, 0.0, 6.0)
    assert be2.calls[3].t0 == pytest.approx(3.8) and be2.calls[3].prefix == ""


class LevelVad:
    """Speech probabilities held at a level over spans of the stream, 0 elsewhere."""

    def __init__(self, levels: list[tuple[float, float, float]]) -> None:
        self._levels = levels
        self._frames = self._rest = 0

    def reset(self) -> None:
        self._rest = 0

    def __call__(self, samples: Samples) -> np.ndarray:
        n, self._rest = divmod(self._rest + len(samples), FRAME)
        t = (self._frames + np.arange(n)) * FRAME_S
        self._frames += n
        out = np.zeros(n, np.float32)
        for t0, t1, p in self._levels:
            out[(t + FRAME_S > t0) & (t < t1)] = p
        return out


@pytest.mark.parametrize(
    ("level", "later", "t0", "expected"),
    [
        (0.2, 0.0, 2.5, "probably different."),  # doubted: the window takes in the pause
        (0.05, 0.0, 3.8, "different."),  # a quiet pause: the utterance's own window
        (0.2, 2.0, 5.784, "different."),  # doubted, but longer than bridge_s (3 s)
    ],
)
def test_a_pause_silero_doubts_is_recognised_with_the_utterance_after_it(
    level: float, later: float, t0: float, expected: str
) -> None:
    """The MFA speaker with a cold drawls "probably sound quite different than the" between
    two utterances, and Silero scores it 0.1-0.45: under speech, it was never recognised.
    bridge_s: a pause of at most 3 s after the last committed word with bridge_doubt_s of
    such frames is taken into the next utterance's window, and a word Whisper is sure of
    there is kept; a doubtful one ("um", 0.2) is not, nor anything over a quiet pause."""
    first = [("I", 0.5, 0.7), ("have", 0.7, 1.0), ("a", 1.0, 1.1), ("cold.", 1.1, 2.5)]
    after = [
        ("probably", 3.1, 3.5, 0.9),
        ("um", 3.6, 3.7, 0.2),
        ("different.", 4.0 + later, 4.5 + later, 0.9),
    ]
    be = ScriptedBackend([first] * 2 + [after] * 2)
    vad = LevelVad([(0.5, 2.5, 1.0), (2.6, 3.8, level), (4.0 + later, 4.5 + later, 1.0)])
    rec = StreamingRecognizer(be, with_vad(language="en"), vad)
    ups = feed(rec, 0.0, 8.0) + rec.finish(now=8.0)
    assert [(c.t0, c.prefix) for c in be.calls[2:]] == [(pytest.approx(t0), "")] * 2
    assert [u.committed_text for u in ups if u.final] == ["I have a cold.", expected]


def test_a_pause_taken_in_goes_with_the_words_before_when_the_language_changes() -> None:
    """A doubted pause after English words, then a line Whisper tells as French: once its
    language is told, its window starts on its own speech and the pass is recognised again
    from there (the voice in the pause was the English speaker's; base wrote a Swedish
    line's numbers as digits from a window over the pause before it, asr.md session N). In
    the same language the pause stays in."""
    first = [("I", 0.5, 0.7), ("have", 0.7, 1.0), ("a", 1.0, 1.1), ("cold.", 1.1, 2.5)]
    after = [("peut-être", 3.1, 3.5, 0.9), ("différent.", 4.0, 4.5, 0.9)]
    own = [("différent.", 4.0, 4.5, 0.9)]
    for heard, windows, expected in (
        ("fr", [(2.5, "en"), (2.5, "en"), (3.8, "fr"), (3.8, "fr")], "différent."),
        ("en", [(2.5, "en"), (2.5, "en")], "peut-être différent."),
    ):
        be = ScriptedBackend([first] * 2 + [after, after, own, own], languages=["en"] * 2 + [heard])
        vad = LevelVad([(0.5, 2.5, 1.0), (2.6, 3.8, 0.2), (4.0, 4.5, 1.0)])
        rec = StreamingRecognizer(be, with_vad(), vad)
        ups = feed(rec, 0.0, 7.0) + rec.finish(now=7.0)
        assert [(c.t0, c.language) for c in be.calls[2:]] == windows
        assert [(u.committed_text, u.language) for u in ups if u.final] == [
            ("I have a cold.", "en"),
            (expected, heard),
        ]


def test_a_window_looks_back_only_to_a_pause_inside_the_words_before() -> None:
    """The aligner writes an utterance's words end to end, its first word at its window's
    start: with no pause of 0.1 s inside the words said within lookback_s the next utterance
    is recognised alone (looking back on them in any case was measured worse: asr.md,
    session L); with one, from a tenth of a second before the word after it."""
    for first, t0, prefix in (
        ([("Good", 0.3, 0.9), ("morning", 0.9, 1.7), ("all.", 1.7, 2.5)], 3.8, ""),
        ([("Good", 0.3, 0.9), ("morning", 0.9, 1.7), ("all.", 1.8, 2.5)], 1.7, "all."),
    ):
        be = ScriptedBackend([first, first, first, [("Hello.", 4.0, 4.5)]])
        vad = speech_probs([(0.5, 2.5), (4.0, 4.5)])
        rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0, language="en"), vad)
        feed(rec, 0.0, 6.0)
        assert (be.calls[3].t0, be.calls[3].prefix) == (pytest.approx(t0), prefix)


def test_a_window_does_not_look_back_over_words_never_committed() -> None:
    """The passes of an utterance disagreed on its last words, so they were never committed:
    a window over their audio with only the committed words as its prefix had Whisper base
    write them again as the next line's words, and that line's own were lost ("iepen en
    zwart." for "Ik vrees dat alleen ik hieruit weg kan komen": asr.md, session V). With the
    speech after the last committed word no more than the end of a word, it looks back."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.4), ("all", 1.6, 1.9)]
    for speech_end, t0, prefix in ((2.5, 3.8, ""), (2.1, 1.5, "all")):
        be = ScriptedBackend([first, first, first, [("Hello.", 4.0, 4.5)]])
        vad = speech_probs([(0.5, speech_end), (4.0, 4.5)])
        rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0, language="en"), vad)
        feed(rec, 0.0, 6.0)
        assert (be.calls[3].t0, be.calls[3].prefix) == (pytest.approx(t0), prefix), speech_end


def test_a_window_that_hears_nothing_after_the_words_looked_back_on_gives_them_up() -> None:
    """Whisper may end its text on the committed words a window looks back on (an end of
    text after their full stop): with a second of this utterance's speech heard nothing of,
    the pass is recognised again from its own speech, and the utterance stays alone (seven
    seconds of a Spanish reading were lost so: asr.md, session V)."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    line = [("Hello", 4.0, 4.5), ("there.", 4.6, 5.9)]
    be = ScriptedBackend([first] * 3 + [[], [], line[:1], line, line, line])
    vad = speech_probs([(0.5, 2.5), (4.0, 6.0)])
    rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0, language="en"), vad)
    ups = feed(rec, 0.0, 8.0)
    # Nothing after 1 s of its speech (5.0 s: under a second by the frames), nothing after
    # 2 s: again from 3.8 s, and from there on.
    assert [(c.t0, c.t1, c.prefix) for c in be.calls[3:6]] == [
        (1.7, 5.0, "all."),
        (1.7, 6.0, "all."),
        (3.8, 6.0, ""),
    ]
    assert all(c.t0 == 3.8 for c in be.calls[5:])
    assert [u.committed_text for u in ups if u.final] == ["Good morning all.", "Hello there."]


def test_the_language_of_an_utterance_is_told_from_its_own_audio() -> None:
    """With a detected language, an utterance is recognised alone until its language is told
    from its own audio (the words before, in their language, would have Whisper go on in
    it); in the language of the words before, its window then looks back on them."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    later = [("Bonjour", 4.0, 4.6), ("à", 5.0, 5.2), ("tous.", 5.3, 5.6)]
    script = [first, first, first, [("Bon", 4.0, 4.5)], later[:2], later[:2], later, later]
    for lang, calls in (
        ("fr", [(3.8, "fr", ""), (3.8, "fr", "Bonjour à")]),  # French: again, alone
        ("en", [(1.7, "en", "all. Bonjour à")] * 2),  # English: the last passes look back
    ):
        be = ScriptedBackend(script, languages=["en"] * 5 + [lang] * 3)
        vad = speech_probs([(0.5, 2.5), (4.0, 7.0)])
        rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0), vad)
        ups = feed(rec, 0.0, 9.0)
        assert [(c.t0, c.language, c.prefix) for c in be.calls[3:]] == [
            (3.8, "en", ""),  # under 2 s of speech: the language before, alone
            (3.8, "en", ""),
            (3.8, "en", ""),  # 3 s: its language is told from it (ranked)
            *calls,
        ], lang
        assert [u.committed_text for u in ups if u.final] == [
            "Good morning all.",
            "Bonjour à tous.",
        ]


def test_an_english_only_model_has_its_language_fixed() -> None:
    """tiny.en never detects a language: its utterances look back from the first run."""

    class EnglishOnly(ScriptedBackend):
        multilingual = False

    rec = StreamingRecognizer(EnglishOnly([]), with_vad(), speech_probs([]))
    assert rec.opt.language == "en"


def test_a_short_line_takes_the_language_of_those_before_and_a_long_one_its_own() -> None:
    """Three English lines, then one of 1.5 s heard as Dutch (Whisper is often wrong on so
    little): still English. Then 3 s heard as Dutch: Dutch at once, recognised again in it."""
    lines = [(0.5, 2.5), (4.0, 6.0), (7.5, 9.5), (11.0, 12.5), (14.0, 17.0)]
    heard = ["en"] * 9 + ["nl"] * 20
    be = ScriptedBackend([], languages=heard)
    rec = StreamingRecognizer(be, with_vad(), speech_probs(lines))
    feed(rec, 0.0, 19.0)
    short = [c.language for c in be.calls if 10.7 <= c.t0 < 13.0]
    long = [c.language for c in be.calls if c.t0 >= 13.7]
    assert short == ["en", "en", "en"]  # two runs and the final pass: still English
    assert long == ["en", "en", "nl", "nl", "nl"]  # at 2 s: Dutch, again in it, two more


def test_a_line_language_is_told_with_the_seconds_of_the_stream_before_it() -> None:
    """Whisper base names a Dutch line Portuguese from its own window (its first language
    was wrong for 37 of the development set's 131 lines): with a backend that ranks any
    audio, the last 12 s of the stream (the Dutch lines before it) are asked too, and its
    own window weighs in per 2 s of its speech: Dutch 0.9 in the stream and Portuguese 0.6
    in the window make it Dutch (log 0.9 + log 0.01 against log 0.01 + log 0.6)."""

    @dataclass
    class Ranking(ScriptedBackend):
        ranked: list[tuple[float, float]] = field(default_factory=list)  # (t1, seconds)

        def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
            self.ranked.append((self.calls[-1].t1 if self.calls else 0.0, len(audio) / SR))
            return (("nl", 0.9), ("en", 0.02))

    lines = [(0.5, 2.5), (4.0, 6.0), (7.5, 9.5), (11.0, 14.0)]
    heard = ["nl"] * 9 + ["pt"] * 20  # the fourth line's own window: Portuguese at 0.9
    for be in (
        ScriptedBackend([], languages=heard, confidence=0.6),
        Ranking([], languages=heard, confidence=0.6),
    ):
        rec = StreamingRecognizer(be, with_vad(), speech_probs(lines))
        feed(rec, 0.0, 16.0)
        last = [c.language for c in be.calls if c.t0 >= 10.7]
        if isinstance(be, Ranking):
            assert last == ["nl"] * 4
            # One ranking per line, at its decision: the 12 s up to the end of that pass
            # (all the stream there is, at first).
            assert len(be.ranked) == len(lines)
            assert all(s == pytest.approx(min(12.0, t1), abs=1e-3) for t1, s in be.ranked)
            assert be.ranked[-1][0] > 12.0
        else:  # its own window alone
            assert last == ["nl", "nl", "pt", "pt", "pt"]


def test_a_ranking_that_fails_leaves_the_line_its_own_window() -> None:
    """A worker that crashes ranking the stream costs that ranking only: the line's own
    window tells its language, as without a ranking backend."""

    class Failing(ScriptedBackend):
        def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
            raise AsrError("CTranslate2 crashed on a 12.0 s window (SIGSEGV)")

    lines = [(0.5, 2.5), (4.0, 6.0), (7.5, 9.5), (11.0, 14.0)]
    heard = ["nl"] * 9 + ["pt"] * 20
    be = Failing([], languages=heard)
    rec = StreamingRecognizer(be, with_vad(), speech_probs(lines))
    feed(rec, 0.0, 16.0)
    assert [c.language for c in be.calls if c.t0 >= 10.7] == ["nl", "nl", "pt", "pt", "pt"]


def test_until_a_line_is_told_it_is_heard_in_the_language_the_stream_was_ranked() -> None:
    """Three English lines, then a Dutch one told Dutch by the stream's last 12 s: the next
    line's passes before its own decision are asked in Dutch, the stream's language at the
    decision before. The languages its own windows were heard in still say English (one
    Dutch line against three English ones), and without a ranking backend they decide."""

    class Ranking(ScriptedBackend):
        def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
            if self.calls[-1].t1 > 10.5:  # the Dutch lines are in the last 12 s
                return (("nl", 0.9), ("en", 0.05))
            return (("en", 0.9),)

    lines = [(0.5, 2.5), (4.0, 6.0), (7.5, 9.5), (11.0, 12.5), (14.0, 15.5)]
    heard = ["en"] * 9 + ["nl"] * 20
    for be in (ScriptedBackend([], languages=heard), Ranking([], languages=heard)):
        rec = StreamingRecognizer(be, with_vad(), speech_probs(lines))
        feed(rec, 0.0, 17.0)
        fourth = [c.language for c in be.calls if 10.7 <= c.t0 < 13.0]
        fifth = [c.language for c in be.calls if c.t0 >= 13.7]
        if isinstance(be, Ranking):
            assert fourth == ["en", "en", "en", "nl"]  # told Dutch at its end: again in it
            assert fifth == ["nl", "nl", "nl"]  # from its first pass
        else:
            assert fourth == ["en", "en", "en"]  # a short line: the language of those before
            assert fifth == ["en", "en", "en", "nl"]  # told Dutch at its end


def test_a_short_line_in_the_language_before_is_heard_with_the_line_before_it() -> None:
    """A line of 1.5 s is told at its end, and was then recognised alone (offline decoding
    hears it in 30 s; the Dutch actors' short lines lost most of their words so). With a
    backend that ranks any audio its language is told before that pass, from rankings of
    its own window and of the stream's last 12 s: in the language of the words before, the
    pass looks back on them (one call, their text as its prefix); in another, it is
    recognised alone in its language at once; a ranking that fails leaves the old rule."""

    @dataclass
    class Ranking(ScriptedBackend):
        own: str = "en"
        fails: bool = False
        ranked: list[float] = field(default_factory=list)  # seconds ranked

        def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
            self.ranked.append(round(len(audio) / SR, 2))
            if self.fails:
                raise AsrError("CTranslate2 crashed (SIGSEGV)")
            if len(audio) / SR > 4.0:  # the stream's last seconds: mostly English
                return (("en", 0.5), ("fr", 0.4))
            if self.calls[-1].t1 < 3.5:  # the first line, all the stream there is
                return (("en", 0.9),)
            return ((self.own, 0.9),)

    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    line = [("Hello", 4.0, 4.5), ("there.", 4.6, 5.5)]
    alone = [(3.8, "en", ""), (3.8, "en", "")]  # 1 and 1.5 s: the language before, alone
    # Rankings: the first line's 2.5 s at its end (no words before it: the old rule); the
    # second's own 1.9 s and the stream's last 5.7 s at its end (tried in each case).
    for own, fails, calls, ranked in (
        ("en", False, [*alone, (1.7, "en", "all.")], [2.5, 1.9, 5.7]),
        ("fr", False, [*alone, (3.8, "fr", "")], [2.5, 1.9, 5.7]),
        ("en", True, [*alone, (3.8, "en", "")], [2.5, 1.9, 5.7]),  # (the old rule)
    ):
        be = Ranking([first] * 3 + [line] * 3, own=own, fails=fails)
        vad = speech_probs([(0.5, 2.5), (4.0, 5.5)])
        rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=8.0), vad)
        ups = feed(rec, 0.0, 8.0)
        assert [(c.t0, c.language, c.prefix) for c in be.calls[3:]] == calls, (own, fails)
        assert be.ranked == ranked, (own, fails)
        assert [u.committed_text for u in ups if u.final] == ["Good morning all.", "Hello there."]


def test_a_window_gives_up_the_words_looked_back_on_once_it_is_long() -> None:
    """The words before are for a short utterance: once the window is longer than context_s
    it starts on the utterance's own speech (a longer window costs the encoder more)."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    be = ScriptedBackend([first, first, first] + [[("Hello", 4.0, 4.5)]] * 8)
    vad = speech_probs([(0.5, 2.5), (4.0, 8.0)])
    rec = StreamingRecognizer(be, with_vad(lookback_s=3.0, context_s=4.0, language="en"), vad)
    feed(rec, 0.0, 8.0)
    # Windows 1.7-5.0 (3.3 s) and 1.7-6.0 (4.3 s: longer than 4 s), then from 3.8 s on.
    assert [(c.t0, c.t1) for c in be.calls[3:]] == [(1.7, 5.0), (1.7, 6.0), (3.8, 7.0), (3.8, 8.0)]


def test_words_are_committed_only_once_the_utterance_language_is_told() -> None:
    """With a detected language, what an utterance's first passes hear in the language before
    is shown but not committed: a Dutch line after English ones, heard as English twice
    before its language is told, would otherwise keep the English words (and have them as
    the prompt and prefix of every Dutch pass after)."""
    english = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 3.4)]
    misheard = [("Good", 5.5, 5.9), ("morning", 5.9, 6.3)]  # Dutch speech, asked in English
    dutch = [("Goedemorgen", 5.5, 6.3), ("allemaal.", 6.5, 8.8)]
    be = ScriptedBackend(
        [english] * 3 + [[], misheard, misheard, dutch, dutch, dutch],
        languages=["en"] * 6 + ["nl"] * 4,
    )
    vad = speech_probs([(0.5, 3.5), (5.5, 9.0)])
    rec = StreamingRecognizer(be, with_vad(language_speech_s=3.0), vad)
    ups = feed(rec, 0.0, 11.0)
    # 1 s and 2 s into the Dutch line: English; at 3 s told Dutch and recognised again.
    assert [(c.t1, c.language) for c in be.calls[4:8]] == [
        (6.5, "en"),
        (7.5, "en"),
        (8.5, "en"),
        (8.5, "nl"),
    ]
    second = [u for u in ups if u.segment_id == 1]
    assert [(u.committed_text, u.tentative_text) for u in second] == [
        ("", "Good morning"),  # shown, never committed
        ("", "Goedemorgen allemaal."),
        ("Goedemorgen allemaal.", ""),
    ]
    assert [u.committed_text for u in ups if u.final] == [
        "Good morning all.",
        "Goedemorgen allemaal.",
    ]


def test_a_word_without_a_letter_is_not_taken() -> None:
    # Over music Whisper writes "." alone (tiny.en, the development set's game music): it
    # would be shown, and translated, as a line of its own.
    vad = speech_probs([(0.5, 3.0)])
    words = [(".", 0.5, 0.9, 0.9), ("...", 1.0, 1.4, 0.9), ("Ja.", 2.0, 2.4, 0.9)]
    rec = StreamingRecognizer(ScriptedBackend([words] * 8), with_vad(language="en"), vad)
    ups = feed(rec, 0.0, 5.0) + rec.finish(now=5.0)
    assert [u.committed_text for u in ups if u.final] == ["Ja."]
    assert all("." not in u.tentative_text.replace("Ja.", "") for u in ups)


@dataclass
class Spoken(ScriptedBackend):
    """Hears the given words (text, start, end, language) wherever a window holds them, in
    the language asked, or else in the language of the last of them (no script)."""

    words: list[tuple[str, float, float, str]] = field(default_factory=list)

    def hears(
        self, t0: float, t1: float, language: str | None
    ) -> tuple[list[tuple[str, float, float]], str]:
        said = [w for w in self.words if t0 - 1e-6 <= w[1] and w[2] <= t1 + 1e-6]
        return [w[:3] for w in said], said[-1][3] if said else language or "en"


def test_the_prompt_holds_only_the_text_committed_since_the_language_changed() -> None:
    """A pass's prompt was the last 200 characters committed, whatever their language (only
    a last line in another language left it empty): after Dutch lines, a Spanish reading's
    window had a prompt of Dutch then Spanish, and Whisper base gave it a no-speech
    probability over 0.8: 23 words lost. Now only the words since the language changed."""
    be = Spoken(
        [],
        words=[
            ("Good", 0.5, 1.0, "en"),
            ("morning.", 1.2, 2.5, "en"),
            ("Goedemorgen", 5.0, 6.0, "nl"),
            ("allemaal.", 6.2, 7.5, "nl"),
            ("Hallo", 10.0, 11.0, "nl"),
            ("daar.", 11.2, 12.5, "nl"),
        ],
    )
    rec = StreamingRecognizer(be, with_vad(), speech_probs([(0.5, 2.5), (5.0, 7.5), (10.0, 12.5)]))
    ups = feed(rec, 0.0, 15.0)
    assert [(u.committed_text, u.language) for u in ups if u.final] == [
        ("Good morning.", "en"),
        ("Goedemorgen allemaal.", "nl"),
        ("Hallo daar.", "nl"),
    ]
    dutch = [(c.t0 > 9.0, c.prompt) for c in be.calls if c.language == "nl"]
    assert dutch == [(False, "")] * 2 + [(True, "Goedemorgen allemaal.")] * 4


@dataclass
class RankingBackend(ScriptedBackend):
    """Ranks the languages of audio by raising ``fails``."""

    fails: Exception = field(default_factory=lambda: RuntimeError("no"))

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        raise self.fails


def test_an_engine_gone_while_ranking_languages_is_not_taken_for_a_failed_ranking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stop closes the worker under a ranking call: that was logged as a failed ranking with
    its traceback (on the terminal at a Quit behind the speech), and an engine that crashed
    there was taken for one. Gone, it is said as a recognition's is; a ranking that fails
    otherwise costs the ranking only."""
    from subtitler.isolation.worker import WorkerClosed, WorkerCrashed

    audio = np.zeros(SR, np.float32)
    rec = StreamingRecognizer(RankingBackend([]), no_vad())
    assert rec._rank(audio) == ()
    assert "ranking the languages of 1.0 s failed" in caplog.text
    caplog.clear()
    for gone in (WorkerClosed("the engine was closed"), WorkerCrashed("SIGSEGV", -11)):
        rec = StreamingRecognizer(RankingBackend([], fails=gone), no_vad())
        assert rec._rank(audio) == ()
        assert rec._failure is gone  # raised by process(), as a recognition's failure is
    assert caplog.text == ""


def test_a_line_with_nothing_committed_is_heard_at_its_end_over_the_speech_before_it() -> None:
    """hear_before_s: a line whose words all waited for its end (a short line) is heard at
    its end once, in a window over the committed speech said up to hear_before_s before it
    and without a prefix, as offline decoding hears a line; of what that pass writes, the
    words on this line's own audio are committed (the words before heard again are not)."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    hello = [("Hello", 4.0, 4.2), ("there.", 4.25, 4.5)]
    whole = [("Good", 0.45, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.6), *hello]
    be = ScriptedBackend([first] * 3 + [whole])
    vad = speech_probs([(0.5, 2.5), (4.0, 4.5)])
    rec = StreamingRecognizer(be, with_vad(hear_before_s=10.0, language="en"), vad)
    ups = feed(rec, 0.0, 7.0)
    # The line's one pass, at its end, from before "Good" (nothing committed before that).
    assert [(c.t0, c.t1, c.prompt, c.prefix) for c in be.calls[3:]] == [(0.4, 4.712, "", "")]
    assert [u.committed_text for u in ups if u.final] == ["Good morning all.", "Hello there."]
    # Without it the line is heard alone.
    be2 = ScriptedBackend([first] * 3 + [hello, hello])
    rec2 = StreamingRecognizer(be2, with_vad(language="en"), speech_probs([(0.5, 2.5), (4.0, 4.5)]))
    feed(rec2, 0.0, 7.0)
    assert (be2.calls[3].t0, be2.calls[3].prompt) == (3.8, "Good morning all.")


def test_the_benchmarks_steady_clock_keeps_an_english_only_model_english() -> None:
    """The steady clock's wrapper hid whether the model is multilingual: tiny.en, with no
    language set, was run there as a model whose language is yet to be told (its words
    waiting for it), which the app never does."""

    @dataclass
    class EnglishOnly(ScriptedBackend):
        multilingual: bool = False

    for backend in (EnglishOnly([]), SteadyClock(0.1).wrap(EnglishOnly([]))):
        rec = StreamingRecognizer(backend, with_vad(), speech_probs([]))
        assert rec.opt.language == "en"


def test_a_line_heard_over_the_speech_before_keeps_only_the_words_on_its_own_audio() -> None:
    """The aligner may end the words before early (a repeated "word, word, word" committed
    over half of its audio): the free pass hears them again after the last committed word,
    and they are not this line's. Where that pass writes nothing on the line (Whisper ended
    its text after the words before), the line is heard by its own passes."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.0)]
    hello = [("Hello", 4.0, 4.2), ("there.", 4.25, 4.5)]
    late = [("Good", 0.45, 0.8), ("morning", 0.9, 1.6), ("all", 1.8, 2.1), ("all.", 2.1, 2.5)]
    for heard, last in (([*late, *hello], 0.4), (late, 3.8)):
        # The line's pass at 5.0 s (its own window), then its last: over the line before.
        be = ScriptedBackend([first] * 3 + [hello[:1], heard, hello, hello])
        vad = speech_probs([(0.5, 2.5), (4.0, 4.5)])
        rec = StreamingRecognizer(be, with_vad(hear_before_s=10.0, language="en"), vad)
        ups = feed(rec, 0.0, 7.0)
        assert [c.t0 for c in be.calls[3:5]] == [3.8, 0.4]
        assert be.calls[-1].t0 == last
        assert [u.committed_text for u in ups if u.final] == ["Good morning all.", "Hello there."]


@dataclass
class Timeline(ScriptedBackend):
    """Hears the words of one fixed timeline (``script[0]``) that lie in its window."""

    def hears(
        self, t0: float, t1: float, language: str | None
    ) -> tuple[Sequence[tuple[str, float, float] | tuple[str, float, float, float]], str]:
        words = [w for w in self.script[0] if w[1] >= t0 - 0.05 and w[2] <= t1]
        return words, self.languages[0]


def test_a_short_line_in_a_detected_language_is_committed_whole_at_its_end() -> None:
    """line_waits_s: with the language detected, a line of under line_waits_s of speech
    after committed speech commits nothing during its passes (its first two seconds wait for
    its language anyway); at its end it is heard once over the speech before it, whole (Whisper
    base heard the Dutch actors' 2-4 s lines better so than from their own short windows).
    With its language fixed (an English-only model), a line commits as it goes."""
    first = [("Good", 0.5, 0.8), ("morning", 0.9, 1.6), ("all.", 1.8, 2.5)]
    line = [("Hello", 4.0, 4.4), ("there", 4.5, 5.0), ("my", 5.6, 5.9), ("friend.", 6.0, 6.9)]
    spans = [(0.5, 2.5), (4.0, 7.0)]
    for language, waits, committed_early in (
        (None, 4.0, False),
        (None, 0.0, True),  # (the words after its language is told commit as they agree)
        ("en", 4.0, True),
    ):
        be = Timeline([first + line])
        opts = with_vad(hear_before_s=10.0, line_waits_s=waits, language=language)
        rec = StreamingRecognizer(be, opts, speech_probs(spans))
        ups = feed(rec, 0.0, 10.0)
        second = [u for u in ups if u.segment_id == 1]
        early = [u.committed_text for u in second if not u.final and u.committed_text]
        assert bool(early) == committed_early, (language, waits, early)
        assert [u.committed_text for u in ups if u.final] == [
            "Good morning all.",
            "Hello there my friend.",
        ]
        if not committed_early:  # its one last pass: from before "Good", no prefix
            last = be.calls[-1]
            assert (last.t0, last.prefix) == (0.4, "")
