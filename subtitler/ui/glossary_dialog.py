"""The glossary window: terms and their fixed translations per language pair, typed in or
imported from a CSV file; saved and applied to the running engines at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from subtitler.session import (
    LANGUAGES,
    Glossary,
    GlossaryError,
    ImportedTerms,
    merge_import,
    read_import,
)
from subtitler.ui.background import BackgroundJob, Report
from subtitler.ui.sizing import open_at

CSV_FILTER = "CSV files (*.csv *.txt);;All files (*)"
# Rows an import reads from or puts in the table between two turns of the event loop: about
# 10 ms of the window's thread on a busy 2-core machine (reading 50,000 in one go held it
# 0.3 s).
IMPORT_PIECE = 2_000


def _language_box(code: str) -> QComboBox:
    box = QComboBox()
    for c, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
        box.addItem(f"{name} ({c})", c)
    i = box.findData(code)
    box.setCurrentIndex(max(0, i))
    return box


class GlossaryDialog(QDialog):
    """Edits a copy of the glossary; Save emits ``applied`` with the whole glossary."""

    applied = Signal(object)  # Glossary
    imported = Signal(int)  # an import ended: the terms it added (0: none, the reason shown)

    def __init__(
        self, glossary: Glossary, src_lang: str, tgt_lang: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Glossary – subtitler")
        open_at(self, 520, 460)
        self.glossary = glossary
        self.src_box, self.tgt_box = _language_box(src_lang), _language_box(tgt_lang)
        self._pair = (src_lang, tgt_lang)
        intro = QLabel(
            "Names and terms to recognise, and how to translate them. Leave the translation "
            "empty to have a term recognised only. Changes apply from the next line on."
        )
        intro.setWordWrap(True)
        pair = QHBoxLayout()
        for text, box, name in (
            ("From", self.src_box, "Glossary from language"),
            ("to", self.tgt_box, "Glossary to language"),
        ):
            label = QLabel(text)
            label.setBuddy(box)
            box.setAccessibleName(name)  # ("to" alone says little to a screen reader)
            pair.addWidget(label)
            pair.addWidget(box, 1)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Term (as spoken)", "Fixed translation"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()  # (row numbers say nothing here)
        self.table.setAccessibleName("Terms")
        # Tab goes on to the buttons (it went round the cells, never out of the table); the
        # arrows move between cells, and Tab while a cell is edited to the next one.
        self.table.setTabKeyNavigation(False)
        # Delete (and Backspace, the Mac's delete key) removes the selected rows, as Remove
        # does; in a cell being edited they are the editor's (the table has no focus then).
        for key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            shortcut = QShortcut(QKeySequence(key), self.table)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(self.remove_rows)
        self.add_button = QPushButton("Add term")
        self.remove_button = QPushButton("Remove")
        self.import_button = QPushButton("Import CSV…")
        self.import_button.setToolTip(
            "One term per line, or term and translation separated by a comma, semicolon or "
            "tab; a header line is skipped. Imported terms are added to this language pair."
        )
        tools = QHBoxLayout()
        for b in (self.add_button, self.remove_button, self.import_button):
            tools.addWidget(b)
        tools.addStretch(1)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close
        )
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(pair)
        layout.addWidget(self.table, 1)
        layout.addLayout(tools)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.add_button.clicked.connect(self.add_row)
        self.remove_button.clicked.connect(self.remove_rows)
        self.import_button.clicked.connect(self.choose_import)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.close)
        self.src_box.currentIndexChanged.connect(self._pair_changed)
        self.tgt_box.currentIndexChanged.connect(self._pair_changed)
        self.table.itemSelectionChanged.connect(self._update_remove)
        self.table.itemChanged.connect(self._edited)
        # An import: the file read aside (a 4 MB file takes about a second), then its rows put
        # in the table a piece at a time, the window answering in between.
        self._reader = BackgroundJob(
            self,
            "glossary-import",
            on_progress=lambda _label, _fraction: None,
            on_done=self._read,
            on_error=self._read,
        )
        self._importing: Iterator[bool] | None = None
        self._merged: object = None  # what the reader made of the file
        self._pieces = QTimer(self)
        self._pieces.setSingleShot(True)
        self._pieces.setInterval(0)
        self._pieces.timeout.connect(self._next_piece)
        self._fill()
        self._say_empty()

    # -- the table -------------------------------------------------------------------------
    def rows(self) -> list[tuple[str, str]]:
        return self._rows(0, self.table.rowCount())

    def _rows(self, start: int, end: int) -> list[tuple[str, str]]:
        out = []
        for r in range(start, end):
            cells = [self.table.item(r, c) for c in (0, 1)]
            term, translation = (c.text() if c is not None else "" for c in cells)
            out.append((term, translation))
        return out

    def _fill(self) -> None:
        entries = self.glossary.pair(*self._pair)
        self.table.blockSignals(True)  # (filled, not edited)
        self.table.setRowCount(0)
        for e in entries:
            self._append(e.term, e.translation)
        self.table.blockSignals(False)
        self._update_remove()

    def _pair_name(self) -> str:
        return f"{self.src_box.currentText()} → {self.tgt_box.currentText()}"

    def _say_empty(self) -> None:
        """An empty pair says how to begin."""
        if self.table.rowCount() == 0:
            self.status.setText(
                f"No terms for {self._pair_name()} yet: click Add term, or Import CSV… to "
                "bring a list."
            )

    def _edited(self, *_: object) -> None:
        self.status.setText("Not saved yet: click Save to use these terms.")

    def _update_remove(self) -> None:
        self.remove_button.setEnabled(bool(self.table.selectedIndexes()))

    def _append(self, term: str, translation: str) -> int:
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, 0, QTableWidgetItem(term))
        self.table.setItem(r, 1, QTableWidgetItem(translation))
        return r

    def _collect(self) -> bool:
        """The table's rows into the glossary (False, with the reason shown, if invalid)."""
        try:
            self.glossary = self.glossary.with_pair(*self._pair, self.rows())
        except GlossaryError as e:
            self.status.setText(str(e))
            return False
        return True

    def _pair_changed(self) -> None:
        if not self._collect():  # the shown pair's rows stay, and so does its name
            self._show_boxes(*self._pair)
            return
        self._pair = (self.src_box.currentData(), self.tgt_box.currentData())
        self._fill()
        self.status.setText("")
        self._say_empty()

    def _show_boxes(self, src_lang: str, tgt_lang: str) -> None:
        for box, code in ((self.src_box, src_lang), (self.tgt_box, tgt_lang)):
            box.blockSignals(True)
            box.setCurrentIndex(max(0, box.findData(code)))
            box.blockSignals(False)

    def show_pair(self, src_lang: str, tgt_lang: str) -> None:
        """Switch to a language pair (the edits of the shown one are kept, unsaved); not while
        an import fills the shown one."""
        if (src_lang, tgt_lang) != self._pair and not self.busy:
            self._show_boxes(src_lang, tgt_lang)
            self._pair_changed()

    def add_row(self) -> None:
        r = self._append("", "")
        self.table.setCurrentCell(r, 0)
        item = self.table.item(r, 0)
        if item is not None:
            self.table.editItem(item)

    def remove_rows(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        for r in rows:
            self.table.removeRow(r)
        if rows:
            self._edited()

    # -- import and save -------------------------------------------------------------------
    def choose_import(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import glossary", "", CSV_FILTER)
        if name:
            self.import_file(Path(name))

    @property
    def busy(self) -> bool:
        """An import is under way (the table and the pair are its until it ends)."""
        return self._importing is not None

    def import_file(self, path: Path) -> None:
        """Add a CSV file's terms to the shown pair, the window answering meanwhile: the table
        read and filled in pieces, the file read aside; ``imported`` says how many at the end
        (0, with the reason shown, when the file cannot be used)."""
        if self.busy:
            return
        self._set_editable(False)
        self.status.setText(f"Importing {path.name}…")
        self._importing = self._import_steps(path)
        self._pieces.start()

    def _next_piece(self) -> None:
        if self._importing is None:
            return
        self.table.blockSignals(True)  # (filled, not edited: no "Not saved yet" per cell)
        try:
            step = next(self._importing, None)
        finally:
            self.table.blockSignals(False)
        if step:  # (False: the file is being read, _read goes on)
            self._pieces.start()

    def _read(self, merged: object) -> None:
        self._merged = merged
        self._pieces.start()

    def _import_steps(self, path: Path) -> Iterator[bool]:
        """The import, a piece (IMPORT_PIECE rows) at each step: the shown rows read, the file
        read and merged with them aside (the step yields False until then), the rows put in."""
        n = self.table.rowCount()
        rows: list[tuple[str, str]] = []
        for at in range(0, n, IMPORT_PIECE):
            rows += self._rows(at, min(n, at + IMPORT_PIECE))
            yield True
        pair = self._pair_name()

        def read(_report: Report) -> ImportedTerms | GlossaryError:  # (no Qt object here)
            try:
                return merge_import(rows, read_import(path), path.name, pair)
            except GlossaryError as e:  # the user's file: said, not logged as a failure
                # (without its traceback, whose frames hold the rows read: 400,000 of them
                # kept until the next import, and walked by each garbage collection)
                return e.with_traceback(None)

        self._merged = None
        self._reader.start(read)
        yield False
        merged, self._merged = self._merged, None
        if not isinstance(merged, ImportedTerms):  # (a GlossaryError, or a failure logged)
            self._import_ended(f"Not imported: {merged}", 0)
            return
        # Through the model: the table makes each cell's item itself (a QTableWidgetItem made
        # here stays a Python object, 100,000 of them walked by each garbage collection).
        model = self.table.model()
        for i, (r, translation) in enumerate(merged.changed, start=1):
            model.setData(model.index(r, 1), translation)
            if i % IMPORT_PIECE == 0:
                yield True
        added = merged.added
        for at in range(0, len(added), IMPORT_PIECE):
            piece = added[at : at + IMPORT_PIECE]
            self.table.setRowCount(n + at + len(piece))
            for k, (term, translation) in enumerate(piece, start=n + at):
                model.setData(model.index(k, 0), term)
                model.setData(model.index(k, 1), translation)
            done = at + len(piece)
            if done < len(added):
                self.status.setText(f"Importing {path.name}: {done:,} of {len(added):,} terms…")
                yield True
        self._import_ended(merged.said, merged.terms)

    def _import_ended(self, said: str, terms: int) -> None:
        self._importing = None
        self.status.setText(said)
        self._set_editable(True)
        self.imported.emit(terms)

    def _set_editable(self, on: bool) -> None:
        """While an import runs, the table, the pair and the buttons that change them wait."""
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        for w in (
            self.table, self.src_box, self.tgt_box, self.add_button, self.import_button, save,
        ):  # fmt: skip
            w.setEnabled(on)
        if on:
            self._update_remove()
        else:
            self.remove_button.setEnabled(False)

    def save(self) -> None:
        if self.busy:
            return
        typed = [(" ".join(t.split()), " ".join(x.split())) for t, x in self.rows() if t.strip()]
        if not self._collect():
            return
        self._fill()  # as saved: empty rows gone, duplicates merged
        self.applied.emit(self.glossary)
        n = len(self.glossary.pair(*self._pair))
        terms = "1 term" if n == 1 else f"{n} terms"
        said = f"Saved: {terms} for this language pair, in use from now on."
        # A term in two rows (any case) is one: the last row's translation counts, said.
        rows: dict[str, list[tuple[str, str]]] = {}
        for t, x in typed:
            rows.setdefault(t.casefold(), []).append((t, x))
        twice = [r for r in rows.values() if len({x for _, x in r}) > 1]
        if twice:
            t, x = twice[0][-1]
            times = "twice" if len(twice[0]) == 2 else f"{len(twice[0])} times"
            more = f" (and {len(twice) - 1} more such terms)" if len(twice) > 1 else ""
            said += f" {t!r} was in the table {times}: its last translation ({x!r}) is kept{more}."
        self.status.setText(said)
        if n == 0:
            self._say_empty()

    def show_problem(self, text: str) -> None:
        self.status.setText(text)
