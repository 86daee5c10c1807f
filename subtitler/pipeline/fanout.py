"""One event callback for the pipeline that hands each event to several subscribers.

The pipeline calls its ``on_event`` from its worker threads; the UI bridge and the web page
server both want every event. Subscribers must not block (both only queue the event); one that
raises is logged and skipped, so a broken subscriber can never stop the pipeline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from subtitler.pipeline.events import Event

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]


class Fanout:
    """Call ``fanout(ev)`` from any thread; ``add``/``remove`` from any thread too."""

    def __init__(self, *subscribers: Subscriber) -> None:
        # Replaced, never mutated: a call in progress iterates over the tuple it started with.
        self._subs: tuple[Subscriber, ...] = subscribers
        self._lock = threading.Lock()
        self._failed: set[int] = set()  # ids of subscribers already logged as failing

    def add(self, sub: Subscriber) -> None:
        with self._lock:
            self._subs = (*self._subs, sub)

    def remove(self, sub: Subscriber) -> None:
        with self._lock:
            self._subs = tuple(s for s in self._subs if s != sub)

    @property
    def subscribers(self) -> tuple[Subscriber, ...]:
        return self._subs

    def __call__(self, ev: Event) -> None:
        for sub in self._subs:
            try:
                sub(ev)
            except Exception:
                if id(sub) not in self._failed:  # once, not once per event
                    self._failed.add(id(sub))
                    log.exception("event subscriber %r failed; the pipeline goes on", sub)
