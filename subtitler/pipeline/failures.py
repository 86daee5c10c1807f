"""One failure policy for the engines' calls: a failure costs one update, never the meeting."""

from __future__ import annotations

import enum
import logging

log = logging.getLogger(__name__)

# A failing recogniser or translator costs an update each time; this many failures in a row
# mean it will not come back (every call fails): the user is told, once, in one line.
MAX_FAILED_CALLS = 10


def why(e: BaseException) -> str:
    """An exception as "IndexError: message" (the kind a worker process reported, if any)."""
    text = (str(e).strip().splitlines() or [""])[0]
    kind = getattr(e, "kind", None) or type(e).__name__  # (a worker's error carries its kind)
    return f"{kind}: {text}" if text else kind


class Verdict(enum.Enum):
    """What the stage does about one failed call."""

    QUIET = "quiet"  # the user was told already: this update is just lost
    TELL = "tell"  # say it, in one line
    GIVE_UP = "give up"  # every call fails: stop using the engine and say so


class FailureRun:
    """An engine's failed calls in a row.

    The user hears of a run of failures once; with ``line`` given, once per line instead (a
    failing line is retried at every update, and a new line failing is news). ``limit`` failures
    in a row mean the engine will not come back.
    """

    def __init__(self, what: str, limit: int = MAX_FAILED_CALLS) -> None:
        self.what = what  # "speech recognition", "translation": for the log
        self.limit = limit
        self.count = 0
        self._runs = 0  # runs of failures that ended (a new run is news again)
        self._told: object = None  # the run or line the user was last told of

    def failed(self, e: BaseException, line: int | None = None) -> Verdict:
        self.count += 1
        log.info("%s failed (%d in a row): %s", self.what, self.count, why(e))
        log.info("the failed call", exc_info=e)
        if self.count >= self.limit:
            return Verdict.GIVE_UP
        scope: object = ("line", line) if line is not None else ("run", self._runs)
        if scope == self._told:
            return Verdict.QUIET
        self._told = scope
        return Verdict.TELL

    def succeeded(self) -> None:
        """A call worked: the run of failures (if any) is over."""
        if self.count:
            self._runs += 1
        self.count = 0

    def reset(self) -> None:
        """Another engine took over: its failures are counted afresh."""
        self.count = 0
