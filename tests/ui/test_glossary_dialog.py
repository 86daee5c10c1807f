"""The Glossary window (tray → Glossary…): typed and imported terms per language pair, saved
next to the settings and given to the running pipeline at once; a bad glossary file is set
aside with a notice and the app stays up."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialogButtonBox, QTableWidgetItem

from subtitler.config import AppConfig, MtConfig
from subtitler.mt import glossary
from subtitler.mt.glossary import Entry, Glossary
from subtitler.pipeline.pipeline import Factories
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.glossary_dialog import GlossaryDialog
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for


def _dialog(qtbot, g: Glossary) -> GlossaryDialog:  # type: ignore[no-untyped-def]
    d = GlossaryDialog(g, "en", "de")
    qtbot.addWidget(d)
    return d


def _import(qtbot, d: GlossaryDialog, path: Path) -> int:  # type: ignore[no-untyped-def]
    """Import a file as the button does, and wait for its end: how many terms it added."""
    with qtbot.waitSignal(d.imported, timeout=30_000) as sig:
        d.import_file(path)
    return int(sig.args[0])


def test_the_table_shows_the_pair_and_edits_are_saved(qtbot) -> None:  # type: ignore[no-untyped-def]
    g = Glossary().with_pair("en", "de", [("Subiaco", "Subiaco")])
    g = g.with_pair("en", "fr", [("printing", "imprimerie")])
    d = _dialog(qtbot, g)
    assert d.rows() == [("Subiaco", "Subiaco")]
    d.add_row()
    d.table.setItem(1, 0, QTableWidgetItem("  Pannartz "))
    d.table.setItem(1, 1, QTableWidgetItem(""))
    d.add_row()  # left empty: dropped on save
    with qtbot.waitSignal(d.applied) as sig:
        d.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    saved: Glossary = sig.args[0]
    assert saved.pair("en", "de") == (
        Entry("en", "de", "Subiaco", "Subiaco"),
        Entry("en", "de", "Pannartz", ""),
    )
    assert saved.pair("en", "fr") == (Entry("en", "fr", "printing", "imprimerie"),)
    assert d.rows() == [("Subiaco", "Subiaco"), ("Pannartz", "")]
    assert "2 terms" in d.status.text()
    # Another pair: its own terms; the edits of the first are kept.
    d.table.setItem(0, 1, QTableWidgetItem("Subiaco (Latium)"))
    d.tgt_box.setCurrentIndex(d.tgt_box.findData("fr"))
    assert d.rows() == [("printing", "imprimerie")]
    d.table.selectRow(0)
    d.remove_rows()
    with qtbot.waitSignal(d.applied) as sig:
        d.save()
    assert sig.args[0].pair("en", "fr") == ()
    assert sig.args[0].translations("en", "de")[0] == ("Subiaco", "Subiaco (Latium)")


def test_import_adds_a_csv_and_a_bad_file_changes_nothing(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    d = _dialog(qtbot, Glossary().with_pair("en", "de", [("Subiaco", "")]))
    good = tmp_path / "terms.csv"
    good.write_bytes("\ufeffTerm;Translation\nsubiaco;Subiaco\nprinting;Buchdruck\n".encode())
    assert _import(qtbot, d, good) == 2
    assert d.rows() == [("Subiaco", "Subiaco"), ("printing", "Buchdruck")]
    assert d.status.text() == "2 terms imported from terms.csv; Save to use them."
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"a,b,c\n")
    assert _import(qtbot, d, bad) == 0
    assert d.rows() == [("Subiaco", "Subiaco"), ("printing", "Buchdruck")]
    assert d.status.text().startswith("Not imported: bad.csv line 1 has 3 fields")
    # What the CSV reader itself refuses, and what is no file at all, say so the same way.
    huge = tmp_path / "huge.csv"
    huge.write_bytes(b"a,b\n" + b"x" * 200_000 + b",y\n")
    assert _import(qtbot, d, huge) == 0
    assert d.status.text() == (
        "Not imported: huge.csv line 2: field larger than field limit (131072)"
    )
    assert _import(qtbot, d, tmp_path) == 0
    assert d.status.text() == f"Not imported: {tmp_path.name} is a folder, not a file"
    assert d.rows() == [("Subiaco", "Subiaco"), ("printing", "Buchdruck")]
    one = tmp_path / "one.csv"
    one.write_text("Term;Translation\ntypesetting;Schriftsatz\n", encoding="utf-8")
    assert _import(qtbot, d, one) == 1
    assert d.status.text() == "1 term imported from one.csv; Save to use them."  # ("1 terms")


def _app(tmp_path: Path) -> SubtitlerApp:
    f = Factories(
        lambda a, c: FakeSource(30.0, speed=1.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    cfg = AppConfig(mt=MtConfig(model_path="x"))
    return SubtitlerApp(cfg, f, config_path=tmp_path / "config.toml", data_dir=tmp_path)


def test_the_tray_opens_it_and_saving_applies_and_writes_the_file(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    glossary.save(Glossary().with_pair("en", "de", [("Subiaco", "")]), tmp_path / "glossary.csv")
    app = _app(tmp_path)
    qtbot.addWidget(app.overlay)
    assert app.glossary.pair("en", "de") == (Entry("en", "de", "Subiaco", ""),)
    assert "Glossary…" in [a.text() for a in app.tray.menu.actions()]
    app.start()
    assert app.pipeline is not None and app.pipeline.glossary == app.glossary
    app.tray.show_glossary.emit()
    d = app.glossary_dialog
    assert d is not None and d.isVisible() and d.rows() == [("Subiaco", "")]
    qtbot.addWidget(d)
    d.table.setItem(0, 1, QTableWidgetItem("Subiaco"))
    d.save()
    new = Glossary().with_pair("en", "de", [("Subiaco", "Subiaco")])
    assert app.glossary == new and app.pipeline.glossary == new  # live, same pipeline
    assert glossary.load(tmp_path / "glossary.csv").glossary == new
    app.pipeline.stop()


def test_a_bad_glossary_file_is_set_aside_and_the_app_runs(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    (tmp_path / "glossary.csv").write_bytes(b"\xff\xfe not a glossary")
    app = _app(tmp_path)
    qtbot.addWidget(app.overlay)
    assert "The glossary could not be read (glossary.csv is not UTF-8 text" in app.overlay.alert
    assert app.glossary == Glossary()
    assert len(list(tmp_path.glob("glossary.csv.broken-*"))) == 1
    app.start()
    qtbot.waitUntil(lambda: any(ln.translation for ln in app.overlay.lines()), timeout=10_000)
    assert app.pipeline is not None
    app.pipeline.stop()


def test_a_glossary_that_cannot_be_saved_is_used_and_said(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    app = _app(tmp_path)
    qtbot.addWidget(app.overlay)
    (tmp_path / "glossary.csv").mkdir()  # something in the way of the file
    new = Glossary().with_pair("en", "de", [("Subiaco", "Subiaco")])
    app.open_glossary()
    assert app.glossary_dialog is not None
    qtbot.addWidget(app.glossary_dialog)
    app.apply_glossary(new)
    assert app.glossary == new
    assert app.overlay.alert.startswith("Glossary not saved (")
    assert app.glossary_dialog is not None
    assert app.glossary_dialog.status.text() == app.overlay.alert


def test_settings_open_it_at_the_chosen_pair_and_count_its_terms(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    """The issue: the glossary is "edited in Settings": the Translation tab shows how many
    terms the chosen pair has and opens the Glossary window at that pair; a save reaches the
    running translator as from the tray, and the count follows."""
    glossary.save(Glossary().with_pair("en", "de", [("Subiaco", "")]), tmp_path / "glossary.csv")
    app = _app(tmp_path)
    qtbot.addWidget(app.overlay)
    app.start()
    app.open_settings()
    pane = app.settings
    assert pane is not None
    qtbot.addWidget(pane)
    assert pane.tabs.currentWidget().isAncestorOf(pane.glossary_button)  # the Translation tab
    assert pane.glossary_count.text() == "1 term for English → German"
    pane.tgt_lang.setCurrentIndex(pane.tgt_lang.findData("fr"))  # not applied: only shown
    assert pane.glossary_count.text() == (
        "No terms for English → French yet: add names and jargon of your meetings"
    )
    pane.glossary_button.click()
    d = app.glossary_dialog
    assert d is not None and d.isVisible()
    qtbot.addWidget(d)
    assert (d.src_box.currentData(), d.tgt_box.currentData()) == ("en", "fr")
    assert d.rows() == []
    d.add_row()
    d.table.setItem(0, 0, QTableWidgetItem("printing"))
    d.table.setItem(0, 1, QTableWidgetItem("imprimerie"))
    d.save()
    want = Glossary((Entry("en", "de", "Subiaco", ""), Entry("en", "fr", "printing", "imprimerie")))
    assert app.glossary == want
    assert app.pipeline is not None and app.pipeline.glossary == want  # live, same pipeline
    assert glossary.load(tmp_path / "glossary.csv").glossary == want
    assert pane.glossary_count.text() == "1 term for English → French"
    # Back to German in Settings: the open window follows to that pair.
    pane.tgt_lang.setCurrentIndex(pane.tgt_lang.findData("de"))
    pane.glossary_button.click()
    assert (d.tgt_box.currentData(), d.rows()) == ("de", [("Subiaco", "")])
    app.pipeline.stop()


def test_an_empty_pair_says_how_to_begin_and_edits_say_they_are_not_saved(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Seen on the screenshots: an empty pair was a blank table, Remove was offered with
    nothing to remove, and Close after an edit gave no sign that it was not saved."""
    d = GlossaryDialog(Glossary().with_pair("en", "de", [("Subiaco", "")]), "en", "fr")
    qtbot.addWidget(d)
    assert d.status.text() == (
        "No terms for English (en) → French (fr) yet: click Add term, or Import CSV… to "
        "bring a list."
    )
    assert not d.remove_button.isEnabled()
    d.tgt_box.setCurrentIndex(d.tgt_box.findData("de"))
    assert d.status.text() == "" and not d.remove_button.isEnabled()
    d.table.setItem(0, 1, QTableWidgetItem("Subiaco"))
    assert d.status.text() == "Not saved yet: click Save to use these terms."
    d.save()
    assert d.status.text() == "Saved: 1 term for this language pair, in use from now on."
    d.table.selectRow(0)
    assert d.remove_button.isEnabled()
    d.remove_button.click()
    assert d.rows() == [] and not d.remove_button.isEnabled()
    assert d.status.text() == "Not saved yet: click Save to use these terms."


def test_delete_or_backspace_removes_the_selected_terms(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Delete (and Backspace, the Mac's delete key) on the selected rows removes them as Remove
    does, not saved until Save (they did nothing: only the button removed a term); in a cell
    being edited they still delete characters."""
    from PySide6.QtCore import QItemSelectionModel, Qt

    terms = [("OKR", "OKR"), ("Subiaco", ""), ("Pannartz", "Pannartz"), ("Sweynheym", "")]
    dlg = GlossaryDialog(Glossary().with_pair("en", "de", terms), "en", "de")
    qtbot.addWidget(dlg)
    with qtbot.waitActive(dlg):  # (keys typed go to the window in use)
        dlg.show()
        dlg.activateWindow()
    table = dlg.table
    table.setFocus()
    table.selectRow(0)
    rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    table.selectionModel().select(table.model().index(2, 0), rows)
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    assert dlg.rows() == [("Subiaco", ""), ("Sweynheym", "")]
    assert dlg.status.text() == "Not saved yet: click Save to use these terms."
    dlg.save()
    table.setFocus()
    table.selectRow(1)
    qtbot.keyClick(table, Qt.Key.Key_Backspace)
    assert dlg.rows() == [("Subiaco", "")]
    assert dlg.status.text() == "Not saved yet: click Save to use these terms."
    assert [e.term for e in dlg.glossary.pair("en", "de")] == ["Subiaco", "Sweynheym"]  # (saved)
    # Nothing selected: nothing removed.
    table.clearSelection()
    qtbot.keyClick(table, Qt.Key.Key_Delete)
    assert dlg.rows() == [("Subiaco", "")]
    # A cell being edited: the keys are the editor's.
    dlg.add_row()
    editor = dlg.focusWidget()
    assert editor is not None and table.isAncestorOf(editor)
    qtbot.keyClicks(editor, "APIs")
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    qtbot.keyClick(editor, Qt.Key.Key_Home)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: table.state() != table.State.EditingState, timeout=1000)
    assert dlg.rows() == [("Subiaco", ""), ("PI", "")]


def test_the_keyboard_alone_adds_a_term_and_saves(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Tab leaves the table for the buttons and Shift+Tab comes back (Tab went round its
    cells for ever: Add term, Remove, Import and Save could not be reached from it); arrows
    move between the cells."""
    from PySide6.QtCore import Qt

    saved: list[Glossary] = []
    dlg = GlossaryDialog(Glossary().with_pair("en", "de", [("OKR", "OKR")]), "en", "de")
    qtbot.addWidget(dlg)
    dlg.applied.connect(saved.append)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.table.setFocus()
    dlg.table.setCurrentCell(0, 0)
    qtbot.keyClick(dlg.table, Qt.Key.Key_Right)
    assert dlg.table.currentColumn() == 1
    qtbot.keyClick(dlg.table, Qt.Key.Key_Tab)
    assert dlg.focusWidget() is dlg.add_button
    qtbot.keyClick(dlg.add_button, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)
    assert dlg.focusWidget() is dlg.table
    dlg.add_button.setFocus()
    qtbot.keyClick(dlg.add_button, Qt.Key.Key_Space)  # a new row, its term being edited
    editor = dlg.focusWidget()
    assert editor is not dlg.add_button and dlg.table.isAncestorOf(editor)
    qtbot.keyClicks(editor, "Subiaco")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # (the editor's text is put in the table once Qt has ended the edit)
    qtbot.waitUntil(lambda: dlg.table.state() != dlg.table.State.EditingState, timeout=1000)
    assert dlg.rows()[-1] == ("Subiaco", "")
    save = dlg.buttons.button(QDialogButtonBox.StandardButton.Save)
    for _ in range(6):
        if dlg.focusWidget() is save:
            break
        qtbot.keyClick(dlg.focusWidget(), Qt.Key.Key_Tab)
    assert dlg.focusWidget() is save
    qtbot.keyClick(save, Qt.Key.Key_Space)
    assert [e.term for e in saved[-1].pair("en", "de")] == ["OKR", "Subiaco"]


def test_import_says_terms_given_twice_and_translations_it_replaced(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    """A company list with a term given twice with other translations imported its last one
    silently, counting it three times ("4 terms imported" for 2)."""
    d = _dialog(qtbot, Glossary().with_pair("en", "de", [("road map", "Roadmap")]))
    dups = tmp_path / "dups.csv"
    dups.write_text(
        "API,Schnittstelle\nAPI,API\napi,Programmierschnittstelle\nroad map,Fahrplan\n",
        encoding="utf-8",
    )
    assert _import(qtbot, d, dups) == 2
    assert d.rows() == [("road map", "Fahrplan"), ("API", "Programmierschnittstelle")]
    assert d.status.text() == (
        "2 terms imported from dups.csv; 'api' was given 3 times, its last translation "
        "kept ('Programmierschnittstelle'); 1 translation replaced ('road map': 'Roadmap' → "
        "'Fahrplan'); Save to use them."
    )


def test_save_says_a_term_typed_twice_and_which_translation_it_kept(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Two rows of one term (any case) became one at Save, the first row's translation gone
    unsaid."""
    d = _dialog(qtbot, Glossary())
    for term, translation in (("API", "Schnittstelle"), ("road map", "Fahrplan"), ("api", "API")):
        r = d.table.rowCount()
        d.add_row()
        d.table.setItem(r, 0, QTableWidgetItem(term))
        d.table.setItem(r, 1, QTableWidgetItem(translation))
    with qtbot.waitSignal(d.applied) as sig:
        d.save()
    assert sig.args[0].translations("en", "de") == (("road map", "Fahrplan"), ("api", "API"))
    assert d.status.text() == (
        "Saved: 2 terms for this language pair, in use from now on. 'api' was in the table "
        "twice: its last translation ('API') is kept."
    )


def test_a_large_import_leaves_the_window_answering_while_its_rows_arrive(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    """An import read and filled the table on the window's thread: 400,000 terms froze it 6 s
    (no repaint, no click answered). The file is read aside and the rows arrive in pieces,
    the window's events handled in between."""
    d = _dialog(qtbot, Glossary().with_pair("en", "de", [("Subiaco", "")]))
    n = 20_000
    big = tmp_path / "big.csv"
    lines = ["Term;Translation", *(f"term{i};Begriff{i}" for i in range(n)), "subiaco;Subiaco"]
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows_when_answered: list[int] = []
    QTimer.singleShot(0, lambda: rows_when_answered.append(d.table.rowCount()))
    d.import_file(big)
    assert d.status.text() == "Importing big.csv…"
    assert not d.import_button.isEnabled() and not d.src_box.isEnabled()
    qtbot.waitUntil(lambda: d.import_button.isEnabled(), timeout=30_000)
    assert rows_when_answered and rows_when_answered[0] < n + 1  # (answered before the end)
    assert d.status.text() == f"{n + 1} terms imported from big.csv; Save to use them."
    rows = d.rows()
    assert len(rows) == n + 1 and rows[0] == ("Subiaco", "Subiaco")
    assert rows[1] == ("term0", "Begriff0") and rows[-1] == (f"term{n - 1}", f"Begriff{n - 1}")
    with qtbot.waitSignal(d.applied) as sig:
        d.save()
    assert len(sig.args[0].pair("en", "de")) == n + 1


def test_an_import_of_a_dictionary_is_refused_and_the_table_kept(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path
) -> None:
    """400,000 terms (a 4 MB file of short words) froze the window 6 s and were taken: more
    terms than a language pair takes are refused in one line, the table as it was."""
    d = _dialog(qtbot, Glossary().with_pair("en", "de", [("Subiaco", "")]))
    big = tmp_path / "words.csv"
    big.write_text("".join(f"w{i}\n" for i in range(400_000)), encoding="utf-8")
    d.import_file(big)
    qtbot.waitUntil(lambda: d.import_button.isEnabled(), timeout=30_000)
    assert d.status.text() == (
        "Not imported: words.csv holds more than 50,000 terms (400,000 lines); a language "
        "pair takes at most 50,000: a glossary is for names and terms, not a whole dictionary"
    )
    assert d.rows() == [("Subiaco", "")] and d.src_box.isEnabled()


def test_an_import_that_would_make_the_pair_too_large_is_refused(  # type: ignore[no-untyped-def]
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(glossary, "MAX_TERMS", 3)
    d = _dialog(qtbot, Glossary().with_pair("en", "de", [("Subiaco", ""), ("Pannartz", "")]))
    two = tmp_path / "two.csv"
    two.write_text("printing\ntypesetting\nsubiaco,Subiaco\n", encoding="utf-8")
    assert _import(qtbot, d, two) == 0
    assert d.status.text() == (
        "Not imported: English (en) → German (de) would have 4 terms with those of two.csv; "
        "a language pair takes at most 3"
    )
    assert d.rows() == [("Subiaco", ""), ("Pannartz", "")]
    one = tmp_path / "one.csv"
    one.write_text("printing\nSUBIACO,Subiaco\n", encoding="utf-8")
    assert _import(qtbot, d, one) == 2
    assert d.rows() == [("Subiaco", "Subiaco"), ("Pannartz", ""), ("printing", "")]
