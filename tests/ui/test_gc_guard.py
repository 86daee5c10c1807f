"""Cycles are freed on the GUI thread, not in the thread that happens to allocate."""

from __future__ import annotations

import gc
import threading

from subtitler.ui.gc_guard import GuiThreadCollector


class Node:
    """A reference cycle that says which thread freed it."""

    def __init__(self, freed_in: list[threading.Thread]) -> None:
        self.me = self
        self.freed_in = freed_in

    def __del__(self) -> None:
        self.freed_in.append(threading.current_thread())


def churn() -> None:
    """Containers held at once, far past gc's first threshold (a collection would start in
    this thread), then let go."""
    held = [[] for _ in range(50_000)]
    del held


def test_a_cycle_is_freed_on_the_gui_thread_while_another_thread_allocates(qtbot) -> None:  # type: ignore[no-untyped-def]
    freed_in: list[threading.Thread] = []
    collector = GuiThreadCollector(interval_ms=20)
    collector.start()
    try:
        assert not gc.isenabled()
        gc.collect()  # what the fixture's collector left
        Node(freed_in)  # garbage at once, but only a collection frees a cycle
        worker = threading.Thread(target=churn, name="pipeline-like")
        worker.start()
        worker.join()
        assert freed_in == []  # not freed by the allocating thread
        ballast = [[] for _ in range(2 * gc.get_threshold()[0])]  # new objects since
        qtbot.waitUntil(lambda: bool(freed_in), timeout=2000)
        del ballast
    finally:
        collector.stop()
    assert freed_in == [threading.main_thread()]


def test_stopping_gives_python_its_own_collector_back(qapp) -> None:  # type: ignore[no-untyped-def]
    enabled = gc.isenabled()
    collector = GuiThreadCollector()
    collector.start()
    assert not gc.isenabled()
    collector.stop()
    assert gc.isenabled() == enabled
