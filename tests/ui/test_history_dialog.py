"""Meeting history in the app: a finished run is listed from its transcript file, searched,
read and exported with a choice of languages (offscreen Qt, real files)."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from shiboken6 import isValid

from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
from subtitler.ui.history import TEXT_CHOICES, HistoryDialog
from tests.ui.test_app_state import make_app


def write(folder: Path, stamp: str, recs: list[SegmentRecord]) -> None:
    w = TranscriptWriter(folder / f"{stamp}.jsonl")
    for r in recs:
        w.append(r)
    w.close()


PLANNING = [
    SegmentRecord(
        0,
        0.5,
        2.5,
        "Welcome to the planning call.",
        "Willkommen zum Planungsgespräch.",
        "en",
        "de",
        0.0,
    ),
    SegmentRecord(
        1, 3.0, 5.0, "Zürich needs a budget.", "Zürich braucht ein Budget.", "en", "de", 0.0
    ),
]
STANDUP = [SegmentRecord(0, 1.0, 2.0, "Hola a todos.", "Hola a todos.", "es", "es", 0.0)]


def opened(qtbot, folder: Path) -> HistoryDialog:  # type: ignore[no-untyped-def]
    """The History window on ``folder``, its meetings read (off its thread) and listed."""
    dlg = HistoryDialog(folder)
    qtbot.addWidget(dlg)
    with qtbot.waitSignal(dlg.read):
        pass  # (the answer is queued: it comes while the test waits here)
    return dlg


def listed(dlg: HistoryDialog) -> list[list[str]]:
    """The meetings' rows as the list shows them: date, length, languages, lines."""
    items = [dlg.list.topLevelItem(i) for i in range(dlg.list.topLevelItemCount())]
    return [[item.text(c) for c in range(4)] for item in items if item is not None]


def test_list_search_read_and_export(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, "20261116-093000", PLANNING)
    write(tmp_path, "20261117-101500", STANDUP)
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    rows = listed(dlg)
    assert rows == [
        ["2026-11-17 10:15", "2 s", "es", "1"],
        ["2026-11-16 09:30", "5 s", "en → de", "2"],
    ]
    assert "Hola a todos." in dlg.text.toPlainText()  # the newest is open
    assert dlg.text.toPlainText().count("Hola a todos.") == 1  # same language: once

    dlg.query.setText("zurich")
    assert dlg.list.topLevelItemCount() == 1
    assert dlg.list.topLevelItem(0).text(3) == "1 of 2"
    shown = dlg.text.toPlainText()
    assert "Zürich braucht ein Budget." in shown and "Willkommen" in shown  # the whole meeting
    dlg.grab().save(str(Path(os.environ.get("SUBTITLER_SHOTS", tmp_path)) / "history.png"))

    dlg.which.setCurrentIndex([d for _, d in TEXT_CHOICES].index("source"))
    out = tmp_path / "planning"
    with qtbot.assertNotEmitted(dlg.problem):
        assert dlg.export_to(out)
    assert (tmp_path / "planning.srt").read_text(encoding="utf-8").splitlines()[2::4] == [
        "Welcome to the planning call.",
        "Zürich needs a budget.",
    ]
    assert "Exported to" in dlg.status.text()

    dlg.query.setText("quarterly")
    assert dlg.list.topLevelItemCount() == 0 and "No meeting matches" in dlg.text.toPlainText()
    assert not dlg.export_button.isEnabled()


def test_a_failed_export_is_one_line_for_the_app(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, "20261116-093000", PLANNING)
    dlg = opened(qtbot, tmp_path)
    assert dlg.export_to(tmp_path / "a.srt")
    assert dlg.status.text() == f"Exported to {tmp_path / 'a.srt'}"
    with qtbot.waitSignal(dlg.problem) as sig:
        assert not dlg.export_to(tmp_path / "missing" / "x.srt")
    assert sig.args == ["Export failed: x.srt: No such file or directory"]
    # Said in the window too (the last export's success stood there).
    assert dlg.status.text() == "Export failed: x.srt: No such file or directory"


def test_a_name_without_an_extension_gets_the_formats_in_the_dialog(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ ".srt" was added after the dialog closed: its "replace?" had asked about "notes", and
    "notes.srt" was replaced unasked."""
    from subtitler.ui.history import FORMATS, export_dialog

    parent = opened(qtbot, tmp_path)
    dlg = export_dialog(parent, tmp_path / "meeting.srt")
    dlg.setOption(dlg.Option.DontUseNativeDialog)
    dlg.selectFile(str(tmp_path / "notes"))
    assert dlg.selectedFiles() == [str(tmp_path / "notes.srt")]
    vtt = FORMATS.split(";;")[1]
    dlg.selectNameFilter(vtt)
    dlg.filterSelected.emit(vtt)  # (as choosing it in the dialog does)
    dlg.selectFile(str(tmp_path / "notes"))
    assert dlg.selectedFiles() == [str(tmp_path / "notes.vtt")]


def test_the_tray_opens_history_with_the_running_meeting(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.start()
    qtbot.waitUntil(lambda: bool(app.pipeline and app.pipeline.transcript_records), timeout=10_000)
    app.tray.show_history.emit()
    assert app.history is not None and app.history.isVisible()
    qtbot.addWidget(app.history)
    qtbot.waitUntil(lambda: app.history is not None and app.history.status.text() == "")
    assert app.history.list.topLevelItemCount() == 1
    assert "hi." in app.history.text.toPlainText()
    app.quit()


def test_a_meeting_in_two_languages_is_read_and_exported_in_either(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    both = [
        dataclasses.replace(r, extra=(("ja", ja),))
        for r, ja in zip(
            PLANNING, ["計画会議へようこそ。", "チューリッヒには予算が必要です。"], strict=True
        )
    ]
    write(tmp_path, "20261116-093000", both)
    write(tmp_path, "20261117-101500", STANDUP)
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    assert not dlg.lang.isVisible()  # the newest meeting has one language
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))
    assert dlg.list.topLevelItem(1).text(2) == "en → de, ja"
    shown = dlg.text.toPlainText()
    assert "de Willkommen zum Planungsgespräch." in shown and "ja 計画会議へようこそ。" in shown
    assert dlg.lang.isVisible() and dlg.lang.count() == 2
    assert [dlg.lang.itemData(i) for i in range(2)] == ["de", "ja"]
    dlg.lang.setCurrentIndex(1)
    dlg.which.setCurrentIndex([d for _, d in TEXT_CHOICES].index("translation"))
    assert dlg.export_to(tmp_path / "planning.ja.srt")
    assert (tmp_path / "planning.ja.srt").read_text(encoding="utf-8").splitlines()[2::4] == [
        "計画会議へようこそ。",
        "チューリッヒには予算が必要です。",
    ]
    dlg.lang.setCurrentIndex(0)
    assert dlg.export_to(tmp_path / "planning.de.txt")
    assert (tmp_path / "planning.de.txt").read_text(encoding="utf-8").splitlines() == [
        "Willkommen zum Planungsgespräch.",
        "Zürich braucht ein Budget.",
    ]
    dlg.which.setCurrentIndex([d for _, d in TEXT_CHOICES].index("source"))
    assert not dlg.lang.isEnabled()  # the original has no target language


def test_times_stay_on_one_line_and_enter_in_the_search_exports_nothing(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    """Seen on the screenshots: the time column was squeezed to one character a line
    ("0 / 0 / : / 0 / 2"), and Enter in the search box pressed Export…."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QFileDialog

    write(tmp_path, "20261116-093000", PLANNING)
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    qtbot.waitExposed(dlg)
    doc = dlg.text.document()
    doc.setTextWidth(dlg.text.viewport().width())
    times = []
    block = doc.begin()
    while block.isValid():
        if block.text() in ("00:00", "00:03"):
            times.append((block.text(), block.layout().lineCount()))
        block = block.next()
    assert times == [("00:00", 1), ("00:03", 1)]

    asked: list[object] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: asked.append(a) or ("", ""))
    dlg.query.setFocus()
    qtbot.keyClicks(dlg.query, "budget")
    qtbot.keyClick(dlg.query, Qt.Key.Key_Return)
    assert asked == [] and dlg.isVisible()


def test_a_meeting_of_both_sides_says_who_spoke(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Issue 31: the microphone and the meeting heard at once; an older line (no side) as before.
    write(
        tmp_path,
        "20261118-090000",
        [
            SegmentRecord(0, 0.5, 2.0, "Guten Tag.", "Good day.", "de", "en", 0.0, side="others"),
            SegmentRecord(1, 2.5, 4.0, "Hello.", "Hallo.", "en", "de", 0.0, side="you"),
            SegmentRecord(2, 4.5, 5.0, "Tschüss.", "Bye.", "de", "en", 0.0),
        ],
    )
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    lines = [ln.strip() for ln in dlg.text.toPlainText().splitlines() if ln.strip()]
    assert lines == [
        "00:00",
        "Others: Guten Tag.",
        "Good day.",
        "00:02",
        "You: Hello.",
        "Hallo.",
        "00:04",
        "Tschüss.",
        "Bye.",
    ]
    dlg.which.setCurrentIndex([d for _, d in TEXT_CHOICES].index("source"))
    assert dlg.export_to(tmp_path / "both.txt")
    assert (tmp_path / "both.txt").read_text(encoding="utf-8") == (
        "Others: Guten Tag.\nYou: Hello.\nTschüss.\n"
    )


def test_a_long_meeting_is_laid_out_in_small_tables_and_shown_once_per_search(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    """A meeting of thousands of lines: Qt's layout of one table grows faster than its rows
    (30,000 lines took 6.4 s to show, 13.6 s at each key of a search: docs/BENCHMARKS.md), so
    the lines come in tables of ROWS_PER_TABLE, and a key that leaves the lines found as they
    were does not lay the meeting out again."""
    from subtitler.ui import history

    words = ["budget", "review", "friday", "release", "numbers"]
    recs = [
        SegmentRecord(i, 3.0 * i, 3.0 * i + 2.5, f"line {i} {words[i % 5]}.", "", "en", "en", 0.0)
        for i in range(250)
    ]
    write(tmp_path, "20261120-090000", recs)
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    tables = dlg.text.document().rootFrame().childFrames()
    assert len(tables) == 3 and history.ROWS_PER_TABLE == 100
    shown = [ln for ln in dlg.text.toPlainText().splitlines() if ln.startswith("line ")]
    assert shown == [r.source for r in recs]  # every line, in order
    rendered: list[str] = []
    real = dlg.text.setHtml
    monkeypatch.setattr(dlg.text, "setHtml", lambda h: (rendered.append(h), real(h)))
    counts = []
    for query in ("budget", "budge", "friday", ""):  # "budge" finds what "budget" found
        dlg.query.setText(query)
        counts.append(len(rendered))
    assert counts == [1, 1, 2, 3]
    assert dlg.text.toPlainText().count("line ") == 250


LONG = [
    SegmentRecord(i, 3.0 * i, 3.0 * i + 2.5, f"line {i} said.", "", "en", "en", 0.0)
    for i in range(1200)
]


def _shown_with_a_long_meeting(qtbot, tmp_path: Path) -> HistoryDialog:  # type: ignore[no-untyped-def]
    """The window shown over a meeting of 1,200 lines ("line N said.") and the stand-up,
    once it has read them."""
    write(tmp_path, "20261120-090000", LONG)
    write(tmp_path, "20261121-090000", STANDUP)
    dlg = HistoryDialog(tmp_path)
    qtbot.addWidget(dlg)
    dlg.show()
    with qtbot.waitSignal(dlg.read):
        pass
    return dlg


def test_a_long_meeting_is_shown_at_once_and_whole_in_pieces(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Laid out at once, a meeting of 30,000 lines held the window 1.1-1.6 s when shown, and
    at each key of a search that found lines in it (docs/BENCHMARKS.md): its first lines are
    shown at once and the rest comes in pieces, the window answering between them; the
    caret, a selection and the view stay where the reader put them meanwhile."""

    dlg = _shown_with_a_long_meeting(qtbot, tmp_path)
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))  # the long one
    text = dlg.text

    def lines() -> list[str]:
        return [ln for ln in text.toPlainText().splitlines() if ln.startswith("line ")]

    first = lines()
    assert first and first == [r.source for r in LONG[: len(first)]] and len(first) < 1200
    turned: list[bool] = []
    QTimer.singleShot(0, lambda: turned.append(text.toPlainText().count("line ") < 1200))
    caret = text.document().find("line 300 said.")
    text.setTextCursor(caret)  # the reader selected a line and scrolled a little
    text.verticalScrollBar().setValue(text.verticalScrollBar().value() + 7)
    at = text.verticalScrollBar().value()
    with qtbot.waitSignal(dlg.whole, timeout=10_000):
        pass
    assert turned == [True]  # (the window answered before the meeting was whole)
    assert lines() == [r.source for r in LONG]
    assert text.textCursor().selectedText() == "line 300 said."
    assert text.verticalScrollBar().value() == at
    # A search: its first line found beyond the first lines shown is in view once whole.
    dlg.query.setText("1100")
    assert len(lines()) < 1200  # (the meeting's lines, that one on a yellow band)
    with qtbot.waitSignal(dlg.whole, timeout=10_000):
        pass
    found = text.cursorRect(text.document().find("line 1100 said."))
    assert text.viewport().rect().contains(found)
    # Another meeting chosen while one is built: the first one's rest never comes.
    dlg.query.setText("")
    assert len(lines()) < 1200
    with qtbot.waitSignal(dlg.whole, timeout=10_000):
        dlg.list.setCurrentItem(dlg.list.topLevelItem(0))
    qtbot.wait(50)
    assert "Hola a todos." in text.toPlainText() and lines() == []


def test_a_long_meeting_is_not_built_on_once_its_window_is_closed(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Closed while a long meeting was built aside, the window built it on to the end (a
    meeting of 30,000 lines: about 2 s of the processor for a window no one sees). Shown
    again, the meeting is built again, whole; opened as the app opens it (read again, then
    shown), too."""
    dlg = _shown_with_a_long_meeting(qtbot, tmp_path)
    text = dlg.text

    def lines() -> list[str]:
        return [ln for ln in text.toPlainText().splitlines() if ln.startswith("line ")]

    wholes: list[int] = []
    dlg.whole.connect(lambda: wholes.append(len(lines())))
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))  # the long one
    assert 0 < len(lines()) < 1200 and wholes == []
    dlg.close()
    for _ in range(50):  # (turns of the event loop: the rest took 4)
        QApplication.processEvents()
    assert wholes == [] and len(lines()) < 1200
    with qtbot.waitSignal(dlg.whole, timeout=10_000):
        dlg.show()
    assert lines() == [r.source for r in LONG]
    dlg.list.setCurrentItem(dlg.list.topLevelItem(0))
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))  # chosen again: built aside again
    assert len(lines()) < 1200
    dlg.close()
    dlg.reload()  # opened again as App.open_history opens it
    dlg.show()
    qtbot.waitUntil(lambda: lines() == [r.source for r in LONG], timeout=10_000)


def test_a_line_of_a_megabyte_is_shown_cut_and_exported_whole(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A transcript's line of one enormous word (a damaged or hand-made file) held the window
    for a minute: it is shown up to SHOWN_CHARS, with how much more there is."""
    from subtitler.ui import history

    huge = "a" * 1_000_000
    write(tmp_path, "20261120-090000", [SegmentRecord(0, 0.0, 2.0, huge, "x", "en", "de", 0.0)])
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    text = dlg.text.toPlainText()
    more = 1_000_000 - history.SHOWN_CHARS
    assert "a" * history.SHOWN_CHARS + f" … ({more:,} characters more" in text
    assert "a" * (history.SHOWN_CHARS + 1) not in text
    dlg.which.setCurrentIndex([d for _, d in TEXT_CHOICES].index("source"))
    assert dlg.export_to(tmp_path / "all.txt")
    assert (tmp_path / "all.txt").read_text(encoding="utf-8") == huge + "\n"


def test_the_audio_a_stop_did_not_wait_for_is_named_with_its_meeting(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What the recogniser had not heard when the app stopped is kept beside the transcript
    (NAME.unheard.wav, a side's NAME.unheard-SIDE.wav): the meeting says where, and how long."""
    import numpy as np

    from subtitler.audio.wav_file import write_wav
    from subtitler.types import AudioBlock

    write(tmp_path, "20261120-090000", PLANNING)
    write(tmp_path, "20261121-090000", STANDUP)
    write_wav(tmp_path / "20261120-090000.unheard.wav", [AudioBlock(np.zeros(48000), 0.0)])
    write_wav(tmp_path / "20261120-090000.unheard-you.wav", [AudioBlock(np.zeros(16000), 0.0)])
    (tmp_path / "20261121-090000.unheard.wav").write_bytes(b"not audio")  # damaged: not named
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    assert "Not transcribed" not in dlg.text.toPlainText()  # the newest: nothing readable kept
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))
    assert (
        "Not transcribed when the app stopped, kept beside the transcript: "
        "20261120-090000.unheard-you.wav (1 s), 20261120-090000.unheard.wav (3 s)."
    ) in " ".join(dlg.text.toPlainText().split())


def test_a_meeting_stopped_before_its_first_line_is_listed_by_the_audio_kept(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The transcript file is made with the first line: a stop that kept a recogniser's
    backlog and had finished no line left only NAME.unheard.wav, and History did not list
    the meeting at all."""
    import numpy as np

    from subtitler.audio.wav_file import write_wav
    from subtitler.types import AudioBlock

    write(tmp_path, "20261120-090000", PLANNING)
    write_wav(tmp_path / "20261122-080000.unheard.wav", [AudioBlock(np.zeros(16000 * 95), 0.0)])
    (tmp_path / "20261123-080000.unheard.wav").write_bytes(b"not audio")  # damaged: not listed
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    rows = listed(dlg)
    assert rows == [
        ["2026-11-22 08:00", "2 min", "", "0"],
        ["2026-11-20 09:00", "5 s", "en → de", "2"],
    ]
    assert " ".join(dlg.text.toPlainText().split()) == (
        "The app stopped before it had transcribed a line of this meeting; its audio is kept: "
        "20261122-080000.unheard.wav (2 min). Play it again with subtitler --replay FILE."
    )
    assert not dlg.export_button.isEnabled()  # no line to export
    dlg.list.setCurrentItem(dlg.list.topLevelItem(1))
    assert dlg.export_button.isEnabled()
    dlg.query.setText("budget")  # a search finds lines: the meeting without one is not a match
    assert dlg.list.topLevelItemCount() == 1


class SlowRead:
    """load_meeting held at its first file until the test says (an event, not a sleep): a
    long history on a slow disk. ``held`` says whether the read was let go by the test (False:
    it waited out its limit, the window's thread blocked meanwhile)."""

    LIMIT_S = 5.0

    def __init__(self, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        from subtitler.pipeline import history

        self.entered = threading.Event()
        self.go = threading.Event()
        self.held: list[bool] = []
        self.read: list[Path] = []
        real = history.load_meeting

        def slow(path: Path):  # type: ignore[no-untyped-def]
            if not self.entered.is_set():
                self.entered.set()
                self.held.append(self.go.wait(self.LIMIT_S))
            self.read.append(path)
            return real(path)

        monkeypatch.setattr(history, "load_meeting", slow)


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "history-read"]


def test_a_long_read_leaves_the_window_working(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """History's first open on 504 hours read 115 MB on the window's thread: 3 s frozen. The
    window opens at once, says it is reading, takes a search typed meanwhile, and lists the
    meetings when they are read."""
    write(tmp_path, "20261116-093000", PLANNING)
    write(tmp_path, "20261117-101500", STANDUP)
    slow = SlowRead(monkeypatch)
    dlg = HistoryDialog(tmp_path)
    qtbot.addWidget(dlg)
    dlg.show()
    assert slow.entered.wait(SlowRead.LIMIT_S)
    assert slow.held == []  # the constructor came back with the read still held
    assert dlg.status.text() == "Reading the meetings…"
    assert "Reading the meetings…" in dlg.text.toPlainText()
    ticks: list[int] = []
    QTimer.singleShot(0, lambda: ticks.append(1))
    qtbot.waitUntil(lambda: bool(ticks))  # the event loop runs while the file is read
    qtbot.keyClicks(dlg.query, "zurich")
    assert listed(dlg) == []
    with qtbot.waitSignal(dlg.read):
        slow.go.set()
    assert slow.held == [True]
    assert listed(dlg) == [["2026-11-16 09:30", "5 s", "en → de", "1 of 2"]]  # the search kept
    assert dlg.status.text() == ""
    qtbot.waitUntil(lambda: not readers())


def test_closing_mid_read_stops_the_read(qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Closed (or freed) while its read is held: the read stops at its next file, its thread
    ends, and nothing is delivered to the window; opened again, it reads again."""
    for day in range(16, 19):
        write(tmp_path, f"202611{day}-093000", PLANNING)
    slow = SlowRead(monkeypatch)
    dlg = HistoryDialog(tmp_path)
    qtbot.addWidget(dlg)
    dlg.show()
    assert slow.entered.wait(SlowRead.LIMIT_S) and slow.held == []
    dlg.close()
    slow.go.set()
    qtbot.waitUntil(lambda: not readers())
    assert len(slow.read) == 1  # the file in hand; not the two after it
    assert listed(dlg) == []
    with qtbot.waitSignal(dlg.read):
        dlg.reload()  # (what the tray's History does to a window opened before)
        dlg.show()
    assert len(listed(dlg)) == 3

    slow = SlowRead(monkeypatch)
    (tmp_path / "20261116-093000.jsonl").touch()  # (changed: read again)
    gone = HistoryDialog(tmp_path)
    assert slow.entered.wait(SlowRead.LIMIT_S) and slow.held == []
    gone.deleteLater()
    qtbot.waitUntil(lambda: not isValid(gone))
    slow.go.set()
    qtbot.waitUntil(lambda: not readers())
    QApplication.processEvents()  # (its answer, queued to a window that is gone: dropped)


def test_a_meeting_is_read_line_by_line_with_the_keyboard(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Its text has a caret the arrows move, for a screen reader to read the line it is on
    (the arrows only scrolled it), and Tab goes on to the export's controls."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QTextCursor

    write(tmp_path, "20261116-093000", PLANNING)
    dlg = opened(qtbot, tmp_path)
    dlg.show()
    text = dlg.text
    text.setFocus()
    text.moveCursor(QTextCursor.MoveOperation.Start)
    start = text.textCursor().position()
    qtbot.keyClick(text, Qt.Key.Key_Down)
    assert text.textCursor().position() > start
    qtbot.keyClick(text, Qt.Key.Key_Tab)
    assert dlg.focusWidget() is dlg.which
