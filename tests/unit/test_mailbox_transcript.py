"""Latest-wins mailbox and the crash-safe transcript."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from subtitler.pipeline.mailbox import Mailbox
from subtitler.pipeline.transcript import (
    SegmentRecord,
    TranscriptWriter,
    export,
    read_transcript,
    to_srt,
    to_text,
    to_vtt,
)
from subtitler.types import AsrUpdate


def upd(seg: int, text: str, final: bool = False) -> AsrUpdate:
    return AsrUpdate(seg, text, "", final, 0.0, 0.0, 0.0)


class TestMailbox:
    def test_newest_non_final_of_a_segment_wins(self) -> None:
        mb = Mailbox()
        mb.put(upd(1, "a"))
        mb.put(upd(1, "a b"))
        mb.put(upd(1, "a b c"))
        assert len(mb) == 1 and mb.replaced == 2
        got = mb.get(0)
        assert got is not None and got.committed_text == "a b c"

    def test_final_is_never_replaced_or_dropped(self) -> None:
        mb = Mailbox()
        mb.put(upd(1, "a"))
        mb.put(upd(1, "a b", final=True))  # replaces the non-final
        mb.put(upd(2, "x"))
        mb.put(upd(2, "x y"))
        texts = [(u.segment_id, u.committed_text, u.final) for u in iter(lambda: mb.get(0), None)]
        assert texts == [(1, "a b", True), (2, "x y", False)]

    def test_has_newer_and_close(self) -> None:
        mb = Mailbox()
        assert not mb.has_newer(3)
        mb.put(upd(3, "a"))
        assert mb.has_newer(3) and not mb.has_newer(4)
        mb.get(0)
        t0 = time.monotonic()
        threading.Timer(0.05, mb.close).start()
        assert mb.get(5.0) is None
        assert time.monotonic() - t0 < 2.0

    def test_slow_consumer_gets_every_final_once(self) -> None:
        mb = Mailbox()
        rng = random.Random(3)
        n_seg = 60

        def produce() -> None:
            for s in range(n_seg):
                for i in range(1, 8):
                    mb.put(upd(s, " ".join(["w"] * i), final=i == 7))
                    if rng.random() < 0.3:
                        time.sleep(0.0005)
            mb.close()

        got: list[AsrUpdate] = []
        th = threading.Thread(target=produce)
        th.start()
        while (u := mb.get(2.0)) is not None:
            got.append(u)
            time.sleep(0.001)  # the translator is slower than the recogniser
        th.join()
        finals = [u.segment_id for u in got if u.final]
        # Every final exactly once; behind, newer lines may come before older finished ones.
        assert sorted(finals) == list(range(n_seg)) and finals != sorted(finals)
        for s in range(n_seg):  # within a segment: growing text, final last
            seq = [u for u in got if u.segment_id == s]
            assert seq[-1].final and [len(u.committed_text) for u in seq] == sorted(
                len(u.committed_text) for u in seq
            )
        assert mb.replaced > 0


RECS = [
    SegmentRecord(0, 0.5, 2.25, "Hello there.", "Hallo zusammen.", "en", "de", 0.0),
    SegmentRecord(1, 3661.0, 3662.5, "Bye.", "Tschüss.", "en", "de", 0.0),
]


class TestTranscript:
    def test_srt(self) -> None:
        assert to_srt(RECS) == (
            "1\n00:00:00,500 --> 00:00:02,250\nHallo zusammen.\n\n"
            "2\n01:01:01,000 --> 01:01:02,500\nTschüss.\n"
        )
        assert to_srt(RECS[:1], "both") == (
            "1\n00:00:00,500 --> 00:00:02,250\nHello there.\nHallo zusammen.\n"
        )

    def test_vtt_and_text(self) -> None:
        assert to_vtt(RECS[1:], "source") == "WEBVTT\n\n01:01:01.000 --> 01:01:02.500\nBye.\n"
        assert to_text(RECS) == "Hallo zusammen.\nTschüss.\n"

    def test_roundtrip_and_export(self, tmp_path: Path) -> None:
        w = TranscriptWriter(tmp_path / "t" / "a.jsonl")
        for r in RECS:
            w.append(r)
        w.close()
        assert read_transcript(tmp_path / "t" / "a.jsonl") == RECS
        out = export(RECS, tmp_path / "x.vtt")
        assert out.read_text().startswith("WEBVTT")
        with pytest.raises(ValueError, match="unknown export format"):
            export(RECS, tmp_path / "x.doc")

    def test_side_round_trips_and_old_lines_have_none(self, tmp_path: Path) -> None:
        mine = SegmentRecord(2, 4.0, 5.0, "Yes.", "Ja.", "en", "de", 0.0, side="you")
        assert json.loads(mine.to_json())["side"] == "you"
        assert "side" not in json.loads(RECS[0].to_json())  # one input: written as before
        path = tmp_path / "a.jsonl"
        path.write_bytes(RECS[0].to_json().encode() + b"\n" + mine.to_json().encode() + b"\n")
        assert [r.side for r in read_transcript(path)] == ["", "you"]
        bad = json.loads(mine.to_json()) | {"side": 3}
        with pytest.raises(ValueError, match="side"):
            SegmentRecord.from_json(json.dumps(bad).encode())

    def test_exports_name_who_spoke(self) -> None:
        # Issue 31: with two inputs each line says who spoke; a line without a side (one
        # input, an older file) is written exactly as before, even in the same file.
        recs = [
            SegmentRecord(0, 0.5, 2.25, "Hallo zusammen.", "Hello everyone.", "de", "en", 0.0,
                          side="others"),
            SegmentRecord(1, 3.0, 4.0, "Hi.", "Hallo.", "en", "de", 0.0, side="you"),
            SegmentRecord(2, 5.0, 6.0, "Bye.", "Tschüss.", "en", "de", 0.0),
            SegmentRecord(3, 7.0, 8.0, "Eh.", "Äh.", "en", "de", 0.0, side="bob"),
        ]  # fmt: skip
        assert to_srt(recs) == (
            "1\n00:00:00,500 --> 00:00:02,250\nOthers: Hello everyone.\n\n"
            "2\n00:00:03,000 --> 00:00:04,000\nYou: Hallo.\n\n"
            "3\n00:00:05,000 --> 00:00:06,000\nTschüss.\n\n"
            "4\n00:00:07,000 --> 00:00:08,000\nÄh.\n"
        )
        assert to_srt(recs[1:2], "both") == ("1\n00:00:03,000 --> 00:00:04,000\nYou: Hi.\nHallo.\n")
        assert to_vtt(recs[:3]) == (
            "WEBVTT\n\n"
            "00:00:00.500 --> 00:00:02.250\n<v Others>Hello everyone.</v>\n\n"
            "00:00:03.000 --> 00:00:04.000\n<v You>Hallo.</v>\n\n"
            "00:00:05.000 --> 00:00:06.000\nTschüss.\n"
        )
        assert to_vtt(recs[1:2], "both") == (
            "WEBVTT\n\n00:00:03.000 --> 00:00:04.000\n<v You>Hi.\nHallo.</v>\n"
        )
        assert to_text(recs, "source") == "Others: Hallo zusammen.\nYou: Hi.\nBye.\nEh.\n"
        assert to_text(recs[:2], "both") == (
            "Others: Hallo zusammen.\nHello everyone.\nYou: Hi.\nHallo.\n"
        )

    def test_unwritable_folder_loses_nothing(self, tmp_path: Path) -> None:
        blocker = tmp_path / "transcripts"
        blocker.write_text("a file where the folder should be")
        w = TranscriptWriter(blocker / "a.jsonl")
        for r in RECS:
            with pytest.raises(OSError):
                w.append(r)
        assert w.waiting == 2 and w.records == RECS
        blocker.unlink()  # the user fixes it; the next finished line writes all three
        extra = SegmentRecord(2, 5.0, 6.0, "Again.", "Wieder.", "en", "de", 3.0)
        w.append(extra)
        w.close()
        assert w.waiting == 0
        assert read_transcript(blocker / "a.jsonl") == [*RECS, extra]

    def test_disk_full_mid_line_loses_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import subtitler.pipeline.transcript as tr

        path = tmp_path / "a.jsonl"
        w = TranscriptWriter(path)
        w.append(RECS[0])
        real_write = os.write
        calls: list[int] = []

        def full_disk(fd: int, data: bytes) -> int:
            """The disk fills up halfway through a line, once: half is written, then ENOSPC."""
            calls.append(len(data))
            if len(calls) == 1:
                return real_write(fd, bytes(data)[: len(data) // 2])
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
            return real_write(fd, data)

        monkeypatch.setattr(tr.os, "write", full_disk)
        with pytest.raises(OSError, match="No space left"):
            w.append(RECS[1])
        assert w.waiting == 1
        w.flush()  # space again (the app retries at the next finished line, and at close)
        w.close()
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 2  # the half line was cut away and written again whole
        assert read_transcript(path) == RECS

    def test_torn_inside_a_character_reads_the_rest(self, tmp_path: Path) -> None:
        """German or CJK text cut inside a UTF-8 sequence (a crash mid-write)."""
        path = tmp_path / "a.jsonl"
        w = TranscriptWriter(path)
        for r in RECS:
            w.append(r)
        w.close()
        torn = SegmentRecord(2, 7.0, 8.0, "Tokyo.", "東京。", "en", "ja", 4.0)
        line = json.dumps(asdict(torn), ensure_ascii=False).encode()
        cut = line.index("東".encode()) + 1  # one byte of a three-byte character
        with path.open("ab") as f:
            f.write(line[:cut])
        assert read_transcript(path) == RECS
        # A broken line in the middle costs that line only.
        with path.open("ab") as f:
            f.write(b"\n\xff\xfe{not json\n[1, 2]\nnull\n")
            f.write(line + b"\n")
        assert read_transcript(path) == [*RECS, torn]

    def test_a_record_repeated_verbatim_is_read_once(self, tmp_path: Path) -> None:
        path = tmp_path / "a.jsonl"
        lines = [json.dumps(asdict(r), ensure_ascii=False) for r in RECS]
        path.write_text("\n".join([lines[0], lines[0], lines[1], lines[1], lines[1]]) + "\n")
        assert read_transcript(path) == RECS

    def test_survives_kill_9(self, tmp_path: Path) -> None:
        path = tmp_path / "live.jsonl"
        code = f"""
import os, signal, sys
from pathlib import Path
from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter
w = TranscriptWriter(Path({str(path)!r}))
for i in range(5):
    w.append(SegmentRecord(i, i, i + 1, f"s{{i}}", f"t{{i}}", "en", "de", 0.0))
print("written", flush=True)
sys.stdin.readline()
"""
        p = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "written"
        os.kill(p.pid, signal.SIGKILL)  # no close(), no flush at exit
        p.wait(10)
        assert p.returncode == -signal.SIGKILL
        recs = read_transcript(path)
        assert [r.source for r in recs] == [f"s{i}" for i in range(5)]


def test_a_line_written_again_is_read_once_as_written_last(tmp_path: Path) -> None:
    """A line finished while the server was away is written untranslated, then again once
    translated: History and exports read it once, translated; another line with the same
    number (not the same words or times) is not taken for it."""
    from subtitler.pipeline.transcript import SegmentRecord, TranscriptWriter, read_transcript

    first = SegmentRecord(0, 0.0, 1.0, "hello.", "", "en", "de", 10.0)
    other = SegmentRecord(1, 1.0, 2.0, "bye.", "tschüss.", "en", "de", 11.0)
    again = SegmentRecord(0, 0.0, 1.0, "hello.", "hallo.", "en", "de", 12.0)
    same_number = SegmentRecord(0, 5.0, 6.0, "later.", "", "en", "de", 13.0)
    w = TranscriptWriter(tmp_path / "t.jsonl")
    for r in (first, other, again, same_number):
        w.append(r)
    w.close()
    # (the other line numbered 0 was said after "bye.": a meeting numbered from 0 again)
    assert read_transcript(tmp_path / "t.jsonl") == [again, other, same_number]
