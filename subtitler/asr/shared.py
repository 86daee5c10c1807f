"""One loaded speech model for every recogniser that asks for it with the same settings.

The two inputs of a meeting (the microphone and the meeting's audio) each have their own
streaming recogniser (its buffer, utterances, committed words) but need only one copy of the
weights: the language goes with each recognition, not with the loaded model. The same holds
while a recogniser is swapped in for one that still runs. Recognitions on a shared model are
taken one at a time (a worker process answers one call at a time); each recogniser keeps its
own hotwords, given with each of its calls.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from subtitler.asr.backend import AsrBackend, Hypothesis, LanguageRanker, Samples

log = logging.getLogger(__name__)


@dataclass
class Waits:
    """How long recognitions waited for another recogniser's on the same model."""

    calls: int = 0
    waited: int = 0  # calls that found the model busy
    total_s: float = 0.0
    max_s: float = 0.0

    def add(self, s: float) -> None:
        self.calls += 1
        if s > 0.001:  # (taking a free lock costs microseconds)
            self.waited += 1
            self.total_s += s
            self.max_s = max(self.max_s, s)


@dataclass
class _Loaded:
    backend: AsrBackend
    notice: str  # what loading it found (said by each recogniser that uses it)
    users: int = 0
    calls: threading.Lock = field(default_factory=threading.Lock)  # one recognition at a time
    waits: Waits = field(default_factory=Waits)


class SharedBackends:
    """The speech models loaded now, each with the recognisers using it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[Hashable, _Loaded] = {}

    def get(
        self, key: Hashable, load: Callable[[], tuple[AsrBackend, str]]
    ) -> tuple[SharedBackend, str]:
        """A recogniser's hold on the model ``key`` names, loaded by ``load`` (which returns
        the backend and its notice) if no recogniser holds it now."""
        # Loaded under the lock: a second recogniser asking for the same model meanwhile
        # waits for this copy instead of loading another.
        with self._lock:
            loaded = self._live.get(key)
            if loaded is None:
                backend, notice = load()
                loaded = self._live[key] = _Loaded(backend, notice)
            else:
                log.info("speech model shared by another recogniser: %s", key)
            loaded.users += 1
        return SharedBackend(self, key, loaded), loaded.notice

    def waits(self) -> list[Waits]:
        """Per model loaded now: how long its recognitions waited for each other."""
        with self._lock:
            return [dataclasses.replace(x.waits) for x in self._live.values()]

    @property
    def loaded(self) -> int:
        """How many models are loaded now."""
        with self._lock:
            return len(self._live)

    def _release(self, key: Hashable, loaded: _Loaded) -> None:
        with self._lock:
            loaded.users -= 1
            last = loaded.users == 0
            if last and self._live.get(key) is loaded:
                del self._live[key]
        if last:
            # Not under ``calls``: a recognition stuck in a worker is ended by closing it.
            loaded.backend.close()


class SharedBackend:
    """One recogniser's use of a shared model (an ``AsrBackend``); anything else asked of it
    (the device it runs on, forced alignment) is the loaded backend's."""

    def __init__(self, pool: SharedBackends, key: Hashable, loaded: _Loaded) -> None:
        self._pool, self._key, self._loaded = pool, key, loaded
        self.hotwords = ""
        self._closed = False
        self._close_lock = threading.Lock()

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
        with self._turn() as backend:
            backend.set_hotwords(self.hotwords)
            return backend.transcribe(
                audio,
                t0=t0,
                prompt=prompt,
                language=language,
                prefix=prefix,
                rank_languages=rank_languages,
            )

    def rank_languages(self, audio: Samples) -> tuple[tuple[str, float], ...]:
        ranker = self._loaded.backend
        if not isinstance(ranker, LanguageRanker):
            return ()
        with self._turn():
            return ranker.rank_languages(audio)

    @contextmanager
    def _turn(self) -> Iterator[AsrBackend]:
        """The loaded backend, once no other recogniser's call is running on it (the wait
        is counted in ``waits``)."""
        asked = time.perf_counter()
        with self._loaded.calls:
            self._loaded.waits.add(time.perf_counter() - asked)
            yield self._loaded.backend

    def set_hotwords(self, hotwords: str) -> None:
        self.hotwords = hotwords

    @property
    def inner(self) -> AsrBackend:
        """The loaded backend itself (the self-test checks what it is)."""
        return self._loaded.backend

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._pool._release(self._key, self._loaded)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loaded.backend, name)
