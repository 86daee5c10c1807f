"""FasterOf: two interchangeable ways alternate for a few uses, then the cheaper one stays."""

from __future__ import annotations

from subtitler.asr.faster_of import FasterOf


def run(choice: FasterOf, cost_of: dict[int, list[float]]) -> list[int]:
    """Uses ``choice`` until it decides, each way costing what ``cost_of`` lists in turn."""
    taken: list[int] = []
    while choice.chosen is None:
        which = choice.next()
        taken.append(which)
        choice.record(which, cost_of[which][len(choice.costs[which])])
    return taken


def test_the_ways_alternate_until_each_has_its_trials_then_the_cheaper_stays() -> None:
    choice = FasterOf(trials=3)
    taken = run(choice, {0: [0.25, 0.24, 0.26], 1: [0.09, 0.10, 0.09]})
    assert taken == [0, 1, 0, 1, 0, 1]
    assert choice.chosen == 1
    assert [choice.next() for _ in range(4)] == [1, 1, 1, 1]


def test_one_slow_use_does_not_decide() -> None:
    """The median: a first call that paid for warming up counts as one of three."""
    choice = FasterOf(trials=3)
    run(choice, {0: [0.50, 0.08, 0.08], 1: [0.09, 0.09, 0.09]})
    assert choice.chosen == 0


def test_a_tie_keeps_the_first_way() -> None:
    choice = FasterOf(trials=2)
    run(choice, {0: [0.1, 0.1], 1: [0.1, 0.1]})
    assert choice.chosen == 0


def test_the_choice_is_told_once_and_later_costs_change_nothing() -> None:
    choice = FasterOf(trials=1)
    assert choice.record(0, 0.2) is None
    assert choice.record(1, 0.1) == 1
    assert choice.record(1, 9.0) is None and choice.record(0, 0.0) is None
    assert choice.chosen == 1 and choice.costs == ([0.2], [0.1])
