"""Past meetings read from real transcript files: listing, search, export without doubling."""

from __future__ import annotations

import datetime as dt
import math
import os
from pathlib import Path

import pytest

from subtitler.pipeline.history import (
    format_duration,
    list_meetings,
    load_meeting,
    new_transcript,
    search,
    targets_of,
)
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter, export, to_srt, to_text
from tests.helpers.bounded import run_bounded


def write(folder: Path, stamp: str, recs: list[SegmentRecord]) -> Path:
    w = TranscriptWriter(folder / f"{stamp}.jsonl")
    for r in recs:
        w.append(r)
    w.close()
    return w.path


def rec(
    i: int, start: float, src: str, tgt: str, pair: tuple[str, str] = ("en", "de")
) -> SegmentRecord:
    return SegmentRecord(i, start, start + 2.0, src, tgt, pair[0], pair[1], 1_700_000_000.0 + start)


MONDAY = [
    rec(0, 1.0, "Good morning, everyone.", "Guten Morgen zusammen."),
    rec(1, 4.0, "The budget for Zürich is ready.", "Das Budget für Zürich ist fertig."),
    rec(2, 1830.0, "See you next week.", "Bis nächste Woche."),
]
TUESDAY = [rec(0, 0.5, "Bonjour à tous.", "Bonjour à tous.", ("fr", "fr"))]


def test_meetings_newest_first_with_date_length_and_languages(tmp_path: Path) -> None:
    write(tmp_path, "20261116-093000", MONDAY)
    write(tmp_path, "20261117-140512", TUESDAY)
    (tmp_path / "20261118-080000.jsonl").write_bytes(b"")  # started, no line finished: not listed
    (tmp_path / "notes.txt").write_text("not a transcript")
    meetings, problems = list_meetings(tmp_path)
    assert problems == []
    assert [m.title for m in meetings] == ["2026-11-17 14:05", "2026-11-16 09:30"]
    tue, mon = meetings
    assert mon.languages == ("en → de",) and tue.languages == ("fr",)
    assert mon.duration_s == 1832.0 and format_duration(mon.duration_s) == "31 min"
    assert format_duration(2.5) == "2 s" and format_duration(2 * 3600 + 65) == "2 h 01 min"
    assert [r.source for r in mon.records] == [r.source for r in MONDAY]


def test_two_meetings_started_in_one_second_are_two_meetings(tmp_path: Path) -> None:
    """The second was written into the first one's file (History showed one meeting, its
    lines interleaved), and its kept audio replaced the first one's."""
    now = dt.datetime(2026, 11, 29, 9, 30, 0)
    first = new_transcript(tmp_path, now)
    assert first == tmp_path / "20261129-093000.jsonl"
    write(tmp_path, first.stem, MONDAY)
    second = new_transcript(tmp_path, now)
    assert second == tmp_path / "20261129-093000-2.jsonl"
    write(tmp_path, second.stem, TUESDAY)
    (tmp_path / "20261129-093000-3.unheard.wav").write_bytes(b"")  # a meeting's kept audio
    assert new_transcript(tmp_path, now) == tmp_path / "20261129-093000-4.jsonl"
    meetings, _ = list_meetings(tmp_path)
    assert [(m.path.name, m.title) for m in meetings] == [  # newest first
        ("20261129-093000-2.jsonl", "2026-11-29 09:30"),
        ("20261129-093000.jsonl", "2026-11-29 09:30"),
    ]
    assert [len(m.records) for m in meetings] == [len(TUESDAY), len(MONDAY)]


def test_meetings_are_in_the_order_they_happened_across_time_zones_and_dst(tmp_path: Path) -> None:
    """A transcript is named for the local clock when it started: sorted by that name, the
    meeting after the autumn's clock change (02:10 CET) was listed below the one before it
    (02:30 CEST, 40 minutes earlier), and a meeting held after flying from Berlin to New York
    (06:00 EST) below the morning's in Berlin (10:00 CET, two hours earlier). The lines' times
    are UTC: the order is what happened."""

    def held(stamp: str, utc: dt.datetime, first: float = 95.0, lag: float = 1.5) -> None:
        t0 = utc.replace(tzinfo=dt.UTC).timestamp()
        write(
            tmp_path,
            stamp,
            [  # (a translator behind the speech writes a line late: the first one here)
                SegmentRecord(0, 1.0, 3.0, "Hello.", "Hallo.", "en", "de", t0 + 3.0 + first),
                SegmentRecord(1, 4.0, 6.0, "Again.", "Nochmal.", "en", "de", t0 + 6.0 + lag),
            ],
        )

    held("20261025-023000", dt.datetime(2026, 10, 25, 0, 30))  # Berlin, summer time still
    held("20261025-021000", dt.datetime(2026, 10, 25, 1, 10))  # 40 minutes on: winter time
    held("20261120-100000", dt.datetime(2026, 11, 20, 9, 0))  # Berlin, 10:00 CET
    held("20261120-060000", dt.datetime(2026, 11, 20, 11, 0))  # New York, 06:00 EST
    held("20261120-170000", dt.datetime(2026, 11, 20, 22, 0), 400.0, 420.0)  # every line late
    meetings, _ = list_meetings(tmp_path)
    assert [m.title for m in meetings] == [  # newest first, each with the clock it was held by
        "2026-11-20 17:00",
        "2026-11-20 06:00",
        "2026-11-20 10:00",
        "2026-10-25 02:10",
        "2026-10-25 02:30",
    ]


def test_a_torn_last_line_and_a_renamed_file_still_list(tmp_path: Path) -> None:
    path = write(tmp_path, "20261116-093000", MONDAY)
    with path.open("ab") as f:
        f.write(b'{"segment_id": 3, "start": 19')  # the app was killed mid-line
    renamed = path.rename(tmp_path / "budget meeting.jsonl")
    m = load_meeting(renamed)
    assert len(m.records) == 3
    # Without the stamp in the name: the first line's clock (its wall time minus its end).
    assert m.started == dt.datetime.fromtimestamp(MONDAY[0].wall_time - MONDAY[0].end)


def test_an_unreadable_file_is_one_problem_line_not_the_end(tmp_path: Path) -> None:
    write(tmp_path, "20261116-093000", MONDAY)
    (tmp_path / "20261117-140512.jsonl").mkdir()  # cannot be read as a file, even by root
    meetings, problems = list_meetings(tmp_path)
    assert [m.title for m in meetings] == ["2026-11-16 09:30"]
    assert len(problems) == 1 and problems[0].startswith("20261117-140512.jsonl: ")
    assert list_meetings(tmp_path / "missing") == ([], [])  # no meeting yet: no folder yet


GOOD = (
    '{"segment_id": 7, "start": 1.0, "end": 2.0, "source": "still here", "translation": "x", '
    '"src_lang": "en", "tgt_lang": "de", "wall_time": 1700000000.0}'
)


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,  # deeper than the JSON parser recurses
        GOOD.replace('"wall_time": 1700000000.0', '"wall_time": 1e308'),
        GOOD.replace('"end": 2.0', '"end": Infinity'),
        GOOD.replace('"start": 1.0', '"start": NaN'),
        GOOD.replace('"segment_id": 7', '"segment_id": 1e400'),
        GOOD.replace('"source": "still here"', '"source": {"a": 1}'),
        GOOD.replace('"wall_time": 1700000000.0', '"wall_time": -1e20'),
    ],
)
def test_a_damaged_line_costs_that_line_not_the_meeting_list(tmp_path: Path, line: str) -> None:
    """One line a crash, a disk fault or a hand edit damaged: every other line and every other
    meeting is still listed (it raised RecursionError or OverflowError, and the history was
    empty)."""
    write(tmp_path, "20261116-093000", MONDAY)
    renamed = write(tmp_path, "20261117-140512", TUESDAY).rename(tmp_path / "renamed.jsonl")
    for path in (tmp_path / "20261116-093000.jsonl", renamed):
        with path.open("a", encoding="utf-8") as f:
            f.write(line + "\n" + GOOD + "\n")
    meetings, problems = list_meetings(tmp_path)
    assert problems == []
    assert sorted(len(m.records) for m in meetings) == [2, 4]
    assert all(m.records[-1].source == "still here" for m in meetings)
    assert all(math.isfinite(m.duration_s) for m in meetings)


def test_a_transcript_that_is_no_file_is_named_and_the_others_listed(tmp_path: Path) -> None:
    """A FIFO would block the Meeting history window, a link to /dev/zero fill the memory."""
    write(tmp_path, "20261116-093000", MONDAY)
    os.mkfifo(tmp_path / "20261117-140512.jsonl")
    (tmp_path / "20261118-080000.jsonl").symlink_to("/dev/zero")
    meetings, problems = run_bounded(lambda: list_meetings(tmp_path))
    assert [m.title for m in meetings] == ["2026-11-16 09:30"]
    assert problems == [
        "20261117-140512.jsonl: 20261117-140512.jsonl is not a regular file",
        "20261118-080000.jsonl: 20261118-080000.jsonl is not a regular file",
    ]


def test_kept_audio_that_is_no_file_is_passed_over_and_the_meeting_listed(tmp_path: Path) -> None:
    """A FIFO named as a meeting's kept audio (NAME.unheard.wav) blocked the Meeting history
    window for good (its header was read with a plain open); a folder or a link to
    /dev/zero of that name are no audio either."""
    write(tmp_path, "20261116-093000", MONDAY)
    os.mkfifo(tmp_path / "20261116-093000.unheard.wav")
    (tmp_path / "20261116-093000.unheard-you.wav").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "20261117-140512.unheard.wav")  # a meeting of kept audio alone
    (tmp_path / "20261118-080000.unheard.wav").mkdir()
    meetings, problems = run_bounded(lambda: list_meetings(tmp_path))
    assert problems == []
    assert [(m.title, len(m.records), m.unheard) for m in meetings] == [
        ("2026-11-16 09:30", len(MONDAY), ())
    ]


def test_search_is_case_and_accent_free_over_both_languages(tmp_path: Path) -> None:
    write(tmp_path, "20261116-093000", MONDAY)
    write(tmp_path, "20261117-140512", TUESDAY)
    meetings, _ = list_meetings(tmp_path)
    found = search(meetings, "zurich BUDGET")
    assert [(m.title, [r.segment_id for r in hits]) for m, hits in found] == [
        ("2026-11-16 09:30", [1])
    ]
    assert [m.title for m, _ in search(meetings, "nachste woche")] == ["2026-11-16 09:30"]
    assert [m.title for m, _ in search(meetings, "a tous")] == ["2026-11-17 14:05"]
    assert search(meetings, "quarterly") == []
    assert [hits for _, hits in search(meetings, "  ")] == [[], []]


def test_export_source_target_or_both_and_same_language_lines_once(tmp_path: Path) -> None:
    assert to_text(MONDAY[:1], "source") == "Good morning, everyone.\n"
    assert to_text(MONDAY[:1], "translation") == "Guten Morgen zusammen.\n"
    assert to_text(MONDAY[:1], "both") == "Good morning, everyone.\nGuten Morgen zusammen.\n"
    # Same language (or a line the translator never reached): the line once, not twice.
    assert to_srt(TUESDAY, "both") == "1\n00:00:00,500 --> 00:00:02,500\nBonjour à tous.\n"
    untranslated = [rec(0, 0.0, "Hello.", ""), rec(1, 3.0, "Bye.", "Tschüss.")]
    assert to_text(untranslated, "both") == "Hello.\nBye.\nTschüss.\n"
    # An empty cue is not written: the translation-only export numbers what it has.
    assert to_srt(untranslated, "translation") == "1\n00:00:03,000 --> 00:00:05,000\nTschüss.\n"
    out = export(MONDAY, tmp_path / "m.vtt", "source")
    assert out.read_text(encoding="utf-8").splitlines()[2:4] == [
        "00:00:01.000 --> 00:00:03.000",
        "Good morning, everyone.",
    ]


TWO = [
    SegmentRecord(0, 1.0, 3.0, "Good morning.", "Guten Morgen.", "en", "de", 1e9, (("ja", "おはよう。"),)),  # noqa: E501
    SegmentRecord(1, 4.0, 6.0, "Thanks.", "Danke.", "en", "de", 1e9 + 4, (("ja", ""),)),
]  # fmt: skip


def test_a_meeting_in_two_target_languages_exports_each(tmp_path: Path) -> None:
    """Lines translated into de and ja (issue 19): listed with both, searched in both, and
    exported in the language chosen; a line the extra target has no text for is left out
    of that export only."""
    path = write(tmp_path, "20261116-093000", TWO)
    (m,) = list_meetings(tmp_path)[0]
    assert m.records == tuple(TWO)  # the extra target's text comes back from the file
    assert m.languages == ("en → de, ja",) and targets_of(m.records) == ("de", "ja")
    assert [len(hits) for _, hits in search([m], "おはよう")] == [1]
    assert to_text(list(m.records), "translation") == "Guten Morgen.\nDanke.\n"
    assert to_text(list(m.records), "translation", "ja") == "おはよう。\n"
    assert to_text(list(m.records), "both", "ja") == "Good morning.\nおはよう。\nThanks.\n"
    out = export(list(m.records), tmp_path / "m.ja.srt", "translation", "ja")
    assert out.read_text(encoding="utf-8") == "1\n00:00:01,000 --> 00:00:03,000\nおはよう。\n"
    assert '"extra": [["ja", "おはよう。"]]' in path.read_text(encoding="utf-8")


def test_a_line_with_a_damaged_extra_field_keeps_its_main_translation(tmp_path: Path) -> None:
    path = tmp_path / "20261116-093000.jsonl"
    good = TWO[0].to_json().replace('[["ja", "おはよう。"]]', '"nonsense"')
    path.write_text(good + "\n", encoding="utf-8")
    (r,) = load_meeting(path).records
    assert (r.translation, r.extra) == ("Guten Morgen.", ())


def test_search_folds_text_as_the_per_character_rule_did() -> None:
    """The fold is str.translate now (a character at a time in Python cost seconds a key on
    a long history): the same text for every line of real sentences in many scripts."""
    import unicodedata

    from subtitler.pipeline import history

    def by_character(text: str) -> str:
        decomposed = unicodedata.normalize("NFKD", text.casefold())
        return "".join(c for c in decomposed if not unicodedata.combining(c))

    root = Path(__file__).resolve().parents[1] / "data"
    lines = (root / "tatoeba_report.tsv").read_text(encoding="utf-8").splitlines()
    lines += (root / "translator_pairs.tsv").read_text(encoding="utf-8").splitlines()
    lines += ["Über Café naïve Ǆ ﬁ Ⅻ İstanbul ΣΑΣ Straße", "e\u0301\u0327 \u1e9b\u0323"]
    assert len(lines) > 40
    for line in lines:
        assert history._fold(line) == by_character(line), line


def test_a_meeting_unchanged_is_not_read_again_and_a_grown_one_is(tmp_path: Path) -> None:
    path = write(tmp_path, "20261116-093000", MONDAY[:2])
    (first,), _ = list_meetings(tmp_path)
    (again,), _ = list_meetings(tmp_path)
    assert again is first  # (History opened again on 500 hours read 115 MB each time)
    w = TranscriptWriter(path)
    w.append(MONDAY[2])  # the meeting went on
    w.close()
    (grown,), _ = list_meetings(tmp_path)
    assert [r.source for r in grown.records] == [r.source for r in MONDAY]
    path.unlink()
    assert list_meetings(tmp_path) == ([], [])


def test_a_meeting_numbered_from_0_again_midway_reads_in_the_order_said(tmp_path: Path) -> None:
    """Versions of 2026-11-23 to 11-27 numbered a meeting's lines from 0 again when its speech
    settings changed midway (the recogniser loaded anew), into the same transcript: read in
    the order of the numbers, the lines after the change came between those before it, in
    History and in its exports. tests/data/transcript_speech_settings_changed.jsonl is such a
    meeting, written by 1a2d885 (its speech settings changed after two lines)."""
    import shutil

    from tests.conftest import DATA

    path = tmp_path / "20261123-120000.jsonl"
    shutil.copyfile(DATA / "transcript_speech_settings_changed.jsonl", path)
    [meeting], problems = list_meetings(tmp_path)
    assert problems == []
    assert [r.segment_id for r in meeting.records] == [0, 1, 0, 1]  # (as numbered then)
    said = [r.start for r in meeting.records]
    assert said == sorted(said)
    srt = export(list(meeting.records), tmp_path / "m.srt", "source").read_text(encoding="utf-8")
    assert [line[:12] for line in srt.splitlines()[1::4]] == [
        "00:00:00,088",
        "00:00:07,672",
        "00:00:11,800",
        "00:00:17,008",
    ]
