"""The settings pane: language pair, SSBD beta and k, decoding mode, audio, models, looks.

Built from the config declarations. :data:`TABS` says which rows each tab shows in which order;
a setting's row is made from its type and declaration (:func:`declared_row`: a choice list, a
check box, a spin box or slider over the declared range, a text field; :data:`LOOKS` where it
reads otherwise), or by hand where no plain control fits (:meth:`SettingsPane._make_row`:
language lists, model and file choosers, the colour, the input list, key recorders). A setting
declared with ``tab=`` that :data:`TABS` does not list comes at the end of its tab, so a new
plain setting needs its declaration only. Values are validated by the same
``settings_store.validate`` that guards the file, then applied live through ``applied``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from PySide6.QtCore import QKeyCombination, QSize, Qt, Signal, SignalInstance
from PySide6.QtGui import QColor, QFont, QIcon, QKeyEvent, QKeySequence, QPixmap
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
    QLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from subtitler.config import (
    SECTIONS,
    AppConfig,
    MtConfig,
    language_codes,
    pane_fields,
    spec_of,
    with_settings,
)
from subtitler.session import (
    LANGUAGES,
    Glossary,
    address_problem,
    check_server,
    model_problems,
)
from subtitler.settings_store import validate
from subtitler.types import SILENCE_DBFS
from subtitler.ui.sizing import open_at
from subtitler.ui.web_settings import WebSettings

# The tabs, and their rows in order: "section.field" is a setting (its declaration's tab= must
# be this one; tests/ui check it); a name without a dot is a line that is no setting (a note, a
# meter: SettingsPane._line). Settings declared on a tab but not listed come at its end.
TABS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("translation", "Translation", (
        "asr.language", "mt.tgt_lang", "mt.extra_targets", "glossary", "mt.method", "mt.beta",
        "display.mask_k", "mt.backend", "mt.model_path", "mt.server_url", "mt.server_model",
        "mt.server_api_key", "mt.server_timeout_s", "server_check", "mt.template", "mt.threads",
        "mt.gpu_layers", "mt.context_sentences",
    )),
    ("audio", "Audio", (
        "audio.device", "level", "audio.meeting_device", "asr.you_language", "mt.you_targets",
        "sides_note", "meeting_audio",
    )),
    ("speech", "Speech", (
        "asr.model", "asr.device", "asr.threads", "asr.silence_end_s", "hardware",
    )),
    ("appearance", "Appearance", (
        "display.font_family", "display.font_size", "display.text_color", "display.outline",
        "display.background_opacity", "display.lines", "display.line_chars",
        "display.bilingual", "display.status_line", "display.click_through",
    )),
    ("hotkeys", "Hotkeys", (
        "display.hotkey_click_through", "display.hotkey_pause", "hotkeys_note",
    )),
    ("advanced", "Advanced", (
        "advanced_note", "mt.lookahead", "mt.resync", "mt.draft_model_path",
        "mt.draft_tokens", "mt.adaptive_guessing", "mt.verify", "mt.top_b", "mt.tau",
    )),
    ("browser", "Browser", ("web.share", "web.port")),  # ON_THEIR_PAGE
)  # fmt: skip
HOTKEYS_WORK = (
    "These keys work while any app has focus, also when clicks pass through the subtitles. "
    "The tray menu does the same."
)
GLOSSARY_TIP = (
    "Names and terms to recognise, and how to translate them, for this language pair. "
    "Saved in the Glossary window itself, apart from these settings."
)
WHISPER_SIZES = ["tiny", "base", "small", "medium", "large-v3", "distil-large-v3", "turbo"]
SERVER_CHECK_TIP = (
    "Asks the server at the address above once what it can do, as the app does when it "
    "connects; the terms are in this line's tooltip after the check."
)


NO_MEETING_AUDIO = "Not heard (the microphone only)"
SIDES_NOTE = (
    "With the meeting's audio heard too, its lines are marked Others and shown in the "
    "language chosen under Translation; yours are marked You and translated for the others "
    "(on the browser page, ?side=you shows only them)."
)
MEETING_MARK = "· meeting audio"  # how session.input_devices marks a loopback / monitor input

# Settings shown and kept by their tab's own page: the Browser page (ui/web_settings.py).
ON_THEIR_PAGE = frozenset({"web.share", "web.port"})
# Settings that do not preview on the overlay while they change (before Apply): clicks must
# not start passing through the subtitles before it is applied.
NOT_PREVIEWED = frozenset({"display.click_through"})


@dataclass(frozen=True)
class Look:
    """How a setting's row reads where it differs from what its declaration gives (the label,
    the doc as tooltip, the choices as they are, a spin box over the range)."""

    label: str = ""  # the row's label ("": the declaration's)
    text: str = ""  # a check box's own text ("": the label)
    tooltip: str | None = None  # the hover text (None: the declaration's)
    choices: dict[Any, str] | None = None  # how each choice reads (else as it is)
    percent: bool = False  # a 0..1 number as a slider in hundredths
    readout: bool = False  # ... with its value beside it
    step: float = 0.0  # a spin box's step (0: a hundredth of the range)
    decimals: int = 2  # a number's decimals (it is kept rounded to them)
    suffix: str = ""  # after a spin box's number (" s")
    placeholder: str = ""  # what an empty text field shows
    password: bool = False  # a text field shown as dots (shared screens, screenshots)
    none_text: str = ""  # an optional number: None, shown as its minimum with this text
    words: Callable[[float], str] | None = None  # a slider's readout in words (not a number)


def kept_words(beta: float) -> str:
    """What a stability (SSBD's beta) does, in words, for its slider."""
    if beta <= 0:
        return "none: each update is translated afresh"
    if beta < 0.15:
        return "a little"
    if beta < 0.35:
        return "small changes are ignored"
    if beta < 0.5:
        return "most of it"
    return "all: never rewritten"


PLAIN = Look()
# Every label and choice in plain words; the exact terms (SSBD, β, SpecDec, GPU layers) are in
# the tooltips, from the declarations (issue 27 point 7).
LOOKS: dict[str, Look] = {
    "mt.method": Look(choices={
        "SSBD": "Update, keeping what is shown (recommended)",
        "RT": "Translate again at every update", "CD": "Only add words, never rewrite",
    }),
    "mt.beta": Look(label="Keep what is shown", percent=True, readout=True, words=kept_words),
    "mt.backend": Look(choices={
        "local": "A model file on this computer", "server": "A translation server",
    }),
    "mt.extra_targets": Look(placeholder="none (language codes, e.g. ja, fr)"),
    "mt.server_url": Look(placeholder="http://gpu-box:8000/v1"),
    "mt.server_model": Look(placeholder="the first model it serves"),
    "mt.server_api_key": Look(placeholder="none", password=True),
    "mt.server_timeout_s": Look(step=1.0, decimals=1, suffix=" s"),
    "mt.template": Look(choices={
        "auto": "As the model file says", "tower": "As Tower models are asked",
        "qwen3": "As Qwen3 models are asked", "chatml": "As chat models are asked (ChatML)",
        "gguf": "With the chat format stored in the file", "fewshot": "Shown example translations",
    }),
    # all layers if the build offloads
    "mt.gpu_layers": Look(label="Model parts on the graphics card", none_text="all that fit"),
    "audio.device": Look(label="Your microphone", tooltip=""),
    "audio.meeting_device": Look(tooltip=""),
    "mt.you_targets": Look(placeholder="the meeting's language"),
    "asr.device": Look(choices={
        "auto": "Automatic", "cpu": "The processor (CPU)", "cuda": "NVIDIA graphics card",
    }),
    "asr.silence_end_s": Look(step=0.1, suffix=" s"),
    "display.font_size": Look(label="Size"),
    "display.outline": Look(text="Outline around letters"),
    "display.background_opacity": Look(percent=True),
    "display.bilingual": Look(text="Show the original line above the translation"),
    "display.status_line": Look(text="Show the input level and delays above the subtitles"),
    "display.click_through": Look(text="Clicks pass through the subtitles"),
    "display.hotkey_click_through": Look(tooltip=""),
    "display.hotkey_pause": Look(tooltip=""),
    "mt.resync": Look(text="After a change, try the rest of the previous translation again"),
    "mt.adaptive_guessing": Look(
        text="Guess only while it measurably speeds decoding up",
        tooltip="Compares decoding speed with and without guesses as the meeting goes and "
        "keeps the faster",
    ),
    "mt.verify": Look(choices={
        "biased": "As “Keep what is shown” says", "specdec": "Among the most likely words",
    }),
}  # fmt: skip


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
    # What a translation server can do, asked now: (plain words, the terms); runs off the
    # GUI thread.
    check_server: Callable[[MtConfig], tuple[str, str]] = check_server
    # Why the models chosen anew (settings to apply, settings in use) cannot be used.
    model_problems: Callable[[AppConfig, AppConfig], list[str]] = model_problems


@dataclass
class Row:
    """One setting's control in the pane: the widget that edits it, what the form shows (the
    widget, or a layout around it), how a value goes in and comes out, and the signal of a
    change (for the preview and the rows that depend on others)."""

    widget: QWidget
    load: Callable[[Any], None]
    value: Callable[[], Any]
    shown: QWidget | QLayout | None = None
    changed: SignalInstance | None = None
    also: tuple[QWidget, ...] = ()  # usable only with it (its buttons)

    def enable(self, on: bool) -> None:
        for w in (self.widget, *self.also):
            w.setEnabled(on)


def _combo_value(combo: QComboBox) -> str:
    """An editable model combo's value: the chosen item's data, or what the user typed."""
    text = combo.currentText().strip()
    data = combo.currentData()
    return str(data) if data and combo.itemText(combo.currentIndex()) == text else text


def _select(combo: QComboBox, value: object) -> None:
    i = combo.findData(value)
    if i >= 0:
        combo.setCurrentIndex(i)
    elif combo.isEditable() and isinstance(value, str):
        combo.setEditText(value)
    if (edit := combo.lineEdit()) is not None:
        edit.setCursorPosition(0)  # a long name shows its start, not its end


def meeting_audio_hint() -> str:
    """Where the meeting's sound is found on this system, for the Meeting audio row (or, with
    one input, for the microphone's row: then that input is what is captioned)."""
    if sys.platform == "darwin":
        return (
            "Meeting audio: on macOS 13 or newer choose “System audio (all apps)” to caption "
            "what the Mac plays (the meeting); macOS asks once for Screen Recording permission "
            "(System Settings → Privacy & Security), then subtitler must be restarted. "
            "Untested on a real Mac so far. On older macOS, or if it fails, install a virtual "
            "audio device such as BlackHole, route the meeting's output to it (a Multi-Output "
            "Device keeps your speakers on) and choose it there."
        )
    if sys.platform.startswith("win"):
        return (
            "Meeting audio: choose the “… [Loopback]” entry of the speakers or headphones the "
            "meeting plays on."
        )
    return (
        "Meeting audio: choose the “Monitor of …” entry of the speakers or headphones the "
        "meeting plays on (needs PulseAudio or PipeWire)."
    )


class SettingsPane(QDialog):
    applied = Signal(object)  # a validated AppConfig
    previewed = Signal(object)  # the DisplayConfig the look controls say now (not applied)
    glossary_requested = Signal(str, str)  # open the glossary of this (source, target) pair
    models_requested = Signal(str, str)  # open the Models window at ("asr" | "mt", value)
    server_checked = Signal(str, str)  # what the server can do: (plain words, the terms)

    def __init__(
        self, config: AppConfig, choices: Choices | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("subtitler settings")
        self.choices = choices or Choices()
        self._cfg = config
        self._color = config.display.text_color
        self.rows: dict[str, Row] = {}  # "section.field" -> its row
        self.key_problems: dict[str, QLabel] = {}  # hotkey -> why the OS refused it
        self.web = WebSettings(lambda: self.choices.web_status())
        self.tabs = QTabWidget()
        self.pages: list[QWidget] = []  # each tab's form (in a scroll area: a small screen)
        listed = {key for _tab, _title, keys in TABS for key in keys}
        for tab, title, keys in TABS:
            page = self.web if tab == "browser" else QWidget()
            form = page.layout() or QFormLayout(page)
            assert isinstance(form, QFormLayout), f"the {tab} tab is not a form"
            unlisted = [f"{s}.{f.name}" for s, f, _ in pane_fields(tab)]
            for key in [*keys, *(k for k in unlisted if k not in listed)]:
                if "." in key:
                    self._add_row(form, key)
                else:
                    self._line(form, key)
            self.pages.append(page)
            self.tabs.addTab(_Scrolled(page), title)
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
        lay.addWidget(self.tabs)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        for row in self.rows.values():
            if row.changed is not None:
                row.changed.connect(self._follow)
        self.src_lang.currentIndexChanged.connect(self.refresh_glossary)
        self.tgt_lang.currentIndexChanged.connect(self.refresh_glossary)
        self.load(config)
        # Room for a model's name beside its buttons where the screen has it.
        open_at(self, max(self.sizeHint().width(), 820), self.sizeHint().height())
        for key, row in self.rows.items():  # the look, previewed on the overlay at once
            if key.startswith("display.") and key not in NOT_PREVIEWED and row.changed:
                row.changed.connect(self._preview)

    def widget(self, key: str) -> QWidget:
        """The control of the setting ``key`` ("section.field")."""
        return self.rows[key].widget

    def show_setting(self, key: str, value: Any) -> None:
        """Show a setting changed elsewhere (the tray's click-through) in its row."""
        self.rows[key].load(value)

    def _preview(self, *_: object) -> None:
        """Each look control's effect on the overlay at once, before Apply."""
        self.previewed.emit(self.values().display)

    def _follow(self, *_: object) -> None:
        """Rows that apply only with some value of another are usable only then."""
        value = {key: row.value() for key, row in self.rows.items()}
        self.rows["mt.beta"].enable(value["mt.method"] == "SSBD")
        server = value["mt.backend"] == "server"
        for key in ("mt.server_url", "mt.server_model", "mt.server_api_key", "mt.server_timeout_s"):
            self.rows[key].enable(server)
        self.server_check.setEnabled(server and self.server_found.text() != "Asking the server…")
        for key in ("mt.model_path", "mt.threads", "mt.gpu_layers"):
            self.rows[key].enable(not server)  # threads and GPU layers: the server's business
        for key in ("mt.top_b", "mt.tau"):
            self.rows[key].enable(value["mt.verify"] == "specdec")
        both = value["audio.meeting_device"] not in (None, "")
        for key in ("asr.you_language", "mt.you_targets"):
            self.rows[key].enable(both)  # the microphone's own languages: with two sides only
        drafting = bool(value["mt.draft_model_path"])
        self.rows["mt.draft_tokens"].enable(drafting)
        self.rows["mt.lookahead"].enable(not drafting)  # the draft model guesses instead

    # -- rows ------------------------------------------------------------------------------
    def _add_row(self, form: QFormLayout, key: str) -> None:
        """A setting's row, labelled in the declaration's plain words, the exact term and what
        it does in the tooltip of the label and the control."""
        if key in ON_THEIR_PAGE:
            return
        row = self._make_row(key)
        section, name = key.split(".", 1)
        spec = spec_of(SECTIONS[section], name)
        look = LOOKS.get(key, PLAIN)
        tip = spec.tooltip if look.tooltip is None else look.tooltip
        row.widget.setToolTip(tip)
        self.rows[key] = row
        shown = row.shown or row.widget
        if isinstance(row.widget, QCheckBox):  # it says what it is itself
            form.addRow("", shown)
            return
        label = QLabel(look.label or spec.label)
        label.setToolTip(tip)
        label.setBuddy(row.widget)  # (a screen reader names the control by it)
        form.addRow(label, shown)

    def _make_row(self, key: str) -> Row:
        """The row of ``key``: made by hand here where no plain control fits, else from its
        declaration."""
        made: dict[str, Callable[[], Row]] = {
            "asr.language": lambda: self._language_row(source=True),
            "mt.tgt_lang": lambda: self._language_row(source=False),
            "mt.model_path": self._mt_model_row,
            "audio.device": self._device_row,
            "audio.meeting_device": self._meeting_row,
            "asr.you_language": self._you_language_row,
            "asr.model": self._asr_model_row,
            "display.font_family": self._font_row,
            "display.text_color": self._color_row,
            "display.hotkey_click_through": lambda: self._hotkey_row("hotkey_click_through"),
            "display.hotkey_pause": lambda: self._hotkey_row("hotkey_pause"),
            "mt.draft_model_path": self._draft_model_row,
        }
        if key in made:
            return made[key]()
        return declared_row(key, LOOKS.get(key, PLAIN))

    def _line(self, form: QFormLayout, name: str) -> None:
        """A line that is no setting."""
        if name == "glossary":
            label = QLabel("Glossary")
            label.setToolTip(GLOSSARY_TIP)
            form.addRow(label, self._glossary_row())
        elif name == "level":
            self.level = QProgressBar()
            self.level.setRange(0, 100)
            self.level.setTextVisible(False)
            form.addRow("Level", self.level)
        elif name == "sides_note":
            note = QLabel(SIDES_NOTE)
            note.setWordWrap(True)
            form.addRow(note)
        elif name == "meeting_audio":
            hint = QLabel(meeting_audio_hint())
            hint.setWordWrap(True)
            form.addRow(hint)
        elif name == "hardware":
            if self.choices.hardware:
                form.addRow("Hardware", QLabel(self.choices.hardware))
        elif name == "hotkeys_note":
            self.keys_note = QLabel(HOTKEYS_WORK)
            self.keys_note.setWordWrap(True)
            self.keys_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(self.keys_note)
        elif name == "server_check":
            self.server_check = QPushButton("Check")
            self.server_check.setToolTip(SERVER_CHECK_TIP)
            self.server_check.setAccessibleName("Check what the server can do")
            self.server_check.clicked.connect(self._check_server)
            self.server_found = QLabel("Not checked yet.")
            self.server_found.setWordWrap(True)
            self.server_checked.connect(self._show_server)
            row = QHBoxLayout()
            row.addWidget(self.server_check)
            row.addWidget(self.server_found, 1)
            label = QLabel("What the server can do")
            label.setToolTip(SERVER_CHECK_TIP)
            form.addRow(label, row)
        elif name == "advanced_note":
            note = QLabel(
                "Other ways to cut translation cost. On the models measured so far none was "
                "faster than the default way, so they are off."
            )
            note.setWordWrap(True)
            form.addRow(note)
        else:
            raise KeyError(f"no line {name!r} in the settings pane")

    def _language_row(self, source: bool) -> Row:
        """The speech language (or detect it) or the one to translate into."""
        c = _fitting(QComboBox())
        if source:
            c.addItem("Detect automatically", None)
        for code, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
            c.addItem(f"{name} ({code})", code)
        if source:
            self.src_lang = c
        else:
            self.tgt_lang = c
        return Row(c, lambda v: _select(c, v), c.currentData, changed=c.currentIndexChanged)

    def _glossary_row(self) -> QHBoxLayout:
        """The glossary of the language pair chosen above: how many terms, and a button that
        opens it (saved there, apart from these settings)."""
        self.glossary_button = QPushButton("Glossary…")
        self.glossary_button.setToolTip(GLOSSARY_TIP)
        self.glossary_count = QLabel()
        self.glossary_button.clicked.connect(
            lambda: self.glossary_requested.emit(*self.glossary_pair())
        )
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

    def _model_combo(self, items: list[tuple[str, str]]) -> QComboBox:
        combo = _fitting(QComboBox())
        combo.setEditable(True)  # a path or a folder not in the list: typed in
        for label, value in items:
            combo.addItem(label, value)
        return combo

    def _mt_model_row(self) -> Row:
        self.mt_model = combo = self._model_combo(self.choices.translation_models)
        shown, choose = _with_browse(combo, self._browse_gguf)
        models = self._models_button("mt", combo)
        shown.addWidget(models)
        return Row(
            combo,
            lambda v: _select(combo, v),
            lambda: _combo_value(combo),
            shown,
            combo.currentIndexChanged,
            also=(choose, models),
        )

    def _asr_model_row(self) -> Row:
        self.asr_model = combo = self._model_combo(self.choices.asr_models)
        shown = QHBoxLayout()
        shown.addWidget(combo, 1)
        shown.addWidget(self._models_button("asr", combo))
        return Row(combo, lambda v: _select(combo, v), lambda: _combo_value(combo), shown)

    def _device_row(self) -> Row:
        self.device = _fitting(QComboBox())
        return Row(self.device, self._fill_devices, self.device.currentData)

    def _fill_devices(self, keep: str | int | None) -> None:
        """The inputs present now (listed afresh each time the pane opens), and the chosen one
        even while it is unplugged: saving must not silently switch to the default."""
        self.device.clear()
        self.device.addItem("System default microphone", None)
        for label, name in self.choices.input_devices():
            self.device.addItem(label, name)
        if keep not in (None, "") and self.device.findData(keep) < 0:
            self.device.addItem(f"{keep} (not connected)", keep)
        _select(self.device, keep)

    def _meeting_row(self) -> Row:
        """The meeting's audio, heard as well as the microphone (its lines marked "Others",
        the microphone's "You"), or not heard."""
        self.meeting = _fitting(QComboBox())
        return Row(
            self.meeting,
            self._fill_meeting,
            self.meeting.currentData,
            changed=self.meeting.currentIndexChanged,
        )

    def _fill_meeting(self, keep: str | int | None) -> None:
        """Every input (the meeting's sound is usually a loopback or monitor one: listed
        first), and the chosen one even while it is away."""
        self.meeting.clear()
        self.meeting.addItem(NO_MEETING_AUDIO, None)
        devices = self.choices.input_devices()
        for label, name in sorted(devices, key=lambda d: MEETING_MARK not in d[0]):
            self.meeting.addItem(label, name)
        if keep not in (None, "") and self.meeting.findData(keep) < 0:
            self.meeting.addItem(f"{keep} (not connected)", keep)
        _select(self.meeting, keep)

    def _you_language_row(self) -> Row:
        """The language the user speaks into the microphone (or detect it)."""
        c = _fitting(QComboBox())
        c.addItem("Detect automatically", None)
        for code, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
            c.addItem(f"{name} ({code})", code)
        return Row(c, lambda v: _select(c, v), c.currentData, changed=c.currentIndexChanged)

    def _font_row(self) -> Row:
        self.font_family = font = _fitting(QFontComboBox())
        return Row(
            font,
            lambda v: font.setCurrentFont(QFont(v)),
            lambda: font.currentFont().family(),
            changed=font.currentFontChanged,
        )

    def _color_row(self) -> Row:
        """A button that opens a colour picker (the pick previews at once)."""
        self.color_btn = QPushButton()
        self.color_btn.clicked.connect(self._pick_color)
        return Row(self.color_btn, self._set_color, lambda: self._color)

    def _hotkey_row(self, name: str) -> Row:
        """A key recorder, with a line under it saying why the OS refused the key (hidden
        while it works)."""
        edit = _KeyRecorder()
        if name == "hotkey_click_through":
            self.key_click = edit
        else:
            self.key_pause = edit
        edit.setMaximumSequenceLength(1)  # one combination: what the OSes can take
        edit.setClearButtonEnabled(True)  # no hotkey at all is a choice too
        problem = QLabel()
        problem.setStyleSheet("color: #c62828")
        problem.hide()
        edit.keySequenceChanged.connect(lambda _k: problem.hide())  # not yet tried
        self.key_problems[name] = problem
        col = QVBoxLayout()
        col.setSpacing(2)
        col.addWidget(edit)
        col.addWidget(problem)
        return Row(
            edit,
            lambda v: edit.setKeySequence(QKeySequence(v)),
            lambda: edit.keySequence().toString(),
            col,
        )

    def _draft_model_row(self) -> Row:
        self.draft_model = edit = QLineEdit()
        edit.setPlaceholderText("none")
        return Row(
            edit,
            edit.setText,
            lambda: edit.text().strip(),
            _with_browse(edit, self._browse_draft)[0],
            edit.textChanged,
        )

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

    # -- values ----------------------------------------------------------------------------
    def rebase(self, cfg: AppConfig) -> None:
        """The settings in use, changed elsewhere (the overlay's place, say): what the pane
        has no row for is taken from them when it is applied."""
        self._cfg = cfg

    def load(self, cfg: AppConfig) -> None:
        self.rebase(cfg)
        for key, row in self.rows.items():
            section, name = key.split(".", 1)
            row.load(getattr(getattr(cfg, section), name))
        self.web.load(cfg.web)
        self.refresh_glossary()
        self._follow()

    def values(self) -> AppConfig:
        v = {key: row.value() for key, row in self.rows.items()}  # "section.field" -> value
        if v.get("asr.language"):  # a fixed speech language is the one translated from
            v["mt.src_lang"] = v["asr.language"]
        web = self.web.values()  # the Browser page's own
        v.update({"web.share": web.share, "web.port": web.port, "web.token": web.token})
        return with_settings(self._cfg, v)

    def apply(self) -> bool:
        cfg = self.values()
        errs = validate(cfg)
        if not cfg.asr.model:
            errs.append("choose a speech model")
        else:
            errs += self.choices.model_problems(cfg, self._cfg)
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

    def _check_server(self) -> None:
        """Ask the server (off the GUI thread: it may take the timeout) what it can do."""
        mt = self.values().mt
        if (why := address_problem(mt.server_url)) is not None:
            self._show_server(f"Cannot ask it: {why}.", "")
            return
        self.server_check.setEnabled(False)
        self.server_found.setText("Asking the server…")
        check = self.choices.check_server

        def run() -> None:
            try:
                plain, terms = check(mt)
            except Exception as e:  # one line for the user: why it cannot be used
                plain, terms = f"Cannot use it: {e}", ""
            with contextlib.suppress(RuntimeError):  # the pane was closed meanwhile
                self.server_checked.emit(plain, terms)

        threading.Thread(target=run, name="server-check", daemon=True).start()

    def _show_server(self, plain: str, terms: str) -> None:
        self.server_found.setText(plain)
        self.server_found.setToolTip(terms)
        self.server_check.setEnabled(self.rows["mt.backend"].value() == "server")

    def set_level(self, level_dbfs: float) -> None:
        """The input level on a linear bar: full at a third of full scale (-9.5 dBFS)."""
        rms = 10 ** (level_dbfs / 20) if level_dbfs > SILENCE_DBFS else 0.0
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
        self.color_btn.setAccessibleName(f"Subtitle colour: {self._color}")  # (not the code alone)

    def _pick_color(self) -> None:
        c = QColorDialog.getColor(QColor(self._color), self, "Subtitle colour")
        if c.isValid():
            self._set_color(c.name())
            self._preview()


def declared_row(key: str, look: Look = PLAIN) -> Row:
    """The row of a plain setting, made from its type and declaration: a choice list, a check
    box, a spin box (or a slider) over the declared range, or a text field."""
    section, name = key.split(".", 1)
    spec = spec_of(SECTIONS[section], name)
    tp, optional = _plain(get_type_hints(SECTIONS[section])[name])
    if spec.choices is not None:
        combo = _fitting(QComboBox())
        for choice in spec.choices:
            combo.addItem((look.choices or {}).get(choice, str(choice)), choice)
        return Row(
            combo,
            lambda v: combo.setCurrentIndex(max(0, combo.findData(v))),
            combo.currentData,
            changed=combo.currentIndexChanged,
        )
    if tp is bool:
        check = QCheckBox(look.text or look.label or spec.label)
        return Row(
            check, lambda v: check.setChecked(bool(v)), check.isChecked, changed=check.toggled
        )
    if tp is str:
        edit = QLineEdit()
        edit.setPlaceholderText(look.placeholder)
        if look.password:
            edit.setEchoMode(QLineEdit.EchoMode.Password)

        def text() -> str:
            if spec.languages:  # "JA,fr" is kept as "ja, fr"
                return ", ".join(language_codes(edit.text()))
            return edit.text().strip()

        return Row(edit, lambda v: edit.setText(str(v)), text, changed=edit.textChanged)
    if spec.range is None or tp not in (int, float):
        raise TypeError(f"{key}: no plain widget for {tp} (give it a hand-made row)")
    lo, hi = spec.range
    if look.percent:
        return _percent_row(lo, hi, look.readout, look.words)
    if tp is int:
        box = QSpinBox()
        box.setRange(int(lo), int(hi))
        box.setSuffix(look.suffix)

        def int_value() -> int | None:
            return None if optional and box.value() == box.minimum() else box.value()

        if optional:
            box.setSpecialValueText(look.none_text)  # shown at the minimum: None
        return Row(
            box,
            lambda v: box.setValue(box.minimum() if v is None else v),
            int_value,
            changed=box.valueChanged,
        )
    dbox = QDoubleSpinBox()
    dbox.setRange(lo, hi)
    dbox.setDecimals(look.decimals)
    dbox.setSingleStep(look.step or (hi - lo) / 100)
    dbox.setSuffix(look.suffix)
    return Row(
        dbox,
        lambda v: dbox.setValue(dbox.minimum() if v is None else v),
        lambda: round(dbox.value(), look.decimals),
        changed=dbox.valueChanged,
    )


def _percent_row(
    lo: float, hi: float, readout: bool, words: Callable[[float], str] | None = None
) -> Row:
    """A slider in hundredths of the range (0..1 -> 0..100), its value beside it if asked
    (in ``words`` where given, the number then in the readout's tooltip)."""
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setRange(round(lo * 100), round(hi * 100))
    shown: QHBoxLayout | None = None
    label = QLabel()  # the value, when it is shown

    def show(v: float) -> None:
        label.setText(words(v) if words is not None else f"{v:.2f}")
        label.setToolTip(f"{v:.2f}" if words is not None else "")

    if readout:
        slider.valueChanged.connect(lambda v: show(v / 100))
        shown = QHBoxLayout()
        shown.addWidget(slider, 1)
        shown.addWidget(label)
        if words is not None:  # as wide as its longest words: the slider does not jump
            longest = max(
                (words(i / 100) for i in range(slider.minimum(), slider.maximum() + 1)), key=len
            )
            label.setMinimumWidth(label.fontMetrics().horizontalAdvance(longest) + 4)

    def load(v: float) -> None:
        slider.setValue(round(v * 100))
        show(v)  # also when the slider stays where it was

    return Row(slider, load, lambda: slider.value() / 100, shown, slider.valueChanged)


MODIFIER_KEYS = frozenset({Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta})


class _KeyRecorder(QKeySequenceEdit):
    """Records a hotkey; Tab and Shift+Tab move on and leave it as it was. Qt's recorder lets
    plain Tab and Backtab go, but a Shift pressed alone cleared the key, and the Shift+Backtab
    a keyboard sends was recorded: Shift+Tab changed the hotkey and the focus stayed."""

    def __init__(self) -> None:
        super().__init__()
        shift = Qt.KeyboardModifier.ShiftModifier
        self.setFinishingKeyCombinations(
            [
                *self.finishingKeyCombinations(),
                QKeyCombination(shift, Qt.Key.Key_Backtab),
                QKeyCombination(shift, Qt.Key.Key_Tab),
            ]
        )

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in MODIFIER_KEYS:  # (a combination is recorded at its key)
            event.accept()
            return
        super().keyPressEvent(event)


class _Scrolled(QScrollArea):
    """A tab's page that scrolls where the window is smaller than it (a screen of 800x600
    logical px, 1366x768 at 175 %: Settings was taller than the screen, OK and Apply below
    its edge), and asks for the room of the whole page where there is."""

    def __init__(self, page: QWidget) -> None:
        super().__init__()
        self.setWidget(page)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # (Tab goes to the page's controls)
        for w in (page, self.viewport()):  # (the tab's own background shows, as before)
            w.setAutoFillBackground(False)

    def sizeHint(self) -> QSize:  # (QScrollArea's is at most 24 lines high)
        page = self.widget()
        return page.sizeHint() if page is not None else super().sizeHint()


def _plain(tp: Any) -> tuple[Any, bool]:
    """(the type, whether None is allowed too) of ``int``, ``int | None`` and the like."""
    if get_origin(tp) in (Union, types.UnionType):
        kinds = [a for a in get_args(tp) if a is not type(None)]
        return (kinds[0] if len(kinds) == 1 else tp), len(kinds) < len(get_args(tp))
    return tp, False


C = TypeVar("C", bound=QComboBox)


def _fitting(combo: C) -> C:
    """A list as wide as the pane gives it, not as its longest entry: a model's or an input's
    long name made the pane wider than a small screen. (Set before its first size is asked
    for: Qt keeps that.)"""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(14)
    return combo


def _with_browse(edit: QWidget, browse: Callable[[], None]) -> tuple[QHBoxLayout, QPushButton]:
    """A path field with a "Choose file…" button after it: (the row, the button)."""
    button = QPushButton("Choose file…")
    button.clicked.connect(browse)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row, button
