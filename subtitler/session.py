"""One place that assembles the app, without Qt: the settings (loaded, overridden for one run,
saved), the hardware and model plan, the audio inputs, and the pipeline (built, reconfigured,
started, paused and stopped). The Qt app, the headless replay, the self-test and the tests drive
it; the UI only wires widgets to it.

The UI reaches the engines (pipeline, models, translation, recognition, audio) only through
this module: what it uses of them is imported here as itself (``X as X``) or wrapped at the
end, and tests/unit/test_layering.py keeps the UI from importing them on its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from subtitler import settings_store
from subtitler.asr.engine import Recognizer
from subtitler.config import AppConfig, MtConfig, with_settings
from subtitler.models import download as _model_files
from subtitler.models.catalog import Catalog as Catalog
from subtitler.models.catalog import CatalogEntry as CatalogEntry
from subtitler.models.catalog import CatalogError as CatalogError
from subtitler.models.catalog import size_text as size_text
from subtitler.models.firstrun import FirstRunPlan as FirstRunPlan
from subtitler.models.firstrun import plan_first_run as plan_first_run
from subtitler.models.firstrun import with_models as with_models
from subtitler.models.validate import InvalidModelError as InvalidModelError
from subtitler.models.validate import check_translator as check_translator
from subtitler.models.validate import check_whisper_dir as check_whisper_dir
from subtitler.mt import glossary as glossary_store
from subtitler.mt.completions import address_problem as address_problem
from subtitler.mt.engine import Engine
from subtitler.mt.glossary import Glossary as Glossary
from subtitler.mt.glossary import GlossaryError as GlossaryError
from subtitler.mt.glossary import ImportedTerms as ImportedTerms
from subtitler.mt.glossary import merge_import as merge_import
from subtitler.mt.glossary import read_import as read_import
from subtitler.mt.languages import LANGUAGES as LANGUAGES
from subtitler.pipeline.events import ErrorEvent as ErrorEvent
from subtitler.pipeline.events import Event as Event
from subtitler.pipeline.events import LevelEvent as LevelEvent
from subtitler.pipeline.events import MetricsEvent as MetricsEvent
from subtitler.pipeline.events import StatusEvent as StatusEvent
from subtitler.pipeline.events import SubtitleEvent as SubtitleEvent
from subtitler.pipeline.events import TranslatorEvent as TranslatorEvent
from subtitler.pipeline.fanout import Fanout as Fanout
from subtitler.pipeline.history import Meeting as Meeting
from subtitler.pipeline.history import format_duration as format_duration
from subtitler.pipeline.history import list_meetings as list_meetings
from subtitler.pipeline.history import new_transcript as new_transcript
from subtitler.pipeline.history import search as search
from subtitler.pipeline.history import targets_of as targets_of
from subtitler.pipeline.pipeline import Factories as Factories
from subtitler.pipeline.pipeline import Pipeline as Pipeline
from subtitler.pipeline.sealing import WRITTEN_AGAIN as WRITTEN_AGAIN
from subtitler.pipeline.sides import sides_of as sides_of
from subtitler.pipeline.transcript import SegmentRecord as SegmentRecord
from subtitler.pipeline.transcript import Which as Which
from subtitler.pipeline.transcript import export as export
from subtitler.pipeline.transcript import read_transcript as read_transcript
from subtitler.user_files import first_line as first_line

if TYPE_CHECKING:
    from subtitler.models.hardware import HardwareInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Overrides:
    """Choices for one run from the command line (never saved)."""

    settings: Mapping[str, Any] = field(default_factory=dict)  # {"section.field": value}
    replay: Path | None = None  # play this file in real time instead of listening

    def apply(self, cfg: AppConfig) -> tuple[AppConfig, bool]:
        """(``cfg`` with the overrides, whether any changed it: then nothing is saved)."""
        values = dict(self.settings)
        if self.replay:
            values.update(
                {
                    "audio.source": "file",
                    "audio.file_path": str(self.replay),
                    "audio.realtime": True,
                }
            )
        return with_settings(cfg, values), bool(values)


def glossary_beside(settings_path: Path) -> Path:
    """Where the glossary of the settings file ``settings_path`` is kept: next to it."""
    return settings_path.with_name(glossary_store.FILENAME)


def input_devices() -> tuple[list[tuple[str, str]], str]:
    """(label, name) of every input, loopback sources marked; a notice when audio is broken."""
    from subtitler.audio.loopback import HOSTAPIS

    loopback_apis = frozenset(HOSTAPIS.values())
    try:
        import sounddevice as sd

        from subtitler.audio.capture import list_input_devices
        from subtitler.audio.loopback import with_loopback

        devs = list_input_devices(with_loopback(sd))
    except (OSError, ImportError) as e:  # no PortAudio, or no sound system at all
        return [], f"Audio is unavailable ({e}); replaying files still works."
    except Exception as e:
        return [], f"Could not list audio devices: {e}"
    out = []
    for d in devs:
        # soundcard's loopback inputs are named for what they record; PortAudio's show their API
        # (Windows lists one microphone under MME, DirectSound and WASAPI).
        label = d.name if d.hostapi in loopback_apis else f"{d.name} ({d.hostapi})"
        out.append((label + ("  · meeting audio" if d.loopback else ""), d.name))
    return out, "" if out else "No input device found: connect a microphone or use --replay."


@dataclass
class Startup:
    """What a start of the app begins with: the settings for this run and what is known about
    the machine and the models."""

    config: AppConfig
    path: Path  # the settings file
    overridden: bool  # the command line changed the settings: they are not saved
    notices: list[str]
    hardware: HardwareInfo
    catalog: Catalog
    plan: FirstRunPlan
    translation_models: list[tuple[str, str]] = field(default_factory=list)
    asr_models: list[tuple[str, str]] = field(default_factory=list)
    hardware_line: str = ""

    @property
    def glossary_path(self) -> Path:
        """The glossary, next to the settings file (used and saved also when the command line
        overrides settings: it does not touch the glossary)."""
        return glossary_beside(self.path)

    @property
    def save_path(self) -> Path | None:
        """Where the running app saves its settings (None: this run's are not saved)."""
        return None if self.overridden else self.path

    def replan(self, *, network: bool) -> FirstRunPlan:
        """The first-run plan again, now that the network was checked."""
        from subtitler.models.firstrun import plan_first_run

        self.plan = plan_first_run(self.config, self.hardware, self.catalog, network=network)
        return self.plan

    def choose(self, cfg: AppConfig) -> str:
        """The models chosen at the first run: used now, and saved unless the command line
        overrode the settings; a one-line problem ("" when fine)."""
        self.config = cfg
        if self.overridden:
            return ""
        try:
            settings_store.save(cfg, self.path)
        except (OSError, settings_store.ConfigError) as e:
            return f"Your choices could not be saved ({e}); they apply now only."
        return ""


def prepare(
    config_path: Path | None, overrides: Overrides = Overrides(), *, defaults: bool = False
) -> Startup:
    """Load the settings (a damaged file is set aside with a notice), fill in what the hardware
    decides, apply this run's overrides, and plan the models.

    ``defaults``: begin with the default settings instead of the file's, which is neither read
    nor written (the self-test: the same run on every machine)."""
    from subtitler.models import hardware
    from subtitler.models.catalog import load_catalog
    from subtitler.models.firstrun import (
        hardware_line,
        model_choices,
        plan_first_run,
        with_runtime,
    )

    path = config_path or settings_store.default_path()
    loaded = settings_store.LoadResult(AppConfig()) if defaults else settings_store.load(path)
    notices = [loaded.notice] if loaded.notice else []
    hw = hardware.detect()
    cfg = with_runtime(loaded.config, hardware.plan_runtime(hw))
    cfg, overridden = overrides.apply(cfg)
    overridden = overridden or defaults  # (nothing is saved over the user's settings)
    audio_notice = "" if overrides.replay else input_devices()[1]
    if audio_notice:
        notices.append(audio_notice)
    catalog = load_catalog()
    return Startup(
        config=cfg,
        path=path,
        overridden=overridden,
        notices=notices,
        hardware=hw,
        catalog=catalog,
        plan=plan_first_run(cfg, hw, catalog),
        translation_models=model_choices(catalog, "mt"),
        asr_models=model_choices(catalog, "asr"),
        hardware_line=hardware_line(hw),
    )


class Session:
    """The settings in use and the pipeline that runs them.

    ``config_path`` None: settings are not saved (a run with command-line overrides, a replay).
    ``glossary_path``: the glossary file (None: an empty glossary, not saved); one that cannot
    be read is set aside, with ``glossary_notice`` for the user; one with more terms for a
    pair than are used is not saved over (``glossary_kept``).
    """

    def __init__(
        self,
        config: AppConfig,
        factories: Factories,
        on_event: Callable[[Event], None],
        *,
        config_path: Path | None = None,
        speed: float = 1.0,
        glossary_path: Path | None = None,
        echo_gate: bool = True,  # (research: False keeps the microphone's echo lines)
        rescue_dirs: tuple[Path, ...] = (),  # (Pipeline's)
        keep_measures: bool = True,  # (Pipeline's: the app's False, a replay's summary True)
    ) -> None:
        self.config = config
        self.keep_measures = keep_measures
        self.echo_gate = echo_gate
        self.rescue_dirs = rescue_dirs
        self.factories = factories
        self.on_event = on_event
        self.config_path = config_path
        self.speed = speed
        self.pipeline: Pipeline | None = None
        self.glossary_path = glossary_path
        loaded = glossary_store.load(glossary_path) if glossary_path is not None else None
        self.glossary = loaded.glossary if loaded is not None else Glossary()
        self.glossary_notice = loaded.notice if loaded is not None else ""
        # Why the glossary file must not be replaced ("": it may be saved).
        self.glossary_kept = loaded.kept if loaded is not None else ""

    # -- settings ---------------------------------------------------------------------------
    def save(self) -> str:
        """Write the settings (when this session saves them); a one-line problem or ""."""
        if self.config_path is None:
            return ""
        try:
            settings_store.save(self.config, self.config_path)
        except OSError as e:
            # (its own words name the file written beside, which the user never sees)
            why = e.strerror or str(e)
            return f"Settings not saved to {self.config_path} ({why}); they apply until you quit."
        except settings_store.ConfigError as e:
            return f"Settings not saved: {e}"
        return ""

    def apply(self, cfg: AppConfig) -> str:
        """New settings: saved, and handed to a running pipeline (which reloads a model only
        when a model setting changed); a one-line problem or ""."""
        self.config = cfg
        problem = self.save()
        if self.pipeline is not None and self.pipeline.state in ("running", "paused", "loading"):
            self.pipeline.apply_config(cfg)
        return problem

    def set_glossary(self, glossary: Glossary) -> str:
        """A new glossary: in use by a running pipeline from its next update (no model is
        loaded again), and saved; a one-line problem or ""."""
        self.glossary = glossary
        if self.pipeline is not None:
            self.pipeline.set_glossary(glossary)
        if self.glossary_path is None:
            return ""
        if self.glossary_kept:  # (it holds terms not in use, which this one has not)
            return f"Glossary not saved ({self.glossary_kept}); it is in use until you quit."
        try:
            glossary_store.save(glossary, self.glossary_path)
        except OSError as e:
            return f"Glossary not saved ({e.strerror or e}); it is in use until you quit."
        return ""

    # -- pipeline ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.pipeline is not None and self.pipeline.state not in ("stopped", "finished")

    def start(self, transcript_path: Path | None = None) -> Pipeline:
        """A new pipeline on the current settings (the previous one stopped first)."""
        if self.pipeline is not None:
            self.pipeline.stop()
        self.pipeline = Pipeline(
            self.config,
            self.on_event,
            self.factories,
            speed=self.speed,
            transcript_path=transcript_path,
            echo_gate=self.echo_gate,
            rescue_dirs=self.rescue_dirs,
            keep_measures=self.keep_measures,
        )
        self.pipeline.set_glossary(self.glossary)
        self.pipeline.start()
        return self.pipeline

    def stop(self, timeout: float = 2.0) -> None:
        if self.pipeline is not None:
            self.pipeline.stop(timeout)

    # -- the pipeline's parts on their own (the self-test) ----------------------------------
    def recognizer(self) -> Recognizer:
        """A speech recogniser for the current settings, built as the pipeline builds it."""
        return self.factories.recognizer(self.config.asr)

    def translator(self) -> Engine:
        """A translation engine for the current settings, loaded as the pipeline loads it."""
        return self.factories.model(self.config.mt)


# The model files on disk: status, download, verify, remove (the Models window's).
model_files = _model_files


def model_catalog() -> Catalog:
    """The models the app offers (CatalogError: the install's catalog is damaged)."""
    from subtitler.models import catalog

    return catalog.load_catalog()


def model_problems(new: AppConfig, old: AppConfig) -> list[str]:
    """Why the models chosen in ``new`` and not in use in ``old`` cannot be used (Settings'
    Apply): one line each; a damaged catalog is the load's to say."""
    from subtitler.models.catalog import load_catalog
    from subtitler.models.resolve import chosen_model_problems

    try:
        catalog = load_catalog()
    except CatalogError:
        return []
    return chosen_model_problems(new, old, catalog)


def real_factories() -> Factories:
    """The app's real parts: the sound card or a file, faster-whisper and llama.cpp (each
    native engine in a worker process), or a translation server."""
    from subtitler.pipeline import factories

    return factories.real_factories()


def probe_model(path: Path, template: str = "auto") -> str:
    """The real test of a model file: loaded once in its engine, in a worker process, and
    given a fixed sentence or clip of speech; raises with one line naming the file. Returns
    the prompt template a translator is asked with ("" for a Whisper)."""
    from subtitler.asr.isolated import probe_whisper
    from subtitler.mt.isolated import probe_translator

    if path.is_dir():  # a Whisper folder (a translator is one GGUF file)
        probe_whisper(path)
        return ""
    return probe_translator(path, template)


def check_server(mt: MtConfig) -> tuple[str, str]:
    """What the translation server of ``mt`` can do, asked now: (plain words, terms); one
    that cannot be used raises with one line."""
    from subtitler.mt.remote import check_server as check

    return check(mt)
