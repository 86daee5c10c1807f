"""The app's state in plain words, without Qt: one line the user can read at all times.

It is made from the pipeline's events: whether it loads, listens, is paused or stopped (and
why), whether its input is away, whether lines are translated (and why not) and how far the
translation is behind the speech. The overlay shows it where there are no subtitles (and its
problem above them while they run), the tray in its tooltip and first item, and the tray's
Start / Pause follows its run state. A state lasts until an event changes it: nothing here
goes away on a timer.
"""

from __future__ import annotations

from dataclasses import dataclass

from subtitler.session import (
    WRITTEN_AGAIN,
    ErrorEvent,
    Event,
    LevelEvent,
    StatusEvent,
    TranslatorEvent,
)

BEHIND_FROM_S = 3.0  # a translation this far behind the speech is said ...
CAUGHT_UP_S = 1.0  # ... until it is back under this
RUN_WORDS = {
    "idle": "Not started",
    "loading": "Loading models…",
    "running": "Listening…",
    "paused": "Paused",
    "stopped": "Stopped",
    "finished": "Replay finished",
}
BACK = "audio input is back"  # the pipeline's word that a lost input returned
UNSAVED = "Transcript not written: lines kept until it can be"


@dataclass(frozen=True)
class Shown:
    """What the user reads: ``text`` the whole state in one line; ``problem`` the part of it
    that needs attention ("" when all is well), shown above running subtitles too."""

    run: str  # idle | loading | running | paused | stopped | finished
    text: str
    problem: str = ""

    @property
    def can_toggle(self) -> bool:
        """Start / pause means something now (not while the models load)."""
        return self.run != "loading"


class AppState:
    """Feed it the pipeline's events (``feed``); ``shown`` is what to show."""

    def __init__(self) -> None:
        self.run = "idle"
        self.stopped_by = ""  # why the run stopped (a part failed)
        self.no_input = ""  # why there is no input (away, being retried)
        self.translation_off = ""  # why lines are not translated ("": they are, or unknown)
        self.behind_s = 0  # whole seconds the translation is behind (0: keeping up)
        self.unsaved = False  # finished lines wait for the transcript to be writable

    def feed(self, ev: Event) -> bool:
        """Take one event; whether what is shown changed."""
        before = self.shown()
        if isinstance(ev, StatusEvent):
            if ev.state == "loading":  # a new run: what the last one found is over
                self.stopped_by = self.no_input = self.translation_off = ""
                self.behind_s, self.unsaved = 0, False
            if ev.state == "running" and ev.message == BACK:
                self.no_input = ""
            if ev.state == "running" and ev.message == WRITTEN_AGAIN:
                self.unsaved = False
            if ev.state != "running":
                self.behind_s = 0
            self.run = ev.state
        elif isinstance(ev, ErrorEvent):
            if ev.fatal:
                self.stopped_by = ev.message
            elif ev.lasting and ev.where == "audio":
                self.no_input = ev.message
            elif ev.lasting and ev.where == "transcript":
                self.unsaved = True
        elif isinstance(ev, TranslatorEvent):
            self.translation_off = "" if ev.on else (ev.why or "no translation model")
        elif isinstance(ev, LevelEvent) and self.run == "running":
            lag = ev.lag_s
            if lag >= BEHIND_FROM_S or (self.behind_s and lag >= CAUGHT_UP_S):
                self.behind_s = max(1, round(lag))
            else:
                self.behind_s = 0
        return self.shown() != before

    def shown(self) -> Shown:
        problems = []
        if self.run in ("stopped", "finished") and self.stopped_by:
            return Shown(self.run, f"Stopped: {self.stopped_by}", f"Stopped: {self.stopped_by}")
        if self.no_input and self.run == "running":
            problems.append(f"No input: {self.no_input}")
        if self.translation_off and self.run not in ("stopped", "finished"):
            problems.append(f"Translation off: {self.translation_off}")
        elif self.behind_s and self.run == "running":
            problems.append(f"Translation {self.behind_s} s behind the speech")
        if self.unsaved and self.run not in ("stopped", "finished"):
            problems.append(UNSAVED)
        problem = " · ".join(problems)
        words = RUN_WORDS.get(self.run, self.run)
        if self.no_input and self.run == "running":
            text = problem  # (not "Listening…": nothing is heard)
        else:
            text = " · ".join([words, *problems])
        return Shown(self.run, text, problem)
