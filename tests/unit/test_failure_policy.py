"""The one failure policy the recognition and translation stages share."""

from __future__ import annotations

from subtitler.pipeline.failures import FailureRun, Verdict, why
from subtitler.pipeline.targets import TargetTurns


def test_a_run_of_failures_is_told_once_and_a_new_run_again() -> None:
    run = FailureRun("speech recognition", limit=4)
    e = RuntimeError("boom")
    assert [run.failed(e) for _ in range(3)] == [Verdict.TELL, Verdict.QUIET, Verdict.QUIET]
    run.succeeded()
    assert run.count == 0
    assert run.failed(e) is Verdict.TELL  # a new run of failures is news


def test_per_line_the_user_hears_of_each_failing_line_once() -> None:
    run = FailureRun("translation", limit=10)
    e = ValueError("bad")
    verdicts = [run.failed(e, line=seg) for seg in (3, 3, 4, 4, 3)]
    assert verdicts == [Verdict.TELL, Verdict.QUIET, Verdict.TELL, Verdict.QUIET, Verdict.TELL]
    run.succeeded()
    assert run.failed(e, line=3) is Verdict.QUIET  # the same line, told already


def test_the_limit_in_a_row_gives_up_and_a_success_or_new_engine_starts_afresh() -> None:
    run = FailureRun("translation", limit=3)
    e = OSError("gone")
    assert [run.failed(e, line=1) for _ in range(3)][-1] is Verdict.GIVE_UP
    run.reset()
    assert run.count == 0
    assert run.failed(e, line=2) is Verdict.TELL


def test_why_names_the_kind_a_worker_reported() -> None:
    class WorkerError(RuntimeError):
        kind = "IndexError"

    assert why(WorkerError("list index out of range\nTraceback...")) == (
        "IndexError: list index out of range"
    )
    assert why(KeyError()) == "KeyError"


def test_targets_take_turns_oldest_first_main_on_a_tie() -> None:
    turns = TargetTurns()
    targets = ("de", "ja", "fr")
    assert turns.order(targets) == ["de", "ja", "fr"]
    turns.served("de")
    assert turns.order(targets) == ["ja", "fr", "de"]
    turns.served("fr")
    turns.served("ja")
    assert turns.order(targets) == ["de", "fr", "ja"]
