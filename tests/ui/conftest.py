"""Every UI test runs as the app does: cycles are collected on the GUI thread only
(subtitler/ui/gc_guard.py), never in a pipeline thread that happens to allocate."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from subtitler.ui.gc_guard import GuiThreadCollector


@pytest.fixture(autouse=True)
def _gui_thread_gc(qapp: object) -> Iterator[None]:
    collector = GuiThreadCollector()
    collector.start()
    yield
    # A last collection here, on the GUI thread: a test's dialogs are freed before the next
    # test paints (freed later, in its repaint, they crashed Qt's offscreen backing store).
    collector.stop()
