"""First run: when the chosen models are missing, offer the defaults for this computer
(download with progress and cancel) or local files; without a network, say so plainly."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from subtitler.config import AppConfig
from subtitler.models.catalog import CatalogEntry
from subtitler.models.firstrun import FirstRunPlan, with_models
from subtitler.ui.background import BackgroundJob, Report, show_progress
from subtitler.ui.sizing import room


class FirstRunDialog(QDialog):
    """Returns (via ``result_config``) the settings with the models the user ended up with."""

    def __init__(
        self,
        cfg: AppConfig,
        plan: FirstRunPlan,
        parent: QWidget | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("subtitler: models")
        # Wide enough that a model's size is not broken over two lines ("1.7 / GB").
        self.setMinimumWidth(min(600, room(self).width()))
        self.cfg, self.plan, self.root = cfg, plan, root
        self.result_config: AppConfig = cfg
        self._cancel = threading.Event()
        self._job = BackgroundJob(
            self,
            "model-download",
            on_progress=self._on_progress,
            on_done=lambda result: self._on_finished(*result),
            on_error=lambda err: self._on_finished(None, f"unexpected error: {err}"),
        )
        heading = QLabel("Speech and translation models")
        font = heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        heading.setFont(font)
        self.text = QLabel("\n\n".join(plan.messages))
        self.text.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.hide()
        self.download_btn = QPushButton(f"Download ({plan.download_bytes / 1e9:.1f} GB)")
        self.download_btn.setEnabled(plan.can_download)
        self.download_btn.clicked.connect(self.start_download)
        self.cancel_btn = QPushButton("Cancel download")
        self.cancel_btn.hide()
        self.cancel_btn.clicked.connect(self._cancel.set)
        self.local_btn = QPushButton("Choose local files…")
        self.local_btn.clicked.connect(self.choose_local)
        self.skip_btn = QPushButton("Skip for now")
        self.skip_btn.setToolTip("Start without them; choose models later in Settings")
        self.skip_btn.clicked.connect(self.reject)
        row = QHBoxLayout()
        for b in (self.download_btn, self.cancel_btn, self.local_btn, self.skip_btn):
            row.addWidget(b)
        lay = QVBoxLayout(self)
        lay.addWidget(heading)
        lay.addWidget(self.text)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addLayout(row)

    # -- download --------------------------------------------------------------------------
    def start_download(self) -> None:
        from subtitler.models import download as dl

        self._cancel.clear()
        self.download_btn.setEnabled(False)
        self.cancel_btn.show()
        self.bar.show()
        entries, root, cancel = list(self.plan.offer), self.root, self._cancel

        def work(report: Report) -> tuple[dict[str, Path] | None, str]:  # no Qt object here
            got: dict[str, Path] = {}
            try:
                for e in entries:

                    def progress(p: dl.DownloadProgress, e: CatalogEntry = e) -> None:
                        report(f"{e.name}: {p.phase} {p.file}", p.fraction)

                    got[e.id] = dl.download(e, root=root, progress=progress, cancel=cancel)
            except dl.DownloadError as err:
                return None, str(err)
            return got, ""

        self._job.start(work)

    def _on_progress(self, label: str, fraction: float | None) -> None:
        show_progress(self.bar, self.status, label, fraction)

    def _on_finished(self, got: dict[str, Path] | None, error: str) -> None:
        self.cancel_btn.hide()
        if got is None:
            self.status.setText(f"Download stopped: {error}")
            self.download_btn.setEnabled(True)
            self.bar.setRange(0, 1000)  # out of its busy animation
            self.bar.hide()
            return
        cfg = self.cfg
        for e in self.plan.offer:
            path = got.get(e.id)
            if path is None:
                continue
            if e.kind == "asr":
                cfg = with_models(cfg, asr_path=path)
            else:
                cfg = with_models(cfg, mt_path=path, mt_entry=e)
        self.result_config = cfg
        self.status.setText("Models ready.")
        self.accept()

    # -- local files -----------------------------------------------------------------------
    def choose_local(self) -> None:
        from subtitler.models.validate import (
            InvalidModelError,
            check_translator,
            check_whisper_dir,
        )

        cfg = self.cfg
        gguf, _ = QFileDialog.getOpenFileName(
            self, "Translation model (.gguf)", "", "GGUF (*.gguf)"
        )
        folder = QFileDialog.getExistingDirectory(self, "Whisper model folder (CTranslate2)")
        try:
            if gguf:
                check_translator(gguf, cfg.mt.template)
                cfg = with_models(cfg, mt_path=Path(gguf))
            if folder:
                check_whisper_dir(folder)
                cfg = with_models(cfg, asr_path=Path(folder))
        except InvalidModelError as e:
            self.status.setText(str(e))
            return
        if gguf or folder:
            self.result_config = cfg
            self.accept()
