"""The third-party notices: every distribution the app runs on, with its version, licence and
licence text, from the installed distributions' own metadata.

``python -m subtitler.notices OUT`` writes them (packaging/build.py does, before the bundle,
which ships the file; the About window shows it). The distributions are the app's runtime
requirements (pyproject.toml in a checkout, else the installed ``subtitler``'s metadata) and
theirs in turn, as this platform's environment markers select them, extras left out.

A licence text is what a distribution's metadata lists (``License-File``, PEP 639's
``.dist-info/licenses/``) or, failing that, a licence-named file it installs (onnxruntime's
``LICENSE`` and ``ThirdPartyNotices.txt``). A few wheels carry none; their texts, copied from
the project's own repository or the licence's publisher, are in ``assets/licences`` with their
source on the first line (:data:`SUPPLEMENTS`). Parts built into a wheel that have no
distribution of their own are listed in :data:`BUILT_IN`.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import logging
import platform as platform_mod
import re
import sys
import sysconfig
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from subtitler.resources import asset_path

log = logging.getLogger(__name__)

FILE_NAME = "THIRD-PARTY-NOTICES.txt"
PROJECT = "subtitler"
_PACKAGE = Path(__file__).resolve().parent
_LICENCE_FILE = re.compile(r"(^|/)(licen[cs]e|copying|notice|thirdpartynotices)[^/]*$", re.I)
_NOT_TEXT = (".py", ".pyc", ".so", ".dll", ".dylib", ".pyi")

# What the installers leave out of what the app's requirements install (packaging/README.md,
# "FFmpeg"; packaging/subtitler.spec excludes it): PyAV and the FFmpeg in its wheel.
BUNDLE_LEAVES_OUT = ("av",)
# What the installers carry besides the requirements: PyInstaller's bootloader (its licence's
# exception allows bundles under any licence) and the Python interpreter itself.
BUNDLE_ADDS = ("pyinstaller",)

# Wheels without a licence text of their own: the texts that apply (assets/licences/*.txt).
SUPPLEMENTS: dict[str, tuple[str, ...]] = {
    "pyside6-essentials": ("LGPL-3.0.txt", "GPL-3.0.txt"),
    "shiboken6": ("LGPL-3.0.txt", "GPL-3.0.txt"),
    "ctranslate2": ("ctranslate2.txt",),
    "tokenizers": ("tokenizers.txt",),
    "flatbuffers": ("flatbuffers.txt",),
    # macOS only: of PyObjC's wheels the app needs, only pyobjc-framework-Cocoa carries it.
    "pyobjc-core": ("pyobjc.txt",),
    "pyobjc-framework-coremedia": ("pyobjc.txt",),
    "pyobjc-framework-screencapturekit": ("pyobjc.txt",),
}
# Parts built into a wheel that are not a distribution of their own: (part, wheel, licence,
# texts in assets/licences).
BUILT_IN: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("Qt 6 libraries", "PySide6-Essentials", "LGPL-3.0-only", ("LGPL-3.0.txt", "GPL-3.0.txt")),
    ("llama.cpp and ggml", "llama-cpp-python", "MIT", ("llama.cpp.txt",)),
    (
        "libgomp (GCC's OpenMP runtime)",
        "ctranslate2",
        "GPL-3.0-or-later WITH GCC-exception-3.1",
        ("GPL-3.0.txt",),
    ),
)


@dataclass(frozen=True)
class Notice:
    """One distribution: what the notices file says of it."""

    name: str
    version: str
    licence: str
    texts: tuple[tuple[str, str], ...]  # (where the text comes from, the text)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_requirements(root: Path | None = None) -> list[str]:
    """The app's runtime requirements: pyproject.toml beside the package (a checkout), else
    the installed distribution's metadata."""
    pyproject = (root or _PACKAGE.parent) / "pyproject.toml"
    if pyproject.is_file():
        with pyproject.open("rb") as f:
            return list(tomllib.load(f)["project"]["dependencies"])
    return [r for r in (md.distribution(PROJECT).requires or []) if "extra ==" not in r]


def runtime_distributions(requirements: Iterable[str]) -> list[md.Distribution]:
    """The installed distributions of ``requirements`` and of theirs, once each, by name;
    markers evaluated for this platform, extras left out. A requirement that is not
    installed is an error: the notices would be incomplete."""
    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    env: dict[str, str] = {k: str(v) for k, v in default_environment().items()}
    env["extra"] = ""
    todo = [Requirement(r) for r in requirements]
    found: dict[str, md.Distribution] = {}
    missing = []
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        key = normalize(req.name)
        if key in found:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            missing.append(req.name)
            continue
        found[key] = dist
        todo.extend(Requirement(r) for r in dist.requires or [])
    if missing:
        raise LookupError(f"not installed, so not in the notices: {', '.join(sorted(missing))}")
    return sorted(found.values(), key=lambda d: normalize(d.metadata["Name"]))


def _field(dist: md.Distribution, key: str) -> str:
    return str((dist.metadata.get_all(key) or [""])[0] or "")


def licence_of(dist: md.Distribution) -> str:
    """The licence as the metadata says it: the SPDX expression, else a short License field,
    else the licence classifiers."""
    meta = dist.metadata
    expression = _field(dist, "License-Expression").strip()
    if expression:
        return expression
    field = _field(dist, "License").strip()
    if field and "\n" not in field and len(field) <= 200:
        return field
    classifiers = [
        c.split("::")[-1].strip()
        for c in meta.get_all("Classifier") or []
        if c.startswith("License ::")
    ]
    return " / ".join(classifiers) or "not stated in its metadata"


def licence_texts(dist: md.Distribution) -> list[tuple[str, str]]:
    """The distribution's licence texts: the files its metadata names, else licence-named
    files it installs, else the supplements for it."""
    files = [f for f in dist.files or [] if _LICENCE_FILE.search(str(f))]
    files = [f for f in files if not str(f).endswith(_NOT_TEXT)]
    out: list[tuple[str, str]] = []
    for f in sorted(files, key=str):
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            log.warning("%s: cannot read %s: %s", dist.metadata["Name"], f, e)
            continue
        if text.strip():
            out.append((str(f), text))
    if not out:
        for name in SUPPLEMENTS.get(normalize(dist.metadata["Name"]), ()):
            out.append((f"assets/licences/{name}", _supplement(name)))
    if not out:
        field = _field(dist, "License")
        if "\n" in field:  # the whole text in the License field (older metadata)
            out.append(("its metadata's License field", field))
    return out


def _supplement(name: str) -> str:
    return asset_path(f"licences/{name}").read_text(encoding="utf-8")


def collect(requirements: Iterable[str] | None = None, *, bundle: bool = False) -> list[Notice]:
    """The notices of the app's runtime distributions; ``bundle``: as the installers carry
    them (without what they leave out, with the bootloader and the interpreter)."""
    reqs = list(project_requirements() if requirements is None else requirements)
    dists = runtime_distributions(reqs)
    if bundle:
        dists = [d for d in dists if normalize(d.metadata["Name"]) not in BUNDLE_LEAVES_OUT]
        dists += [md.distribution(name) for name in BUNDLE_ADDS]  # itself, not what it needs
    out = [
        Notice(str(d.metadata["Name"]), str(d.version), licence_of(d), tuple(licence_texts(d)))
        for d in dists
    ]
    if bundle:
        out.append(python_notice())
    return out


def python_notice() -> Notice:
    """The interpreter the installers carry: its LICENSE.txt beside the standard library."""
    path = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    texts = ((str(path.name), path.read_text(encoding="utf-8")),) if path.is_file() else ()
    return Notice("Python", platform_mod.python_version(), "PSF-2.0", texts)


def without_text(notices: Sequence[Notice]) -> list[str]:
    """The distributions whose licence text could not be found (the notices must have one
    for each)."""
    return [n.name for n in notices if not n.texts]


def render(notices: Sequence[Notice], platform: str = sys.platform) -> str:
    """The notices file: a summary table, then each distribution's licence texts."""
    rule = "=" * 78
    lines = [
        "Third-party software in subtitler",
        "",
        f"subtitler itself is under the MIT licence (LICENSE). It runs on the software below "
        f"(as installed for {platform}), each under its own licence, whose text follows.",
        "",
    ]
    width = max((len(n.name) for n in notices), default=4)
    for n in notices:
        lines.append(f"  {n.name.ljust(width)}  {n.version:<12}  {n.licence}")
    lines += ["", "Built into these and not a distribution of their own:", ""]
    for part, wheel, licence, _texts in BUILT_IN:
        lines.append(f"  {part} (in {wheel}): {licence}")
    for n in notices:
        lines += ["", rule, f"{n.name} {n.version}", f"Licence: {n.licence}", rule]
        for where, text in n.texts:
            lines += ["", f"--- {where}", "", text.rstrip()]
    for part, wheel, licence, texts in BUILT_IN:
        lines += ["", rule, f"{part} (in {wheel})", f"Licence: {licence}", rule]
        for name in texts:
            lines += ["", f"--- assets/licences/{name}", "", _supplement(name).rstrip()]
    return "\n".join(lines) + "\n"


def project_licence() -> str:
    """subtitler's own licence text: beside the package (the bundle), in the checkout, or in
    the installed distribution's metadata."""
    for path in (_PACKAGE / "LICENSE", _PACKAGE.parent / "LICENSE"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    try:
        texts = licence_texts(md.distribution(PROJECT))
    except md.PackageNotFoundError:
        texts = []
    return texts[0][1] if texts else "MIT licence (the LICENSE file is missing here)"


def shipped() -> Path:
    """Where an installed app keeps the generated notices (the bundle's spec puts them
    beside the package)."""
    return _PACKAGE / FILE_NAME


def for_about() -> str:
    """The notices the About window shows: the shipped file, else made now from this
    environment (a source checkout); one line when neither can be had."""
    path = shipped()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    try:
        return render(collect())
    except Exception as e:  # a partial environment: say so rather than show nothing
        log.warning("third-party notices: %s", e)
        return f"The third-party notices could not be made here: {e}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler.notices", description=__doc__)
    ap.add_argument("out", type=Path, help="the notices file to write")
    ap.add_argument(
        "--bundle", action="store_true", help="as the installers carry the distributions"
    )
    a = ap.parse_args(argv)
    notices = collect(bundle=a.bundle)
    if lacking := without_text(notices):
        print(f"no licence text found for: {', '.join(lacking)}", file=sys.stderr)
        return 1
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(render(notices), encoding="utf-8")
    print(f"{a.out}: {len(notices)} distributions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
