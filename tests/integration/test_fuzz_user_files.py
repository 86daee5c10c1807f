"""Fuzz: structure-aware corruptions of the files a user owns (config.toml, glossary.csv, a
meeting's transcript), read by the app's own loaders. Whatever the file, no exception leaves
the loader, nothing blocks, every notice is one line, a file that could not be used is set
aside so the next start meets a clean one, and the other meetings are still listed.

The cases are fixed (each field given values chosen to break it: a number no float holds,
inf, NaN, the wrong type, deep nesting, a huge string; each file's framing broken: line
ends, byte-order mark, quotes, NUL, invalid UTF-8, a cut) plus a few drawn from a seeded
generator (bytes flipped, inserted, cut), so a run is repeatable and takes a few seconds.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from subtitler import settings_store
from subtitler.config import AppConfig, with_settings
from subtitler.mt import glossary
from subtitler.mt.glossary import Glossary
from subtitler.pipeline.history import list_meetings
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter, to_srt
from tests.helpers.bounded import run_bounded

SEED = 28
RANDOM_CASES = 12
HUGE_INT = "9" * 400
DEEP = "[" * 50_000 + "]" * 50_000
LONG = "x" * 200_000
BUDGET_S = 60.0  # the whole module on a slow, busy 2-core machine (a few seconds here)


def random_edits(data: bytes, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """Bytes flipped, inserted, deleted or the file cut: what a disk fault or a crash does."""
    for i in range(n):
        b = bytearray(data)
        kind = rng.choice(("flip", "insert", "delete", "cut"))
        at = rng.randrange(len(b))
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == "insert":
            b[at:at] = rng.randbytes(rng.randint(1, 16))
        elif kind == "delete":
            del b[at : at + rng.randint(1, 16)]
        else:
            del b[at:]
        yield f"random{i}-{kind}", bytes(b)


def framing_cases(text: str) -> Iterator[tuple[str, bytes]]:
    """The same content with its framing broken the ways editors and disks break it."""
    data = text.encode("utf-8")
    yield "bom", b"\xef\xbb\xbf" + data
    yield "cr-only", data.replace(b"\n", b"\r")
    yield "crlf", data.replace(b"\n", b"\r\n")
    yield "nul", data.replace(b"\n", b"\n\0", 1)
    yield "latin1", text.encode("utf-8").replace(b"e", b"\xe9", 3)
    yield "utf16", text.encode("utf-16")
    yield "cut-half", data[: len(data) // 2]
    yield "empty", b""
    yield "only-newlines", b"\n" * 1000


# -- settings ------------------------------------------------------------------------------
def settings_text() -> str:
    cfg = with_settings(
        AppConfig(),
        {"mt.beta": 0.35, "mt.tgt_lang": "ja", "display.geometry": {"s": [1, 2, 300, 40]}},
    )
    return settings_store.to_toml(cfg)


VALUES = (
    ("huge", HUGE_INT),
    ("huge-negative", "-" + HUGE_INT),
    ("inf", "inf"),
    ("nan", "nan"),
    ("date", "1979-05-27T07:32:00Z"),
    ("table", "{ a = 1 }"),
    ("array", "[1, 'two']"),
    ("deep", DEEP),
    ("long", f"'{LONG}'"),
    ("bool", "true"),
)


def settings_cases() -> Iterator[tuple[str, bytes]]:
    text = settings_text()
    assignments = list(re.finditer(r"^(\w+) = (.*)$", text, re.M))
    for m in assignments[::3]:  # every third key, each kind of value
        for name, value in VALUES:
            yield f"{m.group(1)}-{name}", (text[: m.start(2)] + value + text[m.end(2) :]).encode()
    yield "section-array-of-tables", text.replace("[mt]", "[[mt]]").encode()
    yield "section-twice", (text + "\n[mt]\nbeta = 0.1\n").encode()
    yield "key-twice", text.replace("[mt]\n", "[mt]\nbeta = 0.1\nbeta = 0.2\n").encode()
    yield "unknown-section", (text + "\n[zzz]\nx = 1\n").encode()
    yield "section-not-table", ("mt = 5\n" + text.replace("[mt]", "[mtx]")).encode()
    yield "huge-file", b"# " + b"x" * (settings_store.MAX_BYTES + 1)
    yield from framing_cases(text)
    yield from random_edits(text.encode(), random.Random(SEED), RANDOM_CASES)


@pytest.mark.parametrize(("name", "data"), list(settings_cases()))
def test_fuzzed_settings_start_the_app(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(data)
    res = run_bounded(lambda: settings_store.load(path))
    assert "\n" not in res.notice, name
    assert settings_store.validate(res.config) == [], name  # what the app starts with
    if res.backup is not None:
        assert res.backup.read_bytes() == data and res.backup.name in res.notice, name
    again = settings_store.load(path)
    assert again.backup is None, f"{name}: set aside again on the next start"


# -- glossary ------------------------------------------------------------------------------
GLOSSARY = (
    "src_lang,tgt_lang,term,translation\n"
    "en,de,Subiaco,Subiaco\n"
    'en,de,"printing, early",Buchdruck\n'
    "en,ja,Pannartz,パンナルツ\n"
    "fr,en,Rome,\n"
)


def glossary_cases() -> Iterator[tuple[str, bytes]]:
    lines = GLOSSARY.splitlines(keepends=True)
    for n, field in enumerate(("src_lang", "tgt_lang", "term", "translation")):
        for name, value in (
            ("empty", ""),
            ("long", LONG),
            ("quote", '"open'),
            ("quotes", '"a""b'),
            ("language", "xx-nope"),
            ("comma", "a,b,c"),
            ("nul", "a\0b"),
            ("newline", '"a\nb"'),
        ):
            cells = lines[1].rstrip("\n").split(",")
            cells[n] = value
            row = ",".join(cells) + "\n"
            yield f"{field}-{name}", "".join([lines[0], row, *lines[2:]]).encode()
    yield "no-header", "".join(lines[1:]).encode()
    yield "header-only", lines[0].encode()
    yield "five-fields", (GLOSSARY + "en,de,a,b,c\n").encode()
    yield "two-fields", (GLOSSARY + "en,de\n").encode()
    yield "semicolons", GLOSSARY.replace(",", ";").encode()
    yield "huge-file", (GLOSSARY + "en,de,x,y\n" * 500_000).encode()
    yield from framing_cases(GLOSSARY)
    yield from random_edits(GLOSSARY.encode(), random.Random(SEED + 1), RANDOM_CASES)


@pytest.mark.parametrize(("name", "data"), list(glossary_cases()))
def test_fuzzed_glossaries_load_or_are_set_aside(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / "glossary.csv"
    path.write_bytes(data)
    res = run_bounded(lambda: glossary.load(path))
    assert "\n" not in res.notice, name
    if res.notice:
        # Set aside whole, or (lines that cannot be terms) set aside with the others kept.
        assert res.backup is not None, name
        assert res.glossary == Glossary() or " left out (line " in res.notice, name
        again = glossary.load(path)
        assert again.notice == "", f"{name}: met again on the next start"
        assert again.glossary == res.glossary, name
    # The glossary in use is one the app can save and read back as it is.
    glossary.save(res.glossary, tmp_path / "again.csv")
    assert glossary.load(tmp_path / "again.csv").glossary == res.glossary, name
    import_path = tmp_path / "import.csv"
    import_path.write_bytes(data)
    try:  # the Glossary window's import: rows, or one line of why not
        run_bounded(lambda: glossary.read_import(import_path))
    except glossary.GlossaryError as e:
        assert str(e) and "\n" not in str(e), name


# -- transcripts ---------------------------------------------------------------------------
def record(i: int) -> SegmentRecord:
    return SegmentRecord(
        i, 2.0 * i, 2.0 * i + 1.5, f"line {i}", f"Zeile {i}", "en", "de", 1.7e9 + i, (("ja", "行"),)
    )


def transcript_bytes(tmp_path: Path) -> bytes:
    w = TranscriptWriter(tmp_path / "model.jsonl")
    for i in range(4):
        w.append(record(i))
    w.close()
    return w.path.read_bytes()


FIELD_VALUES = (
    ("huge", HUGE_INT),
    ("float-max", "1e308"),
    ("inf", "Infinity"),
    ("nan", "NaN"),
    ("negative", "-1e20"),
    ("string", '"x"'),
    ("null", "null"),
    ("list", "[1, 2]"),
    ("object", '{"a": 1}'),
    ("deep", DEEP),
    ("long", f'"{LONG}"'),
)


def transcript_cases(data: bytes) -> Iterator[tuple[str, bytes]]:
    lines = data.decode().splitlines(keepends=True)
    keys = re.findall(r'"(\w+)": ', lines[1])
    for key in keys:
        for name, value in FIELD_VALUES:
            value_re = rf'("{key}": )("[^"]*"|\[\[.*?\]\]|[^,}}]+)'
            edited = re.sub(value_re, rf"\g<1>{value}", lines[1])
            yield f"{key}-{name}", "".join([lines[0], edited, *lines[2:]]).encode()
    yield "not-an-object", ("[1, 2, 3]\n" + "".join(lines)).encode()
    yield "field-missing", "".join([lines[0], lines[1].replace('"source": ', '"sauce": ')]).encode()
    yield "torn-last", data[:-20]
    yield "huge-line", data + b'{"source": "' + LONG.encode() * 5 + b'"}\n'
    yield from framing_cases(data.decode())
    yield from random_edits(data, random.Random(SEED + 2), RANDOM_CASES)


def test_fuzzed_transcripts_cost_their_lines_never_the_meeting_list(tmp_path: Path) -> None:
    good = transcript_bytes(tmp_path)
    cases = list(transcript_cases(good))
    assert len(cases) == len({n for n, _ in cases})
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "20261116-093000.jsonl").write_bytes(good)  # a meeting nothing happens to
    for name, data in cases:
        (folder / f"{name}.jsonl").write_bytes(data)
    meetings, problems = run_bounded(lambda: list_meetings(folder))
    assert problems == []  # every file is a regular file: at worst its lines are lost
    by_name = {m.path.stem: m for m in meetings}
    assert len(by_name["20261116-093000"].records) == 4
    for m in meetings:
        # What is listed can be shown and exported (dates, lengths and cue times all finite).
        assert m.title and 0 <= m.duration_s <= 1e7, m.path.name
        assert to_srt(list(m.records), "both").count(" --> ") <= len(m.records)
        assert all(isinstance(r.source, str) and r.source for r in m.records), m.path.name
    # A damaged field costs its line, the others are still there.
    for name in (n for n, _ in cases if n.split("-")[0] in ("start", "end", "wall_time")):
        assert name not in by_name or len(by_name[name].records) >= 3, name


def test_the_whole_fuzz_is_quick(tmp_path: Path) -> None:
    """Bounded time: every case of the three files at once, within the budget."""
    t0 = time.monotonic()
    loads: list[Callable[[], object]] = []
    for i, (_, data) in enumerate(settings_cases()):
        p = tmp_path / f"s{i}" / "config.toml"
        p.parent.mkdir()
        p.write_bytes(data)
        loads.append(lambda p=p: settings_store.load(p))  # type: ignore[misc]
    for i, (_, data) in enumerate(glossary_cases()):
        p = tmp_path / f"g{i}" / "glossary.csv"
        p.parent.mkdir()
        p.write_bytes(data)
        loads.append(lambda p=p: glossary.load(p))  # type: ignore[misc]
    for load in loads:
        load()
    assert time.monotonic() - t0 < BUDGET_S
