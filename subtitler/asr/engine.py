"""What the pipeline asks of a speech recogniser: the one protocol every recogniser keeps.

The real one is :class:`subtitler.asr.streaming.StreamingRecognizer` (the streaming policy
over a Whisper backend); the research oracle and the tests' scripted recognisers keep it too.
"""

from __future__ import annotations

from typing import Protocol

from subtitler.types import AsrUpdate, AudioBlock


class Recognizer(Protocol):
    """Feed audio, then ask for updates, passing the stream-clock time as data.

    A call that raises costs that call: what was committed stays, and updates the call made
    before it failed come with the next call.
    """

    @property
    def notice(self) -> str:
        """What loading it found for the user and is not fatal (weights that recognise no
        word of a clip of speech), or what it found later (the speech in another language
        than the one set); "" when nothing. Said each time it changes."""
        ...

    @property
    def recognitions(self) -> int:
        """Recognitions that worked so far. Most calls only buffer audio: the failure policy
        counts a run of failures as ended only when this grows."""
        ...

    def set_hotwords(self, hotwords: str) -> None:
        """Words to expect (the glossary's terms) from the next recognition on."""
        ...

    def insert_audio(self, block: AudioBlock) -> None: ...

    def process(self, now: float) -> list[AsrUpdate]: ...

    def finish(self, now: float) -> list[AsrUpdate]:
        """End of input: the open segment's final update."""
        ...

    def close(self) -> None:
        """Release what it holds (a worker process); called when it is replaced or the
        pipeline stops, possibly while another thread is inside one of its calls."""
        ...
