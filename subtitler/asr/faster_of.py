"""The faster of two interchangeable ways to do the same work, found on the work itself."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class FasterOf:
    """Alternates two ways for their first ``trials`` uses each, then keeps the one whose
    median cost was lower (the first on a tie).

    Both ways must give the same result: only their cost differs, so which one ran a call
    changes nothing but its time. Costs are what the caller makes comparable (seconds per
    token decoded, say).
    """

    trials: int = 3
    costs: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    chosen: int | None = None

    def next(self) -> int:
        """Which way (0 or 1) the next use should take."""
        if self.chosen is not None:
            return self.chosen
        first, second = self.costs
        return 0 if len(first) <= len(second) else 1

    def record(self, which: int, cost: float) -> int | None:
        """Counts one use's cost; returns the choice on the use that makes it, else None."""
        if self.chosen is not None:
            return None
        self.costs[which].append(cost)
        if min(len(c) for c in self.costs) < self.trials:
            return None
        first, second = (statistics.median(c) for c in self.costs)
        self.chosen = 0 if first <= second else 1
        return self.chosen
