"""Which target language an update is translated into first."""

from __future__ import annotations

from collections.abc import Sequence


class TargetTurns:
    """With a translator slower than the recogniser not every target gets every update: the
    target whose last translation is the oldest goes first (the main one on a tie), so the
    targets take turns rather than the first one starving the others."""

    def __init__(self) -> None:
        self._served: dict[str, int] = {}  # target -> when it was last translated (a count)
        self._turns = 0

    def order(self, targets: Sequence[str]) -> list[str]:
        return sorted(targets, key=lambda t: (self._served.get(t, -1), targets.index(t)))

    def served(self, lang: str) -> None:
        """``lang`` got a translation now."""
        self._turns += 1
        self._served[lang] = self._turns
