"""The glossary file and CSV import: exact rows from real files, one-line errors, and a bad
file set aside (never fatal), as settings are."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

from subtitler.mt import glossary
from subtitler.mt.glossary import Entry, Glossary, GlossaryError, read_import
from tests.helpers.bounded import run_bounded


def _write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def test_save_then_load_gives_the_same_glossary(tmp_path: Path) -> None:
    g = Glossary().with_pair("en", "de", [("Subiaco", "Subiaco"), ("printing", "Buchdruck")])
    g = g.with_pair("fr", "en", [("Pannartz", ""), ('quote "and", comma', "x; y")])
    path = glossary.save(g, tmp_path / "glossary.csv")
    assert path.read_text(encoding="utf-8").splitlines()[0] == "src_lang,tgt_lang,term,translation"
    loaded = glossary.load(path)
    assert loaded.notice == "" and loaded.glossary == g
    assert loaded.glossary.pair("fr", "en") == (
        Entry("fr", "en", "Pannartz", ""),
        Entry("fr", "en", 'quote "and", comma', "x; y"),
    )


def test_a_missing_file_is_an_empty_glossary(tmp_path: Path) -> None:
    loaded = glossary.load(tmp_path / "nothing.csv")
    assert loaded.glossary == Glossary() and loaded.notice == ""


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"term,translation\nfoo,bar\n", "does not start with the line"),
        (b"src_lang,tgt_lang,term,translation\nen,de,\xff\xfe,b\n", "is not UTF-8 text"),
    ],
)
def test_a_bad_file_is_set_aside_with_a_one_line_notice(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = _write(tmp_path / "glossary.csv", content)
    loaded = glossary.load(path)
    assert loaded.glossary == Glossary()
    assert why in loaded.notice and "\n" not in loaded.notice
    assert loaded.backup is not None and loaded.backup.read_bytes() == content
    assert not path.exists()  # the next save writes a fresh one
    assert loaded.backup.name in loaded.notice


def test_lines_that_cannot_be_terms_cost_those_lines_not_the_glossary(tmp_path: Path) -> None:
    """A glossary edited by hand with a mistyped line kept none of its terms (the whole file
    set aside, and the next save wrote only the terms added since)."""
    content = (
        "src_lang,tgt_lang,term,translation\n"
        "en,de,Subiaco,Subiaco\n"
        "en,de,a,b,c\n"  # a field too many
        "en,xx-nope,Foo,Bar\n"  # no such language
        f"en,de,{'x' * 201},y\n"  # a term too long
        "en,de,Pannartz,\n"
    ).encode()
    path = _write(tmp_path / "glossary.csv", content)
    loaded = glossary.load(path)
    assert loaded.glossary.pair("en", "de") == (
        Entry("en", "de", "Subiaco", "Subiaco"),
        Entry("en", "de", "Pannartz", ""),
    )
    assert loaded.notice.startswith(
        "The glossary: 3 lines of glossary.csv left out (line 3: expected 4 fields, found 5; "
        "line 4: unknown language 'xx-nope'; line 5: "
    )
    assert "\n" not in loaded.notice and "2 terms in use" in loaded.notice
    # What was written is kept as it was; the file now holds the terms in use.
    assert loaded.backup is not None and loaded.backup.read_bytes() == content
    assert loaded.backup.name in loaded.notice
    again = glossary.load(path)
    assert again.glossary == loaded.glossary and again.notice == ""


def test_lines_left_out_on_a_disk_that_cannot_be_written_keep_the_terms_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = b"src_lang,tgt_lang,term,translation\nen,de,Subiaco,\nen,xx-nope,Foo,Bar\n"
    path = _write(tmp_path / "glossary.csv", content)

    def full(*a: object, **k: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(glossary, "save", full)
    loaded = glossary.load(path)
    assert loaded.glossary.pair("en", "de") == (Entry("en", "de", "Subiaco", ""),)
    assert loaded.backup is not None and loaded.backup.read_bytes() == content  # not lost
    assert loaded.notice.endswith(
        f"1 term in use, the file as it was is kept as {loaded.backup.name}."
    )


def _over_the_limit(extra: int, more: str = "") -> str:
    """A saved glossary with ``extra`` terms for English → German past what a pair takes (by
    hand, or from a version without the limit), a term of another pair among them, and
    ``more`` lines after them."""
    rows = [f"en,de,t{i},x{i}\n" for i in range(glossary.MAX_TERMS + extra)]
    rows.insert(7, "fr,en,Pannartz,\n")
    return "src_lang,tgt_lang,term,translation\n" + "".join(rows) + more


def test_a_saved_glossary_past_the_limit_uses_the_first_terms_and_keeps_the_file(
    tmp_path: Path,
) -> None:
    """A glossary.csv with more than MAX_TERMS terms for a pair was used whole at the start:
    each update of a line looked terms up among all of them (0.8 s an update at 400,000).
    The pair's first MAX_TERMS are in use, said in one line; the file is kept as it is, and
    the load says it must not be replaced (a save would write the terms past the limit
    away)."""
    content = _over_the_limit(2).encode()
    path = _write(tmp_path / "glossary.csv", content)
    loaded = glossary.load(path)
    used = loaded.glossary.pair("en", "de")
    assert len(used) == glossary.MAX_TERMS
    assert (used[0].term, used[-1].term) == ("t0", f"t{glossary.MAX_TERMS - 1}")
    assert loaded.glossary.pair("fr", "en") == (Entry("fr", "en", "Pannartz", ""),)
    assert loaded.notice == (
        "The glossary: glossary.csv holds 50,002 terms for English → German, and a language "
        "pair takes at most 50,000: its first 50,000 are in use; the file is kept as it is, "
        "and changes to the glossary are not saved until it holds no more (edit it, or move "
        "it away and import the terms you need)."
    )
    assert loaded.kept == (
        "glossary.csv holds more terms for English → German than are in use; it is kept, "
        "not replaced"
    )
    assert loaded.backup is None and path.read_bytes() == content
    # At the limit, as a full pair's import leaves it: all in use, nothing said.
    at = glossary.load(_write(tmp_path / "at.csv", _over_the_limit(0)))
    assert len(at.glossary.pair("en", "de")) == glossary.MAX_TERMS
    assert (at.notice, at.kept) == ("", "")


def test_lines_left_out_of_a_glossary_past_the_limit_are_set_aside_and_no_term_is_lost(
    tmp_path: Path,
) -> None:
    """With a line that cannot be a term too, the file as it was is set aside and the terms
    are written in its place, all of them; the first MAX_TERMS of the pair are in use."""
    content = _over_the_limit(3, "en,xx-nope,Foo,Bar\n").encode()
    path = _write(tmp_path / "glossary.csv", content)
    loaded = glossary.load(path)
    assert len(loaded.glossary.pair("en", "de")) == glossary.MAX_TERMS
    assert loaded.backup is not None and loaded.backup.read_bytes() == content
    written = glossary.parse(path.read_text(encoding="utf-8"))
    assert len(written.pair("en", "de")) == glossary.MAX_TERMS + 3
    assert written.pair("fr", "en") == (Entry("fr", "en", "Pannartz", ""),)
    assert loaded.notice.startswith("The glossary: 1 line of glossary.csv left out (line ")
    assert "; 50,001 terms in use, the file as it was is kept as " in loaded.notice
    assert ". glossary.csv holds 50,003 terms for English → German, and " in loaded.notice
    assert "\n" not in loaded.notice and loaded.kept


def test_old_mac_line_endings_are_read(tmp_path: Path) -> None:
    """Excel for the Mac before 2016 ends lines with CR alone."""
    path = _write(tmp_path / "glossary.csv", "src_lang,tgt_lang,term,translation\ren,de,Subiaco,\r")
    loaded = glossary.load(path)
    assert loaded.notice == "" and loaded.glossary.pair("en", "de") == (
        Entry("en", "de", "Subiaco", ""),
    )


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (f"src_lang,tgt_lang,term,translation\nen,de,{'x' * 200_000},y\n", "glossary.csv line 2"),
        ("src_lang,tgt_lang,term,translation\n" + "en,de,x,y\n" * 500_000, "is larger than 4 MB"),
    ],
)
def test_a_file_the_csv_reader_refuses_is_set_aside(tmp_path: Path, content: str, why: str) -> None:
    path = _write(tmp_path / "glossary.csv", content)
    loaded = glossary.load(path)
    assert loaded.glossary == Glossary() and why in loaded.notice and "\n" not in loaded.notice
    assert loaded.backup is not None and not path.exists()


def test_a_fifo_or_an_endless_device_is_not_read(tmp_path: Path) -> None:
    fifo, link = tmp_path / "fifo" / "glossary.csv", tmp_path / "link" / "glossary.csv"
    fifo.parent.mkdir()
    link.parent.mkdir()
    os.mkfifo(fifo)
    link.symlink_to("/dev/zero")
    for path in (fifo, link):
        with pytest.raises(GlossaryError, match="not a regular file"):
            run_bounded(lambda path=path: read_import(path))  # type: ignore[misc]
        loaded = run_bounded(lambda path=path: glossary.load(path))  # type: ignore[misc]
        assert loaded.glossary == Glossary() and "not a regular file" in loaded.notice


def test_a_folder_in_place_of_the_file_is_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "glossary.csv").mkdir()
    loaded = glossary.load(tmp_path / "glossary.csv")
    assert loaded.glossary == Glossary() and "is a folder, not a file" in loaded.notice
    assert loaded.backup is None  # a folder is not set aside


def test_pairs_hotwords_and_fixed_translations() -> None:
    g = Glossary().with_pair("en", "de", [("Subiaco", "Subiaco"), ("Sweynheim", "")])
    g = g.with_pair("en", "fr", [("subiaco", "Subiaco"), ("Pannartz", "Pannartz")])
    g = g.with_pair("de", "en", [("Buchdruck", "printing")])
    assert g.translations("en", "de") == (("Subiaco", "Subiaco"),)  # recognised-only left out
    assert g.hotwords("en") == "Subiaco. Sweynheim. Pannartz."  # once each, any case
    assert g.hotwords(None) == "Subiaco. Sweynheim. Pannartz. Buchdruck."
    assert g.pairs() == [("de", "en"), ("en", "de"), ("en", "fr")]


def test_with_pair_cleans_rows_and_keeps_the_last_of_a_term() -> None:
    g = Glossary().with_pair(
        "EN", "de", [("  Subiaco  ", " A "), ("", "dropped"), ("subiaco", "B"), ("x  y", "")]
    )
    assert g.pair("en", "de") == (Entry("en", "de", "subiaco", "B"), Entry("en", "de", "x y", ""))
    with pytest.raises(GlossaryError, match="unknown language"):
        Glossary().with_pair("en", "klingon", [("a", "b")])
    with pytest.raises(GlossaryError, match="at most 200 characters"):
        Glossary().with_pair("en", "de", [("a" * 201, "b")])


PB = ("printing", "Buchdruck")


@pytest.mark.parametrize(
    ("data", "rows"),
    [
        ("Subiaco\nPannartz\n", [("Subiaco", ""), ("Pannartz", "")]),
        ("term\nSubiaco\n\nPannartz\n", [("Subiaco", ""), ("Pannartz", "")]),
        ("Term;Translation\nprinting;Buchdruck\nSubiaco;\n", [PB, ("Subiaco", "")]),
        ("\ufeffprinting,Buchdruck\n\"a, b\",\"c; d\"\n", [PB, ("a, b", "c; d")]),
        ("printing\tBuchdruck\r\nSubiaco\tSubiaco\r\n", [PB, ("Subiaco", "Subiaco")]),
        ("printing;Buchdruck;;\n", [PB]),  # a spreadsheet's empty cells
        ("printing,Buchdruck\rSubiaco,Subiaco\r", [PB, ("Subiaco", "Subiaco")]),  # old Mac
    ],
)  # fmt: skip
def test_import_reads_one_or_two_columns_any_separator_with_or_without_header(
    tmp_path: Path, data: str, rows: list[tuple[str, str]]
) -> None:
    assert read_import(_write(tmp_path / "in.csv", data)) == rows


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "in.csv holds no terms"),
        (b"term\n\n", "in.csv holds no terms"),
        (b"a,b,c\n", "in.csv line 1 has 3 fields: a line is a term and, optionally, its"),
        (b"ok,fine\n\nx;y,z,w\n", "in.csv line 3 has 3 fields"),
        (b"caf\xe9,x\n", "in.csv is not UTF-8 text (byte 3)"),
        # (a translation without its term was imported as a row of no term, then dropped)
        (b"API,Schnittstelle\n,Fahrplan\n", "in.csv line 2 has a translation ('Fahrplan') but"),
        (b"a,b\n" + b"x" * 200_000 + b",y\n", "in.csv line 2: field larger than field limit"),
        (b"a,b\n" * 2_000_000, "in.csv is larger than 4 MB"),
    ],
)  # fmt: skip
def test_import_errors_are_one_line(tmp_path: Path, data: bytes, why: str) -> None:
    with pytest.raises(GlossaryError) as e:
        read_import(_write(tmp_path / "in.csv", data))
    assert str(e.value).startswith(why) and "\n" not in str(e.value)


def test_an_import_of_more_terms_than_a_pair_takes_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    """A 4 MB file of 400,000 short terms (a dictionary) was imported whole: the Glossary
    window froze 6 s filling its table, and each line said was then looked up in 400,000 terms
    (0.8 s an update). It is refused at the term past the limit, read no further (the bad
    line at its end is never reached)."""
    big = "".join(f"t{i}\n" for i in range(400_000)) + "a,b,c\n"
    with pytest.raises(GlossaryError) as e:
        read_import(_write(tmp_path / "big.csv", big))
    assert str(e.value) == (
        "big.csv holds more than 50,000 terms (400,001 lines); a language pair takes at most "
        "50,000: a glossary is for names and terms, not a whole dictionary"
    )
    # As many as it takes, after a header, some given twice (the terms are counted once).
    full = ["Term;Translation", *(f"t{i};x{i}" for i in range(50_000)), "T7;y", "t9;z"]
    rows = read_import(_write(tmp_path / "full.csv", "\n".join(full)))
    assert len(rows) == 50_002 and rows[-2:] == [("T7", "y"), ("t9", "z")]


def test_a_pair_edited_past_the_limit_is_not_taken() -> None:
    """A pair of 50,000 terms took one more added by hand in the Glossary window and saved it:
    at the next start the file was held to the limit and every save refused until trimmed. The
    table's rows past it are refused in one line, as an import past it is."""
    rows = [(f"t{i}", f"x{i}") for i in range(glossary.MAX_TERMS)]
    full = Glossary(()).with_pair("en", "de", [*rows, ("T7", "y")])  # (a term given twice)
    assert len(full.pair("en", "de")) == 50_000
    with pytest.raises(GlossaryError) as e:
        full.with_pair("en", "de", [*rows, ("one more", "noch einer")])
    assert (
        str(e.value) == "a language pair takes at most 50,000 terms: this one has 50,001 (remove 1)"
    )
    # Other pairs are their own.
    assert len(full.with_pair("en", "fr", rows).entries) == 100_000


def test_a_large_glossary_gives_recognition_what_its_prompt_takes_and_no_more(
    tiny_en: Path,
) -> None:
    """Whisper's prompt takes the hotwords' first _MAX_HOTWORD_TOKENS tokens; a glossary of
    50,000 terms was tokenized whole at every recognition (2.3 s a call instead of 0.08)."""
    from tokenizers import Tokenizer

    from subtitler.asr.faster_whisper import _MAX_HOTWORD_TOKENS

    rows = [(f"Term{i} Name{i}", "") for i in range(50_000)]
    hot = Glossary().with_pair("en", "de", rows).hotwords("en")
    assert len(hot) <= glossary.HOTWORD_CHARS and hot.startswith("Term0 Name0. Term1 Name1.")
    assert hot.endswith(".")  # whole terms
    tok = Tokenizer.from_file(str(tiny_en / "tokenizer.json"))
    whole = " ".join(f"Term{i} Name{i}." for i in range(50_000))
    n = _MAX_HOTWORD_TOKENS
    assert tok.encode(" " + hot).ids[:n] == tok.encode(" " + whole).ids[:n]  # what it saw


# A term a spreadsheet would run as a formula (CSV injection), and ones that only look close.
FORMULAS = [
    '=HYPERLINK("http://x","y")',
    "+49 30 1234",
    "-minus",
    "@SUM(A1)",
    "'quoted",
    "''=x",
    "'=x",
]


def test_a_term_a_spreadsheet_would_run_is_saved_as_text_and_read_back_as_written(
    tmp_path: Path,
) -> None:
    g = Glossary().with_pair("en", "de", [(t, t) for t in FORMULAS])
    path = glossary.save(g, tmp_path / "glossary.csv")
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))[1:]
    cells = [c for row in rows for c in row[2:]]
    # No cell starts as a formula (OWASP: a quote before it makes it text).
    assert len(cells) == 2 * len(FORMULAS)
    assert not any(c[:1] in ("=", "+", "-", "@") for c in cells), cells
    assert glossary.load(path).glossary == g


def test_a_column_of_the_saved_glossary_imports_as_the_terms(tmp_path: Path) -> None:
    g = Glossary().with_pair("en", "de", [(t, "") for t in FORMULAS])
    rows = list(csv.reader(io.StringIO(glossary.dumps(g), newline="")))[1:]
    column = tmp_path / "terms.csv"
    with column.open("w", newline="") as f:
        csv.writer(f).writerows([row[2]] for row in rows)  # the term column, as saved
    assert [t for t, _ in read_import(column)] == FORMULAS


@pytest.mark.parametrize(
    "data",
    [
        # Excel's "Unicode Text (*.txt)": UTF-16 little-endian with a byte-order mark, tabs.
        "\ufeffTerm\tTranslation\r\nKubernetes\tKubernetes\r\nroad map\tFahrplan\r\n".encode(
            "utf-16-le"
        ),
        "\ufeffKubernetes;Kubernetes\nroad map;Fahrplan\n".encode("utf-16-be"),
        # Without a byte-order mark (some tools): its zero bytes say which order.
        "Kubernetes\tKubernetes\nroad map\tFahrplan\n".encode("utf-16-le"),
        "Kubernetes\tKubernetes\nroad map\tFahrplan\n".encode("utf-16-be"),
    ],
)
def test_import_reads_utf16_as_excel_saves_unicode_text(tmp_path: Path, data: bytes) -> None:
    assert read_import(_write(tmp_path / "in.txt", data)) == [
        ("Kubernetes", "Kubernetes"),
        ("road map", "Fahrplan"),
    ]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        # An Excel workbook is a zip file: it was "not UTF-8 text (byte 136)".
        (b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)), "in.csv is a spreadsheet workbook"),
        # Zero bytes that are no UTF-16 text (a program, an image): never terms of '\x00'.
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" + b"ab\x00\x00cd" * 40, "in.csv is not a text file"),
        # A quote never closed took every line after it into one term, imported silently.
        (b'API,Schnittstelle\n"Kubernetes,K8s\nroad map,Fahrplan\n', "in.csv line 2: a quote"),
    ],
)  # fmt: skip
def test_import_of_a_file_that_is_no_csv_says_so_in_one_line(
    tmp_path: Path, data: bytes, why: str
) -> None:
    with pytest.raises(GlossaryError) as e:
        read_import(_write(tmp_path / "in.csv", data))
    assert str(e.value).startswith(why) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "data",
    [
        "Begriff;Übersetzung\r\nKubernetes;Kubernetes\r\nroad map;Fahrplan\r\n",  # German Excel
        "Terme;Traduction\nKubernetes;Kubernetes\nroad map;Fahrplan\n",
        "Término;Traducción\nKubernetes;Kubernetes\nroad map;Fahrplan\n",
        "English,German\nKubernetes,Kubernetes\nroad map,Fahrplan\n",  # the languages' names
        "English;Deutsch\nKubernetes;Kubernetes\nroad map;Fahrplan\n",
    ],
)
def test_import_skips_a_header_in_the_users_language_or_naming_the_languages(
    tmp_path: Path, data: str
) -> None:
    assert read_import(_write(tmp_path / "in.csv", data)) == [
        ("Kubernetes", "Kubernetes"),
        ("road map", "Fahrplan"),
    ]


def test_import_keeps_a_first_term_that_is_a_language_and_its_own_name(tmp_path: Path) -> None:
    data = "German,Deutsch\nKubernetes,Kubernetes\n"  # a term, not a header: one language
    assert read_import(_write(tmp_path / "in.csv", data))[0] == ("German", "Deutsch")
