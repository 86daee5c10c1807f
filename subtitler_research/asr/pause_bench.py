"""What Silero hears in the pauses between utterances, and which pauses hold words (issue 26).

    python -m subtitler_research.asr.pause_bench DIR [DIR ...]

Each DIR is a talk built by ``tools/asr_speech_bench.py devset`` (``talk.wav`` and the timing
reference ``timing.tsv``). The talk runs through Silero as the app runs it (``SileroStream``,
``UtteranceDetector``); for every pause of at most ``--longest`` seconds between two utterances
(from the end of one, padded, to the start of the next, padded, as the recogniser's windows
are) it prints the seconds of frames Silero doubted (under speech, at or above the detector's
``doubt_threshold``) and the reference words whose middle lies in it. The streaming policy
takes such a pause into the next utterance's window when it has ``bridge_doubt_s`` of doubted
frames (``StreamingOptions``): the summary says how many pauses with and without words (not
counting hesitations, which WER leaves out) that threshold takes in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from subtitler.asr.streaming import StreamingOptions
from subtitler.asr.vad import SileroStream, UtteranceDetector, VadOptions
from subtitler_research.asr.oracle import read_words_tsv
from subtitler_research.asr.wer import normalize_word


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m subtitler_research.asr.pause_bench")
    ap.add_argument("talks", type=Path, nargs="+", help="talk folders (talk.wav, timing.tsv)")
    ap.add_argument("--longest", type=float, default=StreamingOptions().bridge_s)
    a = ap.parse_args(argv)
    from subtitler.asr.faster_whisper import decode_audio_file, silero_session

    opt = StreamingOptions()
    pad, bar = opt.speech_pad_s, opt.bridge_doubt_s
    session = silero_session()
    for folder in a.talks:
        audio = decode_audio_file(folder / "talk.wav")
        words = read_words_tsv(folder / "timing.tsv")
        vad, det = SileroStream(session), UtteranceDetector(VadOptions())
        events = det.feed(vad(audio)) + det.close()  # (the same in any blocks: SileroStream)
        starts = [e.t for e in events if e.kind == "start"]
        ends = [e.t for e in events if e.kind == "end"]
        taken = {True: 0, False: 0}
        total = {True: 0, False: 0}
        for end, start in zip(ends, starts[1:], strict=False):
            g0, g1 = end + pad, start - pad
            if not 0 < g1 - g0 <= a.longest:
                continue
            # (hesitations, which WER leaves out, are not counted as words)
            inside = [
                w.text.strip()
                for w in words
                if g0 < (w.start + w.end) / 2 < g1 and normalize_word(w.text)
            ]
            doubt = det.doubt_between(g0, g1)
            total[bool(inside)] += 1
            taken[bool(inside)] += doubt >= bar
            print(
                f"{folder.name} {g0:7.2f}-{g1:7.2f} s ({g1 - g0:.2f} s): doubted {doubt:.2f} s"
                f"{' (taken in)' if doubt >= bar else ''}; words: {' '.join(inside)}"
            )
        print(
            f"{folder.name}: pauses of at most {a.longest:g} s with {bar:g} s doubted, taken in: "
            f"{taken[True]} of {total[True]} with words, {taken[False]} of {total[False]} "
            "without"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
