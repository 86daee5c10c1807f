"""Meeting history: past meetings listed, read, searched and exported."""

from __future__ import annotations

import html
import itertools
import logging
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from subtitler import sides
from subtitler.session import (
    LANGUAGES,
    Meeting,
    SegmentRecord,
    Which,
    export,
    format_duration,
    list_meetings,
    search,
    targets_of,
)
from subtitler.types import OTHERS, YOU
from subtitler.ui.sizing import open_at

TEXT_CHOICES: tuple[tuple[str, Which], ...] = (
    ("Both languages", "both"),
    ("Translation only", "translation"),
    ("Original only", "source"),
)
FORMATS = "SubRip subtitles (*.srt);;WebVTT subtitles (*.vtt);;Plain text (*.txt)"
# Who spoke, told apart at a glance as well as by name (dark enough to read on white).
SIDE_COLORS = {YOU: "#2e7d32", OTHERS: "#1f5fa8"}
# Qt lays a rich-text table out in time that grows faster than its rows: a meeting of 30,000
# lines in one table took 6.4 s to show (and again at each key of a search), in tables of
# this many rows 1.0 s.
ROWS_PER_TABLE = 100
# Laid out at once, 30,000 lines held the window 1.1-1.6 s (parsing the tables, mostly): a
# meeting of more tables shows its first FIRST_TABLES at once (a screenful and more), and
# the whole is built aside, STEP_TABLES at each turn of the event loop, then shown instead.
FIRST_TABLES = 5
STEP_TABLES = 2
# A line is shown up to this many characters (a file's line of a megabyte, one word, held
# the window for a minute); the export has all of it.
SHOWN_CHARS = 2000
READING = "Reading the meetings…"

log = logging.getLogger(__name__)
Listed = tuple[list[Meeting], list[str]]  # list_meetings' answer


def _clock(t: float) -> str:
    m, s = divmod(int(t), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def _who(side: str) -> str:
    """Who spoke a line, before its original (two inputs, issue 31); "" for a line heard on
    the only input."""
    name = sides.label(side)
    if not name:
        return ""
    return f"<b style='color:{SIDE_COLORS.get(side, '#333')}'>{html.escape(name)}:</b> "


def _shown(text: str) -> str:
    """A line's text as shown: escaped, and cut at SHOWN_CHARS."""
    if len(text) <= SHOWN_CHARS:
        return html.escape(text)
    more = len(text) - SHOWN_CHARS
    return (
        html.escape(text[:SHOWN_CHARS])
        + f"<span style='color:#999'> … ({more:,} characters more: export the meeting to read"
        " them)</span>"
    )


def render(records: tuple[SegmentRecord, ...], hits: list[SegmentRecord]) -> str:
    """A meeting's lines as HTML: time, who spoke (with two inputs), original, each
    translation below it in grey (with its language when there are several); the lines that
    match the search on a light yellow band."""
    return "".join(tables(records, hits))


def tables(records: tuple[SegmentRecord, ...], hits: list[SegmentRecord]) -> Iterator[str]:
    """``render``'s HTML as its tables of ROWS_PER_TABLE lines, in order, each made when it
    is asked for."""
    picked = {id(r) for r in hits}
    first = id(hits[0]) if hits else None
    for i in range(0, len(records), ROWS_PER_TABLE):
        some = records[i : i + ROWS_PER_TABLE]
        rows = "".join(_row(r, id(r) in picked, id(r) == first) for r in some)
        # (end to end: one cell spacing between two tables, as between two rows)
        joined = " style='margin-top:-4px'" if i else ""
        yield f"<table cellspacing='4' width='100%'{joined}>{rows}</table>"


def _row(r: SegmentRecord, picked: bool, first: bool) -> str:
    """One line of a meeting, a table's row (``picked``: it matches the search, ``first``:
    the first that does)."""
    text = _who(r.side) + _shown(r.source)
    several = len(r.targets) > 1  # each translation says its language
    for lang in r.targets:
        translation = r.translation_in(lang)
        if not translation or translation == r.source or r.src_lang == lang:
            continue
        tag = f"<span style='color:#999'>{html.escape(lang)}</span> " if several else ""
        text += f"<br>{tag}<span style='color:#555'>{_shown(translation)}</span>"
    band = " style='background:#fff3b0'" if picked else ""
    anchor = "<a name='hit'></a>" if first else ""
    return (
        f"<tr{band}><td style='color:#777;padding-right:10px;white-space:nowrap' "
        "valign='top'>"
        f"{anchor}{_clock(r.start)}</td><td width='100%'>{text}</td></tr>"
    )


def unheard_note(meeting: Meeting) -> str:
    """Where the audio the app had not transcribed when it stopped is kept, "" if none."""
    if not meeting.unheard:
        return ""
    files = ", ".join(f"{html.escape(p.name)} ({format_duration(s)})" for p, s in meeting.unheard)
    what = (
        "Not transcribed when the app stopped, kept beside the transcript"
        if meeting.records
        else "The app stopped before it had transcribed a line of this meeting; its audio is kept"
    )
    return (
        f"<p style='color:#777'>{what}: {files}. "
        "Play it again with <code>subtitler --replay FILE</code>.</p>"
    )


def export_dialog(parent: QWidget, suggested: Path) -> QFileDialog:
    """Where to export: a name typed without an extension gets the chosen format's in the
    dialog, so that its "replace?" asks about the file written (".srt" was added after it,
    and replaced a file of that name unasked)."""
    dlg = QFileDialog(parent, "Export meeting", str(suggested), FORMATS)
    dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dlg.setDefaultSuffix("srt")
    dlg.filterSelected.connect(
        lambda name: dlg.setDefaultSuffix(name.split("*.")[-1].rstrip(")") or "srt")
    )
    return dlg


class _Reading(QObject):
    """One read of the transcripts folder, on a thread of its own (504 hours of meetings are
    115 MB: 3 s with the window frozen when read on its thread). ``done`` comes on the
    window's thread with list_meetings' answer, or None when stopped first.

    The thread touches no widget. This object (no parent) is held in _UNDER_WAY until its
    answer has come and its thread is joined: the thread never emits from a Qt object already
    freed, nor frees one itself. A window freed meanwhile is no longer connected: its answer
    goes nowhere."""

    done = Signal(object)

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="history-read", daemon=True)
        self.done.connect(self._finish)  # (first: its queued call comes before the window's)

    def start(self) -> None:
        _UNDER_WAY.add(self)
        self._thread.start()

    def _run(self) -> None:
        answer: Listed | None = None
        try:
            answer = list_meetings(self.folder, self.stop.is_set)
        except Exception:  # a bug, not a file (list_meetings names those): the window goes on
            log.exception("reading the meetings in %s failed", self.folder)
            answer = ([], [f"{self.folder}: could not be read (see the log)"])
        finally:
            self.done.emit(None if self.stop.is_set() else answer)

    def _finish(self, _answer: object) -> None:
        self._thread.join()  # (it has emitted: its last step)
        _UNDER_WAY.discard(self)


_UNDER_WAY: set[_Reading] = set()


class HistoryDialog(QDialog):
    """Every meeting in the transcripts folder; the one chosen on the right."""

    problem = Signal(str)  # one line for the app to show (an export that failed)
    read = Signal()  # the meetings read are listed
    whole = Signal()  # the meeting chosen is in the text, every line (a long one in pieces)

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Meeting history — subtitler")
        open_at(self, 900, 560)
        self.folder = folder
        self.meetings: list[Meeting] = []
        self.shown: list[tuple[Meeting, list[SegmentRecord]]] = []
        self._rendered: tuple[object, ...] = ()  # what the text shows (rendered once)
        self._reading: _Reading | None = None
        self._again = False  # a reload asked for while a read was under way
        # A long meeting being built aside: its document, the tables still to add, and
        # whether to go to the first line found once it is shown.
        self._aside: tuple[QTextDocument, Iterator[str], bool] | None = None
        self._step = QTimer(self)
        self._step.setInterval(0)  # (each turn of the event loop, after what waits)
        self._step.timeout.connect(self._build_aside)

        self.query = QLineEdit()
        self.query.setPlaceholderText("Search all meetings (original and translation)")
        self.query.setClearButtonEnabled(True)
        self.query.setAccessibleName("Search all meetings")
        self.query.textChanged.connect(self._filter)
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["Date", "Length", "Languages", "Lines"])
        self.list.setRootIsDecorated(False)
        self.list.setAccessibleName("Meetings")
        self.list.currentItemChanged.connect(lambda *_: self._show_current())
        self.text = QTextBrowser()
        self.text.setAccessibleName("The meeting's lines")
        # A caret the arrows move: a screen reader reads the line it is on (they scrolled).
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.status = QLabel()
        self.status.setWordWrap(True)

        self.which = QComboBox()
        for label, which in TEXT_CHOICES:
            self.which.addItem(label, which)
        # The translation's language, for a meeting translated into several (issue 19).
        self.lang = QComboBox()
        self.lang.setToolTip("Which translation the export has")
        self.lang.setAccessibleName("Language of the translation exported")
        self.which.currentIndexChanged.connect(lambda _i: self._follow_which())
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(self._export_clicked)
        reload = QPushButton("Refresh")
        reload.clicked.connect(self.reload)
        close = QPushButton("Close")
        close.clicked.connect(self.close)

        for b in (self.export_button, reload, close):
            b.setAutoDefault(False)  # Enter in the search goes to the list, not to a button
        self.query.returnPressed.connect(self.list.setFocus)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.list)
        split.addWidget(self.text)
        split.setSizes([380, 520])
        bottom = QHBoxLayout()
        export_label = QLabel("Export:")
        export_label.setBuddy(self.which)
        bottom.addWidget(export_label)
        bottom.addWidget(self.which)
        bottom.addWidget(self.lang)
        bottom.addWidget(self.export_button)
        bottom.addStretch(1)
        bottom.addWidget(reload)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        self.reload()

    def reload(self) -> None:
        """Read the folder again (a meeting may have finished since), off the window's thread:
        the meetings listed now stay until the read's answer replaces them."""
        if self._reading is not None:
            self._again = True  # (after this read: one thread at a time)
            return
        self._reading = _Reading(self.folder)
        self._reading.done.connect(self._read_done)
        self._reading.start()
        self.status.setText(READING)
        if not self.meetings:
            self._filter()

    def _read_done(self, answer: Listed | None) -> None:
        self._reading = None
        if self._again:
            self._again = False
            self.reload()
            return
        if answer is None:  # stopped: the window was closed
            return
        self.meetings, problems = answer
        self.status.setText(f"Could not read: {'; '.join(problems)}" if problems else "")
        self._filter()
        self.read.emit()

    def hideEvent(self, event: QHideEvent) -> None:
        """Closed (Close, Esc, the title bar) or hidden by the app's Quit: the read stops at
        its next file, and a long meeting is built aside no further (shown again, it is
        built again: read again, as the app opens the window, its meetings are new); a
        window minimised, hidden by the window system, reads and builds on."""
        if not event.spontaneous():
            if self._reading is not None:
                self._reading.stop.set()
            self._again = False
            if self._aside is not None:
                self._aside = None
                self._step.stop()
                self._rendered = ()  # (what the text shows is not the whole meeting)
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        """Shown again after a close that left a meeting half built: built again, unless a
        read under way brings the meetings anew (the app reads them again at each open)."""
        super().showEvent(event)
        if not event.spontaneous() and not self._rendered and self._reading is None:
            self._show_current()

    def _filter(self) -> None:
        keep = self.current()
        self.shown = search(self.meetings, self.query.text())
        self.list.clear()
        for m, hits in self.shown:
            lines = f"{len(hits)} of {len(m.records)}" if hits else str(len(m.records))
            item = QTreeWidgetItem(
                [m.title, format_duration(m.duration_s), ", ".join(m.languages), lines]
            )
            item.setToolTip(0, str(m.path))
            self.list.addTopLevelItem(item)
        for c in range(4):
            self.list.resizeColumnToContents(c)
        paths = [m.path for m, _ in self.shown]
        row = paths.index(keep.path) if keep is not None and keep.path in paths else 0
        first = self.list.topLevelItem(row)
        if first is not None:
            self.list.setCurrentItem(first)
        else:
            self._rendered = ()
            self._show([f"<p style='color:#777'>{html.escape(self._none_shown())}</p>"], False)
        self.export_button.setEnabled(bool(self.shown))
        self._show_current()

    def _none_shown(self) -> str:
        if self.meetings:
            return "No meeting matches."
        if self._reading is not None:
            return READING
        return "No meetings yet: each run of subtitler is kept here once it has a finished line."

    def current(self) -> Meeting | None:
        row = self.list.currentIndex().row()
        return self.shown[row][0] if 0 <= row < len(self.shown) else None

    def _fill_languages(self, meeting: Meeting) -> None:
        """The export's language choice: the meeting's target languages (shown only when
        there are several), the one chosen before kept where the meeting has it."""
        keep = self.lang.currentData()
        self.lang.clear()
        for code in targets_of(meeting.records):
            self.lang.addItem(f"{LANGUAGES.get(code, code)} ({code})", code)
        i = self.lang.findData(keep)
        self.lang.setCurrentIndex(max(0, i))
        self.lang.setVisible(self.lang.count() > 1)
        self._follow_which()

    def _follow_which(self) -> None:
        self.lang.setEnabled(self.which.currentData() != "source")

    def _show_current(self) -> None:
        row = self.list.currentIndex().row()
        if not 0 <= row < len(self.shown):
            return
        meeting, hits = self.shown[row]
        self._fill_languages(meeting)
        self.export_button.setEnabled(bool(meeting.records))  # (audio kept, no line yet)
        # (choosing the row shows it, and a search that keeps the row shows it again)
        key = (meeting, *hits)  # (the objects: held, so never another's id)
        if len(key) != len(self._rendered) or any(
            a is not b for a, b in zip(key, self._rendered, strict=False)
        ):
            self._rendered = key
            parts = itertools.chain(tables(meeting.records, hits), [unheard_note(meeting)])
            self._show(parts, bool(hits))

    def _show(self, parts: Iterable[str], hit: bool) -> None:
        """``parts`` of HTML in the text, at once when they are few, else the first
        FIRST_TABLES at once and the whole once built aside (a meeting chosen meanwhile
        replaces it); ``hit``: then at the first line found (the anchor "hit")."""
        self._aside = None
        self._step.stop()
        rest = (part for part in parts if part)  # (no note: nothing to add)
        head = list(itertools.islice(rest, FIRST_TABLES + 1))
        more = head[FIRST_TABLES:]
        self.text.setHtml("".join(head[:FIRST_TABLES]))
        shown = hit and any("<a name='hit'>" in part for part in head[:FIRST_TABLES])
        if shown:
            self.text.scrollToAnchor("hit")  # the first line that matches
        if not more:
            self.whole.emit()
            return
        # (a copy of what is shown, its font and style too: the rest is added to it)
        aside = self.text.document().clone(self.text)
        self._aside = (aside, itertools.chain(more, rest), hit and not shown)
        self._step.start()

    @property
    def shown_whole(self) -> bool:
        """The meeting chosen is in the text, every line (not still built aside)."""
        return self._aside is None

    def _build_aside(self) -> None:
        """The next STEP_TABLES of the meeting built aside; the last shown instead of the
        first tables, with the caret, the selection and the view where they were."""
        if self._aside is None:
            self._step.stop()
            return
        doc, rest, hit = self._aside
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        added = 0
        for part in itertools.islice(rest, STEP_TABLES):
            cursor.insertHtml(part)
            added += 1
        if added == STEP_TABLES:
            return  # (the next turn; the last one may find none left)
        self._aside = None
        self._step.stop()
        old = self.text.textCursor()
        anchor, position = old.anchor(), old.position()
        bars = (self.text.verticalScrollBar(), self.text.horizontalScrollBar())
        at = [b.value() for b in bars]
        self.text.setDocument(doc)  # (the one shown so far is the text's child: freed)
        caret = QTextCursor(doc)
        caret.setPosition(anchor)
        caret.setPosition(position, QTextCursor.MoveMode.KeepAnchor)
        self.text.setTextCursor(caret)
        for bar, value in zip(bars, at, strict=True):
            bar.setValue(value)
        if hit:
            self.text.scrollToAnchor("hit")
        self.whole.emit()

    def _export_clicked(self) -> None:
        meeting = self.current()
        if meeting is None:
            return
        lang = self.lang.currentData() if self.lang.count() > 1 else None
        tag = f" {lang}" if lang else ""
        dlg = export_dialog(self, Path.home() / f"meeting {meeting.started:%Y-%m-%d %H%M}{tag}.srt")
        if dlg.exec() and dlg.selectedFiles():
            self.export_to(Path(dlg.selectedFiles()[0]))

    def export_to(self, path: Path) -> bool:
        """Export the chosen meeting with the chosen languages; False (and one line) if not."""
        meeting = self.current()
        if meeting is None:
            return False
        if not path.suffix:
            path = path.with_suffix(".srt")
        try:
            export(list(meeting.records), path, self.which.currentData(), self.lang.currentData())
        except (OSError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            said = f"Export failed: {path.name}: {why}"
            self.status.setText(said)  # (here too: the last export's success stood there)
            self.problem.emit(said)
            return False
        self.status.setText(f"Exported to {path}")
        return True
