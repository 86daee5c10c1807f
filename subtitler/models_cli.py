"""``subtitler models list|download|verify|remove|hardware`` (also ``python -m subtitler.models``).

An entry point like ``subtitler.app``, above the engines: ``verify`` loads a model in its
engine's worker process (the models package it drives sits below the engines).

User errors print one line ``error: ...`` on stderr and exit 2; a failed verification exits 1
(``verify`` says each target that fails, one that does not exist too, in a FAIL line and goes
on to the next).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from subtitler import paths
from subtitler.config import OneLineErrorParser
from subtitler.models import download as dl
from subtitler.models.catalog import (
    Catalog,
    CatalogEntry,
    CatalogError,
    load_catalog,
    size_text,
)
from subtitler.models.validate import InvalidModelError, check_model_path
from subtitler.user_files import first_line

log = logging.getLogger("subtitler.models")


# How `models list` says a model's state (its --json keeps the codes).
STATUS_WORDS = {
    "installed": "downloaded",
    "missing": "not downloaded",
    "partial": "unfinished (download again)",
    "local": "included",
    "local-missing": "missing from this install",
}


class UsageError(ValueError):
    pass


def _folder_options(ap: argparse.ArgumentParser, default: Any) -> None:
    """--models-dir and --catalog, taken before the command and after it (``default``
    SUPPRESS after it: a command's parser would otherwise reset what was given before)."""
    ap.add_argument(
        "--models-dir",
        type=Path,
        default=default,
        help=f"where models are kept (default: ${paths.MODELS_DIR_ENV} or the user cache)",
    )
    ap.add_argument(
        "--catalog",
        type=Path,
        default=default,
        help="another catalog TOML (default: the packaged one)",
    )


def parser() -> argparse.ArgumentParser:
    ap = OneLineErrorParser(
        prog="subtitler models",
        description="Recommended speech and translation models: list, download, verify, remove.",
        epilog="examples:\n"
        "  subtitler models list                 every model, its size and whether it is here\n"
        "  subtitler models download whisper-base qwen3-0.6b-q8_0\n"
        "  subtitler models verify               check the downloaded models\n"
        "  subtitler models verify my-model.gguf check a file of your own\n"
        "  subtitler models hardware             what this computer can run\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _folder_options(ap, None)
    after = OneLineErrorParser(add_help=False)
    _folder_options(after, argparse.SUPPRESS)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineErrorParser)
    ls = sub.add_parser("list", help="the catalog and what is on disk", parents=[after])
    ls.add_argument("--kind", choices=["asr", "mt"], default=None)
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    d = sub.add_parser("download", help="download (or resume) catalog models", parents=[after])
    d.add_argument("ids", nargs="+", metavar="ID")
    d.add_argument("--endpoint", default=None, help="hub URL (default: $HF_ENDPOINT or the hub)")
    d.add_argument(
        "--trust-endpoint",
        action="store_true",
        help="send your stored hub token to --endpoint too (https only; by default it goes "
        "only to huggingface.co)",
    )
    d.add_argument("--no-progress", action="store_true")
    v = sub.add_parser(
        "verify", help="re-check downloaded models or any model file/folder", parents=[after]
    )
    v.add_argument("targets", nargs="*", metavar="ID|PATH", help="default: all downloaded")
    v.add_argument("--template", default="auto", help="prompt template for a .gguf path")
    v.add_argument(
        "--no-load",
        action="store_true",
        help="check files (hashes, headers) without loading them in their engine for the "
        "real test: a fixed sentence translated, a fixed clip of speech recognised",
    )
    r = sub.add_parser("remove", help="delete downloaded models", parents=[after])
    r.add_argument("ids", nargs="+", metavar="ID")
    sub.add_parser(
        "hardware", help="what this machine offers and how models would run", parents=[after]
    )
    return ap


def _entries(cat: Catalog, ids: list[str]) -> list[CatalogEntry]:
    try:
        return [cat.get(i) for i in ids]
    except KeyError as e:
        raise UsageError(str(e)) from None


def _check_folder(root: Path | None) -> None:
    """A models folder that is a file holds no model: say so, not "not downloaded"."""
    at = root if root is not None else dl.models_dir()
    if at.exists() and not at.is_dir():
        raise UsageError(f"the models folder {at} is a file, not a folder")


def cmd_list(cat: Catalog, root: Path | None, a: argparse.Namespace) -> int:
    _check_folder(root)
    rows: list[dict[str, Any]] = []
    for e in cat:
        if a.kind and e.kind != a.kind:
            continue
        rows.append(
            {
                "id": e.id,
                "kind": e.kind,
                "name": e.name,
                "size_mb": e.size_mb,
                "memory_mb": e.memory_mb,
                "speed": e.speed,
                "licence": e.licence,
                "commercial": e.commercial,
                "at_work": e.at_work,
                "licence_text": e.licence_text,
                "languages": list(e.languages),
                "template": e.template,
                "status": dl.status(e, root),
                "path": str(dl.model_path(e, root)),
            }
        )
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    # The languages last, whole: a long list runs on without pushing the other columns.
    head = ("ID", "KIND", "SIZE", "MEMORY", "SPEED", "LICENCE", "AT WORK", "STATUS", "LANGUAGES")
    table = [head] + [
        (
            r["id"],
            r["kind"],
            size_text(r["size_mb"]),
            size_text(r["memory_mb"]),
            r["speed"],
            r["licence"],
            r["at_work"],
            STATUS_WORDS.get(r["status"], r["status"]),
            "multilingual" if "*" in r["languages"] else ",".join(r["languages"]),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    # What each licence allows, in plain words, before anything is downloaded.
    said = {r["licence"]: r["licence_text"] for r in rows}
    if said:
        print("\nLicences, what each allows:")
    width = max(map(len, said), default=0)
    for lid, text in said.items():
        print(f"  {lid.ljust(width)}  {text}")
    return 0


def cmd_download(cat: Catalog, root: Path | None, a: argparse.Namespace) -> int:
    entries = _entries(cat, a.ids)
    for e in entries:
        if not e.downloadable:
            raise UsageError(f"{e.id} is a local model and cannot be downloaded")
    cancel = threading.Event()
    for e in entries:
        # The bar appears with the first byte, so a failure before any transfer prints one line.
        bars: list[Any] = []

        def on_progress(p: dl.DownloadProgress, bars: list[Any] = bars, mid: str = e.id) -> None:
            if a.no_progress:
                return
            if not bars:
                from tqdm import tqdm

                bars.append(
                    tqdm(desc=mid, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr)
                )
            bar = bars[0]
            if p.total is not None and bar.total != p.total:
                bar.total = p.total
            bar.set_postfix_str(f"{p.phase} {p.file}", refresh=False)
            bar.update(p.done - bar.n)

        try:
            path = dl.download(
                e,
                root=root,
                endpoint=a.endpoint,
                progress=on_progress,
                cancel=cancel,
                trust_endpoint=a.trust_endpoint,
            )
        except KeyboardInterrupt:
            cancel.set()
            raise dl.DownloadCancelled(
                f"{e.id}: download interrupted; run the same command to resume"
            ) from None
        finally:
            for bar in bars:
                bar.close()
        print(f"{e.id}: {path}")
    return 0


def cmd_verify(cat: Catalog, root: Path | None, a: argparse.Namespace) -> int:
    if not a.targets or {e.id for e in cat} & set(a.targets):
        _check_folder(root)  # (a file or folder of the user's own is checked wherever it is)
    targets: list[str] = a.targets or [e.id for e in cat if dl.status(e, root) != "missing"]
    if not targets:
        print("no models downloaded")
        return 0
    bad = 0
    for t in targets:
        try:
            entry: CatalogEntry | None = cat.get(t)
        except KeyError:
            entry = None
        if entry is not None:
            problems = dl.verify(entry, root)
            if not problems and not a.no_load:
                # The hashes say the bytes are those downloaded; the real test says they work.
                try:
                    _load_once(dl.model_path(entry, root), entry.template or "auto")
                except LoadFailed as e:
                    problems = [str(e)]
            if problems:
                bad += 1
                again = (  # (download alone keeps a model it counts as downloaded)
                    f"; to download it again: subtitler models remove {t}, then download {t}"
                    if entry.repo is not None
                    else ""
                )
                print(
                    f"FAIL {t}: {problems[0]}"
                    + (f" (+{len(problems) - 1} more)" * (len(problems) > 1))
                    + again
                )
            else:
                print(f"ok   {t}: {dl.model_path(entry, root)}")
            continue
        p = Path(t).expanduser()
        if not p.exists():  # (a typo among several: the others are still checked)
            bad += 1
            print(f"FAIL {t}: not a catalog model id or an existing path")
            continue
        try:
            what = check_model_path(p, a.template)
            if not a.no_load:
                asked = _load_once(p, a.template)
                if asked and asked != a.template:
                    # Said as the load asks the model: "auto" shows a model whose chat
                    # template llama.cpp cannot use example translations, which its header
                    # does not tell (the load's warning says why). The header read again:
                    # 0.07 s for Gemma 3's 262,144 tokens, beside a load of seconds.
                    what = check_model_path(p, asked)
        except InvalidModelError as e:
            bad += 1
            print(f"FAIL {e}")
        except LoadFailed as e:
            bad += 1
            print(f"FAIL {e}")
        else:
            print(f"ok   {t}: {what}")
    return 1 if bad else 0


class LoadFailed(Exception):
    """The engine could not load a file that looks right (or died loading it)."""


def _load_once(path: Path, template: str) -> str:
    """Load the model in its engine, in a worker process, and give it its real test (a
    fixed sentence, a fixed clip of speech): a header that parses can still make llama.cpp or
    CTranslate2 abort (a duplicate token, an absurd layer count), and weights damaged where
    no check looks load and write nothing, or one token over and over. Returns the prompt
    template a translator is asked with ("" for a Whisper)."""
    # The command line is an entry point: it may start the engines' worker processes.
    from subtitler.session import probe_model

    try:
        return probe_model(path, template)
    except Exception as e:  # every engine failure is one line for this command
        raise LoadFailed(first_line(e)) from None


def cmd_remove(cat: Catalog, root: Path | None, a: argparse.Namespace) -> int:
    _check_folder(root)
    for e in _entries(cat, a.ids):
        freed = dl.remove(e, root)
        print(f"removed {e.id} ({freed / 1e6:,.0f} MB freed)")
    return 0


def cmd_hardware(cat: Catalog, root: Path | None, a: argparse.Namespace) -> int:
    from subtitler.config import AppConfig
    from subtitler.models import firstrun, hardware

    hw = hardware.detect()
    print(f"This computer: {firstrun.hardware_line(hw)}")
    if hw.available_memory is not None:
        print(f"Available memory: {hw.available_memory / hardware.GB:.1f} GB")
    for line in hardware.plan_runtime(hw).describe():
        print(line)
    cfg = AppConfig()
    asr, mt = firstrun.choose_defaults(cat, hw, cfg.mt.src_lang, cfg.mt.tgt_lang)
    print(f"Recommended: {asr.id} + {mt.id if mt else '(none)'} (tier {hardware.tier(hw)})")
    return 0


COMMANDS = {
    "list": cmd_list,
    "download": cmd_download,
    "verify": cmd_verify,
    "remove": cmd_remove,
    "hardware": cmd_hardware,
}


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    ap = parser()
    a = ap.parse_args(argv)
    if a.command is None:  # `subtitler models` alone: what it can do
        ap.print_help()
        return 0
    try:
        cat = load_catalog(a.catalog)
        return COMMANDS[a.command](cat, a.models_dir, a)
    except (UsageError, CatalogError, dl.DownloadError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a models folder that cannot be read or changed
        print(f"error: {e.strerror or e}: {e.filename or a.models_dir}", file=sys.stderr)
        return 2
