"""``python -m subtitler_research.pipeline.two_sided OUT``: a two-sided meeting from real
speech, as the app hears it: the meeting's audio (one speaker) and the user's microphone
(another), taking turns with some overlap, and the meeting's audio leaking into the
microphone (speakers, no headset) quieter and later.

Writes ``others.wav`` and ``mic.wav`` (16 kHz mono) and ``turns.tsv`` (side, start, end, what
was said), for ``python -m subtitler_research.pipeline.replay OUT/mic.wav --meeting
OUT/others.wav``. The default clips: LJSpeech for the meeting (../shared); for the user, the
Montreal Forced Aligner's speaker, JFK (tests/data) and faster-whisper's reader of the MIT
licence (../shared).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from subtitler.audio.sources import load_audio
from subtitler.pipeline.echo import common_in_order, echoed, words
from subtitler.types import OTHERS, YOU

RATE = 16000
Samples = npt.NDArray[np.float32]
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LJ = ROOT.parent / "shared" / "data" / "speech" / "ljspeech_LJ001_0001-0032"
FW = ROOT.parent / "shared" / "data" / "speech" / "faster-whisper_testdata"
# (file, what is said, the part of the file: from, to in s)
YOU_CLIPS = (
    (DATA / "mfa_cold_corpus_0-13s.flac", "uh so this is the sick corpus uh i have a cold so i "
     "probably sound quite different than the acoustic corpus the recording environment is "
     "also quite different", 0.0, None),
    # The MIT licence read in English (then in German, from 29.1 s: left out).
    (FW / "multilingual.mp3", "Permission is hereby granted, free of charge, to any person "
     "obtaining a copy of this software and associated documentation files, to deal in the "
     "software without restriction, including without limitation the rights to use, copy, "
     "modify, merge, publish, distribute, sublicense, and/or sell copies of the software, and "
     "to permit persons to whom the software is furnished to do so, subject to the following "
     "conditions: The above copyright notice and this permission notice shall be included in "
     "all copies or substantial portions of the software.", 0.0, 29.1),
    (DATA / "jfk.flac", "And so, my fellow Americans, ask not what your country can do for "
     "you, ask what you can do for your country.", 0.0, None),
    (DATA / "mfa_acoustic_corpus_14s-end.flac", "just saying some words and here's some more "
     "words words words words um and that should be all thanks", 0.0, None),
)  # fmt: skip


@dataclass(frozen=True)
class Turn:
    side: str  # types.OTHERS or types.YOU
    start: float  # s
    audio: Samples
    text: str

    @property
    def end(self) -> float:
        return self.start + len(self.audio) / RATE


def take_turns(
    others: Sequence[tuple[Samples, str]],
    you: Sequence[tuple[Samples, str]],
    *,
    gap_s: float = 0.8,
    overlap_s: float = 1.0,
    overlap_every: int = 3,
) -> list[Turn]:
    """The two sides' clips in turns (a run of the meeting's, then one of the user's, and so
    on, as evenly as the counts allow); every ``overlap_every``-th turn starts ``overlap_s``
    before the one before it ends (people talk over each other), the others ``gap_s`` after."""
    per_you = max(1, round(len(others) / max(1, len(you))))
    order: list[tuple[str, tuple[Samples, str]]] = []
    o = iter(others)
    for clip in you:
        order += [(OTHERS, c) for c in _take(o, per_you)]
        order.append((YOU, clip))
    order += [(OTHERS, c) for c in o]
    turns: list[Turn] = []
    t = 0.5
    for i, (side, (audio, text)) in enumerate(order):
        if turns:
            prev = turns[-1]
            changes = side != prev.side
            t = prev.end - overlap_s if changes and i % overlap_every == 0 else prev.end + gap_s
        turns.append(Turn(side, max(0.0, t), audio, text))
    return turns


def _take(it: object, n: int) -> list[tuple[Samples, str]]:
    out = []
    for _ in range(n):
        x = next(it, None)  # type: ignore[call-overload]
        if x is None:
            break
        out.append(x)
    return out


def render(
    turns: Sequence[Turn], *, echo_db: float = -20.0, echo_delay_s: float = 0.15
) -> tuple[Samples, Samples]:
    """(the meeting's audio, the microphone): each side's turns where they fall; the
    microphone also hears the meeting's audio ``echo_db`` quieter, ``echo_delay_s`` later."""
    n = int((max(t.end for t in turns) + echo_delay_s + 1.0) * RATE)
    others, mic = np.zeros(n, np.float32), np.zeros(n, np.float32)
    for t in turns:
        at = int(t.start * RATE)
        target = others if t.side == OTHERS else mic
        target[at : at + len(t.audio)] += t.audio
    if echo_db is not None:
        d = int(echo_delay_s * RATE)
        mic[d:] += others[: n - d] * np.float32(10 ** (echo_db / 20))
    return others, np.clip(mic, -1.0, 1.0)


def write(out: Path, turns: Sequence[Turn], others: Samples, mic: Samples) -> None:
    import soundfile as sf

    out.mkdir(parents=True, exist_ok=True)
    sf.write(out / "others.wav", others, RATE, subtype="PCM_16")
    sf.write(out / "mic.wav", mic, RATE, subtype="PCM_16")
    rows = [f"{t.side}\t{t.start:.2f}\t{t.end:.2f}\t{t.text}" for t in turns]
    (out / "turns.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def lj_clips(n: int) -> list[tuple[Samples, str]]:
    texts = dict(
        line.split("|", 1)
        for line in (LJ / "transcripts.txt").read_text(encoding="utf-8").splitlines()
        if "|" in line
    )
    wavs = sorted((LJ / "wavs").glob("*.wav"))[:n]
    return [(load_audio(w), texts.get(w.name, "")) for w in wavs]


def score(turns_tsv: Path, replay_json: Path) -> dict[str, Any]:
    """How a replay of a two-sided meeting heard each side (its ``segments``, from
    ``replay --json``) against what was said (``turns.tsv``): per side the share of its words
    found in order among that side's lines, and on the user's side how many words repeat
    the meeting's (the leak that stayed: runs of two or more, as the echo gate sees them)."""
    said: dict[str, list[str]] = {OTHERS: [], YOU: []}
    for row in turns_tsv.read_text(encoding="utf-8").splitlines():
        side, _t0, _t1, text = row.split("\t", 3)
        said[side] += words(text)
    segments = json.loads(replay_json.read_text(encoding="utf-8"))["segments"]
    heard = {side: words(" ".join(s["source"] for s in segments if s.get("side") == side))
             for side in (OTHERS, YOU)}  # fmt: skip
    out: dict[str, Any] = {}
    for side in (OTHERS, YOU):
        found = common_in_order(said[side], heard[side])
        out[side] = {
            "words_said": len(said[side]),
            "words_heard_share": round(found / max(1, len(said[side])), 3),
        }
    leak = sum(echoed(heard[YOU], said[OTHERS]))
    out[YOU]["meeting_words_on_your_lines"] = leak
    out[YOU]["your_line_words"] = len(heard[YOU])
    return out


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["score"]:
        print(json.dumps(score(Path(argv[1]), Path(argv[2])), indent=1))
        return 0
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.pipeline.two_sided",
        epilog="python -m subtitler_research.pipeline.two_sided score OUT/turns.tsv REPLAY.json",
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("--meeting-clips", type=int, default=9, help="LJSpeech clips (others)")
    ap.add_argument("--echo-db", type=float, default=-20.0)
    ap.add_argument("--echo-delay", type=float, default=0.15)
    a = ap.parse_args(argv)
    if not LJ.is_dir() or not FW.is_dir():
        print(f"error: {LJ.parent} not found (../shared)", file=sys.stderr)
        return 2
    you = [
        (load_audio(path)[int(t0 * RATE) : int(t1 * RATE) if t1 else None], text)
        for path, text, t0, t1 in YOU_CLIPS
    ]
    turns = take_turns(lj_clips(a.meeting_clips), you)
    others, mic = render(turns, echo_db=a.echo_db, echo_delay_s=a.echo_delay)
    write(a.out, turns, others, mic)
    print(f"{len(turns)} turns, {len(mic) / RATE:.1f} s: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
