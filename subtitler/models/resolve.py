"""Which model a setting names and where it stands: a catalog size name or id, a downloaded
file, the Hugging Face cache, or a local path (no network, no Qt)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from subtitler.models import download as dl
from subtitler.models.catalog import Catalog, CatalogEntry
from subtitler.models.validate import (
    InvalidModelError,
    check_translator,
    check_whisper_dir,
    read_gguf,
    user_path,
)

if TYPE_CHECKING:
    from subtitler.config import AppConfig

Role = Literal["asr", "mt"]
State = Literal["ready", "missing", "invalid"]


@dataclass(frozen=True)
class ModelState:
    """Where one configured model stands."""

    role: Role
    state: State
    path: Path | None  # what the backend would load, when known
    entry: CatalogEntry | None  # the catalog entry it refers to, if any
    reason: str  # one line for the user


def _looks_like_path(value: str) -> bool:
    return any(c in value for c in ("/", "\\")) or value.startswith((".", "~"))


def _maybe_there(p: Path) -> bool:
    """Something may be at ``p``: it exists, or the system cannot even look it up (a name too
    long): the checks then say why it cannot be used."""
    try:
        return p.exists()
    except (OSError, ValueError):
        return True


def asr_state(value: str, catalog: Catalog, root: Path | None = None) -> ModelState:
    """AsrConfig.model: a catalog size name ("small"), a catalog id, or a model folder."""
    if not value:
        return ModelState("asr", "missing", None, None, "no speech model chosen")
    p = user_path(value)
    if _maybe_there(p) or _looks_like_path(value):
        try:
            check_whisper_dir(p)
        except InvalidModelError as e:
            return ModelState("asr", "invalid", p, None, str(e))
        return ModelState("asr", "ready", p, None, f"Whisper model folder {p.name}")
    entry = catalog.by_size_name(value)
    if entry is None:
        return ModelState("asr", "invalid", None, None, f"unknown Whisper model {value!r}")
    if dl.is_installed(entry, root):
        return ModelState("asr", "ready", dl.model_path(entry, root), entry, entry.name)
    cached = dl.hf_cache_path(entry)
    if cached is not None:
        try:
            check_whisper_dir(cached)
            return ModelState("asr", "ready", cached, entry, f"{entry.name} (Hugging Face cache)")
        except InvalidModelError:
            pass
    return ModelState("asr", "missing", None, entry, f"{entry.name} is not downloaded")


def mt_state(value: str, template: str, catalog: Catalog, root: Path | None = None) -> ModelState:
    """MtConfig.model_path: a .gguf path or a catalog id."""
    if not value:
        return ModelState("mt", "missing", None, None, "no translation model chosen")
    entry = None
    if not _looks_like_path(value):
        try:
            entry = catalog.get(value)
        except KeyError:
            entry = None
    if entry is not None and entry.kind == "mt":
        if not dl.is_installed(entry, root):
            return ModelState("mt", "missing", None, entry, f"{entry.name} is not downloaded")
        p = dl.model_path(entry, root)
        if template == "auto" and entry.template:
            template = entry.template
    else:
        p = user_path(value)
    try:
        info = check_translator(p, template)
    except InvalidModelError as e:
        return ModelState("mt", "invalid", p, entry, str(e))
    return ModelState("mt", "ready", p, entry, f"{p.name} (template {info.template})")


def chosen_model_problems(
    new: AppConfig, old: AppConfig, catalog: Catalog, root: Path | None = None
) -> list[str]:
    """Why a model chosen in ``new`` that ``old`` did not have cannot be used, one line each:
    nothing usable at a path, an unknown name, a damaged file. A catalog model not downloaded
    yet is none (Models downloads it), and a model already in use is not asked about again
    (the meeting says its own notice for one that went bad)."""
    out = []
    if new.asr.model != old.asr.model:
        st = asr_state(new.asr.model, catalog, root)
        if st.state == "invalid":
            out.append(said_of("speech model", st.reason))
    mt, was = new.mt, old.mt
    if not mt.uses_server and (mt.model_path, mt.template) != (was.model_path, was.template):
        st = mt_state(mt.model_path, mt.template, catalog, root)
        if st.state == "invalid":
            out.append(said_of("translation model", st.reason))
    draft = mt.draft_model_path.strip()
    if not mt.uses_server and draft and draft != was.draft_model_path.strip():
        try:
            read_gguf(draft)
        except InvalidModelError as e:
            out.append(said_of("draft model", str(e)))
    return out


def said_of(what: str, reason: str) -> str:
    """``reason`` said of ``what`` ("translation model not found: x" of the draft model is
    "draft model not found: x")."""
    for role in ("translation model", "speech model"):
        if reason.startswith(role):
            return what + reason[len(role) :]
    return f"{what}: {reason}"
