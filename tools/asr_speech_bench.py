"""Real-speech streaming benchmark: this project's recogniser next to ÚFAL's whisper_streaming.

Research tooling (not shipped). Steps, each writing files into --out:

    python tools/asr_speech_bench.py talk LJSPEECH_DIR --out DIR      # talk.wav, talk.tsv
    python tools/asr_speech_bench.py devset DEVSET_DIR --set NAME --out DIR  # ... + parts.json
    python tools/asr_speech_bench.py degrade SRC_DIR --out DIR [--reverb S] [--telephone|--sharp] \
        [--snr DB]
    python tools/asr_speech_bench.py reference --out DIR --model M      # offline.tsv, timing.tsv
    python tools/asr_speech_bench.py ours --out DIR --model M [replay flags...]
    python tools/asr_speech_bench.py peer --out DIR --model M --peer whisper_online.py
    python tools/asr_speech_bench.py score --out DIR RUN.json ...

- talk: the LJSpeech clips joined with pauses (``subtitler_research.asr.talk``); the transcript
  is the text reference.
- devset: one set of the development set (``subtitler_research.asr.devset``: a part, a split,
  the English parts of a split) as the talk, with where each part lies (parts.json): scores are
  given per part too.
- degrade: a talk (or set) as heard in worse conditions, for speech the recogniser was not
  tuned on (``subtitler_research.asr.degrade``): a reverberant room (``--reverb``: its RT60),
  a telephone's band, 300-3400 Hz (``--telephone``: a 6th-order band-pass's roll-off;
  ``--sharp``: nothing outside it), pink noise at an SNR over the speech's louder half
  (``--snr``). Its timing reference is the clean talk's (SRC_DIR's
  timing.tsv: the words lie where they did), which ``reference`` then keeps.
- reference: the same model transcribes the whole file offline (faster-whisper's own
  ``transcribe``, beam 5, word timestamps): its WER is the accuracy target, and its word times,
  aligned to the transcript, are the timing reference for both systems. ``--language auto``:
  the language is detected (``multilingual=True``: per 30 s window) instead of given;
  ``--per-part``: each part of a development set is transcribed as a file of its own, its
  language detected on it (``--language part``: the manifest's).
- ours: ``python -m subtitler_research.asr.replay FILE --json`` (simulated 1x, or --realtime).
- peer: whisper_streaming's ``whisper_online.py`` simulation (online mode: real time, wall
  clock) on the same file and model. Only its hard-coded device (CUDA, float16) is changed, to
  the CPU with int8 and the same thread count, in a copy made in a temporary folder.
- score: WER, commit delay and display latency against the timing reference, RTF, lag, and
  the longest stretch of speech with no word recognised: the time from the start of the first to
  the end of the last of consecutive transcript words none of which the system recognised
  (its hypothesis has the same word there; pauses between them count up to 0.5 s), by the
  timing reference. ``offline.tsv`` is scored the same way (WER and stretch only).

Per transcript word matched in a system's committed text (jiwer's alignment after the same
normalisation, ``subtitler_research.asr.wer``): commit delay = when the system committed it - its
end in the timing reference; display latency = when its text was first on screen (tentative text
included) - the same end. whisper_streaming shows only committed text, so there both are the
same.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from subtitler_research.asr.degrade import degraded  # noqa: E402
from subtitler_research.asr.oracle import read_words_tsv  # noqa: E402
from subtitler_research.asr.wer import (  # noqa: E402
    align,
    normalize_word,
    spell_numbers,
    word_error_rate,
)


@dataclass
class HypWord:
    text: str
    committed_at: float
    shown_at: float
    start: float | None = None  # the system's own time for the word, when it says
    end: float | None = None


def merge_pieces(words: list[HypWord]) -> list[HypWord]:
    """Whole words from Whisper's words, whose text carries its leading space: one without it
    continues the word before ("d'" + "agent"), so it is committed or shown with its last
    piece. Texts come out stripped."""
    out: list[HypWord] = []
    for w in words:
        if out and w.text and not w.text[0].isspace():
            last = out[-1]
            out[-1] = HypWord(last.text + w.text, max(last.committed_at, w.committed_at),
                              max(last.shown_at, w.shown_at), last.start, w.end)  # fmt: skip
        else:
            out.append(w)
    return [HypWord(w.text.strip(), w.committed_at, w.shown_at, w.start, w.end) for w in out]


def _tokens(words: list[str]) -> tuple[list[str], list[int]]:
    toks: list[str] = []
    owner: list[int] = []
    for i, w in enumerate(words):
        for t in normalize_word(w):
            toks.append(t)
            owner.append(i)
    return toks, owner


def word_map(ref: list[str], hyp: list[str]) -> dict[int, int]:
    """Reference word index -> the first hypothesis word aligned to one of its tokens."""
    rt, rown = _tokens(ref)
    ht, hown = _tokens(hyp)
    out: dict[int, int] = {}
    for h, r in enumerate(align(rt, ht)):
        if r is not None:
            out.setdefault(rown[r], hown[h])
    return out


def alignment(ref: list[str], hyp: list[str]) -> tuple[list[bool | None], list[int | None]]:
    """(for every reference word: was it recognised, i.e. one of its tokens aligned to the same
    token of the hypothesis; None for a word the normaliser drops ("um"); for every hypothesis
    word: the reference word it was aligned to, equal or substituted, None for an insertion)."""
    rt, rown = _tokens(ref)
    ht, hown = _tokens(hyp)
    hit: list[bool | None] = [None] * len(ref)
    for i in rown:
        hit[i] = False
    owner: list[int | None] = [None] * len(hyp)
    for h, t in enumerate(align(rt, ht)):
        if t is not None:
            hit[rown[t]] = hit[rown[t]] or rt[t] == ht[h]
            if owner[hown[h]] is None:
                owner[hown[h]] = rown[t]
    return hit, owner


# A pause between words longer than this is not speech: a stretch counts it up to this long.
PAUSE_S = 0.5


def longest_miss(timing: list[Any], hit: list[bool | None]) -> tuple[float, str]:
    """The longest stretch of speech in which no transcript word was recognised: consecutive
    transcript words none of which the system wrote, timed from the first one's start to the
    last one's end, with each pause between them counted up to PAUSE_S (longer pauses are not
    speech: two clips' words either side of one do not make a long stretch). Words the
    normaliser drops ("um") neither end nor start a stretch. Also where it starts."""
    kept = [i for i, h in enumerate(hit) if h is not None]
    timing, hit = [timing[i] for i in kept], [hit[i] for i in kept]
    best, where, i = 0.0, "", 0
    while i < len(hit):
        if hit[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(hit) and not hit[j + 1]:
            j += 1
        span = timing[j].end - timing[i].start
        span -= sum(max(0.0, timing[k + 1].start - timing[k].end - PAUSE_S) for k in range(i, j))
        if span > best:
            best, where = span, f"{timing[i].start:.1f} s ({timing[i].text.strip()!r}...)"
        i = j + 1
    return round(best, 2), where


def part_at(parts: list[dict[str, Any]], t: float) -> int:
    """The part of the talk time ``t`` lies in (the last one for a time after them all)."""
    return next((k for k, p in enumerate(parts) if t < p["t1"]), len(parts) - 1)


def per_part(
    parts: list[dict[str, Any]], timing: list[Any], hyp: list[str], hit: list[bool | None],
    owner: list[int | None], ref: list[str] | None = None,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """WER and longest stretch without a recognised word per part of the talk. A transcript
    word belongs to the part its (reference) time lies in; a hypothesis word to the part of the
    transcript word it was aligned to, an inserted one to that of the word before it. ``ref``:
    the transcript's words as scored (numbers spelt in their part's language), if not as timed."""

    ref_part = [part_at(parts, 0.5 * (w.start + w.end)) for w in timing]
    hyp_part: list[int] = []
    last = 0
    for o in owner:
        last = ref_part[o] if o is not None else last
        hyp_part.append(last)
    out: dict[str, dict[str, Any]] = {}
    for k, p in enumerate(parts):
        idx = [i for i, x in enumerate(ref_part) if x == k]
        if not idx:
            continue
        ref_k = " ".join(ref[i] if ref else timing[i].text.strip() for i in idx)
        hyp_k = " ".join(h for h, x in zip(hyp, hyp_part, strict=True) if x == k)
        w = word_error_rate(ref_k, hyp_k)
        miss, where = longest_miss([timing[i] for i in idx], [hit[i] for i in idx])
        out[p["name"]] = {"wer": round(w.wer, 4), "wer_line": w.line(), "longest_miss_s": miss,
                          "longest_miss_at": where}  # fmt: skip
    return out


def _pct(xs: list[float], q: float) -> float | None:
    return round(float(np.percentile(xs, q)), 3) if xs else None


# -- talk and reference ----------------------------------------------------------------------


def cmd_talk(a: argparse.Namespace) -> int:
    from subtitler_research.asr import talk

    a.out.mkdir(parents=True, exist_ok=True)
    return talk.main(
        [str(a.ljspeech_dir), "--tsv", str(a.out / "talk.tsv"), "--wav", str(a.out / "talk.wav"),
         "--gap", str(a.gap)]
    )  # fmt: skip


def cmd_devset(a: argparse.Namespace) -> int:
    """The set's audio and word times as talk.wav / talk.tsv, and where each part lies."""
    manifest = json.loads((a.devset_dir / "manifest.json").read_text(encoding="utf-8"))
    parts = {p["name"]: p for p in manifest["parts"]}
    names = manifest["sets"][a.set]["parts"] if a.set in manifest["sets"] else [a.set]
    a.out.mkdir(parents=True, exist_ok=True)
    for ext in ("wav", "tsv"):
        dest = a.out / f"talk.{ext}"
        dest.unlink(missing_ok=True)
        dest.symlink_to((a.devset_dir / f"{a.set}.{ext}").resolve())
    t = 0.0
    spans = []
    for n in names:
        p = parts[n]
        spans.append({"name": n, "language": p["language"], "style": p["style"],
                      "t0": round(t, 3), "t1": round(t + p["duration_s"], 3)})  # fmt: skip
        t += p["duration_s"]
    (a.out / "parts.json").write_text(json.dumps(spans, indent=1), encoding="utf-8")
    print(f"{a.set}: {len(spans)} part(s), {t:.1f} s -> {a.out}")
    return 0


_CLEAN_TIMING = "# the clean talk's word times (degrade)"


def _clean_timing(out: Path) -> bool:
    t = out / "timing.tsv"
    return t.exists() and t.read_text(encoding="utf-8").startswith(_CLEAN_TIMING)


def cmd_degrade(a: argparse.Namespace) -> int:
    from faster_whisper import decode_audio

    from subtitler_research.asr.talk import write_wav

    a.out.mkdir(parents=True, exist_ok=True)
    audio = decode_audio(str(a.src_dir / "talk.wav"))
    band = "sharp" if a.sharp else "telephone" if a.telephone else None
    write_wav(a.out / "talk.wav", degraded(audio, snr_db=a.snr, band=band, reverb_s=a.reverb))
    for name in ("talk.tsv", "parts.json"):
        if (a.src_dir / name).exists():
            shutil.copy(a.src_dir / name, a.out / name)
    timing = (a.src_dir / "timing.tsv").read_text(encoding="utf-8").split("\n", 1)[1]
    (a.out / "timing.tsv").write_text(f"{_CLEAN_TIMING}\n{timing}", encoding="utf-8")
    print(f"{a.src_dir} -> {a.out} (snr {a.snr} dB, band {band or 'full'}, RT60 {a.reverb} s)")
    return 0


def _language(a: argparse.Namespace) -> str | None:
    return None if a.language == "auto" else a.language


def cmd_reference(a: argparse.Namespace) -> int:
    import time

    from faster_whisper import WhisperModel, decode_audio

    ref = [w.text.strip() for w in read_words_tsv(a.out / "talk.tsv")]
    m = WhisperModel(a.model, device="cpu", compute_type="int8", cpu_threads=a.threads)
    audio = decode_audio(str(a.out / "talk.wav"))
    # --per-part: every part of a development set a file of its own (its language detected
    # on it, or the manifest's with --language part), as offline transcription is used.
    pieces = [(0.0, len(audio) / 16000, _language(a))]
    if a.per_part:
        parts = json.loads((a.out / "parts.json").read_text())
        pieces = [
            (p["t0"], p["t1"], p["language"] if a.language == "part" else _language(a))
            for p in parts
        ]
    results = {}
    for beam in (5, 1):
        t = time.perf_counter()
        words: list[Any] = []
        for t0, t1, language in pieces:
            segs, _ = m.transcribe(
                audio[round(t0 * 16000) : round(t1 * 16000)],
                language=language,
                multilingual=language is None and not a.per_part,
                beam_size=beam,
                word_timestamps=True,
            )
            words += [
                HypWord(w.word, 0.0, 0.0, w.start + t0, w.end + t0) for s in segs for w in s.words
            ]
        words = merge_pieces(words)
        spent = time.perf_counter() - t
        hyp = " ".join(w.text for w in words)
        w = word_error_rate(" ".join(ref), hyp)
        results[f"beam{beam}"] = {"wer": w.wer, "line": w.line(), "rtf": spent * 16000 / len(audio)}
        print(f"offline beam {beam}: {w.line()}, RTF {spent * 16000 / len(audio):.3f}")
        if beam == 5:
            (a.out / "offline.tsv").write_text(
                "".join(f"{x.start:.3f}\t{x.end:.3f}\t{x.text.strip()}\n" for x in words)
            )
            hw = [x.text.strip() for x in words]
            m_ = word_map(ref, hw)
            known = {r: (words[h].start or 0.0, words[h].end or 0.0) for r, h in m_.items()}
            lines = []
            for i, r in enumerate(ref):
                if i in known:
                    s, e = known[i]
                else:  # not recognised offline: between its neighbours
                    prev = max((k for k in known if k < i), default=None)
                    nxt = min((k for k in known if k > i), default=None)
                    s = known[prev][1] if prev is not None else 0.0
                    e = known[nxt][0] if nxt is not None else s
                    e = max(e, s)
                lines.append(f"{s:.3f}\t{e:.3f}\t{r}")
            if not _clean_timing(a.out):  # a degraded talk keeps the clean talk's times
                (a.out / "timing.tsv").write_text(
                    "# the transcript with word times from the model's offline beam-5 "
                    "transcription (faster-whisper, word_timestamps); unmatched words "
                    "interpolated\n" + "\n".join(lines) + "\n"
                )
    (a.out / "offline.json").write_text(json.dumps(results, indent=1))
    return 0


# -- runs ------------------------------------------------------------------------------------


def ours_words(payload: dict[str, Any]) -> list[HypWord]:
    """Committed words of a replay JSON, with commit and first-shown times."""
    from subtitler.types import AsrUpdate, Word
    from subtitler_research.asr.metrics import shown_words

    first: dict[tuple[int, int, str], float] = {}
    out: list[HypWord] = []
    seen: set[tuple[int, int]] = set()
    for d in payload["updates"]:
        d = dict(d)
        d["committed_words"] = tuple(Word(**w) for w in d["committed_words"])
        u = AsrUpdate(**d)
        for i, text in enumerate(shown_words(u)):
            first.setdefault((u.segment_id, i, text), u.emitted_at)
        for i, w in enumerate(u.committed_words):
            if (u.segment_id, i) in seen:
                continue
            seen.add((u.segment_id, i))
            shown = min(first.get((u.segment_id, i, w.text.strip()), u.emitted_at), u.emitted_at)
            out.append(HypWord(w.text, u.emitted_at, shown, w.start, w.end))
    return merge_pieces(out)


def peer_words(stdout: str) -> list[HypWord]:
    """whisper_online.py prints ``emission_ms begin_ms end_ms text`` per committed chunk."""
    out: list[HypWord] = []
    for line in stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4:
            continue
        try:
            t, b, e = (float(x) / 1000 for x in parts[:3])
        except ValueError:
            continue
        words = parts[3].split()
        for k, w in enumerate(words):  # spread the chunk's span over its words, for pauses
            ws = b + (e - b) * k / len(words)
            out.append(HypWord(w, t, t, ws, b + (e - b) * (k + 1) / len(words)))
    return out


def spelt_in_parts(
    timing: list[Any], words: list[HypWord], parts: list[dict[str, Any]] | None
) -> tuple[list[str], list[str]]:
    """The reference's and the hypothesis's words, with numbers spelt in the language of the
    part each lies in (by its time; a hypothesis word without one: the word's before)."""

    def language(t: float | None, before: str) -> str:
        if t is None or not parts:
            return before
        return str(parts[part_at(parts, t)].get("language", "en"))

    ref = [spell_numbers(w.text.strip(), language(0.5 * (w.start + w.end), "en")) for w in timing]
    hyp, lang = [], "en"
    for x in words:
        lang = language(x.start, lang)
        hyp.append(spell_numbers(x.text, lang))
    return ref, hyp


def score(
    words: list[HypWord],
    timing: list[Any],
    *,
    rtf: float | None,
    lags: list[float],
    parts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ref, hyp = spelt_in_parts(timing, words, parts)
    w = word_error_rate(" ".join(ref), " ".join(hyp))
    hit, owner = alignment(ref, hyp)
    miss, miss_at = longest_miss(timing, hit)
    m = word_map(ref, hyp)
    timed = rtf is not None  # offline words have no commit or display time
    commit = [words[h].committed_at - timing[r].end for r, h in m.items()] if timed else []
    shown = [words[h].shown_at - timing[r].end for r, h in m.items()] if timed else []
    # Inserted words whose own time lies in a pause of the reference (>= 0.3 s of silence).
    matched = set(m.values())
    pauses = [
        (timing[i].end, timing[i + 1].start)
        for i in range(len(timing) - 1)
        if timing[i + 1].start - timing[i].end >= 0.3
    ]
    in_pause = [
        x.text
        for j, x in enumerate(words)
        if j not in matched
        and x.start is not None
        and x.end is not None
        and any(p0 <= x.start and x.end <= p1 for p0, p1 in pauses)
    ]
    third = max(1, len(lags) // 3)
    return {
        "wer": round(w.wer, 4),
        "wer_line": w.line(),
        "commit_p50": _pct(commit, 50),
        "commit_p90": _pct(commit, 90),
        "display_p50": _pct(shown, 50),
        "display_p90": _pct(shown, 90),
        "rtf": round(rtf, 3) if rtf is not None else None,
        "lag_max": round(max(lags), 3) if lags else None,
        "lag_first_third_mean": round(float(np.mean(lags[:third])), 3) if lags else None,
        "lag_last_third_mean": round(float(np.mean(lags[-third:])), 3) if lags else None,
        "words": len(words),
        "inserted_in_pauses": in_pause,
        "longest_miss_s": miss,
        "longest_miss_at": miss_at,
        "parts": per_part(parts, timing, hyp, hit, owner, ref) if parts else {},
    }


def cmd_ours(a: argparse.Namespace, extra: list[str]) -> int:
    out = a.out / f"{a.name}.json"
    cmd = [sys.executable, "-m", "subtitler_research.asr.replay",
           str(a.audio or a.out / "talk.wav"),
           "--model", a.model, "--threads", str(a.threads), "--bench",
           "--json", str(out), *extra]  # fmt: skip
    if _language(a):
        cmd += ["--language", a.language]
    print(" ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=ROOT)
    if rc == 0:
        _score_file(a.out, out)
    return rc


def _peer_copy(peer: Path, threads: int, dest: Path) -> Path:
    """whisper_online.py with its hard-coded CUDA float16 model load moved to the CPU."""
    src = peer.read_text(encoding="utf-8")
    old = 'device="cuda", compute_type="float16"'
    if src.count(old) != 1:
        raise SystemExit(f"{peer}: expected one {old!r} to patch")
    new = f'device="cpu", compute_type="int8", cpu_threads={threads}'
    out = dest / "whisper_online.py"
    out.write_text(src.replace(old, new), encoding="utf-8")
    shutil.copy(peer.parent / "silero_vad_iterator.py", dest)
    return out


def cmd_peer(a: argparse.Namespace, extra: list[str]) -> int:
    audio = a.audio or a.out / "talk.wav"
    with tempfile.TemporaryDirectory() as tmp:
        script = _peer_copy(a.peer, a.threads, Path(tmp))
        cmd = [a.peer_python, str(script), str(audio), "--model_dir", a.model, "--lan", a.language,
               "--min-chunk-size", str(a.peer_min_chunk), "-l", "DEBUG", *extra]  # fmt: skip
        print(" ".join(cmd), flush=True)
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
    (a.out / f"{a.name}.stdout").write_text(p.stdout)
    (a.out / f"{a.name}.stderr").write_text(p.stderr)
    if p.returncode != 0:
        print(p.stderr[-3000:], file=sys.stderr)
        return p.returncode
    _score_file(a.out, a.out / f"{a.name}.stdout")
    return 0


def _peer_compute(stderr: str, duration: float) -> tuple[float, list[float]]:
    """Per iteration the peer logs 'now is T, the latency is L': L is the time its iteration
    took after the audio up to 'last processed' had arrived (its compute, and its lag)."""
    lags = [float(x) for x in re.findall(r"the latency is (-?[\d.]+)", stderr)]
    return sum(lags) / duration, lags


def _score_file(out: Path, run: Path) -> dict[str, Any]:
    timing = read_words_tsv(out / "timing.tsv")
    parts_file = out / "parts.json"
    parts = json.loads(parts_file.read_text()) if parts_file.is_file() else None
    if run.suffix == ".tsv":  # offline.tsv: the reference's own words (no latency)
        offline = [HypWord(w.text.strip(), 0.0, 0.0, w.start, w.end) for w in read_words_tsv(run)]
        result = score(offline, timing, rtf=None, lags=[], parts=parts)
    elif run.suffix == ".json":
        payload = json.loads(run.read_text())
        s = payload["summary"]
        lags = [u["emitted_at"] - u["audio_t1"] for u in payload["updates"]]
        result = score(ours_words(payload), timing, rtf=s["rtf"], lags=lags, parts=parts)
        result["self_reported"] = {
            k: s.get(k) for k in ("commit_delay_median", "display_latency_median", "runs")
        }
    else:
        duration = timing[-1].end + 1.0
        stderr = run.with_suffix(".stderr").read_text()
        m = re.search(r"Audio duration is: ([\d.]+)", stderr)
        if m:
            duration = float(m.group(1))
        rtf, lags = _peer_compute(stderr, duration)
        result = score(peer_words(run.read_text()), timing, rtf=rtf, lags=lags, parts=parts)
    (out / f"{run.stem}.score.json").write_text(json.dumps(result, indent=1))
    brief = {k: v for k, v in result.items() if k not in ("wer_line", "parts")}
    print(run.stem, json.dumps(brief))
    print(run.stem, result["wer_line"])
    for name, r in result["parts"].items():
        print(f"  {name:28} {r['wer_line']}, longest miss {r['longest_miss_s']} s")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    talk = sub.add_parser("talk")
    talk.add_argument("ljspeech_dir", type=Path)
    talk.add_argument("--gap", type=float, default=0.5)
    devset = sub.add_parser("devset")
    devset.add_argument("devset_dir", type=Path)
    devset.add_argument("--set", required=True, help="a set or part name of the manifest")
    degrade = sub.add_parser("degrade")
    degrade.add_argument("src_dir", type=Path)
    degrade.add_argument("--snr", type=float, help="pink noise at this SNR (dB)")
    degrade.add_argument("--reverb", type=float, help="a room's RT60 (s): reverberation")
    degrade.add_argument("--telephone", action="store_true", help="300-3400 Hz")
    degrade.add_argument("--sharp", action="store_true", help="--telephone, nothing outside")
    runs = (sub.add_parser(n) for n in ("reference", "ours", "peer", "score"))
    for p in [talk, devset, degrade, *runs]:
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--model", default="")
        p.add_argument("--threads", type=int, default=2)
        p.add_argument(
            "--language", default="en", help="a language code, auto (detect), or part (reference)"
        )
        p.add_argument("--per-part", action="store_true", help="reference: a file per part")
        p.add_argument("--name", default="run")
        p.add_argument("--audio", type=Path, help="another file than talk.wav (silence, noise)")
        p.add_argument("--peer", type=Path)
        p.add_argument("--peer-python", default=sys.executable)
        p.add_argument("--peer-min-chunk", type=float, default=1.0)
        if p.prog.endswith("score"):
            p.add_argument("runs", nargs="*", type=Path)
    a, extra = ap.parse_known_args(argv)
    if a.cmd == "talk":
        return cmd_talk(a)
    if a.cmd == "devset":
        return cmd_devset(a)
    if a.cmd == "degrade":
        return cmd_degrade(a)
    if a.cmd == "reference":
        return cmd_reference(a)
    if a.cmd == "ours":
        return cmd_ours(a, extra)
    if a.cmd == "peer":
        return cmd_peer(a, extra)
    for r in a.runs:
        _score_file(a.out, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
