"""Models in the app: list, download with progress and cancel, verify, remove and use the
speech and translation models of the catalog, through the same code as `subtitler models`."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from subtitler.config import AppConfig
from subtitler.session import (
    Catalog,
    CatalogEntry,
    first_line,
    probe_model,
    size_text,
    with_models,
)
from subtitler.session import model_files as dl
from subtitler.ui.background import BackgroundJob, Report, show_progress, stop_download
from subtitler.ui.sizing import open_at

KINDS = {"asr": "Speech", "mt": "Translation"}
STATES = {
    "installed": "Downloaded",
    "local": "Included",
    "local-missing": "Missing from this install",
    "partial": "Download not finished",
    "missing": "Not downloaded",
}


def download_label(state: str) -> str:
    """The download button's text for a model in ``state``."""
    return "Continue download" if state == "partial" else "Download"


def names(value: str, entry: CatalogEntry, root: Path | None) -> bool:
    """Whether a model setting's value is this model (its catalog id, size name or file)."""
    if not value:
        return False
    if value in (entry.id, entry.size_name):
        return True
    try:
        return Path(value).expanduser().resolve() == dl.model_path(entry, root).resolve()
    except OSError:
        return False


def in_use(entry: CatalogEntry, cfg: AppConfig, root: Path | None) -> bool:
    """Whether the settings name this model."""
    return names(cfg.asr.model if entry.kind == "asr" else cfg.mt.model_path, entry, root)


def licence_line(entry: CatalogEntry) -> str:
    """The model's licence in plain words, with a link to its text (rich text for a QLabel)."""
    text = html.escape(f"{entry.name} is under the {entry.licence_text}.")
    url = entry.terms.url if entry.terms is not None else ""
    if url:
        text += f' <a href="{html.escape(url, quote=True)}">Read the licence</a>'
    return text


class ModelsDialog(QDialog):
    """One row per catalog model; the buttons act on the selected row."""

    chosen = Signal(object)  # the AppConfig that uses the picked model

    def __init__(
        self,
        cfg: AppConfig,
        catalog: Catalog,
        parent: QWidget | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models — subtitler")
        open_at(self, 860, 420)  # (seven columns: "Use at work" among them)
        self.cfg, self.catalog, self.root = cfg, catalog, root
        self.entries = list(catalog)
        self.busy = False
        self._cancel = threading.Event()
        self._job = BackgroundJob(
            self,
            "model-action",
            on_progress=self._on_progress,
            on_done=self._on_done,
            on_error=lambda err: self._on_done(f"Something went wrong: {err}"),
        )

        self.table = QTreeWidget()
        self.table.setHeaderLabels(
            ["Model", "For", "Download", "Memory", "Use at work", "Status", ""]
        )
        self.table.setRootIsDecorated(False)
        self.table.setAccessibleName("Models")
        self.table.currentItemChanged.connect(lambda *_: self._update_buttons())
        # The selected model's licence in plain words, read before Download is clicked.
        self.licence = QLabel()
        self.licence.setTextFormat(Qt.TextFormat.RichText)
        self.licence.setWordWrap(True)
        self.licence.setOpenExternalLinks(True)
        # Its link reached by Tab and opened by Enter too (it could only be clicked).
        self.licence.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.hide()
        self.status = QLabel("Pick a model, then an action.")
        self.status.setWordWrap(True)
        self.download_btn = QPushButton("Download")
        self.cancel_btn = QPushButton("Cancel")
        self.verify_btn = QPushButton("Check")
        self.verify_btn.setToolTip("Re-read the files (sizes, checksums) and load the model once")
        self.remove_btn = QPushButton("Remove…")
        self.use_btn = QPushButton("Use this model")
        close = QPushButton("Close")
        self.download_btn.clicked.connect(self.download_selected)
        self.cancel_btn.clicked.connect(
            lambda: stop_download(self._cancel, self.cancel_btn, self.status)
        )
        self.verify_btn.clicked.connect(self.verify_selected)
        self.remove_btn.clicked.connect(lambda: self.remove_selected(confirm=True))
        self.use_btn.clicked.connect(self.use_selected)
        close.clicked.connect(self.close)
        self.cancel_btn.hide()
        row = QHBoxLayout()
        for b in (self.download_btn, self.cancel_btn, self.verify_btn, self.remove_btn):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.use_btn)
        row.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.licence)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addLayout(row)
        self.refresh()
        chosen = next((e for e in self.entries if in_use(e, cfg, root)), None)
        if chosen is not None:  # opened on a model in use rather than on the first one
            self.select(chosen.id)

    # -- the table ---------------------------------------------------------------------------
    def refresh(self) -> None:
        keep = self.table.currentIndex().row()
        self.table.clear()
        for e in self.entries:
            state = dl.status(e, self.root)
            mark = ""
            if in_use(e, self.cfg, self.root):  # (one not here is wanted, not in use)
                mark = "in use" if state in ("installed", "local") else "chosen: download it"
            item = QTreeWidgetItem(
                [
                    e.name,
                    KINDS[e.kind],
                    size_text(e.size_mb) if e.downloadable else "—",
                    size_text(e.memory_mb),
                    e.at_work,
                    STATES.get(state, state),
                    mark,
                ]
            )
            item.setToolTip(0, f"{e.id} · {e.licence} · {e.speed}")
            item.setToolTip(4, e.licence_text)
            self.table.addTopLevelItem(item)
        for c in range(self.table.columnCount()):
            self.table.resizeColumnToContents(c)
        first = self.table.topLevelItem(max(0, keep))
        if first is not None:
            self.table.setCurrentItem(first)
        self._update_buttons()

    def select(self, model_id: str) -> None:
        ids = [e.id for e in self.entries]
        item = self.table.topLevelItem(ids.index(model_id))
        if item is not None:
            self.table.setCurrentItem(item)

    def select_value(self, kind: str, value: str) -> bool:
        """Select the model of ``kind`` that a setting's value names (False: none)."""
        for e in self.entries:
            if e.kind == kind and names(value, e, self.root):
                self.select(e.id)
                return True
        return False

    def selected(self) -> CatalogEntry | None:
        row = self.table.currentIndex().row()
        return self.entries[row] if 0 <= row < len(self.entries) else None

    def _update_buttons(self) -> None:
        e = self.selected()
        self.licence.setText(licence_line(e) if e is not None else "")
        state = dl.status(e, self.root) if e is not None else "missing"
        ready = state in ("installed", "local")
        idle = not self.busy and e is not None
        self.download_btn.setEnabled(idle and e is not None and e.downloadable and not ready)
        self.download_btn.setText(download_label(state))
        self.verify_btn.setEnabled(idle and ready)
        self.remove_btn.setEnabled(idle and state in ("installed", "partial"))
        self.use_btn.setEnabled(idle and ready)
        self.cancel_btn.setVisible(self.busy)

    # -- actions ---------------------------------------------------------------------------
    def download_selected(self) -> None:
        e = self.selected()
        if e is None:
            return
        root, cancel = self.root, self._cancel

        def work(report: Report) -> str:  # no Qt object here: see BackgroundJob
            def progress(p: dl.DownloadProgress) -> None:
                report(f"{e.name}: {p.phase} {p.file}", p.fraction)

            try:
                dl.download(e, root=root, progress=progress, cancel=cancel)
            except dl.DownloadError as err:
                # The button as it reads now (with nothing kept it is "Download" again).
                again = download_label(dl.status(e, root))
                if isinstance(err, dl.DownloadCancelled):
                    return f"Download cancelled: click {again} to go on."
                if isinstance(err, dl.NetworkUnavailableError):
                    return f"{err}. Check the connection, then click {again}."
                return f"Download stopped: {err}. Click {again} to retry."
            return f"{e.name} is downloaded: click Use this model to switch."

        self._start(work, f"Downloading {e.name}…")

    def verify_selected(self) -> None:
        e = self.selected()
        if e is None:
            return
        root, cancel = self.root, self._cancel

        def work(report: Report) -> str:
            problems = dl.verify(e, root, cancel=cancel)
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                return f"{e.name}: {problems[0]}{more}. Click Remove, then Download."
            try:  # the engine itself loads it, in a worker process it may crash
                probe_model(dl.model_path(e, root), e.template or "auto")
            except Exception as err:
                return f"{e.name} does not load: {first_line(err)}. Click Remove, then Download."
            return f"{e.name} is complete and loads."

        self._start(work, f"Checking {e.name}…")

    def remove_selected(self, confirm: bool) -> bool:
        e = self.selected()
        if e is None or self.busy:
            return False
        if in_use(e, self.cfg, self.root):
            self.status.setText(
                f"{e.name} is in use: click Use this model on another one first, then Remove."
            )
            return False
        if confirm:
            answer = QMessageBox.question(self, "Remove model", f"Delete {e.name} from disk?")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        try:
            freed = dl.remove(e, self.root)
        except (dl.DownloadError, OSError) as err:
            self.status.setText(f"{e.name} could not be removed: {err}")
            return False
        self.status.setText(f"Removed {e.name} ({freed / 1e6:,.0f} MB freed).")
        self.refresh()
        return True

    def use_selected(self) -> None:
        e = self.selected()
        if e is None or dl.status(e, self.root) not in ("installed", "local"):
            return
        path = dl.model_path(e, self.root)
        if e.kind == "asr":
            self.cfg = with_models(self.cfg, asr_path=path)
        else:
            self.cfg = with_models(self.cfg, mt_path=path, mt_entry=e)
        self.status.setText(f"Using {e.name} for {KINDS[e.kind].lower()}.")
        self.refresh()
        self.chosen.emit(self.cfg)

    # -- background work -------------------------------------------------------------------
    def _start(self, work: Callable[[Report], str], label: str) -> None:
        self._cancel.clear()
        self.cancel_btn.setEnabled(True)
        self.busy = True
        self.status.setText(label)
        self.bar.setRange(0, 0)
        self.bar.show()
        self._update_buttons()
        self._job.start(work)

    def _on_progress(self, label: str, fraction: float | None) -> None:
        show_progress(self.bar, self.status, label, fraction)

    def _on_done(self, message: str) -> None:
        self.busy = False
        self.bar.hide()
        self.status.setText(message)
        self.refresh()

    def reject(self) -> None:
        """Esc: closed as Close closes it (the download went on, unseen)."""
        self._cancel.set()
        super().reject()

    def closeEvent(self, event: Any) -> None:
        self._cancel.set()  # a download in flight stops at its next block
        super().closeEvent(event)
