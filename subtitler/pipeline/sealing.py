"""Finished lines reach the transcript exactly once, even when the app stops mid-decode."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from subtitler.config import MtConfig
from subtitler.pipeline.events import ErrorEvent, Event, StatusEvent
from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
from subtitler.types import AsrUpdate

log = logging.getLogger(__name__)
WRITTEN_AGAIN = "the transcript is written again, with every line kept meanwhile"


class FinishedLines:
    """The translation thread's hand-over of finished lines to the transcript.

    A finished line is written by the translation thread once it is translated, or at stop by
    ``seal()`` from the stopping thread (its source text): the update being translated and the
    queue are handed over under one lock, so that a slow decode cannot hold the transcript open
    and no line is written twice or lost.
    """

    def __init__(
        self,
        transcript: TranscriptWriter | None,
        mailbox: Mailbox,
        emit: Callable[[Event], None],
        settings: Callable[[str], MtConfig],  # the settings of one side's lines
    ) -> None:
        self.transcript = transcript
        self.mailbox, self.emit, self.settings = mailbox, emit, settings
        self._lock = threading.Lock()
        self._inflight: AsrUpdate | None = None
        self._sealed = False
        self._failing = False  # the transcript could not be written (said once)
        self._ahead: set[tuple[str, int]] = set()  # (side, line) written ahead of translation

    def next_update(self, timeout: float) -> AsrUpdate | None:
        """The next update to translate (None: none came, or the transcript is sealed)."""
        # Taken under the lock: seal() then finds an update either queued or in flight.
        with self._lock:
            if self._sealed:
                return None
            self._write_ahead()
            self._inflight = u = self.mailbox.get(timeout=timeout)
            return u

    def _write_ahead(self) -> None:
        """Finished lines waiting behind newer ones (a translator behind the speech) go to
        the transcript at once as said, and again once translated: they were kept in memory
        only, more of them the longer the meeting went on, and a crash lost them all."""
        if self.transcript is None:
            return
        for u in self.mailbox.waiting_behind():
            if (u.side, u.segment_id) not in self._ahead:
                self._write(u, {})
                self._ahead.add((u.side, u.segment_id))

    def done(self) -> None:
        """The update taken last is finished with (translated, put back or failed)."""
        with self._lock:
            self._inflight = None

    def finish(self, u: AsrUpdate, translations: dict[str, str], targets: tuple[str, ...]) -> None:
        """A finished line is translated: to the transcript, unless seal() wrote it already."""
        with self._lock:
            if self._inflight is u:
                self._inflight = None
            if not self._sealed:
                self._write(u, translations, targets)

    def keep_queued(self) -> None:
        """At stop: lines that finished but were not translated yet go to the transcript."""
        while True:
            with self._lock:
                if self._sealed or (u := self.mailbox.get(timeout=0)) is None:
                    return
                self._write_as_said(u)

    def seal(self) -> None:
        """At stop, from the stopping thread: write every finished line not written yet (the
        one being translated and those queued: their source text) and nothing after, so the
        transcript can be closed while a slow decode still runs."""
        with self._lock:
            if self._sealed:
                return
            pending = [self._inflight] if self._inflight is not None else []
            while (u := self.mailbox.get(timeout=0)) is not None:
                pending.append(u)
            for u in sorted(pending, key=lambda u: u.segment_id):
                self._write_as_said(u)
            self._inflight = None
            self._sealed = True

    def _write_as_said(self, u: AsrUpdate) -> None:
        """At stop: a finished line not translated goes to the transcript as said, unless it
        was written so ahead already (it was written twice, the same record)."""
        if u.final and (u.side, u.segment_id) not in self._ahead:
            self._write(u, {})

    def _write(
        self, u: AsrUpdate, translations: dict[str, str], targets: tuple[str, ...] = ()
    ) -> None:
        """The transcript line of a finished update (under the lock): its translation into
        each of ``targets`` (the languages it was translated into; (): those chosen now) ({} or
        "": none)."""
        if self.transcript is None or not u.text:
            return
        self._ahead.discard((u.side, u.segment_id))  # (written ahead: this record replaces it)
        mt = self.settings(u.side)
        main, *extra = targets or mt.targets
        try:
            self.transcript.append(
                SegmentRecord(
                    u.segment_id,
                    u.audio_t0,
                    u.audio_t1,
                    u.text,
                    translations.get(main, ""),
                    u.language or mt.src_lang,
                    main,
                    time.time(),
                    tuple((lang, translations.get(lang, "")) for lang in extra),
                    u.side,
                )
            )
        except OSError as e:
            # Said once while it lasts (each line said it again: an alert every few seconds
            # for a whole meeting), and once more when it works again.
            waiting = self.transcript.waiting
            log.info("transcript not written (%d line(s) waiting): %s", waiting, e)
            if not self._failing:
                self._failing = True
                self.emit(
                    ErrorEvent(
                        "transcript",
                        f"could not write the transcript ({e}); finished lines are kept in "
                        "memory and written once that is fixed",
                        lasting=True,  # until WRITTEN_AGAIN
                    )
                )
            return
        if self._failing:
            self._failing = False
            self.emit(StatusEvent("running", WRITTEN_AGAIN))
        if self.transcript.notice:
            self.emit(ErrorEvent("transcript", self.transcript.notice))
            self.transcript.notice = ""
