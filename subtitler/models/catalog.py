"""The model catalog: recommended Whisper and GGUF models, read from ``catalog.toml``.

The catalog is data so that adding a model needs no code change; this module only parses and
validates it, failing with one line that names the entry and field at fault.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from subtitler import user_files
from subtitler.models.templates import FEWSHOT, NAMED

CATALOG_FILE = Path(__file__).with_name("catalog.toml")
LICENCES_FILE = Path(__file__).with_name("licences.toml")
MAX_BYTES = 1 * user_files.MB  # the packaged catalog is about 10 kB
# Local entries ("local = ...") are relative to the source checkout's root.
PROJECT_ROOT = Path(__file__).resolve().parents[2]

Kind = Literal["asr", "mt"]
KINDS: tuple[Kind, ...] = ("asr", "mt")
SPEEDS = ("fast", "medium", "slow", "gpu")
TEMPLATES = (*NAMED, "gguf", FEWSHOT)
MULTILINGUAL = "*"
# An id is a folder name under the models folder: plain on every OS, never "." or "..".
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# A revision: a commit (40 hex digits), a branch or a tag; it becomes part of the file's URL.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*\Z")
# Characters Windows refuses in file names (and ':' would name a drive or a stream).
_BAD_CHARS = set('\\:<>"|?*') | {chr(c) for c in range(32)} | {"\x7f"}
_RESERVED = {"con", "prn", "aux", "nul"} | {f"{d}{i}" for d in ("com", "lpt") for i in range(10)}


def size_text(mb: int) -> str:
    """A catalog size for people: "640 MB", "1.5 GB"."""
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb} MB"


class CatalogError(ValueError):
    """The catalog file is malformed; the message names the entry and field."""


class UnknownModelError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its argument; this message is for people
        return str(self.args[0]) if self.args else "unknown model"


@dataclass(frozen=True)
class Licence:
    """What a model's licence allows, in plain words (licences.toml)."""

    id: str  # the SPDX id, or the publisher's name for it
    name: str
    commercial: bool  # may it be used at work, for commercial purposes
    words: str  # what it allows, in plain words
    territory: str = ""  # where it does not apply ("": everywhere it does)
    url: str = ""

    @property
    def at_work(self) -> str:
        """Whether a company may use it, in a few words (a column of the Models window)."""
        if not self.commercial:
            return "no"  # (why: the licence in plain words, beside it)
        return f"yes, but not in {self.territory}" if self.territory else "yes"

    def describe(self) -> str:
        """One sentence for the user: the licence, what it allows, where it does not apply."""
        where = f"; it does not apply in {self.territory}" if self.territory else ""
        return f"{self.name}: {self.words}{where}"


@dataclass(frozen=True)
class ModelFile:
    """One file of a model as published in its repository."""

    path: str  # path inside the repository (and inside the local model directory)
    size: int | None = None  # bytes, when known; else the hub's reported size is checked
    sha256: str | None = None  # lower-case hex, when known; else the hub's ETag is checked
    optional: bool = False  # a 404 for this file is not an error (e.g. vocabulary.txt vs .json)


@dataclass(frozen=True)
class CatalogEntry:
    """A recommended model."""

    id: str
    kind: Kind
    name: str
    files: tuple[ModelFile, ...]
    size_mb: int  # approximate download size, for display
    memory_mb: int  # approximate resident memory when loaded
    licence: str
    languages: tuple[str, ...]  # ISO 639-1 codes; ("*",) = broadly multilingual
    speed: str  # one of SPEEDS
    repo: str | None = None  # Hugging Face repository id
    revision: str = "main"
    local: str | None = None  # path relative to the project root instead of a repository
    template: str | None = None  # mt: prompt template name
    size_name: str | None = None  # asr: faster-whisper size name
    shape: str | None = None  # mt: its key in the planner's cost table (models/hardware.py)
    terms: Licence | None = None  # what ``licence`` allows (licences.toml)

    @property
    def commercial(self) -> bool:
        """Its licence allows use at work (False when its terms are not known)."""
        return self.terms is not None and self.terms.commercial

    @property
    def licence_text(self) -> str:
        """The licence in plain words, for the user before a download."""
        if self.terms is None:
            return f"licence {self.licence} (its terms are not in the catalog)"
        return self.terms.describe()

    @property
    def at_work(self) -> str:
        """Whether a company may use it, in a few words."""
        return self.terms.at_work if self.terms is not None else "not known"

    @property
    def downloadable(self) -> bool:
        return self.repo is not None

    @property
    def local_path(self) -> Path | None:
        return PROJECT_ROOT / self.local if self.local else None

    @property
    def main_file(self) -> ModelFile:
        """The file the app loads for an mt entry (a GGUF translator is one file)."""
        return self.files[0]

    def supports(self, lang: str) -> bool:
        base = lang.strip().lower().replace("_", "-").split("-")[0]
        return MULTILINGUAL in self.languages or base in self.languages

    def languages_text(self) -> str:
        return "multilingual" if MULTILINGUAL in self.languages else ",".join(self.languages)


@dataclass(frozen=True)
class TierDefaults:
    """Which models to offer on one hardware tier."""

    asr: str
    mt: tuple[str, ...]  # in order of preference


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]
    defaults: Mapping[str, TierDefaults]

    def __iter__(self) -> Iterator[CatalogEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, model_id: str) -> CatalogEntry:
        for e in self.entries:
            if e.id == model_id:
                return e
        raise UnknownModelError(
            f"unknown model {model_id!r} (see `subtitler models list` for the catalog)"
        )

    def of_kind(self, kind: Kind) -> tuple[CatalogEntry, ...]:
        return tuple(e for e in self.entries if e.kind == kind)

    def by_size_name(self, size_name: str) -> CatalogEntry | None:
        """The Whisper entry for a faster-whisper size name such as "small" (or its catalog id)."""
        for e in self.entries:
            if e.kind == "asr" and size_name in (e.size_name, e.id):
                return e
        return None


def id_problem(model_id: str) -> str | None:
    """Why ``model_id`` cannot be a model folder's name (None: it can)."""
    if not _ID.match(model_id) or model_id.endswith(".") or _reserved(model_id):
        return (
            f"id {model_id!r} is not a plain name (letters, digits, '.', '_', '-', '+'; "
            "starting with a letter or digit)"
        )
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` (a file inside a model folder, '/'-separated) could land outside that
    folder or be read differently on some OS (None: it is safe to join under the folder)."""
    if not path or path.startswith("/"):
        return f"bad file path {path!r}"
    for part in path.split("/"):
        if (
            part in ("", ".", "..")
            or _BAD_CHARS & set(part)
            or part != part.strip()
            or part.endswith(".")
            or _reserved(part)
        ):
            return f"bad file path {path!r}"
    return None


def _reserved(name: str) -> bool:
    return name.split(".")[0].strip().lower() in _RESERVED


def _req(d: Mapping[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in d:
        raise CatalogError(f"{where}: missing field {key!r}")
    v = d[key]
    if (typ is int and isinstance(v, bool)) or not isinstance(v, typ):
        raise CatalogError(f"{where}: field {key!r} must be {typ.__name__}, got {v!r}")
    return v


def _opt(d: Mapping[str, Any], key: str, typ: type, where: str) -> Any:
    return _req(d, key, typ, where) if key in d else None


def _parse_file(raw: Any, where: str) -> ModelFile:
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: each file must be a table with a 'path'")
    path = _req(raw, "path", str, where)
    if (why := path_problem(path)) is not None:
        raise CatalogError(f"{where}: {why}")
    sha = _opt(raw, "sha256", str, where)
    if sha is not None:
        sha = sha.lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise CatalogError(f"{where}: sha256 of {path!r} is not 64 hex digits")
    size = _opt(raw, "size", int, where)
    if size is not None and size < 0:
        raise CatalogError(f"{where}: negative size for {path!r}")
    return ModelFile(path, size, sha, bool(_opt(raw, "optional", bool, where)))


def _parse_entry(raw: Any, i: int) -> CatalogEntry:
    where = f"model #{i + 1}"
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: not a table")
    mid = _req(raw, "id", str, where)
    where = f"model {mid!r}"
    if (why := id_problem(mid)) is not None:
        raise CatalogError(f"{where}: {why}")
    kind = _req(raw, "kind", str, where)
    if kind not in KINDS:
        raise CatalogError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
    repo = _opt(raw, "repo", str, where)
    local = _opt(raw, "local", str, where)
    if (repo is None) == (local is None):
        raise CatalogError(f"{where}: needs exactly one of 'repo' or 'local'")
    if repo is not None and not _REPO.match(repo):
        raise CatalogError(f"{where}: repo must be 'owner/name', got {repo!r}")
    revision = _opt(raw, "revision", str, where)
    if revision is not None and (not _REVISION.match(revision) or ".." in revision):
        raise CatalogError(f"{where}: revision must be a commit, branch or tag, got {revision!r}")
    files = tuple(_parse_file(f, where) for f in _req(raw, "files", list, where))
    if not files or all(f.optional for f in files):
        raise CatalogError(f"{where}: needs at least one required file")
    if len({f.path for f in files}) != len(files):
        raise CatalogError(f"{where}: duplicate file paths")
    speed = _req(raw, "speed", str, where)
    if speed not in SPEEDS:
        raise CatalogError(f"{where}: speed must be one of {SPEEDS}, got {speed!r}")
    langs = _req(raw, "languages", list, where)
    if not langs or not all(isinstance(x, str) and x for x in langs):
        raise CatalogError(f"{where}: languages must be a non-empty list of codes")
    template = _opt(raw, "template", str, where)
    size_name = _opt(raw, "size_name", str, where)
    shape = _opt(raw, "shape", str, where)
    if shape is not None and kind != "mt":
        raise CatalogError(f"{where}: only translators have a shape")
    if kind == "mt":
        if template not in TEMPLATES:
            raise CatalogError(f"{where}: template must be one of {TEMPLATES}, got {template!r}")
        if len(files) != 1 or not files[0].path.endswith(".gguf"):
            raise CatalogError(f"{where}: a translator is exactly one .gguf file")
    elif template is not None:
        raise CatalogError(f"{where}: only translators have a template")
    known = {
        "id", "kind", "name", "repo", "revision", "local", "files", "size_mb", "memory_mb",
        "licence", "languages", "speed", "template", "size_name", "shape",
    }  # fmt: skip
    extra = sorted(set(raw) - known)
    if extra:
        raise CatalogError(f"{where}: unknown field(s) {', '.join(extra)}")
    return CatalogEntry(
        id=mid,
        kind=kind,
        name=_req(raw, "name", str, where),
        files=files,
        size_mb=_req(raw, "size_mb", int, where),
        memory_mb=_req(raw, "memory_mb", int, where),
        licence=_req(raw, "licence", str, where),
        languages=tuple(x.lower() for x in langs),
        speed=speed,
        repo=repo,
        revision="main" if revision is None else revision,
        local=local,
        template=template,
        size_name=size_name,
        shape=shape,
    )


def parse_licences(raw: Any, where: str = "licence") -> dict[str, Licence]:
    """The [licence."ID"] tables of a catalog or of licences.toml."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: not a table of licences")
    out = {}
    for lid, table in raw.items():
        at = f'{where}."{lid}"'
        if not isinstance(table, dict):
            raise CatalogError(f"{at}: not a table")
        extra = sorted(set(table) - {"name", "commercial", "words", "territory", "url"})
        if extra:
            raise CatalogError(f"{at}: unknown field(s) {', '.join(extra)}")
        out[lid] = Licence(
            id=lid,
            name=_req(table, "name", str, at),
            commercial=_req(table, "commercial", bool, at),
            words=_req(table, "words", str, at),
            territory=_opt(table, "territory", str, at) or "",
            url=_opt(table, "url", str, at) or "",
        )
    return out


def _known_licences() -> dict[str, Licence]:
    try:
        data = tomllib.loads(user_files.read_text(LICENCES_FILE, MAX_BYTES))
    except (user_files.FileProblem, tomllib.TOMLDecodeError) as e:
        raise CatalogError(f"model licences {LICENCES_FILE.name}: {e}") from None
    return parse_licences(data.get("licence"), LICENCES_FILE.name)


def parse_catalog(data: Mapping[str, Any], *, include_missing_local: bool = False) -> Catalog:
    """Validate parsed TOML. Local entries whose file is absent are dropped unless asked.

    Every model's licence must be known (licences.toml, or the catalog's own [licence."ID"]
    tables), and the defaults offered at first run only models whose licence allows use at
    work."""
    if data.get("schema") != 1:
        raise CatalogError(f"unsupported catalog schema {data.get('schema')!r} (expected 1)")
    raw_models = data.get("model")
    if not isinstance(raw_models, list) or not raw_models:
        raise CatalogError("the catalog lists no [[model]] entries")
    licences = {**_known_licences(), **parse_licences(data.get("licence"))}
    entries = []
    for i, raw in enumerate(raw_models):
        e = _parse_entry(raw, i)
        if e.licence not in licences:
            raise CatalogError(
                f"model {e.id!r}: licence {e.licence!r} is not described "
                f'(add a [licence."{e.licence}"] table: what it allows, in plain words)'
            )
        entries.append(dataclasses.replace(e, terms=licences[e.licence]))
    ids = [e.id for e in entries]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise CatalogError(f"duplicate model id(s): {', '.join(dup)}")
    by_id = {e.id: e for e in entries}
    defaults: dict[str, TierDefaults] = {}
    for tier, raw in (data.get("defaults") or {}).items():
        where = f"defaults.{tier}"
        if not isinstance(raw, dict):
            raise CatalogError(f"{where}: not a table")
        asr = _req(raw, "asr", str, where)
        mt = tuple(_req(raw, "mt", list, where))
        for mid, kind in [(asr, "asr"), *((m, "mt") for m in mt)]:
            if mid not in by_id or by_id[mid].kind != kind:
                raise CatalogError(f"{where}: {mid!r} is not an {kind} model of the catalog")
            if not by_id[mid].commercial:
                raise CatalogError(
                    f"{where}: {mid!r} cannot be a default: its licence "
                    f"({by_id[mid].licence}) does not allow use at work"
                )
        defaults[tier] = TierDefaults(asr, mt)
    if not include_missing_local:
        entries = [e for e in entries if e.local_path is None or e.local_path.is_file()]
    return Catalog(tuple(entries), defaults)


def load_catalog(path: Path | None = None, *, include_missing_local: bool = False) -> Catalog:
    """Read and validate the catalog (the packaged ``catalog.toml`` by default)."""
    p = path or CATALOG_FILE
    try:
        data = tomllib.loads(user_files.read_text(p, MAX_BYTES))
    except user_files.FileMissing:
        raise CatalogError(f"model catalog not found: {p}") from None
    except user_files.FileProblem as e:
        raise CatalogError(f"model catalog: {e}") from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        why = user_files.one_line(e)
        raise CatalogError(f"model catalog {p.name} is not valid TOML: {why}") from None
    return parse_catalog(data, include_missing_local=include_missing_local)
