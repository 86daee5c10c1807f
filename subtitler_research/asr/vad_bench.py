"""How Silero's recurrent state treats a change of speaker and microphone (issue 26).

    python -m subtitler_research.asr.vad_bench --devset DIR [--cache DIR] [--states carried,3x3]

For each way of running the state (``carried``: one state through the stream; ``SxK``: K copies
restarted every S seconds, the oldest one speaking, as ``SileroStream(state_s=S, states=K)``;
a suffix ``+L`` also scores every frame L dB louder, ``lift_db=L``; then ``~N`` scales a narrow
band's frames up to speech, ``narrow_scale=N``):

- changes of speaker and microphone: a first recording, then a second one; of the second one's
  speech frames (those Silero marks heard alone, from a fresh state: its own use), the share
  marked speech in its first second and first three seconds of speech, and over the whole;
- the development set (``all``) as one stream against its clips heard one by one from a fresh
  state: recall of their speech frames, and frames marked speech that they do not mark;
- soft speech: the whole set played 10 and 20 dB quieter, recall of the same speech frames, on
  the tune split's parts and on the report split's;
- false speech: the highest probability in a minute of silence and noise (the recipe of
  ``test_silence_and_noise_emit_no_words``), and the share of frames at 0.5 or more in game
  music from the development set's cache (Fish Fillets NG, GPL-2+);
- a narrow band: the whole set and the music through a telephone's band cut sharply (nothing
  outside 300-3400 Hz, ``subtitler_research.asr.degrade``), recall of the same speech frames
  and frames marked speech that the clips do not mark, and the music's share at 0.5 or more.

Needs the development set (``subtitler_research.asr.devset``) and its cache; the LJSpeech reader is
the ten clips in tests/data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from subtitler.asr.backend import SAMPLE_RATE, Samples
from subtitler.asr.vad import FRAME, SileroStream
from subtitler_research.asr.degrade import degraded
from subtitler_research.asr.devset import DEFAULT_CACHE

Probs = npt.NDArray[np.float32]
TESTS_DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
MUSIC = "extracted/fillets-ng-data/usr/share/games/fillets-ng/music"


def noise() -> Samples:
    """20 s of digital silence, 20 s of white noise, 20 s of louder brown noise (seeded)."""
    rng = np.random.default_rng(7)
    white = rng.standard_normal(20 * SAMPLE_RATE).astype(np.float32) * 0.02
    brown = np.cumsum(rng.standard_normal(20 * SAMPLE_RATE)).astype(np.float32)
    brown = ((brown - np.convolve(brown, np.ones(1600) / 1600, mode="same")) * 0.004).astype(
        np.float32
    )
    silence = np.zeros(20 * SAMPLE_RATE, np.float32)
    return np.concatenate([silence, white, brown])


def stream_factory(session: object, spec: str) -> Callable[[], SileroStream]:
    spec, _, scale = spec.partition("~")
    narrow = float(scale) if scale else None
    spec, _, lift = spec.partition("+")
    lift_db = float(lift) if lift else None
    if spec == "carried":
        return lambda: SileroStream(session, state_s=None, lift_db=lift_db, narrow_scale=narrow)
    s, k = spec.split("x")
    return lambda: SileroStream(
        session, state_s=float(s), states=int(k), lift_db=lift_db, narrow_scale=narrow
    )


def main(argv: list[str] | None = None) -> int:
    prog = "python -m subtitler_research.asr.vad_bench"
    ap = argparse.ArgumentParser(prog=prog, description=__doc__)
    ap.add_argument("--devset", type=Path, required=True, help="the built development set")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the devset's cache")
    ap.add_argument("--states", default="carried,1x2,2x2,3x3,4x4,8x8,3x3+12,3x3+18,3x3+18~0.5")
    a = ap.parse_args(argv)
    from subtitler.asr.faster_whisper import decode_audio_file, silero_session

    session = silero_session()

    def own(audio: Samples) -> Probs:
        """Silero's own use: one recording, a fresh state, as recorded."""
        return SileroStream.on_a_file(session)(audio)

    pause = np.zeros(SAMPLE_RATE // 2, np.float32)
    reader = np.concatenate(
        [
            x
            for p in sorted(TESTS_DATA.glob("LJ001-00*.flac"))
            for x in (decode_audio_file(p), pause)
        ]
    )

    def part(name: str, seconds: float | None = None) -> Samples:
        audio = decode_audio_file(a.devset / f"{name}.wav")
        return audio if seconds is None else audio[: round(seconds * SAMPLE_RATE)]

    cold, allison = part("en-spont-mfa-cold"), part("en-read-asterisk-allison", 30)
    pairs = {
        "LJ reader > MFA cold": (reader, cold),
        "MFA acoustic > MFA cold": (part("en-spont-mfa-acoustic"), cold),
        "Austen reader > Allison": (part("en-read-librivox-austen"), allison),
        "LJ reader > Dutch actors": (reader, part("nl-acted-fillets-kitchen", 30)),
    }
    whole = decode_audio_file(a.devset / "all.wav")
    manifest = json.loads((a.devset / "manifest.json").read_text(encoding="utf-8"))
    reference = np.zeros(len(whole) // FRAME, dtype=bool)  # each clip heard alone
    tune = np.zeros_like(reference)  # frames of the tune split's parts
    t = 0.0
    for p in manifest["parts"]:
        for c in p["clips"]:
            s0 = round((t + c["start_s"]) * SAMPLE_RATE)
            f0 = -(-s0 // FRAME)
            s1 = s0 + round(c["duration_s"] * SAMPLE_RATE)
            probs = own(whole[f0 * FRAME : s1])
            reference[f0 : f0 + len(probs)] = probs >= 0.5
        f0 = round(t * SAMPLE_RATE) // FRAME
        f1 = round((t + p["duration_s"]) * SAMPLE_RATE) // FRAME
        tune[f0:f1] = p["split"] == "tune"
        t += p["duration_s"]
    music_files = sorted((a.cache / MUSIC).glob("*.ogg"))
    music = np.concatenate([decode_audio_file(f)[: 20 * SAMPLE_RATE] for f in music_files])
    line, line_music = (degraded(x, snr_db=None, band="sharp") for x in (whole, music))

    quiet = "10 / 20 dB quieter: recall, tune / report"
    print(
        f"| state | {' | '.join(pairs)} | dev set recall / extra | {quiet} | noise max "
        "| music >= 0.5 | sharp telephone band: recall / extra; music >= 0.5 |"
    )
    print("|---|" + "---|" * (len(pairs) + 5))
    for spec in a.states.split(","):
        make = stream_factory(session, spec)
        cells = []
        for first, second in pairs.values():
            vad = make()
            vad(first)
            after = vad(second) >= 0.5
            speech = np.flatnonzero(own(second) >= 0.5)
            one, three = speech[: round(1 / (FRAME / SAMPLE_RATE))], speech[: round(3 / 0.032)]
            cells.append(
                f"{after[one].mean():.2f} / {after[three].mean():.2f} / {after[speech].mean():.2f}"
            )
        got = make()(whole)[: len(reference)] >= 0.5
        recall, extra = got[reference].mean(), got[~reference].mean()
        soft = []
        for db in (10, 20):
            heard = make()(whole * np.float32(10 ** (-db / 20)))[: len(reference)] >= 0.5
            split = (heard[reference & tune].mean(), heard[reference & ~tune].mean())
            soft.append(f"{split[0]:.2f} / {split[1]:.2f}")
        q = make()(noise())
        m = make()(music)
        narrow = make()(line)[: len(reference)] >= 0.5
        narrow_music = make()(line_music) >= 0.5
        print(
            f"| {spec} | {' | '.join(cells)} | {recall:.3f} / {extra:.3f} | {'; '.join(soft)} "
            f"| {q.max():.2f} | {np.mean(m >= 0.5):.4f} "
            f"| {narrow[reference].mean():.3f} / {narrow[~reference].mean():.3f}; "
            f"{np.mean(narrow_music):.4f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
