"""The glossary: terms (names, jargon) per language pair, each with an optional fixed
translation. Its terms bias recognition (Whisper's hotwords) and its translations are kept by
the translator (see subtitler.mt.terms). Stored as ``glossary.csv`` in the config folder,
next to config.toml; a file that cannot be read is set aside with a notice, as settings are.
In ``mt`` beside the languages it checks codes against (recognition gets plain strings).
"""

from __future__ import annotations

import codecs
import csv
import io
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from subtitler import paths, user_files
from subtitler.mt.languages import LANGUAGES, NATIVE_NAMES, UnknownLanguageError, normalize_code

log = logging.getLogger(__name__)
FILENAME = "glossary.csv"
HEADER = ("src_lang", "tgt_lang", "term", "translation")
# First cells that mark an imported file's first line as a header, not a term (in the
# languages whose spreadsheets write `;` between fields too: a German Excel's "Begriff").
_HEADER_WORDS = {
    *("term", "terms", "source", "word", "words", "src", "glossary", "name"),
    *("begriff", "begriffe", "fachbegriff", "wort", "ausdruck", "quelle", "glossar"),
    *("terme", "termes", "mot", "mots", "glossaire"),
    *("término", "termino", "términos", "palabra", "origen", "glosario"),
    *("termine", "termini", "parola", "glossario", "termo", "termos", "palavra"),
    *("woord", "bron", "woordenlijst", "termin", "terminy", "słowo", "термин", "слово"),
}
MAX_TERM_CHARS = 200
MAX_BYTES = 4 * user_files.MB  # a glossary of 50,000 terms is about 2 MB
# The terms a language pair takes from an import: each update of a line is looked up in its
# pair's terms (mt/terms.py: 50,000 terms 22 ms an update on a busy 2-core machine, 400,000
# 0.8 s, past the patterns it caches), and the Glossary window's table holds them all. Short
# words fill MAX_BYTES with 400,000: a dictionary, which the window took 6 s to show.
MAX_TERMS = 50_000
# Recognition is given the terms up to this many characters: Whisper's prompt takes the first
# 112 tokens of them (a token is rarely longer than 16 characters), and a glossary of 50,000
# terms was tokenized whole at each recognition (2.3 s a call instead of 0.08 s).
HOTWORD_CHARS = 2000
# A cell a spreadsheet would run as a formula (CSV injection): it is saved after a quote, which
# makes it text there (OWASP), and read back without it. Cells already starting with quotes
# before such a character get one more, so that every term reads back as it was written.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_QUOTED_FORMULA = re.compile(r"'+[=+\-@\t\r]")


class GlossaryError(ValueError):
    """A glossary file that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Entry:
    """One term of a language pair; ``translation`` "" = recognised only, not fixed."""

    src_lang: str
    tgt_lang: str
    term: str
    translation: str = ""


@dataclass(frozen=True)
class Glossary:
    entries: tuple[Entry, ...] = ()
    _by_pair: dict[tuple[str, str], tuple[Entry, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def pair(self, src_lang: str, tgt_lang: str) -> tuple[Entry, ...]:
        """The entries of one language pair, in the file's order."""
        key = (src_lang, tgt_lang)
        found = self._by_pair.get(key)
        if found is None:
            found = tuple(e for e in self.entries if (e.src_lang, e.tgt_lang) == key)
            self._by_pair[key] = found
        return found

    def pairs(self) -> list[tuple[str, str]]:
        return sorted({(e.src_lang, e.tgt_lang) for e in self.entries})

    def translations(self, src_lang: str, tgt_lang: str) -> tuple[tuple[str, str], ...]:
        """(term, fixed translation) of the pair, for the translator (terms without one are
        left out: the model translates them as it would)."""
        return tuple(
            (e.term, e.translation) for e in self.pair(src_lang, tgt_lang) if e.translation
        )

    def hotwords(self, src_lang: str | None) -> str:
        """The terms recognition should expect when speech is in ``src_lang`` (every term of
        the glossary when the language is detected), once each, as short sentences ("Subiaco.
        Pannartz."): after a bare comma-separated list tiny.en dropped the last word of
        other sentences more often (docs/BENCHMARKS.md, "Glossary"). The first terms, up to
        HOTWORD_CHARS."""
        seen: dict[str, str] = {}
        for e in self.entries:
            if src_lang is None or e.src_lang == src_lang:
                seen.setdefault(e.term.casefold(), e.term.rstrip(".!?;,: "))
        out: list[str] = []
        size = -1  # (no space before the first)
        for t in filter(None, seen.values()):
            size += len(t) + 2  # " Term."
            if size > HOTWORD_CHARS:
                break
            out.append(f"{t}.")
        return " ".join(out)

    def with_pair(self, src_lang: str, tgt_lang: str, rows: Iterable[tuple[str, str]]) -> Glossary:
        """A copy whose entries for the pair are ``rows`` (checked; a term given twice keeps
        its last translation)."""
        src, tgt = _lang(src_lang), _lang(tgt_lang)
        kept = [e for e in self.entries if (e.src_lang, e.tgt_lang) != (src, tgt)]
        entries = _entries(src, tgt, rows)
        if len(entries) > MAX_TERMS:
            # (as an import past it is refused: saved, the file would be held to it at the
            # next start, and the user's saves refused until it is trimmed)
            raise GlossaryError(
                f"a language pair takes at most {MAX_TERMS:,} terms: this one has "
                f"{len(entries):,} (remove {len(entries) - MAX_TERMS:,})"
            )
        return Glossary((*kept, *entries))


def _lang(code: str) -> str:
    try:
        return normalize_code(code)
    except UnknownLanguageError:
        raise GlossaryError(f"unknown language {code!r}") from None


def _clean(text: str) -> str:
    return " ".join(text.split())


def _check_length(term: str, translation: str) -> None:
    if len(term) > MAX_TERM_CHARS or len(translation) > MAX_TERM_CHARS:
        raise GlossaryError(f"{term[:30]!r}…: a term is at most {MAX_TERM_CHARS} characters")


def _entries(src: str, tgt: str, rows: Iterable[tuple[str, str]]) -> list[Entry]:
    out: dict[str, Entry] = {}
    for term, translation in rows:
        term, translation = _clean(term), _clean(translation)
        if not term:
            continue
        _check_length(term, translation)
        out.pop(term.casefold(), None)  # given again: the last one counts, in its place
        out[term.casefold()] = Entry(src, tgt, term, translation)
    return list(out.values())


def _read_text(path: Path) -> str:
    """A file to import, through the app's bounded reader: UTF-8 with or without a byte-order
    mark (Excel's "CSV UTF-8"), or UTF-16 (Excel's "Unicode Text"), with or without one."""
    try:
        data = user_files.read_bytes(path, MAX_BYTES)
    except user_files.FileProblem as e:
        raise GlossaryError(str(e)) from None
    return _decode_import(data, path.name)


# A zip file (.xlsx, .ods) or an OLE compound file (.xls): a workbook, not its text.
_WORKBOOKS = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")


def _decode_import(data: bytes, name: str) -> str:
    if data.startswith(_WORKBOOKS):
        raise GlossaryError(
            f"{name} is a spreadsheet workbook, not CSV: save it as CSV (or Unicode Text) "
            "and import that file"
        )
    encoding = ""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif b"\x00" in data:
        # UTF-16 without a byte-order mark: Latin text has a zero byte beside each letter,
        # always on the same side.
        head = data[: 4096 - 4096 % 2]
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if odd * 4 >= len(head) // 2 and not even:
            encoding = "utf-16-le"
        elif even * 4 >= len(head) // 2 and not odd:
            encoding = "utf-16-be"
        else:
            raise GlossaryError(f"{name} is not a text file (it holds zero bytes)")
    if not encoding:
        try:
            return user_files.decode_text(data, name)
        except user_files.FileProblem as e:
            raise GlossaryError(str(e)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        raise GlossaryError(f"{name} is not UTF-16 text (byte {e.start})") from None
    if "\x00" in text:
        raise GlossaryError(f"{name} is not a text file (it holds zero characters)")
    return text.removeprefix("\ufeff")


def _rows(text: str, name: str, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of CSV text whatever its line ends (CR alone: Excel for the Mac
    before 2016), as they are read; the CSV reader's own errors (a field over its limit) as
    GlossaryError."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as e:
        raise GlossaryError(f"{name} line {reader.line_num}: {e}") from None


def _open_quote(text: str, delimiter: str) -> int | None:
    """The line where a quote never closed opens (the strict reader says the file ends inside
    a quoted field; the plain one took every line after it into one field), or None."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    before = 0  # the line the last whole row ended on
    try:
        for _ in reader:
            before = reader.line_num
    except csv.Error as e:
        return before + 1 if "unexpected end of data" in str(e) else None
    return None


def parse(text: str, name: str = FILENAME, skipped: list[str] | None = None) -> Glossary:
    """The glossary file's text (``src_lang,tgt_lang,term,translation`` with that header).
    A line that cannot be a term (a field too many, an unknown language, a term too long)
    raises, or with ``skipped`` is left out and said there ("line 7: unknown language
    'xx'"); text that is no glossary at all always raises."""
    rows = [row for _, row in _rows(text, name)]
    if not rows or [c.strip().lower() for c in rows[0]] != list(HEADER):
        raise GlossaryError(f"{name} does not start with the line {','.join(HEADER)}")
    by_pair: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        try:
            if len(row) not in (3, 4):
                raise GlossaryError(f"expected 4 fields, found {len(row)}")
            src, tgt = _lang(row[0].strip()), _lang(row[1].strip())
            term = _as_written(row[2])
            translation = _as_written(row[3]) if len(row) == 4 else ""
            _check_length(_clean(term), _clean(translation))
        except GlossaryError as e:
            if skipped is None:
                raise GlossaryError(f"{name} line {n}: {e}") from None
            skipped.append(f"line {n}: {e}")
            continue
        by_pair.setdefault((src, tgt), []).append((term, translation))
    entries: list[Entry] = []
    for (src, tgt), pair_rows in by_pair.items():
        entries += _entries(src, tgt, pair_rows)
    return Glossary(tuple(entries))


def _as_text(cell: str) -> str:
    """A cell as saved: one a spreadsheet would run as a formula after a quote."""
    return "'" + cell if _FORMULA.match(cell) else cell


def _as_written(cell: str) -> str:
    """A saved cell as it was written (``_as_text`` undone)."""
    return cell[1:] if _QUOTED_FORMULA.match(cell) else cell


def dumps(glossary: Glossary) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for e in glossary.entries:
        w.writerow((e.src_lang, e.tgt_lang, _as_text(e.term), _as_text(e.translation)))
    return buf.getvalue()


def default_path() -> Path:
    return paths.config_dir() / FILENAME


@dataclass
class LoadResult:
    glossary: Glossary
    notice: str = ""  # for the user when the file could not be used
    backup: Path | None = None
    # Why a save must not replace the file ("": it may): it holds terms that are not in use
    # (a pair's past MAX_TERMS), which a save of the glossary in use would write away.
    kept: str = ""


def load(path: Path | None = None) -> LoadResult:
    """The saved glossary; empty for a missing file. A file that cannot be used (not a regular
    file, too large, not UTF-8, or anything the parser raises) is set aside: never fatal. A
    file with lines that cannot be terms keeps its other terms: the file as it was is set
    aside and the terms kept are written in its place, so one mistyped line of a glossary
    edited by hand costs that line, not every term (which the next save then lost). A pair
    of more than MAX_TERMS terms gives its first MAX_TERMS, the file kept (``kept``)."""
    path = path or default_path()
    skipped: list[str] = []
    loaded = user_files.load(path, lambda text: parse(text, path.name, skipped), limit=MAX_BYTES)
    if loaded.value is not None:
        in_use, past = _first_terms(loaded.value)
        if skipped:
            result = _without_lines(loaded.value, in_use, path, skipped)
        else:
            result = LoadResult(in_use)
        return _past_the_limit(result, past, path.name) if past else result
    notice = loaded.notice("The glossary", "an empty glossary is in use")
    if notice:
        log.warning(notice)
    return LoadResult(Glossary(), notice, loaded.backup)


def _first_terms(glossary: Glossary) -> tuple[Glossary, list[tuple[tuple[str, str], int]]]:
    """The glossary with each pair's first MAX_TERMS terms, and the pairs that held more, with
    their number of terms. A file edited by hand, or saved by a version without the limit,
    may hold a dictionary: every update of a line would look terms up among all of them
    (0.8 s at 400,000, see MAX_TERMS)."""
    counts = Counter((e.src_lang, e.tgt_lang) for e in glossary.entries)
    past = [(pair, n) for pair, n in counts.items() if n > MAX_TERMS]
    if not past:
        return glossary, []
    taken: Counter[tuple[str, str]] = Counter()
    entries = []
    for e in glossary.entries:
        pair = (e.src_lang, e.tgt_lang)
        taken[pair] += 1
        if taken[pair] <= MAX_TERMS:
            entries.append(e)
    return Glossary(tuple(entries)), past


def _past_the_limit(
    result: LoadResult, past: list[tuple[tuple[str, str], int]], name: str
) -> LoadResult:
    """``result`` said to hold only the first terms of the pairs ``past`` the limit, its file
    kept: the terms past it are the user's, in no other place (the first MAX_TERMS rather
    than none: a pair's terms still apply, at the cost MAX_TERMS allows)."""
    (src, tgt), n = past[0]
    pair = f"{LANGUAGES.get(src, src)} → {LANGUAGES.get(tgt, tgt)}"
    if len(past) > 1:
        pair += f" (and {len(past) - 1} more pair{'s' if len(past) > 2 else ''})"
    first = f"its first {MAX_TERMS:,}" if len(past) == 1 else f"the first {MAX_TERMS:,} of each"
    said = (
        f"{name} holds {n:,} terms for {pair}, and a language pair takes at most "
        f"{MAX_TERMS:,}: {first} are in use; the file is kept as it is, and changes to the "
        "glossary are not saved until it holds no more (edit it, or move it away and import "
        "the terms you need)."
    )
    log.warning("%s", said)
    return LoadResult(
        result.glossary,
        f"{result.notice} {said}" if result.notice else f"The glossary: {said}",
        result.backup,
        kept=f"{name} holds more terms for {pair} than are in use; it is kept, not replaced",
    )


def _without_lines(kept: Glossary, in_use: Glossary, path: Path, skipped: list[str]) -> LoadResult:
    """The terms of a file some of whose lines were left out, that file set aside: ``kept``,
    all it holds, written in its place; ``in_use``, those of them the app uses."""
    lines = "; ".join(skipped[:3]) + ("; …" if len(skipped) > 3 else "")
    what = f"{len(skipped)} line{'s' if len(skipped) > 1 else ''} of {path.name} left out ({lines})"
    backup: Path | None = None
    try:
        backup = user_files.set_aside(path)
        save(kept, path)
    except OSError as e:  # the terms kept are in use all the same; the next save tries again
        log.warning("%s: %s", path, e)
    where = f"the file as it was is kept as {backup.name}" if backup else "the file is unchanged"
    n = len(in_use.entries)
    notice = f"The glossary: {what}; {n:,} term{'s' if n != 1 else ''} in use, {where}."
    log.warning(notice)
    return LoadResult(in_use, notice, backup)


def save(glossary: Glossary, path: Path | None = None) -> Path:
    """Write atomically (a crash mid-write leaves the old file intact)."""
    path = path or default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # newline="": the rows end as the csv writer ends them, on every platform.
    return user_files.write_atomic(path, dumps(glossary), newline="")


def _delimiter(lines: list[str]) -> str:
    """`;` (spreadsheets with decimal commas), tab or `,`: the one the first line uses most
    outside quotes; `,` when it holds none (a one-column file)."""
    first = re.sub(r'"[^"]*"', "", lines[0])
    counts = {d: first.count(d) for d in (";", "\t", ",")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _header(cells: list[str]) -> bool:
    """Whether an imported file's first line names its columns: a word such as "Term" or
    "Begriff" first, or two languages' names ("English;German", "English,Deutsch": one
    language's two names, "German,Deutsch", are a term and its translation)."""
    if cells[0].casefold() in _HEADER_WORDS:
        return True
    names = [_LANGUAGE_NAMES.get(c.casefold()) for c in cells]
    return len(names) == 2 and None not in names and names[0] != names[1]


_LANGUAGE_NAMES = {
    **{name.casefold(): code for code, name in LANGUAGES.items()},
    **{name.casefold(): code for code, name in NATIVE_NAMES.items()},
}


def read_import(path: Path) -> list[tuple[str, str]]:
    """(term, translation) rows of a CSV to import: one column (terms) or two (term,
    translation), with or without a header line, UTF-8 or UTF-16 (with or without BOM), `;`,
    tab or `,` between fields. Raises GlossaryError with one line."""
    text = _read_text(path)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise GlossaryError(f"{path.name} holds no terms")
    delimiter = _delimiter(lines)
    if (start := _open_quote(text, delimiter)) is not None:
        raise GlossaryError(
            f'{path.name} line {start}: a quote (") opened there is never closed, so every line '
            "after it would be one term"
        )
    out: list[tuple[str, str]] = []
    terms: set[str] = set()
    first = True
    for n, row in _rows(text, path.name, delimiter):
        cells = [_as_written(c.strip()) for c in row]
        if not any(cells):
            continue
        while len(cells) > 2 and not cells[-1]:  # trailing separators from a spreadsheet
            cells.pop()
        if len(cells) > 2:
            raise GlossaryError(
                f"{path.name} line {n} has {len(cells)} fields: a line is a term and, "
                "optionally, its translation"
            )
        if first and _header(cells):
            first = False
            continue
        first = False
        if not cells[0]:
            raise GlossaryError(
                f"{path.name} line {n} has a translation ({cells[1]!r}) but no term before it"
            )
        out.append((cells[0], cells[1] if len(cells) == 2 else ""))
        terms.add(cells[0].casefold())
        if len(terms) > MAX_TERMS:  # (read no further: a dictionary is not worth reading)
            raise GlossaryError(
                f"{path.name} holds more than {MAX_TERMS:,} terms ({len(lines):,} lines); a "
                f"language pair takes at most {MAX_TERMS:,}: a glossary is for names and "
                "terms, not a whole dictionary"
            )
    if not any(t for t, _ in out):
        raise GlossaryError(f"{path.name} holds no terms")
    return out


@dataclass(frozen=True)
class ImportedTerms:
    """An imported file's terms merged into a language pair's rows as the Glossary window shows
    them (a term already there, in any case, keeps its row and takes the file's translation)."""

    changed: tuple[tuple[int, str], ...]  # (row, its new translation) of rows already there
    added: tuple[tuple[str, str], ...]  # new rows, in the file's order
    terms: int  # the file's terms, each once
    said: str  # what the import did, for the user


def merge_import(
    rows: list[tuple[str, str]], imported: list[tuple[str, str]], name: str, pair: str
) -> ImportedTerms:
    """``imported`` (read_import's rows of the file ``name``) merged into ``rows``, the pair's
    rows as shown (``pair`` names it); GlossaryError when the pair would hold more than
    MAX_TERMS terms."""
    before = {t.casefold(): x for t, x in rows if t.strip()}
    known = {t.casefold(): r for r, (t, _) in enumerate(rows) if t.strip()}
    changed: dict[int, str] = {}
    added: list[tuple[str, str]] = []
    given: dict[str, list[str]] = {}  # per term of the file: its translations, in order
    last: dict[str, str] = {}  # (its spelling last given)
    for term, translation in imported:
        key = term.casefold()
        given.setdefault(key, []).append(translation)
        last[key] = term
        r = known.get(key)
        if r is None:
            known[key] = len(rows) + len(added)
            added.append((term, translation))
        elif translation and r >= len(rows):  # given again in the file
            added[r - len(rows)] = (added[r - len(rows)][0], translation)
        elif translation:
            changed[r] = translation
    if added and len(known) > MAX_TERMS:
        raise GlossaryError(
            f"{pair} would have {len(known):,} terms with those of {name}; a language pair "
            f"takes at most {MAX_TERMS:,}"
        )
    n = len(given)
    said = [f"{'1 term' if n == 1 else f'{n} terms'} imported from {name}"]
    # A term given again with another translation: the last one counts, said.
    twice = [k for k, xs in given.items() if len({x for x in xs if x}) > 1]
    if twice:
        k = twice[0]
        said.append(
            f"{last[k]!r} was given {len(given[k])} times, its last translation kept "
            f"({[x for x in given[k] if x][-1]!r})"
            + (f", and {len(twice) - 1} more such terms" if len(twice) > 1 else "")
        )
    replaced = [
        (k, before[k], xs[-1])
        for k, xs in ((k, [x for x in xs if x]) for k, xs in given.items())
        if before.get(k) and xs and xs[-1] != before[k]
    ]
    if replaced:
        k, old, new = replaced[0]
        m = len(replaced)
        said.append(
            f"{'1 translation' if m == 1 else f'{m} translations'} replaced "
            f"({last[k]!r}: {old!r} → {new!r}{', …' if m > 1 else ''})"
        )
    return ImportedTerms(
        tuple(changed.items()), tuple(added), n, "; ".join(said) + "; Save to use them."
    )
