"""One loaded speech model for several recognisers (asr/shared.py): one load per settings,
recognitions in turn with each recogniser's own hotwords, released with the last user."""

from __future__ import annotations

import threading
import time

import numpy as np

from subtitler.asr.backend import Hypothesis, Samples
from subtitler.asr.shared import SharedBackends


class SlowBackend:
    """Records each recognition's hotwords; one recognition at a time or it says so."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.hotwords = ""
        self.calls: list[tuple[str | None, str]] = []
        self.asked: list[tuple[float, bool]] = []  # (t0, rank_languages) of each call
        self.busy = False
        self.overlapped = False
        self.closed = 0

    def set_hotwords(self, hotwords: str) -> None:
        self.hotwords = hotwords

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
        self.overlapped |= self.busy
        self.busy = True
        time.sleep(self.seconds)
        self.calls.append((language, self.hotwords))
        self.asked.append((t0, rank_languages))
        self.busy = False
        return Hypothesis(())

    def close(self) -> None:
        self.closed += 1


AUDIO = np.zeros(1600, np.float32)


def test_one_load_per_model_and_release_with_the_last_user() -> None:
    pool = SharedBackends()
    loads: list[SlowBackend] = []

    def load() -> tuple[SlowBackend, str]:
        loads.append(SlowBackend())
        return loads[-1], "a notice"

    a, notice_a = pool.get("tiny", load)
    b, notice_b = pool.get("tiny", load)
    c, _ = pool.get("base", load)
    assert len(loads) == 2 and pool.loaded == 2 and notice_a == notice_b == "a notice"
    a.close()
    a.close()  # (twice is once)
    assert loads[0].closed == 0 and pool.loaded == 2
    b.close()
    assert loads[0].closed == 1 and pool.loaded == 1
    c.close()
    assert pool.loaded == 0 and loads[1].closed == 1


def test_recognitions_take_turns_each_with_its_own_hotwords() -> None:
    pool = SharedBackends()
    backend = SlowBackend(seconds=0.2)
    mine, _ = pool.get("tiny", lambda: (backend, ""))
    theirs, _ = pool.get("tiny", lambda: (SlowBackend(), ""))
    mine.set_hotwords("Subiaco")
    theirs.set_hotwords("Gutenberg")
    threads = [
        threading.Thread(
            target=lambda r=r, lang=lang: r.transcribe(AUDIO, t0=0.0, prompt="", language=lang)
        )
        for r, lang in ((mine, "en"), (theirs, "de"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not backend.overlapped
    assert sorted(backend.calls) == [("de", "Gutenberg"), ("en", "Subiaco")]
    (waits,) = pool.waits()
    assert waits.calls == 2 and waits.waited == 1 and 0.1 < waits.max_s < 1.0


def test_a_recognition_is_passed_on_as_asked() -> None:
    """The window's stream time and the language ranking reach the loaded backend (the
    stream time was once replaced by the pool's own clock reading)."""
    backend = SlowBackend()
    mine, _ = SharedBackends().get("tiny", lambda: (backend, ""))
    mine.transcribe(AUDIO, t0=12.5, prompt="", language=None, rank_languages=True)
    mine.transcribe(AUDIO, t0=13.0, prompt="", language="nl")
    assert backend.asked == [(12.5, True), (13.0, False)]


def test_languages_are_ranked_by_the_loaded_backend_or_not_at_all() -> None:
    """A ranking goes to a loaded backend that can rank (in turn with recognitions); one
    that cannot gives none, and the policy tells the language from its own windows."""

    class Ranking(SlowBackend):
        def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
            self.overlapped |= self.busy
            return (("nl", len(audio) / 16000),)

    pool = SharedBackends()
    ranks, _ = pool.get("base", lambda: (Ranking(), ""))
    plain, _ = pool.get("tiny", lambda: (SlowBackend(), ""))
    assert ranks.rank_languages(AUDIO) == (("nl", 0.1),)
    assert plain.rank_languages(AUDIO) == ()
