"""The glossary window: terms and their fixed translations per language pair, typed in or
imported from a CSV file; saved and applied to the running engines at once."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
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

from subtitler.session import LANGUAGES, Glossary, GlossaryError, read_import
from subtitler.ui.sizing import open_at

CSV_FILTER = "CSV files (*.csv *.txt);;All files (*)"


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
        self._fill()
        self._say_empty()

    # -- the table -------------------------------------------------------------------------
    def rows(self) -> list[tuple[str, str]]:
        out = []
        for r in range(self.table.rowCount()):
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
        """Switch to a language pair (the edits of the shown one are kept, unsaved)."""
        if (src_lang, tgt_lang) != self._pair:
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

    def import_file(self, path: Path) -> int:
        """Add a CSV file's terms to the shown pair; returns how many (0 with the reason
        shown when the file cannot be used)."""
        try:
            rows = read_import(path)
        except GlossaryError as e:
            self.status.setText(f"Not imported: {e}")
            return 0
        before = {t.casefold(): x for t, x in self.rows() if t.strip()}
        known = {t.casefold(): r for r, (t, _) in enumerate(self.rows()) if t.strip()}
        given: dict[str, list[str]] = {}  # per term of the file: its translations, in order
        last: dict[str, str] = {}  # (its spelling last given)
        for term, translation in rows:
            key = term.casefold()
            given.setdefault(key, []).append(translation)
            last[key] = term
            r = known.get(key)
            if r is None:
                known[key] = self._append(term, translation)
            elif translation:
                self.table.setItem(r, 1, QTableWidgetItem(translation))
        n = len(given)
        said = [f"{'1 term' if n == 1 else f'{n} terms'} imported from {path.name}"]
        # A term given again with another translation: the last one counts, said.
        twice = [k for k, xs in given.items() if len({x for x in xs if x}) > 1]
        if twice:
            k = twice[0]
            said.append(
                f"{last[k]!r} was given {len(given[k])} times, its last translation kept "
                f"({[x for x in given[k] if x][-1]!r})"
                + (f", and {len(twice) - 1} more such terms" if len(twice) > 1 else "")
            )
        replaced = [
            (k, before[k], xs[-1])
            for k, xs in ((k, [x for x in xs if x]) for k, xs in given.items())
            if before.get(k) and xs and xs[-1] != before[k]
        ]
        if replaced:
            k, old, new = replaced[0]
            m = len(replaced)
            said.append(
                f"{'1 translation' if m == 1 else f'{m} translations'} replaced "
                f"({last[k]!r}: {old!r} → {new!r}{', …' if m > 1 else ''})"
            )
        self.status.setText("; ".join(said) + "; Save to use them.")
        return n

    def save(self) -> None:
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
