"""First run: which languages (what is heard, what the subtitles show), then the models for
them: the defaults for this computer (download with progress and cancel), model files already
on this computer, or none for now. Every way ends in the running app: the choices made are
kept (in ``result_config``) whichever button ends the dialog, and a problem is said here, next
to what caused it, with what to do.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from subtitler.config import AppConfig
from subtitler.session import (
    LANGUAGES,
    CatalogEntry,
    FirstRunPlan,
    InvalidModelError,
    check_translator,
    check_whisper_dir,
    first_line,
    probe_model,
    with_models,
)
from subtitler.session import model_files as dl
from subtitler.ui.background import BackgroundJob, Report, show_progress, stop_download
from subtitler.ui.sizing import room

Planner = Callable[[AppConfig], FirstRunPlan]  # the plan for these settings (their languages)
Checker = Callable[[Path, str], object]  # a model's real test: raises with one line
DETECT = ""  # "I hear": recognise the language
PROBLEM_STYLE = "color: #c62828"
# What each model is, in plain words; the formats' names in the tooltips.
SPEECH_FOLDER_HELP = "A Whisper speech model: the folder that holds model.bin and config.json."
SPEECH_FOLDER_TIP = "faster-whisper's format (CTranslate2), as the Systran/faster-whisper-* models"
TRANSLATOR_HELP = "A translation model: one .gguf file."
TRANSLATOR_TIP = "llama.cpp's format (GGUF); a model without a chat template is shown examples"


def system_language() -> str:
    """The language of this computer's settings, as a code the app knows ("en" if none)."""
    code = QLocale.system().name().split("_")[0].lower()
    return code if code in LANGUAGES else "en"


def guess_languages(cfg: AppConfig, fresh: bool, system: str) -> tuple[str, str]:
    """(heard, shown) to offer first: the settings' own where there were settings; on a first
    start the subtitles in this computer's language, heard in English (or recognised, where
    the computer's language is English)."""
    if not fresh:
        return cfg.asr.language or DETECT, cfg.mt.tgt_lang
    return (DETECT if system == "en" else "en"), system


def with_languages(cfg: AppConfig, heard: str, shown: str) -> AppConfig:
    """``cfg`` hearing ``heard`` (DETECT: recognised) and showing ``shown``."""
    asr = dataclasses.replace(cfg.asr, language=heard or None)
    mt = cfg.mt
    if heard:
        mt = dataclasses.replace(mt, src_lang=heard)
    extra = [c for c in mt.extra_targets.replace(" ", "").split(",") if c and c != shown]
    mt = dataclasses.replace(mt, tgt_lang=shown, extra_targets=", ".join(extra))
    return dataclasses.replace(cfg, asr=asr, mt=mt)


def with_recommended(cfg: AppConfig, plan: FirstRunPlan) -> AppConfig:
    """``cfg`` naming the models the plan recommends (not downloaded yet): Settings and the
    Models window show them, and the app says they are to be downloaded."""
    for e in plan.offer:
        if e.kind == "asr":
            cfg = dataclasses.replace(
                cfg, asr=dataclasses.replace(cfg.asr, model=e.size_name or e.id)
            )
        else:
            template = cfg.mt.template
            if template == "auto" and e.template:
                template = e.template
            mt = dataclasses.replace(cfg.mt, model_path=e.id, template=template)
            cfg = dataclasses.replace(cfg, mt=mt)
    return cfg


def _language_combo(detect: bool) -> QComboBox:
    c = QComboBox()
    if detect:
        c.addItem("Any language (recognised)", DETECT)
    for code, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
        c.addItem(f"{name} ({code})", code)
    return c


def _heading(text: str) -> QLabel:
    h = QLabel(text)
    font = h.font()
    font.setPointSizeF(font.pointSizeF() * 1.25)
    font.setBold(True)
    h.setFont(font)
    return h


def _wrapped(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


class FirstRunDialog(QDialog):
    """Three pages: languages, models, files on this computer. ``result_config`` is the
    settings the user ended up with, whichever way the dialog closed (Skip too: then with the
    recommended models named, to be downloaded later)."""

    def __init__(
        self,
        cfg: AppConfig,
        plan: FirstRunPlan,
        parent: QWidget | None = None,
        root: Path | None = None,
        *,
        planner: Planner | None = None,
        languages: tuple[str, str] | None = None,
        check: Checker = probe_model,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("subtitler: first start")
        # Wide enough that a model's size is not broken over two lines ("1.7 / GB").
        self.setMinimumWidth(min(600, room(self).width()))
        self.cfg, self.plan, self.root = cfg, plan, root
        self.planner, self.check = planner, check
        self._cancel = threading.Event()
        self._job = BackgroundJob(
            self,
            "model-download",
            on_progress=self._on_progress,
            on_done=lambda result: self._on_finished(*result),
            on_error=lambda err: self._on_finished(None, f"unexpected error: {err}"),
        )
        self._check_job = BackgroundJob(
            self,
            "model-check",
            on_progress=lambda label, _f: self.files_status.setText(label),
            on_done=self._on_checked,
            on_error=lambda err: self._on_checked(f"unexpected error: {err}"),
        )
        self.pages = QStackedWidget()
        guess = languages or guess_languages(cfg, False, system_language())
        self.pages.addWidget(self._languages_page(guess))
        self.pages.addWidget(self._models_page())
        self.pages.addWidget(self._files_page())
        lay = QVBoxLayout(self)
        lay.addWidget(self.pages)
        self.result_config: AppConfig = cfg
        self._settle()

    # -- page 1: languages -----------------------------------------------------------------
    def _languages_page(self, guess: tuple[str, str]) -> QWidget:
        page = QWidget()
        self.heard = _language_combo(detect=True)
        self.shown = _language_combo(detect=False)
        for combo, code in ((self.heard, guess[0]), (self.shown, guess[1])):
            i = combo.findData(code)
            combo.setCurrentIndex(max(0, i))
        self.heard.setToolTip("The speech language (Whisper's language); any: recognised")
        self.shown.setToolTip("The target language of the translation")
        self.heard.currentIndexChanged.connect(self._settle)
        self.shown.currentIndexChanged.connect(self._settle)
        form = QFormLayout()
        form.addRow("I hear", self.heard)
        form.addRow("Show me subtitles in", self.shown)
        self.languages_note = _wrapped()
        self.next_btn = QPushButton("Next")
        self.next_btn.setDefault(True)
        self.next_btn.clicked.connect(lambda: self._go(1))
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.next_btn)
        lay = QVBoxLayout(page)
        lay.addWidget(_heading("Welcome to subtitler"))
        lay.addWidget(
            _wrapped(
                "It shows what is said in a meeting as subtitles over your screen, translated. "
                "Which languages? (Settings can change them at any time.)"
            )
        )
        lay.addLayout(form)
        lay.addWidget(self.languages_note)
        lay.addStretch(1)
        lay.addLayout(row)
        return page

    def languages(self) -> tuple[str, str]:
        """(heard, shown) as chosen: heard DETECT when any language is recognised."""
        return str(self.heard.currentData()), str(self.shown.currentData())

    def _settle(self) -> None:
        """The languages chosen: the plan for them, the models page's words and what Skip
        keeps."""
        heard, shown = self.languages()
        cfg = with_languages(self.cfg, heard, shown)
        if self.planner is not None:
            # Speech recognised in any language needs a multilingual speech model.
            self.plan = self.planner(cfg if heard else _any_speech(cfg))
        self.cfg_languages = cfg
        same = heard == shown
        self.languages_note.setText(
            "The subtitles show what is said as it is said (nothing to translate)." if same else ""
        )
        self.text.setText("\n\n".join(self.plan.messages))
        self.download_btn.setText(f"Download ({self.plan.download_bytes / 1e9:.1f} GB)")
        self.download_btn.setEnabled(self.plan.can_download)
        self.download_btn.setVisible(bool(self.plan.offer))
        self.result_config = with_recommended(cfg, self.plan)

    # -- page 2: models --------------------------------------------------------------------
    def _models_page(self) -> QWidget:
        page = QWidget()
        self.text = _wrapped()
        self.status = _wrapped()
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.hide()
        self.back_btn = QPushButton("Back")
        self.back_btn.clicked.connect(lambda: self._go(0))
        self.download_btn = QPushButton("Download")
        self.download_btn.clicked.connect(self.start_download)
        self.cancel_btn = QPushButton("Cancel download")
        self.cancel_btn.hide()
        self.cancel_btn.clicked.connect(
            lambda: stop_download(self._cancel, self.cancel_btn, self.status)
        )
        self.local_btn = QPushButton("Use files on this computer…")
        self.local_btn.setToolTip("A Whisper model folder and a .gguf translation model")
        self.local_btn.clicked.connect(self.choose_local)
        self.skip_btn = QPushButton("Skip for now")
        self.skip_btn.setToolTip(
            "Start without them: the recommended models are chosen, to download later "
            "(tray menu → Models…)"
        )
        self.skip_btn.clicked.connect(self.reject)
        row = QHBoxLayout()
        for b in (self.back_btn, self.download_btn, self.cancel_btn, self.local_btn):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.skip_btn)
        lay = QVBoxLayout(page)
        lay.addWidget(_heading("Speech and translation models"))
        lay.addWidget(self.text)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addStretch(1)
        lay.addLayout(row)
        return page

    def start_download(self) -> None:
        self._go(1)
        self._cancel.clear()
        self.cancel_btn.setEnabled(True)
        for b in (self.download_btn, self.back_btn, self.local_btn):
            b.setEnabled(False)
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
        self.back_btn.setEnabled(True)
        self.local_btn.setEnabled(True)
        if got is None:
            self.status.setText(
                f"Download stopped: {error}. Click Download to try again, or use model files "
                "on this computer."
            )
            self.download_btn.setEnabled(True)
            self.bar.setRange(0, 1000)  # out of its busy animation
            self.bar.hide()
            return
        cfg = self.cfg_languages
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

    # -- page 3: model files on this computer ----------------------------------------------
    def _files_page(self) -> QWidget:
        page = QWidget()
        self.speech_path = QLineEdit()
        self.speech_path.setPlaceholderText("a folder (empty: the recommended speech model)")
        self.mt_path = QLineEdit()
        self.mt_path.setPlaceholderText("a .gguf file (empty: the recommended translation model)")
        self.speech_problem = _wrapped()
        self.mt_problem = _wrapped()
        for problem in (self.speech_problem, self.mt_problem):
            problem.setStyleSheet(PROBLEM_STYLE)
            problem.hide()
        speech_btn = QPushButton("Choose folder…")
        speech_btn.clicked.connect(self._pick_speech)
        mt_btn = QPushButton("Choose file…")
        mt_btn.clicked.connect(self._pick_translator)
        form = QFormLayout()
        for label, edit, button, problem, help_text, tip in (
            (
                "Speech model", self.speech_path, speech_btn, self.speech_problem,
                SPEECH_FOLDER_HELP, SPEECH_FOLDER_TIP,
            ),
            (
                "Translation model", self.mt_path, mt_btn, self.mt_problem, TRANSLATOR_HELP,
                TRANSLATOR_TIP,
            ),
        ):  # fmt: skip
            edit.setToolTip(tip)
            line = QHBoxLayout()
            line.addWidget(edit, 1)
            line.addWidget(button)
            col = QVBoxLayout()
            col.setSpacing(2)
            col.addLayout(line)
            note = _wrapped(help_text)
            note.setToolTip(tip)
            col.addWidget(note)
            col.addWidget(problem)
            name = QLabel(label)
            name.setBuddy(edit)  # (a screen reader names the field by it)
            form.addRow(name, col)
        self.files_status = _wrapped()
        self.files_back_btn = QPushButton("Back")
        self.files_back_btn.clicked.connect(lambda: self._go(1))
        self.use_btn = QPushButton("Use these")
        self.use_btn.setDefault(True)
        self.use_btn.clicked.connect(self.use_files)
        row = QHBoxLayout()
        row.addWidget(self.files_back_btn)
        row.addStretch(1)
        row.addWidget(self.use_btn)
        lay = QVBoxLayout(page)
        lay.addWidget(_heading("Model files on this computer"))
        lay.addWidget(
            _wrapped(
                "Choose the models you have; one left empty stays the recommended one, to "
                "download later (tray menu → Models…). A translation model is checked here: "
                "it is loaded once and translates a test sentence."
            )
        )
        lay.addLayout(form)
        lay.addWidget(self.files_status)
        lay.addStretch(1)
        lay.addLayout(row)
        return page

    def choose_local(self) -> None:
        self._go(2)

    def _pick_speech(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Whisper model folder (holds model.bin)", self.speech_path.text()
        )
        if folder:
            self.speech_path.setText(folder)

    def _pick_translator(self) -> None:
        gguf, _ = QFileDialog.getOpenFileName(
            self, "Translation model (.gguf)", self.mt_path.text(), "GGUF (*.gguf)"
        )
        if gguf:
            self.mt_path.setText(gguf)

    def use_files(self) -> None:
        """Check what was given (each problem said under its field, with what to do; what
        was typed stays), then the translator's real test off the GUI thread."""
        speech, gguf = self.speech_path.text().strip(), self.mt_path.text().strip()
        cfg = self.result_config_for_files()
        problems = False
        self.speech_problem.hide()
        self.mt_problem.hide()
        if speech:
            try:
                check_whisper_dir(speech)
                cfg = with_models(cfg, asr_path=Path(speech))
            except InvalidModelError as e:
                self._say(self.speech_problem, f"{e}. {_WHAT_TO_DO_WITH_A_WHISPER}")
                problems = True
        template = cfg.mt.template if gguf else ""
        if gguf:
            try:
                check_translator(gguf, "auto")  # (a model without a chat template: fewshot)
                template = "auto"
                cfg = with_models(
                    dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, template="auto")),
                    mt_path=Path(gguf),
                )
            except InvalidModelError as e:
                self._say(self.mt_problem, f"{e}. {_what_to_do_with_a_translator()}")
                problems = True
        if problems:
            self.files_status.setText("")
            return
        if not (gguf or speech):
            self.result_config = cfg
            self.accept()
            return
        self._checked_config = cfg
        self.use_btn.setEnabled(False)
        self.files_back_btn.setEnabled(False)
        # Each model's real test (a Whisper folder whose weights were cut short passes the
        # look at its files, said "Models ready." and failed at the start).
        tests = [(SPEECH, Path(speech), "auto")] if speech else []
        tests += [(TRANSLATOR, Path(gguf), template)] if gguf else []
        test_of = {SPEECH: "recognise a clip of speech", TRANSLATOR: "translate a test sentence"}
        what = " and ".join(
            f"{path.name}: loading it once to {test_of[field]}" for field, path, _ in tests
        )
        self.files_status.setText(f"Checking {what}…")
        check = self.check

        def work(report: Report) -> str:  # no Qt object here
            for field, path, tmpl in tests:
                try:
                    check(path, tmpl)
                except Exception as e:  # every engine failure is one line here
                    return f"{field}\n{first_line(e)}"
            return ""

        self._check_job.start(work)

    def result_config_for_files(self) -> AppConfig:
        """What the files page starts from: the languages, the recommended models."""
        return with_recommended(self.cfg_languages, self.plan)

    def _on_checked(self, problem: str) -> None:
        self.use_btn.setEnabled(True)
        self.files_back_btn.setEnabled(True)
        if problem:
            self.files_status.setText("")
            field, _, said = problem.partition("\n")
            if field == SPEECH:
                self._say(self.speech_problem, f"{said}. {_WHAT_TO_DO_WITH_A_WHISPER}")
            else:
                self._say(self.mt_problem, f"{said}. {_what_to_do_with_a_translator()}")
            return
        self.result_config = self._checked_config
        self.files_status.setText("Models ready.")
        self.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc on the page of files on this computer is Back, what was typed kept (it closed
        the dialog as Skip, the paths thrown away); elsewhere it closes as Skip does."""
        if event.key() == Qt.Key.Key_Escape and self.pages.currentIndex() == 2:
            if self.files_back_btn.isEnabled():  # (not while the files are being checked)
                self._go(1)
            event.accept()
            return
        super().keyPressEvent(event)

    def reject(self) -> None:
        """Closed as Skip does (Esc, Skip, the title bar): a download under way stops at its
        next block, what it fetched kept for Models… to go on with (it went on unseen, its
        models not used)."""
        self._cancel.set()
        super().reject()

    def _say(self, label: QLabel, text: str) -> None:
        label.setText(text)
        label.show()
        self._refit()

    def _go(self, page: int) -> None:
        changed = page != self.pages.currentIndex()
        self.pages.setCurrentIndex(page)
        self._refit()
        if changed:  # the page's first step in focus (it fell on Back: Enter went back)
            self._first_step(page).setFocus(Qt.FocusReason.OtherFocusReason)

    def _first_step(self, page: int) -> QWidget:
        if page == 0:
            return self.heard
        if page == 2:
            return self.speech_path
        usable = self.download_btn.isVisibleTo(self) and self.download_btn.isEnabled()
        return self.download_btn if usable else self.local_btn

    def _refit(self) -> None:
        """As tall as the page now shown needs at this width (a page's text, a problem said
        under a field): nothing cut off."""
        lay = self.layout()
        if lay is None:
            return
        lay.activate()
        need = lay.totalHeightForWidth(self.width()) if lay.hasHeightForWidth() else -1
        need = max(need, lay.totalMinimumSize().height())
        if need > self.height():
            self.resize(self.width(), need)


SPEECH, TRANSLATOR = "speech", "translator"  # which model a check's problem is about
_WHAT_TO_DO_WITH_A_WHISPER = (
    "Choose the folder that holds model.bin: a CTranslate2 (faster-whisper) copy of the "
    "model, or download one from the tray menu → Models… later"
)


def _what_to_do_with_a_translator() -> str:
    return (
        "Choose another .gguf file, or leave it empty to use the recommended model "
        "(download it later from the tray menu → Models…)"
    )


def _any_speech(cfg: AppConfig) -> AppConfig:
    """For planning only: speech in any language (no English-only speech model)."""
    return dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, src_lang="*"))
