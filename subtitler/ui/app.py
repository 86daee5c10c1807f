"""The desktop app: overlay + tray + settings around one running pipeline."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QEventLoop, QObject, QRect, Qt, QTimer, QUrl, Slot
from PySide6.QtGui import QCursor, QDesktopServices, QGuiApplication, QIcon, QScreen, QWindow
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QWidget

from subtitler.config import AppConfig, DisplayConfig, given_settings
from subtitler.resources import asset_path
from subtitler.session import (
    CatalogError,
    ErrorEvent,
    Event,
    Factories,
    Fanout,
    Glossary,
    LevelEvent,
    MetricsEvent,
    Overrides,
    Pipeline,
    Session,
    StatusEvent,
    SubtitleEvent,
    TranslatorEvent,
    export,
    glossary_beside,
    input_devices,
    model_catalog,
    new_transcript,
    plan_first_run,
    prepare,
    read_transcript,
    real_factories,
    sides_of,
)
from subtitler.ui.about import AboutDialog
from subtitler.ui.app_state import AppState
from subtitler.ui.bridge import EventBridge
from subtitler.ui.end_signals import quit_on_end_signals
from subtitler.ui.gc_guard import GuiThreadCollector
from subtitler.ui.glossary_dialog import GlossaryDialog
from subtitler.ui.history import HistoryDialog
from subtitler.ui.hotkeys import OLD_DEFAULTS, GlobalHotkeys, replace_old_defaults
from subtitler.ui.models_dialog import ModelsDialog
from subtitler.ui.overlay import SubtitleOverlay
from subtitler.ui.preview import PREVIEW_ID, sample_events
from subtitler.ui.settings_pane import Choices, SettingsPane
from subtitler.ui.single_instance import SingleInstance
from subtitler.ui.sizing import back_on_screen
from subtitler.ui.tray import Tray
from subtitler.web.access import new_token
from subtitler.web.server import WebServerError, WebSubtitles

log = logging.getLogger(__name__)
# The problems said that the app keeps, the newest: every one of the app's life was kept (a
# string per problem, growing for as long as the app ran, weeks in a tray).
ERRORS_KEPT = 200


def app_icon() -> QIcon:
    for name in ("icon.png", "icon.ico"):
        p = asset_path(name)
        if p.exists():
            return QIcon(str(p))
    return QIcon()


def _with_access_key(cfg: AppConfig) -> AppConfig:
    """``cfg`` with a new access key where the page is shared on the network without one (a
    settings file's empty key); else ``cfg`` itself. The page never goes out without one."""
    if cfg.web.share != "network" or cfg.web.token:
        return cfg
    return dataclasses.replace(cfg, web=dataclasses.replace(cfg.web, token=new_token()))


class SubtitlerApp(QObject):
    def __init__(
        self,
        config: AppConfig,
        factories: Factories,
        *,
        config_path: Path | None,
        data_dir: Path,
        choices: Choices | None = None,
        speed: float = 1.0,
        notice: str = "",
        hotkeys: GlobalHotkeys | None = None,
        rescue_dirs: tuple[Path, ...] = (),
        glossary_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.choices = choices or Choices()
        self.choices.web_status = self.web_status
        self.choices.glossary = lambda: self.glossary
        self.bridge = EventBridge()
        self.bridge.delivered.connect(self.on_event)
        # The pipeline's events go to the overlay (through the bridge) and, straight from the
        # pipeline's threads, to the browser page when it is on.
        self.fanout = Fanout(self.bridge.post)
        # The settings and the pipeline live in the session; this class wires widgets to it.
        # The glossary lives next to the settings file.
        if glossary_path is None and config_path is not None:
            glossary_path = glossary_beside(config_path)
        self.session = Session(
            config,
            factories,
            self.fanout,
            config_path=config_path,
            speed=speed,
            glossary_path=glossary_path,
            rescue_dirs=rescue_dirs,
            keep_measures=False,  # (a meeting may go on all day)
        )
        if self.session.glossary_notice:
            notice += " " + self.session.glossary_notice
        self.web: WebSubtitles | None = None
        self.web_problem = ""
        self.overlay = SubtitleOverlay(config.display)
        self._levels: dict[str, float] = {}  # each input's newest level (dBFS)
        self._fit_overlay(config)
        self.overlay.place()
        self.tray = Tray(app_icon(), self)
        self.settings: SettingsPane | None = None
        self.history: HistoryDialog | None = None
        self.about: AboutDialog | None = None
        self.models: ModelsDialog | None = None
        self.glossary_dialog: GlossaryDialog | None = None
        self.transcript_path: Path | None = None
        self.errors: deque[str] = deque(maxlen=ERRORS_KEPT)  # the newest problems said
        # What the app is doing, in one line: on the overlay and in the tray until it changes.
        self.state = AppState()
        self._ended = False  # shut_down() ran
        self.hotkeys = hotkeys or GlobalHotkeys()
        self.hotkey_problems: dict[str, str] = {}
        if (display := replace_old_defaults(config.display)) is not None:
            self.set_display(**{k: getattr(display, k) for k in OLD_DEFAULTS})
            self._save()
        self._wire()
        # A window of the app in use (Settings, Models, a question) is never under the
        # overlay, which stays on top of everything: the overlay moves aside meanwhile.
        self._in_use: QWidget | None = None
        gui = QGuiApplication.instance()
        if isinstance(gui, QGuiApplication):
            gui.focusWindowChanged.connect(self._focus_changed)
            # A monitor unplugged, a screen made smaller: an open window of the app left where
            # no screen is comes onto one (the overlay looks after itself).
            gui.screenRemoved.connect(self._screens_changed)
            gui.screenAdded.connect(self._watch_screen)
            for scr in gui.screens():
                self._watch_screen(scr)
        for name, reason in self.hotkey_problems.items():
            if reason and self.hotkeys.available:  # (Wayland's reason is in the tab alone)
                seq = getattr(self.config.display, name)
                notice += f" Hotkey {seq}: {reason} (Settings → Hotkeys)."
        notice = notice.strip()
        if notice:
            self.show_problem(notice)
        self.start_web()
        self._show_state()

    @property
    def config(self) -> AppConfig:
        return self.session.config

    @config.setter
    def config(self, cfg: AppConfig) -> None:
        self.session.config = cfg

    @property
    def glossary(self) -> Glossary:
        return self.session.glossary

    @property
    def pipeline(self) -> Pipeline | None:
        return self.session.pipeline

    def _wire(self) -> None:
        o, t = self.overlay, self.tray
        o.request_settings.connect(self.open_settings)
        o.request_toggle_run.connect(self.toggle_run)
        o.request_click_through.connect(self.set_click_through)
        o.request_quit.connect(self.quit)
        o.geometry_saved.connect(self.remember_geometry)
        t.toggle_run.connect(self.toggle_run)
        t.show_settings.connect(self.open_settings)
        t.show_transcript.connect(self.open_transcript)
        t.export_transcript.connect(self.export_dialog)
        t.show_history.connect(self.open_history)
        t.show_models.connect(self.open_models)
        t.show_glossary.connect(self.open_glossary)
        t.show_about.connect(self.open_about)
        t.click_through.connect(self.set_click_through)
        t.bring_here.connect(self.bring_overlay_here)
        t.quit.connect(self.quit)
        self._bind_hotkeys()

    def _bind_hotkeys(self) -> None:
        """Global hotkeys (they work while another app has focus); a combination the OS
        refuses is shown next to its key in Settings → Hotkeys."""
        self.hotkeys.unregister_all()
        d = self.config.display
        self.hotkey_problems = {  # per setting: "" when it works, else why not
            "hotkey_click_through": self.hotkeys.register(
                d.hotkey_click_through, lambda: self.toggle("click-through")
            ),
            "hotkey_pause": self.hotkeys.register(d.hotkey_pause, lambda: self.toggle("pause")),
        }
        if self.settings is not None:
            self.settings.show_hotkeys(
                self.hotkey_problems, self.hotkeys.note, self.hotkeys.available
            )

    def _watch_screen(self, scr: QScreen) -> None:
        scr.geometryChanged.connect(self._screens_changed)
        scr.availableGeometryChanged.connect(self._screens_changed)

    def _screens_changed(self, *_: object) -> None:
        QTimer.singleShot(0, self, self._windows_on_screen)

    def _windows_on_screen(self) -> None:
        windows = (self.settings, self.history, self.models, self.glossary_dialog, self.about)
        for w in windows:
            if w is not None and shiboken6.isValid(w) and w.isVisible():
                back_on_screen(w)

    def _focus_changed(self, window: QWindow | None) -> None:
        QTimer.singleShot(0, self, self.keep_clear)  # once Qt has settled the active window

    def keep_clear(self) -> None:
        """Move the overlay aside from the app's window in use (or back to its place when
        none is: another app is active, or the overlay itself)."""
        if not shiboken6.isValid(self.overlay):
            return  # (the app is gone: a test's, or quitting)
        active = QApplication.activeWindow()
        if active is self.overlay:
            return  # (clicked to be dragged: it stays where it is)
        if active is not None and not active.isVisible():
            active = None  # (closing)
        if active is not None and active.windowType() in (
            Qt.WindowType.Popup,
            Qt.WindowType.ToolTip,
        ):
            return
        if self._in_use is not active:
            if self._in_use is not None:
                self._in_use.removeEventFilter(self)
            self._in_use = active
            if active is not None:
                active.installEventFilter(self)  # it moves or grows: the overlay follows
        self.overlay.avoid(active.frameGeometry() if active is not None else None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._in_use and event.type() in (QEvent.Type.Move, QEvent.Type.Resize):
            self.overlay.avoid(self._in_use.frameGeometry())
        elif watched is self._in_use and event.type() == QEvent.Type.Hide:
            self.keep_clear()
        return False

    def toggle(self, what: str) -> None:
        """A hotkey, or `subtitler --toggle` from a shortcut of the desktop's own."""
        if what == "click-through":
            self.set_click_through(not self.overlay.click_through)
        elif what == "pause":
            self.toggle_run()

    # -- pipeline --------------------------------------------------------------------------
    def start(self) -> None:
        if self.pipeline is not None:
            self.pipeline.stop()
        self.transcript_path = new_transcript(self.data_dir / "transcripts")
        self.overlay.clear()
        if self.web is not None:
            self.web.clear()
        self.session.start(self.transcript_path)
        self.overlay.show()

    def toggle_run(self) -> None:
        p = self.pipeline
        if p is None or p.state in ("stopped", "finished"):
            self.start()
        elif p.state == "running":
            p.pause()
        elif p.state == "paused":
            p.resume()

    # A declared slot: the pipeline's events arrive from its threads as queued calls, and a
    # method connected without @Slot is added to the class's QMetaObject as a dynamic slot
    # at connect time, which PySide can fail to find when the call is delivered ("Slot
    # 'SubtitlerApp::' not found", seen once in a full test run; PySide6's docs ask for
    # @Slot on every connected method, pymmcore-plus/pymmcore-widgets#516 for cross-thread
    # ones).
    @Slot(object)
    def on_event(self, ev: Event) -> None:
        if isinstance(ev, SubtitleEvent):
            self._drop_samples()  # the meeting's own lines take over from the preview's
            self.overlay.on_subtitle(ev)
            return
        if isinstance(ev, LevelEvent):
            # Two inputs each say their level: the meter shows the louder of them (either
            # side speaking lights it), the delays are the pipeline's.
            self._levels[ev.side] = ev.level_dbfs
            ev = dataclasses.replace(ev, level_dbfs=max(self._levels.values()))
            if self.settings is not None and self.settings.isVisible():
                self.settings.set_level(ev.level_dbfs)
            self.overlay.set_status(ev)
        elif isinstance(ev, StatusEvent):
            if ev.state != "running":  # no live level or delays until it runs again
                self.overlay.set_status(None)
        elif isinstance(ev, ErrorEvent):
            self.errors.append(ev.message)
            if ev.fatal or (ev.lasting and ev.where == "audio"):
                # A stop or a lost input is the app's state now (until it is over), not a
                # passing line: said once as a notification.
                self.tray.notify("subtitler", ev.message)
            else:
                self.show_problem(ev.message)
        elif isinstance(ev, TranslatorEvent):
            if not ev.on and self.overlay.alert == ev.why:
                self.overlay.set_alert("")  # the state says it now, for as long as it lasts
        elif isinstance(ev, MetricsEvent):
            m = ev.metrics
            log.info("segment %d: A/D %s, abandoned %d", m.segment_id, m.ad, m.abandoned)
            return
        if self.state.feed(ev):
            self._show_state()

    def _show_state(self) -> None:
        """The app's state on the overlay and in the tray (its items follow it)."""
        shown = self.state.shown()
        self.overlay.set_state(shown)
        self.tray.set_state(shown)

    def bring_forward(self) -> None:
        """Another start of the app: show this one (overlay and settings) instead."""
        self.overlay.show()
        self.overlay.raise_()
        self.open_settings()
        if self.settings is not None:
            self.settings.activateWindow()

    def show_problem(self, text: str, sticky: bool = False) -> None:
        """Above the subtitles (running or not) and as a system notification."""
        self.overlay.set_alert(text, sticky=sticky)
        self.tray.notify("subtitler", text)

    # -- settings --------------------------------------------------------------------------
    def open_settings(self) -> None:
        if self.settings is None:
            self.settings = SettingsPane(self.config, self.choices)
            self.settings.applied.connect(self.apply_settings)
            self.settings.previewed.connect(self.preview_display)
            self.settings.finished.connect(self.end_preview)
            self.settings.glossary_requested.connect(self.open_glossary)
            self.settings.models_requested.connect(self.open_models)
        else:
            self.settings.load(self.config)
        self.settings.show_hotkeys(self.hotkey_problems, self.hotkeys.note, self.hotkeys.available)
        back_on_screen(self.settings)
        self.settings.show()
        self.settings.raise_()

    def preview_display(self, display: DisplayConfig) -> None:
        """The overlay as the open settings say, before Apply; with sample lines while there
        is nothing else to show."""
        self.overlay.apply_display(display)
        if not self.overlay.lines():
            for ev in sample_events():
                self.overlay.on_subtitle(ev)

    def end_preview(self) -> None:
        """Settings closed: the overlay as the settings in use say, the samples gone."""
        self.overlay.apply_display(self.config.display)
        self._drop_samples()

    def _drop_samples(self) -> None:
        shown = self.overlay.lines()
        if shown and all(line.segment_id <= PREVIEW_ID for line in shown):
            self.overlay.clear()

    def apply_settings(self, cfg: AppConfig) -> None:
        # A key made here, not in start_web, is saved with the rest (start_web's was saved,
        # then the settings without it saved over it: the address in use broke at the next
        # start).
        cfg = _with_access_key(cfg)
        old_web = self.config.web
        self.session.config = cfg
        self.overlay.apply_display(cfg.display)
        self._fit_overlay(cfg)
        if cfg.web != old_web:
            self.start_web()
        elif self.web is not None:
            self.web.set_display(cfg.display)
        self.tray.set_click_through(cfg.display.click_through)
        self._bind_hotkeys()
        if problem := self.session.apply(cfg):  # saved, and the pipeline reconfigured
            self.show_problem(problem)

    def _fit_overlay(self, cfg: AppConfig) -> None:
        """Rows for every side heard (the microphone and the meeting) and every target
        language each side's lines are shown in."""
        sides = sides_of(cfg)
        self.overlay.set_targets(max(len(s.mt.targets) for s in sides))
        self.overlay.set_sides(len(sides))

    def set_display(self, **changes: Any) -> None:
        """Display settings changed by the overlay or the tray (not the pane); the overlay
        keeps drawing with the same settings object as the app."""
        cfg = self.config
        self.config = dataclasses.replace(cfg, display=dataclasses.replace(cfg.display, **changes))
        # (While the settings preview a look, the overlay keeps it, with these changes too.)
        self.overlay.display = dataclasses.replace(self.overlay.display, **changes)
        if self.settings is not None:  # an open pane applied later keeps these changes
            self.settings.rebase(self.config)

    def set_click_through(self, on: bool) -> None:
        self.set_display(click_through=on)
        self.overlay.set_click_through(on)
        self.tray.set_click_through(on)
        if self.settings is not None:  # an open pane would apply its stale box again
            self.settings.show_setting("display.click_through", on)
        self._save()

    def bring_overlay_here(self) -> None:
        """The overlay at the bottom of the screen the pointer is on (where the tray menu was
        opened), shown, that place saved."""
        scr = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if scr is None:
            return
        self.overlay.bring_to(scr)
        self.overlay.show()
        self.overlay.raise_()

    def remember_geometry(self, screen: str, rect: QRect) -> None:
        geometry = {**self.config.display.geometry}
        geometry[screen] = [rect.x(), rect.y(), rect.width(), rect.height()]
        self.set_display(geometry=geometry, screen=screen)
        self._save()

    def _save(self) -> None:
        if problem := self.session.save():
            self.show_problem(problem)

    # -- transcript ------------------------------------------------------------------------
    def open_transcript(self) -> None:
        folder = self.data_dir / "transcripts"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self.show_problem(f"The transcript folder {folder} cannot be made: {e.strerror}")
            return
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def open_models(self, kind: str = "", value: str = "") -> None:
        """The Models window; from Settings, at the model of ``kind`` chosen there."""
        if self.models is None:
            try:
                catalog = model_catalog()
            except CatalogError as e:  # (a damaged install)
                self.show_problem(f"The model list cannot be read: {e}")
                return
            self.models = ModelsDialog(self.config, catalog)
            self.models.chosen.connect(self._use_models)
        else:
            self.models.cfg = self.config
            self.models.refresh()
        if kind:
            self.models.select_value(kind, value)
        back_on_screen(self.models)
        self.models.show()
        self.models.raise_()
        self.models.activateWindow()

    def _use_models(self, cfg: AppConfig) -> None:
        self.apply_settings(cfg)
        if self.settings is not None:  # an open pane shows the model now in use
            self.settings.load(cfg)

    def open_glossary(self, src_lang: str = "", tgt_lang: str = "") -> None:
        """The Glossary window, at the given language pair (from Settings) or at the one in
        use (from the tray)."""
        c = self.config
        src_lang = src_lang or c.asr.language or c.mt.src_lang
        tgt_lang = tgt_lang or c.mt.tgt_lang
        if self.glossary_dialog is None:
            self.glossary_dialog = GlossaryDialog(self.glossary, src_lang, tgt_lang)
            self.glossary_dialog.applied.connect(self.apply_glossary)
        else:
            self.glossary_dialog.show_pair(src_lang, tgt_lang)
        back_on_screen(self.glossary_dialog)
        self.glossary_dialog.show()
        self.glossary_dialog.raise_()
        self.glossary_dialog.activateWindow()

    def apply_glossary(self, new: Glossary) -> None:
        """In use at once (no model is loaded again); saved next to the settings."""
        problem = self.session.set_glossary(new)
        if self.settings is not None:  # its count of terms
            self.settings.refresh_glossary()
        if problem:
            if self.glossary_dialog is not None:
                self.glossary_dialog.show_problem(problem)
            self.show_problem(problem)

    def open_about(self) -> None:
        if self.about is None:
            self.about = AboutDialog()
        back_on_screen(self.about)
        self.about.show()
        self.about.raise_()
        self.about.activateWindow()

    def open_history(self) -> None:
        if self.history is None:
            self.history = HistoryDialog(self.data_dir / "transcripts")
            self.history.problem.connect(self.show_problem)
        else:
            self.history.reload()  # the running meeting has grown since
        back_on_screen(self.history)
        self.history.show()
        self.history.raise_()
        self.history.activateWindow()

    def export_dialog(self) -> None:
        records = self.pipeline.transcript_records if self.pipeline is not None else []
        if not records and self.transcript_path is not None and self.transcript_path.exists():
            try:
                records = read_transcript(self.transcript_path)
            except OSError as e:  # no regular file any more, or too large
                self.show_problem(f"Export failed: {e}")
                return
        if not records:
            QMessageBox.information(None, "subtitler", "No finished lines to export yet.")
            return
        path, _ = QFileDialog.getSaveFileName(
            None,
            "Export transcript",
            str(Path.home() / "transcript.srt"),
            "SubRip (*.srt);;WebVTT (*.vtt);;Text (*.txt)",
        )
        if path:
            try:
                export(records, Path(path), "both")
            except (OSError, ValueError) as e:
                self.show_problem(f"Export failed: {e}")

    # -- browser page ----------------------------------------------------------------------
    def start_web(self) -> None:
        """Serve the page as the settings say (or stop it); a failure is one line, no more."""
        before = self.web  # its lines go on to the next one
        self.stop_web()
        self.web_problem = ""
        web = self.config.web
        if web.share not in ("local", "network"):
            return
        if (keyed := _with_access_key(self.config)) is not self.config:
            # Kept in the settings, so a saved address keeps working.
            self.config = keyed
            web = keyed.web
            self._save()
        server = WebSubtitles(web, self.config.display, after=before)
        try:
            server.start()
        except WebServerError as e:
            self.web_problem = str(e)
            self.show_problem(self.web_problem)
            return
        self.web = server
        self.fanout.add(server.publish)

    def stop_web(self) -> None:
        if self.web is not None:
            self.fanout.remove(self.web.publish)
            self.web.stop()
            self.web = None

    def web_status(self) -> tuple[str, str]:
        """The page's address ("" when off) and why it is not running ("" when fine)."""
        return (self.web.url if self.web is not None else "", self.web_problem)

    def quit(self) -> None:
        self.shut_down()
        QApplication.quit()

    def shut_down(self) -> None:
        """Stop the pipeline (the lines said are written), save the settings: once, however
        the app ends (Quit, an end signal, or the system ending the event loop at a logout)."""
        if self._ended:
            return
        self._ended = True
        # Events the pipeline posts from here are not delivered any more (the overlay may be
        # gone by the time the event loop would get to them).
        with contextlib.suppress(RuntimeError, TypeError):
            self.bridge.delivered.disconnect(self.on_event)
        gui = QGuiApplication.instance()
        if isinstance(gui, QGuiApplication):
            with contextlib.suppress(RuntimeError, TypeError):
                gui.focusWindowChanged.disconnect(self._focus_changed)
            with contextlib.suppress(RuntimeError, TypeError):
                gui.screenRemoved.disconnect(self._screens_changed)
        self._hide_windows()
        self.stop_web()
        self.session.stop(2.0)
        self._save()
        self.hotkeys.close()

    def _hide_windows(self) -> None:
        """Every window and the tray icon out of sight: the stop after it waits on this thread
        (up to 2 s with a recogniser behind), and the overlay stood there frozen until then."""
        for w in QApplication.topLevelWidgets():
            if shiboken6.isValid(w) and w.isVisible():
                w.hide()
        self.tray.icon.hide()
        # (The window system hears of it when events are next processed: the stop does not
        # return to the loop. Input waits: a click can no longer reach a window.)
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)


def run_app(args: Any, data_dir: Path) -> int:
    """Create the QApplication, prepare the session (settings, hardware, models), handle the
    first run, start the pipeline."""
    existing = QApplication.instance()
    qapp = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    qapp.setApplicationName("subtitler")
    qapp.setQuitOnLastWindowClosed(False)  # the overlay hides; the tray keeps the app
    qapp.setWindowIcon(app_icon())
    # Cycles are freed on this thread only (a Qt object freed in a pipeline thread crashes).
    GuiThreadCollector(qapp).start()
    guard = SingleInstance(data_dir)
    notices: list[str] = []
    if not guard.acquire():
        if guard.wake_running():
            log.info("subtitler is already running: it was asked to show itself")
            # (What was asked of this start is not done: said, not dropped in silence.)
            if args.replay is not None:
                print(
                    f"error: subtitler is already running with this data folder: quit it to "
                    f"replay {args.replay.name}, or give this run its own --data-dir",
                    file=sys.stderr,
                )
                return 1
            if given_settings(args):
                print(
                    "subtitler is already running: it was brought forward without the options "
                    "given here (quit it and start again to use them)",
                    file=sys.stderr,
                )
            return 0
        if not guard.problem:
            QMessageBox.warning(
                None,
                "subtitler",
                f"subtitler is already running but does not answer. If it is stuck, end it "
                f"(or remove {data_dir / 'subtitler.lock'}) and start again.",
            )
            return 1
        # The folder cannot be written (not another instance): run without the lock, say why.
        notices.append(guard.problem)
        guard.listen()
    try:
        try:
            return _run(qapp, args, data_dir, guard, notices)
        finally:
            guard.release()
    except KeyboardInterrupt:
        # Ctrl-C before the app handles it itself (the settings and the hardware being read,
        # the app being built) or after (a second one while it ends): the app ends, as it
        # would running.
        log.info("SIGINT: quitting")
        return 0


def _run(
    qapp: QApplication, args: Any, data_dir: Path, guard: SingleInstance, notices: list[str]
) -> int:
    """The app from its settings to its end."""
    given = given_settings(args)  # the setting flags on the command line
    overrides = Overrides(given, replay=args.replay)
    start = prepare(args.config, overrides)
    notices += start.notices
    choices = Choices(
        # Listed again each time the settings open: a headset plugged in since shows up.
        input_devices=(lambda: []) if args.replay else (lambda: input_devices()[0]),
        translation_models=start.translation_models,
        asr_models=start.asr_models,
        hardware=start.hardware_line,
    )
    if not start.plan.ready and not (given.get("asr.model") and given.get("mt.model_path")):
        from subtitler.ui.firstrun import FirstRunDialog, guess_languages, system_language

        # No connection before the user asks for one: the dialog says what a download would
        # fetch, and the hub is reached only when Download is clicked (a failure is said
        # there, with the local files to choose instead). The languages come first: the
        # models offered are those for them.
        fresh = not start.path.exists()
        dlg = FirstRunDialog(
            start.config,
            start.plan,
            planner=lambda cfg: plan_first_run(cfg, start.hardware, start.catalog),
            languages=guess_languages(start.config, fresh, system_language()),
        )
        ended: list[bool] = []

        def end() -> None:  # Ctrl-C, a logout: the app ends here, nothing chosen yet
            ended.append(True)
            dlg.reject()

        with quit_on_end_signals(end):
            dlg.exec()
        if ended:
            return 0
        # Whichever way it closed (Skip too), what was chosen is kept: the app then says
        # what is missing and where to get it.
        if problem := start.choose(dlg.result_config):
            notices.append(problem)
    app = SubtitlerApp(
        start.config,
        real_factories(),
        config_path=start.save_path,
        data_dir=data_dir,
        choices=choices,
        speed=args.speed,
        notice=" ".join(notices),
        glossary_path=start.glossary_path,
        # Where a meeting's lines go when the data folder cannot take them at its end.
        rescue_dirs=(Path.home(), Path(tempfile.gettempdir())),
    )
    guard.activated.connect(app.bring_forward)
    guard.command.connect(app.toggle)
    try:
        app.start()
        with quit_on_end_signals(app.quit):  # a logout, `kill` or Ctrl-C quits as Quit does
            return int(qapp.exec())
    finally:
        app.shut_down()  # the loop can end without Quit: macOS's or Windows's logout
