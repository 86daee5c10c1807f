"""Every window and dialog a user sees, opened as the app opens them, with plausible content
(a fake pipeline, sample meetings, a glossary, the real model catalog): for the screenshot
tool (tools/screenshots.py) and for the test that no text is cut off (tests/ui)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QScrollArea,
    QTabBar,
    QWidget,
)

from subtitler.config import AppConfig, AsrConfig, MtConfig
from subtitler.models.catalog import load_catalog
from subtitler.models.firstrun import FirstRunPlan, hardware_line, model_choices, plan_first_run
from subtitler.models.hardware import HardwareInfo
from subtitler.mt import glossary
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.pipeline import Factories
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
from subtitler.ui.app import SubtitlerApp
from subtitler.ui.app_state import Shown
from subtitler.ui.firstrun import FirstRunDialog
from subtitler.ui.preview import sample_events
from subtitler.ui.settings_pane import Choices
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for

# A laptop with 16 GB and no graphics card to speak of (the most common case).
LAPTOP = HardwareInfo("Linux", "x86_64", 8, 16 * 2**30, 9 * 2**30, False, False, 0)
DEVICES = [
    ("Monitor of Built-in Audio Analog Stereo", "alsa_output.pci.analog-stereo.monitor"),
    ("Built-in Audio Analog Stereo (microphone)", "alsa_input.pci.analog-stereo"),
    ("Jabra Evolve2 65 (headset)", "bluez_input.jabra"),
]
MEETINGS = {
    "20261116-093000": [
        ("Welcome to the planning call, everyone.", "Willkommen zum Planungsgespräch."),
        ("Zürich needs a budget for the new office.", "Zürich braucht ein Budget für das Büro."),
        ("Let's look at the numbers first.", "Sehen wir uns zuerst die Zahlen an."),
    ],
    "20261117-101500": [
        ("Hola a todos, empezamos.", "Hello everyone, let's begin."),
        ("El informe está listo.", "The report is ready."),
    ],
}
# A translator refused, as issue 27 saw it cut off on the overlay ("…Qwen3); choose a").
REFUSED = (
    "translation model: Qwen3-4B-Base.gguf has no chat template and is not a model this app "
    "knows (Tower, Qwen3); choose a prompt template explicitly in Settings → Translation, or "
    "another model"
)
TERMS = [
    ("Subiaco", "Subiaco"),
    ("Pannartz", ""),
    ("quarterly review", "Quartalsbericht"),
    ("OKR", "OKR"),
]


def _meetings(folder: Path) -> None:
    for stamp, lines in MEETINGS.items():
        src, tgt = ("en", "de") if stamp.startswith("20261116") else ("es", "en")
        w = TranscriptWriter(folder / f"{stamp}.jsonl")
        for i, (source, translation) in enumerate(lines):
            t0 = 2.0 + 4.5 * i
            w.append(SegmentRecord(i, t0, t0 + 4.0, source, translation, src, tgt, 0.0))
        w.close()


def make_app(tmp: Path) -> SubtitlerApp:
    """The app with a fake pipeline (not started), two past meetings and a glossary; models
    are looked for where MODELS_DIR_ENV says (set it: none downloaded there)."""
    catalog = load_catalog()
    mt_models = model_choices(catalog, "mt")
    choices = Choices(
        input_devices=lambda: DEVICES,
        translation_models=mt_models,
        asr_models=model_choices(catalog, "asr"),
        hardware=hardware_line(LAPTOP),
    )
    data = tmp / "data"
    _meetings(data / "transcripts")
    glossary.save(Glossary().with_pair("en", "de", TERMS), tmp / "glossary.csv")
    cfg = AppConfig(
        asr=AsrConfig(language="en"),
        mt=MtConfig(model_path=mt_models[0][1] if mt_models else "model.gguf"),
    )
    factories = Factories(
        lambda a, c: FakeSource(30.0, speed=1.0),
        lambda a: ScriptedRecognizer([Step(0.5, 0, ["hi."], True)]),
        loader_for(echo_lm()),
    )
    app = SubtitlerApp(
        cfg, factories, config_path=tmp / "config.toml", data_dir=data, choices=choices
    )
    app.overlay.hide()
    return app


@dataclass
class Window:
    name: str  # the picture's file name, without .png
    widget: QWidget


def windows(app: SubtitlerApp, tmp: Path) -> Iterator[Window]:
    """Each window opened as the app opens it (shown), in turn; the caller looks at it before
    asking for the next (a tab's picture needs the pane on that tab)."""
    app.open_settings()
    pane = app.settings
    assert pane is not None
    for i in range(pane.tabs.count()):
        pane.tabs.setCurrentIndex(i)
        yield Window(f"settings-{i + 1}-{pane.tabs.tabText(i).lower()}", pane)
    pane.close()
    app.open_models()
    assert app.models is not None
    yield Window("models", app.models)
    app.models.close()
    app.open_glossary()
    assert app.glossary_dialog is not None
    yield Window("glossary", app.glossary_dialog)
    app.glossary_dialog.show_pair("en", "fr")
    yield Window("glossary-empty", app.glossary_dialog)
    app.glossary_dialog.close()
    app.open_history()
    assert app.history is not None
    yield Window("history", app.history)
    app.history.close()
    app.history = None
    real = app.data_dir
    app.data_dir = tmp / "nothing-yet"
    app.open_history()
    assert app.history is not None
    yield Window("history-empty", app.history)
    app.history.close()
    app.history, app.data_dir = None, real
    for network in (True, False):

        def planner(cfg: AppConfig, network: bool = network) -> FirstRunPlan:
            return plan_first_run(cfg, LAPTOP, root=tmp / "models", network=network)

        first = FirstRunDialog(
            AppConfig(), planner(AppConfig()), root=tmp / "models", planner=planner,
            languages=("en", "fr"),
        )  # fmt: skip
        first.show()
        if network:
            yield Window("first-run-languages", first)
        first.next_btn.click()
        yield Window("first-run" if network else "first-run-offline", first)
        if network:
            first.choose_local()
            first.mt_path.setText("/home/ann/Downloads/notes.gguf")
            first._say(
                first.mt_problem,
                "notes.gguf: not a GGUF model file. Choose another .gguf file, or leave it "
                "empty to use the recommended model (download it later from the tray menu → "
                "Models…)",
            )
            yield Window("first-run-files", first)
        first.close()
    app.overlay.show()
    for ev in sample_events():
        app.overlay.on_subtitle(ev)
    app.overlay.set_state(Shown("running", "Listening…"))
    yield Window("overlay", app.overlay)
    app.overlay.set_alert(
        "translation failed: translation server http://gpu-box:8000/v1 did not answer; "
        "trying again in 4 s"
    )
    yield Window("overlay-alert", app.overlay)
    app.overlay.set_alert(REFUSED)  # longer than the alert's two rows
    yield Window("overlay-alert-long", app.overlay)
    app.overlay.set_alert("")
    off = f"Translation off: {REFUSED}"
    app.overlay.set_state(Shown("running", f"Listening… · {off}", off))
    yield Window("overlay-translation-off", app.overlay)
    app.overlay.clear()
    yield Window("overlay-state", app.overlay)  # no subtitles: the whole state
    for state in (Shown("loading", "Loading models…"), Shown("running", "Listening…")):
        app.overlay.set_state(state)
        yield Window(f"overlay-{state.run}", app.overlay)


def _cut(w: QWidget) -> str | None:
    """Why ``w``'s text does not fit in it, or None."""
    if not w.isVisible() or w.width() <= 0:
        return None
    hint: QSize = w.minimumSizeHint() if isinstance(w, QComboBox | QLineEdit) else w.sizeHint()
    if isinstance(w, QLabel):
        if not w.text() or (w.pixmap() is not None and not w.pixmap().isNull()):
            return None
        if w.wordWrap():  # wraps to its width: only its height can be short
            need = w.heightForWidth(w.width())
            return f"{need} px high needed, has {w.height()}" if need > w.height() else None
    elif isinstance(w, QAbstractButton):
        if not w.text():
            return None
    elif not isinstance(w, QComboBox):
        return None
    short = []
    if w.width() < hint.width():
        short.append(f"{hint.width()} px wide needed, has {w.width()}")
    if w.height() < hint.height():
        short.append(f"{hint.height()} px high needed, has {w.height()}")
    return "; ".join(short) or None


def clipped(root: QWidget) -> list[str]:
    """The labels, buttons and lists under ``root`` (shown) whose text is cut off, and the
    overlay's own texts (its state, alert, status line) that its last frame cut off."""
    from subtitler.ui.overlay import SubtitleOverlay

    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if isinstance(w, SubtitleOverlay) and w.isVisible():
            out += [f"SubtitleOverlay {c}" for c in w.cut_texts()]
        why = _cut(w)
        if why is not None:
            text = w.text() if isinstance(w, QLabel | QAbstractButton) else w.objectName()
            kind = type(w).__name__
            out.append(f"{kind} {text[:40]!r}: {why}")
    return out


def settle(ms: int = 50) -> None:
    """Let layouts and paints run."""
    from PySide6.QtTest import QTest

    QApplication.processEvents()
    QTest.qWait(ms)


Shooter = Callable[[Window], None]


def _tabbable(w: QWidget) -> bool:
    return (
        w.isVisible()
        and w.isEnabled()
        and bool(w.focusPolicy() & Qt.FocusPolicy.TabFocus)
        and w.focusProxy() is None
    )


def tab_order(root: QWidget) -> list[QWidget]:
    """The widgets Tab visits in ``root``, in that order (from its first one)."""
    out: list[QWidget] = []
    w = root.nextInFocusChain()
    while w is not root and len(out) < 500:
        if _tabbable(w) and root.isAncestorOf(w):
            out.append(w)
        w = w.nextInFocusChain()
    return out


def _scrolled_in(w: QWidget, root: QWidget) -> QScrollArea | None:
    """The outermost scroll area under ``root`` that ``w`` scrolls in, or None."""
    found = None
    p = w.parentWidget()
    while p is not None and p is not root:
        if isinstance(p, QScrollArea) and p.widget() is not None and p.widget().isAncestorOf(w):
            found = p
        p = p.parentWidget()
    return found


def out_of_order(root: QWidget) -> list[str]:
    """Pairs of widgets that Tab visits against the reading order (top to bottom, then left to
    right within a row); the tab bar of a tab widget and a table's cells are not checked. A
    control in a scroll area is read where it is in the scrolled page, and, against one
    outside it, where the scroll area is (a control scrolled below the window's buttons is
    read before them)."""
    seen = tab_order(root)

    def where(w: QWidget, ref: QWidget) -> tuple[int, int, int]:
        p = w.mapTo(ref, w.rect().center())
        return p.y(), p.x(), w.height()

    def outside(w: QWidget, area: QScrollArea | None) -> tuple[int, int, int]:
        if area is None:
            return where(w, root)
        y, x, _h = where(area, root)
        return y, x, 0  # (its middle, no row of its own)

    problems = []
    for a, b in itertools.pairwise(seen):
        sa, sb = _scrolled_in(a, root), _scrolled_in(b, root)
        if sa is sb and sa is not None:
            page = sa.widget()
            (ya, xa, ha), (yb, xb, hb) = where(a, page), where(b, page)
        else:
            (ya, xa, ha), (yb, xb, hb) = outside(a, sa), outside(b, sb)
        same_row = abs(ya - yb) <= max(ha, hb) // 2
        if (same_row and xb < xa) or (not same_row and yb < ya):
            problems.append(f"{_name(a)} -> {_name(b)}")
    return problems


def unnamed(root: QWidget) -> list[str]:
    """The controls Tab visits under ``root`` that a screen reader has no name for: no
    accessible name, no label whose buddy it is, no text of its own (a button's, a
    label's); a tab bar names its tabs."""
    buddies = {label.buddy() for label in root.findChildren(QLabel)}
    out = []
    for w in tab_order(root):
        if w.accessibleName() or w in buddies or isinstance(w, QTabBar):
            continue
        if isinstance(w, QAbstractButton | QLabel) and w.text():
            continue  # (says its text: a button's, a label's with a link)
        out.append(f"{type(w).__name__}({w.toolTip()[:30]!r})")
    return out


def _name(w: QWidget) -> str:
    text = w.text() if isinstance(w, QLabel | QAbstractButton) else ""
    return f"{type(w).__name__}({text[:20]!r})" if text else type(w).__name__
