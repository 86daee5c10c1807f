"""Build a word-timestamped talk from LJSpeech clips (for the oracle benchmark).

No aligner is available offline, so word times are *derived*, not measured: Silero VAD finds
the speech regions of each clip, and the transcript's words are spread over them in proportion
to their length in characters. Clips are joined with a fixed pause, as sentences of a talk.

``python -m subtitler_research.asr.talk LJSPEECH_DIR --tsv OUT.tsv [--wav OUT.wav] [--gap 0.5]``
"""

from __future__ import annotations

import argparse
import sys
import wave
from pathlib import Path

import numpy as np

from subtitler.asr.backend import SAMPLE_RATE, AsrError, Samples
from subtitler.asr.vad import FRAME_S, SileroStream
from subtitler.types import Word


def speech_regions(
    probs: np.ndarray, threshold: float = 0.5, bridge_s: float = 0.1
) -> list[tuple[float, float]]:
    """Runs of speech frames, joined across gaps shorter than ``bridge_s``."""
    regions: list[tuple[float, float]] = []
    for i, p in enumerate(probs.tolist()):
        if p < threshold:
            continue
        t = i * FRAME_S
        if regions and t - regions[-1][1] < bridge_s:
            regions[-1] = (regions[-1][0], t + FRAME_S)
        else:
            regions.append((t, t + FRAME_S))
    return regions


def allocate_words(text: str, regions: list[tuple[float, float]], offset: float) -> list[Word]:
    """Spread the words of ``text`` over ``regions`` by character count (with a space each)."""
    words = text.split()
    total = sum(e - s for s, e in regions)
    if not words or total <= 0:
        return []
    weights = np.array([len(w) + 1 for w in words], dtype=np.float64)
    edges = np.concatenate([[0.0], np.cumsum(weights) / weights.sum() * total])

    def at(x: float) -> float:  # speech-time position -> clip time
        for s, e in regions:
            if x <= e - s + 1e-9:
                return s + x
            x -= e - s
        return regions[-1][1]

    out = []
    for i, w in enumerate(words):
        start, end = at(edges[i] + 1e-6), at(edges[i + 1])
        out.append(Word(w, round(offset + start, 3), round(offset + end, 3)))
    return out


def build_talk(
    clips: list[tuple[Samples, str]], session: object, gap_s: float = 0.5
) -> tuple[Samples, list[Word]]:
    """Join (audio, transcript) clips with ``gap_s`` of silence; derive the word times."""
    parts: list[Samples] = []
    words: list[Word] = []
    t = 0.0
    pause = np.zeros(round(gap_s * SAMPLE_RATE), dtype=np.float32)
    for audio, text in clips:
        # One recording, as recorded: Silero's own use.
        probs = SileroStream.on_a_file(session)(audio)
        words += allocate_words(text, speech_regions(probs), t)
        parts += [audio, pause]
        t += (len(audio) + len(pause)) / SAMPLE_RATE
    return np.concatenate(parts), words


def write_wav(path: Path, audio: Samples) -> None:
    pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(SAMPLE_RATE)
        f.writeframes(pcm.tobytes())


def write_words_tsv(path: Path, words: list[Word], header: str = "") -> None:
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{w.start:.3f}\t{w.end:.3f}\t{w.text.strip()}" for w in words]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler_research.asr.talk", description=__doc__)
    ap.add_argument("ljspeech_dir", type=Path, help="folder with transcripts.txt and wavs/")
    ap.add_argument("--tsv", type=Path, required=True, help="word times out (start, end, word)")
    ap.add_argument("--wav", type=Path, help="the joined talk as a 16 kHz WAV")
    ap.add_argument("--gap", type=float, default=0.5, help="pause between clips (s)")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N clips")
    a = ap.parse_args(argv)
    from subtitler.asr.faster_whisper import decode_audio_file, silero_session

    try:
        listing = (a.ljspeech_dir / "transcripts.txt").read_text(encoding="utf-8").splitlines()
        rows = [line.split("|", 1) for line in listing if "|" in line]
        if a.limit:
            rows = rows[: a.limit]
        clips = [(decode_audio_file(a.ljspeech_dir / "wavs" / f), text) for f, text in rows]
    except (OSError, AsrError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    audio, words = build_talk(clips, silero_session(), a.gap)
    header = (
        f"LJSpeech {rows[0][0]}..{rows[-1][0]} joined with {a.gap} s pauses; word times derived "
        "from Silero VAD speech regions + allocation by character count (not a forced alignment)"
    )
    write_words_tsv(a.tsv, words, header)
    if a.wav:
        write_wav(a.wav, audio)
    print(f"{len(words)} words, {len(audio) / SAMPLE_RATE:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
