"""How long Meeting history takes to open and to follow a search, on a long meeting.

    QT_QPA_PLATFORM=offscreen python tools/history_bench.py [--lines 30000] [--word 1000000]
        [--meetings 336 --hours 1.5]

Writes a meeting of ``--lines`` lines (12 words each, and a translation; 50 hours at one
line per 6 s) into a temporary transcripts folder, opens the History window on it (shown,
offscreen) and types "bud" into its search one key at a time; then a meeting of one line
that is one word of ``--word`` characters (a damaged or hand-made file); then a history of
``--meetings`` meetings of ``--hours`` each (a line every 5 s), opened, opened again
(Refresh) and searched. Prints the seconds each took: "open" until the window is shown,
"listed" until the meetings read (off the window's thread) are listed, "whole" until the
meeting chosen is in the text, every line (a long one comes in pieces), "held" the longest
the window's thread did not answer meanwhile (a timer of 10 ms); a key's time is how long
until the meeting is whole again, with the longest the thread was held.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from subtitler.ui.history import HistoryDialog  # noqa: E402

WORDS = "the meeting will start soon we ship the release on friday please review the budget".split()


def _write(path: Path, sources: list[str]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i, s in enumerate(sources):
            rec = {"segment_id": i, "start": 6.0 * i, "end": 6.0 * i + 5.0, "source": s}
            rec |= {"translation": s.upper(), "src_lang": "en", "tgt_lang": "de"}
            f.write(json.dumps(rec | {"wall_time": 1.7e9 + 6 * i}) + "\n")


class _Held:
    """The longest the window's thread went without answering a 10 ms timer, from ``start``
    until ``stop`` (the last wait too)."""

    def __init__(self) -> None:
        self.gaps = [0.0]
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.timeout.connect(self.tick)

    def tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start(10)

    def stop(self) -> float:
        self.tick()
        self.timer.stop()
        return max(self.gaps)


def _until_whole(dlg: HistoryDialog) -> None:
    """Waits (the event loop running) until the meeting chosen is in the text whole."""
    if dlg.shown_whole:
        return
    loop = QEventLoop()
    dlg.whole.connect(loop.quit)
    loop.exec()
    dlg.whole.disconnect(loop.quit)


def _timed(qapp: QApplication, step: object, dlg: HistoryDialog) -> str:
    held = _Held()
    held.start()
    t0 = time.perf_counter()
    step()  # type: ignore[operator]
    _until_whole(dlg)
    return f"{time.perf_counter() - t0:.2f} s (held {held.stop():.2f} s)"


def _read(qapp: QApplication, step: object, dlg: HistoryDialog | None = None) -> str:
    """Runs ``step`` (which opens a window, or reads ``dlg`` again) and waits for the read and
    the meeting chosen whole: how long ``step`` held the window's thread ("open"), when the
    meetings were listed and the meeting shown whole, and the longest the thread went
    without answering a 10 ms timer meanwhile."""
    held = _Held()
    loop = QEventLoop()
    listed: list[float] = []
    t0 = time.perf_counter()
    step()  # type: ignore[operator]
    window = dlg or _DIALOGS[-1]
    window.read.connect(lambda: (listed.append(time.perf_counter()), loop.quit()))
    qapp.processEvents()  # (shown: painted once)
    opened = time.perf_counter() - t0
    held.start()
    if not listed:
        loop.exec()
    _until_whole(window)
    whole = time.perf_counter() - t0
    return (
        f"open {opened:.2f} s, listed {listed[0] - t0:.2f} s, whole {whole:.2f} s"
        f" (held at most {held.stop():.2f} s)"
    )


_DIALOGS: list[HistoryDialog] = []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=30000)
    ap.add_argument("--word", type=int, default=1_000_000)
    ap.add_argument("--meetings", type=int, default=336)
    ap.add_argument("--hours", type=float, default=1.5)
    args = ap.parse_args()
    qapp = QApplication.instance() or QApplication([])
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        long, word = Path(tmp, "long"), Path(tmp, "word")
        long.mkdir()
        word.mkdir()
        _write(
            long / "20260101-090000.jsonl",
            [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(args.lines)],
        )
        _write(word / "20260101-090000.jsonl", ["a" * args.word])
        dialogs = _DIALOGS

        def open_on(folder: Path) -> None:
            dialogs.append(HistoryDialog(folder))
            dialogs[-1].show()

        line = f"{args.lines} lines: " + _read(qapp, lambda: open_on(long))
        dlg = dialogs[-1]
        for key in "bud":
            t = _timed(qapp, lambda k=key: dlg.query.setText(dlg.query.text() + k), dlg)  # type: ignore[misc]
            line += f", key {key!r} {t}"
        print(line)
        print(f"one word of {args.word:,} characters: " + _read(qapp, lambda: open_on(word)))
        many = Path(tmp, "many")
        many.mkdir()
        per = int(args.hours * 3600 / 5)
        for m in range(args.meetings):
            day = f"2026{m // 28 % 12 + 1:02d}{m % 28 + 1:02d}-{m // 336:02d}0000"
            _write(
                many / f"{day}.jsonl",
                [" ".join(rng.choice(WORDS) for _ in range(12)) + f" {i}" for i in range(per)],
            )
        line = f"{args.meetings} meetings of {args.hours} h: " + _read(qapp, lambda: open_on(many))
        dlg = dialogs[-1]
        line += ", Refresh: " + _read(qapp, dlg.reload, dlg)
        for key in "bud":
            t = _timed(qapp, lambda k=key: dlg.query.setText(dlg.query.text() + k), dlg)  # type: ignore[misc]
            line += f", key {key!r} {t}"
        print(line)


if __name__ == "__main__":
    main()
