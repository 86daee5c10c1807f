"""The settings pane: language pair, SSBD beta and k, decoding mode, audio, models, looks.

Built from the config declarations: a setting appears on the tab its declaration in
:mod:`subtitler.config` names (``tab=``). The settings in :data:`HANDMADE` have widgets made by
hand (language lists, sliders, file choosers, key recorders); every other declared one gets a
row made from its type and declaration (check box, spin box, choice, text). Every spin box,
slider and choice takes its limits from the declaration, and values are validated by the same
``settings_store.validate`` that guards the file, then applied live through ``applied``.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_type_hints

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFontComboBox,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSlider,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from subtitler.config import (
    SECTIONS,
    AppConfig,
    AsrConfig,
    DisplayConfig,
    MtConfig,
    Spec,
    pane_fields,
    spec_of,
    with_settings,
)
from subtitler.mt.completions import address_problem
from subtitler.mt.glossary import Glossary
from subtitler.mt.languages import LANGUAGES
from subtitler.settings_store import validate
from subtitler.ui.sizing import open_at
from subtitler.ui.web_settings import WebSettings

HOTKEYS_WORK = (
    "These keys work while any app has focus, also when clicks pass through the subtitles. "
    "The tray menu does the same."
)
# The settings whose rows are made by hand below, by tab (tests/ui check they match the
# declarations); any other setting declared with a tab gets a row made from its declaration.
HANDMADE: dict[str, tuple[str, ...]] = {
    "translation": (
        "asr.language", "mt.tgt_lang", "mt.method", "mt.beta", "display.mask_k",
        "mt.model_path", "mt.template", "mt.threads", "mt.gpu_layers", "mt.context_sentences",
        "mt.backend", "mt.server_url", "mt.server_model", "mt.server_api_key",
        "mt.server_timeout_s",
    ),
    "audio": ("audio.device",),
    "speech": ("asr.model", "asr.device", "asr.threads", "asr.silence_end_s"),
    "appearance": (
        "display.font_family", "display.font_size", "display.text_color", "display.outline",
        "display.background_opacity", "display.lines", "display.bilingual",
        "display.click_through",
    ),
    "hotkeys": ("display.hotkey_click_through", "display.hotkey_pause"),
    "advanced": (
        "mt.lookahead", "mt.resync", "mt.draft_model_path", "mt.draft_tokens",
        "mt.adaptive_guessing", "mt.verify", "mt.top_b", "mt.tau",
    ),
    "browser": ("web.share", "web.port"),
}  # fmt: skip
GLOSSARY_TIP = (
    "Names and terms to recognise, and how to translate them, for this language pair. "
    "Saved in the Glossary window itself, apart from these settings."
)
WHISPER_SIZES = ["tiny", "base", "small", "medium", "large-v3", "distil-large-v3", "turbo"]


@dataclass
class Choices:
    """What the pane offers, provided by the app (devices and catalogs live elsewhere)."""

    input_devices: Callable[[], list[tuple[str, str]]] = lambda: []  # (label, device name)
    translation_models: list[tuple[str, str]] = field(default_factory=list)  # (label, path)
    # (label, value) pairs; a value is what the config stores (a size name, id or path).
    asr_models: list[tuple[str, str]] = field(
        default_factory=lambda: [(s, s) for s in WHISPER_SIZES]
    )
    hardware: str = ""  # a line describing what computes (CPU / Metal / CUDA)
    web_status: Callable[[], tuple[str, str]] = lambda: ("", "")  # the page's address, problem
    glossary: Callable[[], Glossary] = Glossary  # the glossary in use now


def _combo_value(combo: QComboBox) -> str:
    """An editable model combo's value: the chosen item's data, or what the user typed."""
    text = combo.currentText().strip()
    data = combo.currentData()
    return str(data) if data and combo.itemText(combo.currentIndex()) == text else text


def meeting_audio_hint() -> str:
    if sys.platform == "darwin":
        return (
            "macOS has no built-in way to record other apps. Install a virtual audio device "
            "such as BlackHole, route the meeting's output to it (a Multi-Output Device keeps "
            "your speakers on) and choose it here."
        )
    if sys.platform.startswith("win"):
        return (
            "Choose a “… [Loopback]” entry to caption what those speakers or headphones play "
            "(the meeting); choose a microphone to caption yourself."
        )
    return (
        "Choose a “Monitor of …” entry to caption what those speakers or headphones play "
        "(the meeting; needs PulseAudio or PipeWire); choose a microphone to caption yourself."
    )


class SettingsPane(QDialog):
    applied = Signal(object)  # a validated AppConfig
    previewed = Signal(object)  # the DisplayConfig the look controls say now (not applied)
    glossary_requested = Signal(str, str)  # open the glossary of this (source, target) pair
    models_requested = Signal(str, str)  # open the Models window at ("asr" | "mt", value)

    def __init__(
        self, config: AppConfig, choices: Choices | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("subtitler settings")
        self.choices = choices or Choices()
        self._cfg = copy.deepcopy(config)
        self._color = config.display.text_color
        tabs = QTabWidget()
        self.declared_rows: dict[str, DeclaredRow] = {}  # "section.field" -> its row
        pages = [
            ("translation", "Translation", self._translation_tab()),
            ("audio", "Audio", self._audio_tab()),
            ("speech", "Speech", self._speech_tab()),
            ("appearance", "Appearance", self._look_tab()),
            ("hotkeys", "Hotkeys", self._keys_tab()),
            ("advanced", "Advanced", self._advanced_tab()),
        ]
        self.web = WebSettings(lambda: self.choices.web_status())
        pages.append(("browser", "Browser", self.web))
        for key, title, page in pages:
            self._add_declared_rows(key, page)
            tabs.addTab(page, title)
        self.tabs = tabs
        self.error = QLabel()
        self.error.setStyleSheet("color: #c62828")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        apply_btn = buttons.button(QDialogButtonBox.StandardButton.Apply)
        apply_btn.clicked.connect(self.apply)
        self.buttons = buttons
        lay = QVBoxLayout(self)
        lay.addWidget(tabs)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.load(config)
        # Room for a model's name beside its buttons where the screen has it.
        open_at(self, max(self.sizeHint().width(), 820), self.sizeHint().height())
        for changed in (
            self.font_family.currentFontChanged,
            self.font_size.valueChanged,
            self.outline.toggled,
            self.opacity.valueChanged,
            self.lines.valueChanged,
            self.bilingual.toggled,
            self.mask_k.valueChanged,
        ):
            changed.connect(self._preview)

    def _preview(self, *_: object) -> None:
        """Each look control's effect on the overlay at once, before Apply."""
        self.previewed.emit(self.values().display)

    # -- tabs ------------------------------------------------------------------------------
    def _add_declared_rows(self, tab: str, page: QWidget) -> None:
        """A row for each setting declared on ``tab`` that has no hand-made widget."""
        form = page.layout()
        assert isinstance(form, QFormLayout), f"the {tab} tab is not a form"
        made = HANDMADE.get(tab, ())
        for section, f, spec in pane_fields(tab):
            key = f"{section}.{f.name}"
            if key in made:
                continue
            row = DeclaredRow(section, f.name, get_type_hints(SECTIONS[section])[f.name], spec)
            self.declared_rows[key] = row
            if isinstance(row.widget, QCheckBox):
                form.addRow("", row.widget)
            else:
                form.addRow(spec.label, row.widget)

    def _lang_combo(self, with_auto: bool) -> QComboBox:
        c = _fitting(QComboBox())
        if with_auto:
            c.addItem("Detect automatically", None)
        for code, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
            c.addItem(f"{name} ({code})", code)
        return c

    def _translation_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.src_lang = self._lang_combo(with_auto=True)
        self.tgt_lang = self._lang_combo(with_auto=False)
        self.mode = _choice_combo(
            MtConfig,
            "method",
            {
                "SSBD": "SSBD (fast, stable)",
                "RT": "Re-translation (RT)",
                "CD": "Continuous decoding (CD)",
            },
        )
        self.beta = _percent_slider(MtConfig, "beta")
        self.beta_label = QLabel()
        self.beta.valueChanged.connect(lambda v: self.beta_label.setText(f"{v / 100:.2f}"))
        self.mode.currentIndexChanged.connect(
            lambda _i: self.beta.setEnabled(self.mode.currentData() == "SSBD")
        )
        beta_row = QHBoxLayout()
        beta_row.addWidget(self.beta)
        beta_row.addWidget(self.beta_label)
        self.mask_k = _spin(DisplayConfig, "mask_k")
        self.mt_model = _fitting(QComboBox())
        self.mt_model.setEditable(True)
        for label, path in self.choices.translation_models:
            self.mt_model.addItem(label, path)
        model_row = _with_browse(self.mt_model, self._browse_gguf)
        model_row.addWidget(self._models_button("mt", self.mt_model))
        self.template = _choice_combo(MtConfig, "template", {"auto": "As the model file says"})
        self.mt_threads = _spin(MtConfig, "threads")
        self.gpu_layers = _spin(MtConfig, "gpu_layers")
        self.gpu_layers.setSpecialValueText("auto")  # shown at -1: all layers if the build offloads
        self.context = _spin(MtConfig, "context_sentences")
        self._server_rows(model_row)
        _row(f, AsrConfig, "language", self.src_lang)
        _row(f, MtConfig, "tgt_lang", self.tgt_lang)
        f.addRow(self._glossary_label(), self._glossary_row())
        _row(f, MtConfig, "method", self.mode)
        _row(f, MtConfig, "beta", beta_row, self.beta)
        _row(f, DisplayConfig, "mask_k", self.mask_k)
        _row(f, MtConfig, "backend", self.backend)
        _row(f, MtConfig, "model_path", model_row, self.mt_model)
        _row(f, MtConfig, "server_url", self.server_url)
        _row(f, MtConfig, "server_model", self.server_model)
        _row(f, MtConfig, "server_api_key", self.server_key)
        _row(f, MtConfig, "server_timeout_s", self.server_timeout)
        _row(f, MtConfig, "template", self.template)
        _row(f, MtConfig, "threads", self.mt_threads)
        _row(f, MtConfig, "gpu_layers", self.gpu_layers)
        _row(f, MtConfig, "context_sentences", self.context)
        return w

    def _glossary_label(self) -> QLabel:
        label = QLabel("Glossary")
        label.setToolTip(GLOSSARY_TIP)
        return label

    def _glossary_row(self) -> QHBoxLayout:
        """The glossary of the language pair chosen above: how many terms, and a button that
        opens it (saved there, apart from these settings)."""
        self.glossary_button = QPushButton("Glossary…")
        self.glossary_button.setToolTip(GLOSSARY_TIP)
        self.glossary_count = QLabel()
        self.glossary_button.clicked.connect(
            lambda: self.glossary_requested.emit(*self.glossary_pair())
        )
        self.src_lang.currentIndexChanged.connect(self.refresh_glossary)
        self.tgt_lang.currentIndexChanged.connect(self.refresh_glossary)
        row = QHBoxLayout()
        row.addWidget(self.glossary_button)
        row.addWidget(self.glossary_count, 1)
        return row

    def _models_button(self, kind: str, combo: QComboBox) -> QPushButton:
        """Opens the Models window at the model chosen in ``combo``: there a model that is
        not downloaded yet is downloaded, checked or removed."""
        button = QPushButton("Models…")
        button.setToolTip("Download, check or remove models, and pick one to use")
        button.clicked.connect(lambda: self.models_requested.emit(kind, _combo_value(combo)))
        return button

    def glossary_pair(self) -> tuple[str, str]:
        """(source, target) as chosen above; a detected source language: the one set for
        translation (as the tray's Glossary… opens it)."""
        src = self.src_lang.currentData() or self._cfg.asr.language or self._cfg.mt.src_lang
        return str(src), str(self.tgt_lang.currentData())

    def refresh_glossary(self, *_: object) -> None:
        src, tgt = self.glossary_pair()
        n = len(self.choices.glossary().pair(src, tgt))
        pair = f"{LANGUAGES.get(src, src)} → {LANGUAGES.get(tgt, tgt)}"
        self.glossary_count.setText(
            f"{n} term{'' if n == 1 else 's'} for {pair}"
            if n
            else f"No terms for {pair} yet: add names and jargon of your meetings"
        )

    def _server_rows(self, model_row: QHBoxLayout) -> None:
        """A shared translation server (issue 19) instead of the model file: its rows are
        usable when it is chosen, the file's rows when it is not."""
        self.backend = _choice_combo(
            MtConfig,
            "backend",
            {"local": "A model file on this computer", "server": "A translation server"},
        )
        self.server_url = QLineEdit()
        self.server_url.setPlaceholderText("http://gpu-box:8000/v1")
        self.server_model = QLineEdit()
        self.server_model.setPlaceholderText("the first model it serves")
        self.server_key = QLineEdit()
        self.server_key.setEchoMode(QLineEdit.EchoMode.Password)  # shared screens, screenshots
        self.server_key.setPlaceholderText("none")
        self.server_timeout = _double_spin(MtConfig, "server_timeout_s", 1.0)
        self.server_timeout.setDecimals(1)
        self.server_timeout.setSuffix(" s")
        server_rows: list[QWidget] = [
            self.server_url, self.server_model, self.server_key, self.server_timeout
        ]  # fmt: skip
        # threads and GPU layers are the server's business there
        file_rows: list[QWidget] = [self.mt_model, self.mt_threads, self.gpu_layers]
        for i in range(1, model_row.count()):  # its Choose file… and Models… buttons
            item = model_row.itemAt(i)
            if item is not None and (button := item.widget()) is not None:
                file_rows.append(button)

        def follow(_i: int = 0) -> None:
            server = self.backend.currentData() == "server"
            for w in server_rows:
                w.setEnabled(server)
            for w in file_rows:
                w.setEnabled(not server)

        self.backend.currentIndexChanged.connect(follow)
        follow()

    def _audio_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.device = _fitting(QComboBox())
        self._fill_devices(None)
        self.level = QProgressBar()
        self.level.setRange(0, 100)
        self.level.setTextVisible(False)
        hint = QLabel(meeting_audio_hint())
        hint.setWordWrap(True)
        f.addRow("Input", self.device)
        f.addRow("Level", self.level)
        f.addRow(hint)
        return w

    def _fill_devices(self, keep: str | int | None) -> None:
        """The inputs present now (listed afresh each time the pane opens), and the chosen one
        even while it is unplugged: saving must not silently switch to the default."""
        self.device.clear()
        self.device.addItem("System default microphone", None)
        for label, name in self.choices.input_devices():
            self.device.addItem(label, name)
        if keep not in (None, "") and self.device.findData(keep) < 0:
            self.device.addItem(f"{keep} (not connected)", keep)
        self._select(self.device, keep)

    def _speech_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.asr_model = _fitting(QComboBox())
        self.asr_model.setEditable(True)
        for label, value in self.choices.asr_models:
            self.asr_model.addItem(label, value)
        self.asr_device = _choice_combo(
            AsrConfig,
            "device",
            {"auto": "Automatic", "cpu": "The processor (CPU)", "cuda": "NVIDIA graphics card"},
        )
        self.asr_threads = _spin(AsrConfig, "threads")
        self.silence = _double_spin(AsrConfig, "silence_end_s", 0.1)
        self.silence.setSuffix(" s")
        asr_row = QHBoxLayout()
        asr_row.addWidget(self.asr_model, 1)
        asr_row.addWidget(self._models_button("asr", self.asr_model))
        _row(f, AsrConfig, "model", asr_row, self.asr_model)
        _row(f, AsrConfig, "device", self.asr_device)
        _row(f, AsrConfig, "threads", self.asr_threads)
        _row(f, AsrConfig, "silence_end_s", self.silence)
        if self.choices.hardware:
            f.addRow("Hardware", QLabel(self.choices.hardware))
        return w

    def _look_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.font_family = _fitting(QFontComboBox())
        self.font_size = _spin(DisplayConfig, "font_size")
        self.color_btn = QPushButton()
        self.color_btn.clicked.connect(self._pick_color)
        self.outline = QCheckBox("Outline around letters")
        self.opacity = _percent_slider(DisplayConfig, "background_opacity")
        self.lines = _spin(DisplayConfig, "lines")
        self.bilingual = QCheckBox("Show the original line above the translation")
        self.click_through = QCheckBox("Clicks pass through the subtitles")
        f.addRow("Font", self.font_family)
        f.addRow("Size", self.font_size)
        f.addRow("Colour", self.color_btn)
        f.addRow("", self.outline)
        f.addRow("Background opacity", self.opacity)
        f.addRow("Lines", self.lines)
        f.addRow("", self.bilingual)
        f.addRow("", self.click_through)
        return w

    def _keys_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.key_click = QKeySequenceEdit()
        self.key_pause = QKeySequenceEdit()
        # Per setting: a line under its key saying why the OS refused it (hidden when fine).
        self.key_problems: dict[str, QLabel] = {}
        for label, name, edit in (
            ("Toggle click-through", "hotkey_click_through", self.key_click),
            ("Start / pause", "hotkey_pause", self.key_pause),
        ):
            edit.setMaximumSequenceLength(1)  # one combination: what the OSes can take
            edit.setClearButtonEnabled(True)  # no hotkey at all is a choice too
            problem = QLabel()
            problem.setStyleSheet("color: #c62828")
            problem.hide()
            edit.keySequenceChanged.connect(lambda _k, p=problem: p.hide())  # not yet tried
            self.key_problems[name] = problem
            col = QVBoxLayout()
            col.setSpacing(2)
            col.addWidget(edit)
            col.addWidget(problem)
            f.addRow(label, col)
        self.keys_note = QLabel(HOTKEYS_WORK)
        self.keys_note.setWordWrap(True)
        self.keys_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f.addRow(self.keys_note)
        return w

    def show_hotkeys(self, problems: dict[str, str], note: str, available: bool = True) -> None:
        """What the OS said to each hotkey ("" when it works) and a word on this desktop;
        where it has no global hotkeys (Wayland) the keys are greyed out and the note says why."""
        for name, label in self.key_problems.items():
            reason = problems.get(name, "") if available else ""
            label.setText(f"⚠ {reason[:1].upper()}{reason[1:]}." if reason else "")
            label.setVisible(bool(reason))
        self.key_click.setEnabled(available)
        self.key_pause.setEnabled(available)
        self.keys_note.setText(note or HOTKEYS_WORK)

    def _advanced_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        note = QLabel(
            "Other ways to cut translation cost. On the models measured so far none beat "
            "plain SSBD, so they are off by default."
        )
        note.setWordWrap(True)
        self.lookahead = _spin(MtConfig, "lookahead")
        self.resync = QCheckBox("After a change, try the rest of the previous translation again")
        self.verify = _choice_combo(
            MtConfig,
            "verify",
            {"biased": "By stability (SSBD's β)", "specdec": "Among the most likely (SpecDec)"},
        )
        self.top_b = _spin(MtConfig, "top_b")
        self.tau = _double_spin(MtConfig, "tau", 0.1)

        def specdec_fields(_i: int = 0) -> None:
            on = self.verify.currentData() == "specdec"
            self.top_b.setEnabled(on)
            self.tau.setEnabled(on)

        self.verify.currentIndexChanged.connect(specdec_fields)
        specdec_fields()
        self.draft_model = QLineEdit()
        self.draft_model.setPlaceholderText("none")
        draft_row = _with_browse(self.draft_model, self._browse_draft)
        self.draft_tokens = _spin(MtConfig, "draft_tokens")

        def draft_fields(_t: str = "") -> None:
            on = bool(self.draft_model.text().strip())
            self.draft_tokens.setEnabled(on)
            self.lookahead.setEnabled(not on)  # the draft model guesses instead of the table

        self.draft_model.textChanged.connect(draft_fields)
        draft_fields()
        self.adaptive = QCheckBox("Guess only while it measurably speeds decoding up")
        self.adaptive.setToolTip(
            "Compares decoding speed with and without guesses as the meeting goes and keeps "
            "the faster"
        )
        self.resync.setToolTip(spec_of(MtConfig, "resync").tooltip)
        f.addRow(note)
        _row(f, MtConfig, "lookahead", self.lookahead)
        f.addRow("", self.resync)
        _row(f, MtConfig, "draft_model_path", draft_row, self.draft_model)
        _row(f, MtConfig, "draft_tokens", self.draft_tokens)
        f.addRow("", self.adaptive)
        _row(f, MtConfig, "verify", self.verify)
        _row(f, MtConfig, "top_b", self.top_b)
        _row(f, MtConfig, "tau", self.tau)
        return w

    # -- values ----------------------------------------------------------------------------
    @staticmethod
    def _select(combo: QComboBox, value: object) -> None:
        i = combo.findData(value)
        if i >= 0:
            combo.setCurrentIndex(i)
        elif combo.isEditable() and isinstance(value, str):
            combo.setEditText(value)
        if (edit := combo.lineEdit()) is not None:
            edit.setCursorPosition(0)  # a long name shows its start, not its end

    def rebase(self, cfg: AppConfig) -> None:
        """The settings in use, changed elsewhere (the overlay's place, say): what the pane
        has no row for is taken from them when it is applied."""
        self._cfg = copy.deepcopy(cfg)

    def load(self, cfg: AppConfig) -> None:
        self.rebase(cfg)
        mt, d, asr = cfg.mt, cfg.display, cfg.asr
        self._select(self.src_lang, asr.language)
        self._select(self.tgt_lang, mt.tgt_lang)
        self._select(self.mode, mt.method)
        self.beta.setValue(round(mt.beta * 100))
        self.beta_label.setText(f"{mt.beta:.2f}")
        self.beta.setEnabled(mt.method == "SSBD")
        self.mask_k.setValue(d.mask_k)
        self._select(self.mt_model, mt.model_path)  # a path not in the list: typed in
        self._select(self.template, mt.template)
        self.mt_threads.setValue(mt.threads)
        self.gpu_layers.setValue(-1 if mt.gpu_layers is None else mt.gpu_layers)
        self.context.setValue(mt.context_sentences)
        self._select(self.backend, mt.backend)
        self.server_url.setText(mt.server_url)
        self.server_model.setText(mt.server_model)
        self.server_key.setText(mt.server_api_key)
        self.server_timeout.setValue(mt.server_timeout_s)
        self._fill_devices(cfg.audio.device)
        self._select(self.asr_model, asr.model)
        self._select(self.asr_device, asr.device)
        self.asr_threads.setValue(asr.threads)
        self.silence.setValue(asr.silence_end_s)
        self.font_family.setCurrentFont(QFont(d.font_family))
        self.font_size.setValue(d.font_size)
        self._set_color(d.text_color)
        self.outline.setChecked(d.outline)
        self.opacity.setValue(round(d.background_opacity * 100))
        self.lines.setValue(d.lines)
        self.bilingual.setChecked(d.bilingual)
        self.click_through.setChecked(d.click_through)
        self.lookahead.setValue(mt.lookahead)
        self.resync.setChecked(mt.resync)
        self._select(self.verify, mt.verify)
        self.top_b.setValue(mt.top_b)
        self.tau.setValue(mt.tau)
        self.draft_model.setText(mt.draft_model_path)
        self.draft_tokens.setValue(mt.draft_tokens)
        self.adaptive.setChecked(mt.adaptive_guessing)
        self.key_click.setKeySequence(QKeySequence(d.hotkey_click_through))
        self.key_pause.setKeySequence(QKeySequence(d.hotkey_pause))
        self.web.load(cfg.web)
        self.refresh_glossary()
        for row in self.declared_rows.values():
            row.load(getattr(getattr(cfg, row.section), row.name))

    def values(self) -> AppConfig:
        v: dict[str, Any] = {}  # "section.field" -> what the widgets say
        language = self.src_lang.currentData()
        v["asr.language"] = language
        if language:
            v["mt.src_lang"] = language
        v["mt.tgt_lang"] = self.tgt_lang.currentData()
        v["mt.method"] = self.mode.currentData()
        v["mt.beta"] = self.beta.value() / 100
        v["display.mask_k"] = self.mask_k.value()
        v["mt.model_path"] = _combo_value(self.mt_model)
        v["mt.template"] = self.template.currentData()
        v["mt.threads"] = self.mt_threads.value()
        v["mt.gpu_layers"] = None if self.gpu_layers.value() < 0 else self.gpu_layers.value()
        v["mt.context_sentences"] = self.context.value()
        v["mt.backend"] = self.backend.currentData()
        v["mt.server_url"] = self.server_url.text().strip()
        v["mt.server_model"] = self.server_model.text().strip()
        v["mt.server_api_key"] = self.server_key.text().strip()
        v["mt.server_timeout_s"] = round(self.server_timeout.value(), 1)
        v["audio.device"] = self.device.currentData()
        v["asr.model"] = _combo_value(self.asr_model)
        v["asr.device"] = self.asr_device.currentData()
        v["asr.threads"] = self.asr_threads.value()
        v["asr.silence_end_s"] = round(self.silence.value(), 2)
        v["display.font_family"] = self.font_family.currentFont().family()
        v["display.font_size"] = self.font_size.value()
        v["display.text_color"] = self._color
        v["display.outline"] = self.outline.isChecked()
        v["display.background_opacity"] = self.opacity.value() / 100
        v["display.lines"] = self.lines.value()
        v["display.bilingual"] = self.bilingual.isChecked()
        v["display.click_through"] = self.click_through.isChecked()
        v["mt.lookahead"] = self.lookahead.value()
        v["mt.resync"] = self.resync.isChecked()
        v["mt.verify"] = self.verify.currentData()
        v["mt.top_b"] = self.top_b.value()
        v["mt.tau"] = round(self.tau.value(), 2)
        v["mt.draft_model_path"] = self.draft_model.text().strip()
        v["mt.draft_tokens"] = self.draft_tokens.value()
        v["mt.adaptive_guessing"] = self.adaptive.isChecked()
        v["display.hotkey_click_through"] = self.key_click.keySequence().toString()
        v["display.hotkey_pause"] = self.key_pause.keySequence().toString()
        for key, row in self.declared_rows.items():
            v[key] = row.value()
        cfg = with_settings(copy.deepcopy(self._cfg), v)
        return dataclasses.replace(cfg, web=self.web.values())

    def apply(self) -> bool:
        cfg = self.values()
        errs = validate(cfg)
        if not cfg.asr.model:
            errs.append("choose a speech model")
        if cfg.mt.uses_server:
            if not cfg.mt.server_url:
                errs.append("give the translation server's address (or use a model file)")
            elif (why := address_problem(cfg.mt.server_url)) is not None:
                errs.append(why)
        if errs:
            self.error.setText("Not saved: " + "; ".join(errs))
            return False
        self.error.setText("")
        self._cfg = cfg
        self.applied.emit(cfg)
        self.web.refresh()  # the app has (re)started the page by now
        return True

    def _ok(self) -> None:
        if self.apply():
            self.accept()

    def set_level(self, rms: float) -> None:
        self.level.setValue(min(100, round(rms * 300)))

    # -- helpers ---------------------------------------------------------------------------
    def _browse_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Translation model", "", "GGUF (*.gguf)")
        if path:
            self.mt_model.setEditText(path)

    def _browse_draft(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Draft model", "", "GGUF (*.gguf)")
        if path:
            self.draft_model.setText(path)

    def _set_color(self, color: str) -> None:
        self._color = QColor(color).name()
        # A swatch beside the name: the button keeps its look and its text stays readable.
        swatch = QPixmap(28, 16)
        swatch.fill(QColor(self._color))
        self.color_btn.setIcon(QIcon(swatch))
        self.color_btn.setIconSize(swatch.size())
        self.color_btn.setText(self._color)

    def _pick_color(self) -> None:
        c = QColorDialog.getColor(QColor(self._color), self, "Subtitle colour")
        if c.isValid():
            self._set_color(c.name())
            self._preview()


def _row(
    form: QFormLayout, cls: type, name: str, field: QWidget | QHBoxLayout, widget: Any = None
) -> None:
    """A hand-made row labelled in the schema's plain words; the exact term and what it does
    in the tooltip (of ``widget`` when ``field`` is a layout around it)."""
    spec = spec_of(cls, name)
    label = QLabel(spec.label)
    label.setToolTip(spec.tooltip)
    target = widget if widget is not None else field
    if isinstance(target, QWidget):
        target.setToolTip(spec.tooltip)
    form.addRow(label, field)


class DeclaredRow:
    """The widget of one setting made from its type and declaration."""

    def __init__(self, section: str, name: str, tp: Any, spec: Spec) -> None:
        self.section, self.name, self.spec = section, name, spec
        self.widget: QWidget
        if spec.choices is not None:
            combo = _fitting(QComboBox())
            for value in spec.choices:
                combo.addItem(str(value), value)
            self.widget = combo
        elif tp is bool:
            self.widget = QCheckBox(spec.label)
        elif tp is int and spec.range is not None:
            box = QSpinBox()
            box.setRange(int(spec.range[0]), int(spec.range[1]))
            self.widget = box
        elif tp is float and spec.range is not None:
            dbox = QDoubleSpinBox()
            lo, hi = spec.range
            dbox.setRange(lo, hi)
            dbox.setDecimals(2)
            dbox.setSingleStep((hi - lo) / 100)
            self.widget = dbox
        elif tp is str:
            self.widget = QLineEdit()
        else:
            raise TypeError(f"{section}.{name}: no widget for {tp} (give it a hand-made row)")
        self.widget.setToolTip(spec.tooltip)

    def load(self, value: Any) -> None:
        w = self.widget
        if isinstance(w, QComboBox):
            w.setCurrentIndex(max(0, w.findData(value)))
        elif isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QSpinBox | QDoubleSpinBox):
            w.setValue(value)
        elif isinstance(w, QLineEdit):
            w.setText(str(value))

    def value(self) -> Any:
        w = self.widget
        if isinstance(w, QComboBox):
            return w.currentData()
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QSpinBox):
            return w.value()
        if isinstance(w, QDoubleSpinBox):
            return round(w.value(), 2)
        assert isinstance(w, QLineEdit)
        return w.text().strip()


C = TypeVar("C", bound=QComboBox)


def _fitting(combo: C) -> C:
    """A list as wide as the pane gives it, not as its longest entry: a model's or an input's
    long name made the pane wider than a small screen. (Set before its first size is asked
    for: Qt keeps that.)"""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(14)
    return combo


def _with_browse(edit: QWidget, browse: Callable[[], None]) -> QHBoxLayout:
    """A path field with a "Choose file…" button after it."""
    button = QPushButton("Choose file…")
    button.clicked.connect(browse)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row


def _declared(cls: type, name: str) -> tuple[Spec, float, float]:
    spec = spec_of(cls, name)
    assert spec.range is not None, f"{cls.__name__}.{name} declares no range"
    return spec, spec.range[0], spec.range[1]


def _spin(cls: type, name: str) -> QSpinBox:
    """A spin box over the field's declared range."""
    spec, lo, hi = _declared(cls, name)
    box = QSpinBox()
    box.setRange(int(lo), int(hi))
    box.setToolTip(spec.tooltip)
    return box


def _double_spin(cls: type, name: str, step: float) -> QDoubleSpinBox:
    spec, lo, hi = _declared(cls, name)
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setSingleStep(step)
    box.setToolTip(spec.tooltip)
    return box


def _percent_slider(cls: type, name: str) -> QSlider:
    """A slider in hundredths of the field's range (0..1 -> 0..100)."""
    spec, lo, hi = _declared(cls, name)
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setRange(round(lo * 100), round(hi * 100))
    slider.setToolTip(spec.tooltip)
    return slider


def _choice_combo(cls: type, name: str, labels: dict[str, str] | None = None) -> QComboBox:
    """A combo box of the field's declared choices (``labels``: how each is shown)."""
    spec = spec_of(cls, name)
    assert spec.choices is not None, f"{cls.__name__}.{name} declares no choices"
    combo = _fitting(QComboBox())
    for value in spec.choices:
        combo.addItem((labels or {}).get(value, str(value)), value)
    return combo
