"""Glossary benchmark (issue 18): terms recognised and translated as given, and what it costs.

Research tooling (not shipped). Subcommands:

    python tools/glossary_bench.py mt --source SRC --reference REF [--limit N]
        The translator (default: fixtures/translator) streams each sentence word by word,
        once without and once with the glossary (two engines, sentence by sentence in turn):
        term accuracy on sentences holding a term (the fixed translation is in the final
        output, any case), chrF/BLEU there and on the other sentences, and the time of each
        update (ms: mean, p50, p90) with and without.
    python tools/glossary_bench.py asr-score --out DIR --terms "A,B" RUN.json ...
        Replay runs of tools/asr_speech_bench.py on the LJSpeech talk: how many reference
        occurrences of the terms were heard exactly, the WER of everything else, and the
        recogniser's compute per call.
    python tools/glossary_bench.py asr-cost --out DIR --model M --terms "A,B"
        The recogniser's cost per call on the same 6 s windows of talk.wav (with the earlier
        text as prompt), with and without the terms as hotwords, in turn.
    python tools/glossary_bench.py scale [--sizes 500,2000,5000,20000]
        A company's term list of each size (random words, one to three a term, seeded):
        glossary.csv loaded, the terms found in a line (what each translation update does,
        ms: mean over 200 lines, each holding one term), recognition's hotwords, and the
        Glossary window opened on them (offscreen Qt).
    python tools/glossary_bench.py import [--sizes 50000,400000]
        A CSV of that many short terms ("t17;x17") imported into the Glossary window
        (offscreen Qt, garbage collected on the window's thread as the app does): the whole
        import, and the longest the window's thread was held meanwhile (the gaps of a 5 ms
        timer).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from subtitler.mt.glossary import Glossary, read_import  # noqa: E402

# A user's glossary for Multi30k-like captions: each term's translation as the references
# mostly write it (tools/glossary_bench.py mt --glossary CSV replaces it).
MT_TERMS = [
    ("bicycle", "Fahrrad"),
    ("guitar", "Gitarre"),
    ("skateboard", "Skateboard"),
    ("jacket", "Jacke"),
    ("restaurant", "Restaurant"),
    ("snow", "Schnee"),
    ("camera", "Kamera"),
    ("microphone", "Mikrofon"),
    ("helmet", "Helm"),
    ("boat", "Boot"),
    ("horse", "Pferd"),
    ("stage", "Bühne"),
    ("car", "Auto"),
    ("table", "Tisch"),
    ("soccer", "Fußball"),
    ("football", "Football"),
    ("motorcycle", "Motorrad"),
    ("market", "Markt"),
    ("building", "Gebäude"),
    ("beach", "Strand"),
]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q / 100 * len(xs)))] if xs else float("nan")


def _ms(xs: list[float]) -> str:
    if not xs:
        return "-"
    return (
        f"{1000 * statistics.fmean(xs):.2f} / {1000 * _pct(xs, 50):.2f} / {1000 * _pct(xs, 90):.2f}"
    )


# -- translation -------------------------------------------------------------------------------


def cmd_mt(a: argparse.Namespace) -> int:
    import sacrebleu

    from subtitler.config import MtConfig
    from subtitler.mt.engine import LocalEngine
    from subtitler.mt.loading import load_translator
    from subtitler.mt.terms import present

    if a.bias is not None:
        from subtitler.mt import terms as term_module

        term_module.TERM_BIAS = a.bias
    rows = read_import(a.glossary) if a.glossary else MT_TERMS
    glossary = Glossary().with_pair(a.src_lang, a.tgt_lang, rows)
    terms = glossary.translations(a.src_lang, a.tgt_lang)
    src = a.source.read_text(encoding="utf-8").splitlines()[: a.limit]
    ref = a.reference.read_text(encoding="utf-8").splitlines()[: a.limit]
    mt = MtConfig(
        model_path=str(a.model), template="auto", threads=a.threads, src_lang=a.src_lang,
        tgt_lang=a.tgt_lang,
    )  # fmt: skip
    engines = {
        "without": LocalEngine(load_translator(mt), mt),
        "with": LocalEngine(load_translator(mt), mt),
    }
    engines["with"].set_glossary(glossary)
    out: dict[str, list[str]] = {k: [] for k in engines}
    times: dict[str, dict[str, list[float]]] = {k: {"term": [], "rest": []} for k in engines}
    for i, s in enumerate(src):
        words = s.split()
        kind = "term" if present(s, terms) else "rest"
        for name, engine in engines.items():
            text = ""
            for n in range(1, len(words) + 1):
                t0 = time.perf_counter()
                r = engine.translate(
                    i, " ".join(words[:n]), n == len(words), mt.tgt_lang, a.src_lang
                )
                times[name][kind].append(time.perf_counter() - t0)
                text = r.text
            out[name].append(text)
    term_idx = [i for i, s in enumerate(src) if present(s, terms)]
    rest_idx = [i for i in range(len(src)) if i not in set(term_idx)]
    occurrences = [(i, x) for i in term_idx for _, x in present(src[i], terms)]
    result: dict[str, Any] = {
        "sentences": len(src),
        "with_terms": len(term_idx),
        "term_occurrences": len(occurrences),
    }
    for name in engines:
        hyp = out[name]
        kept = sum(x.casefold() in hyp[i].casefold() for i, x in occurrences)
        in_ref = sum(x.casefold() in ref[i].casefold() for i, x in occurrences)
        row: dict[str, Any] = {"terms_as_given": kept, "terms_in_reference": in_ref}
        for part, idx in (("term", term_idx), ("rest", rest_idx)):
            h, r = [hyp[i] for i in idx], [ref[i] for i in idx]
            row[f"chrf_{part}"] = round(sacrebleu.corpus_chrf(h, [r]).score, 2)
            row[f"bleu_{part}"] = round(sacrebleu.corpus_bleu(h, [r]).score, 2)
            row[f"ms_{part}"] = _ms(times[name][part])
        row["ms_all"] = _ms(times[name]["term"] + times[name]["rest"])
        row["updates"] = len(times[name]["term"]) + len(times[name]["rest"])
        result[name] = row
    same_rest = sum(out["with"][i] == out["without"][i] for i in rest_idx)
    result["rest_identical"] = f"{same_rest}/{len(rest_idx)}"
    result["examples"] = [
        (src[i], out["without"][i], out["with"][i]) for i in term_idx[: a.examples]
    ]
    print(json.dumps(result, indent=1, ensure_ascii=False))
    if a.json:
        a.json.write_text(json.dumps({**result, "outputs": out}, ensure_ascii=False, indent=1))
    return 0


# -- recognition ------------------------------------------------------------------------------


def _bench_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "asr_speech_bench", ROOT / "tools" / "asr_speech_bench.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["asr_speech_bench"] = mod  # (its dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def _plain(w: str) -> str:
    return re.sub(r"[^\w]+", "", w.casefold())


def cmd_asr_score(a: argparse.Namespace) -> int:
    from subtitler_research.asr.oracle import read_words_tsv

    b = _bench_module()
    terms = {_plain(t) for t in a.terms.split(",") if t.strip()}
    timing = read_words_tsv(a.out / "timing.tsv")
    ref = [w.text.strip() for w in timing]
    for run in a.runs:
        payload = json.loads(run.read_text(encoding="utf-8"))
        words = b.ours_words(payload)
        hyp = [w.text for w in words]
        m = b.word_map(ref, hyp)
        is_term = [_plain(r) in terms for r in ref]
        heard = sum(
            1 for i, t in enumerate(is_term) if t and i in m and _plain(hyp[m[i]]) == _plain(ref[i])
        )
        # Everything else: the reference without the term occurrences against the hypothesis
        # without the words aligned to them (so a term misheard is not counted twice).
        term_hyp = {m[i] for i, t in enumerate(is_term) if t and i in m}
        rest_ref = [r for r, t in zip(ref, is_term, strict=True) if not t]
        rest_hyp = [h for j, h in enumerate(hyp) if j not in term_hyp]
        from subtitler_research.asr.wer import word_error_rate

        w_all = word_error_rate(" ".join(ref), " ".join(hyp))
        w_rest = word_error_rate(" ".join(rest_ref), " ".join(rest_hyp))
        s = payload["summary"]
        print(json.dumps({
            "run": run.name,
            "terms_heard": f"{heard}/{sum(is_term)}",
            "wer_all": w_all.line(),
            "wer_rest": w_rest.line(),
            "ms_per_call": round(1000 * s["compute_s"] / max(1, s["runs"]), 1),
            "runs": s["runs"],
            "commit_delay_median": round(s["commit_delay_median"], 3),
            "rtf": round(s["rtf"], 3),
            "misheard": [
                (ref[i], hyp[m[i]] if i in m else None)
                for i, t in enumerate(is_term)
                if t and not (i in m and _plain(hyp[m[i]]) == _plain(ref[i]))
            ],
        }, ensure_ascii=False))  # fmt: skip
    return 0


def cmd_asr_cost(a: argparse.Namespace) -> int:
    import numpy as np

    from subtitler.asr.faster_whisper import (
        FasterWhisperBackend,
        WhisperSettings,
        decode_audio_file,
    )
    from subtitler.asr.sentences import join_words
    from subtitler_research.asr.oracle import read_words_tsv

    hotwords = (
        Glossary().with_pair("en", "de", [(t, "") for t in a.terms.split(",")]).hotwords("en")
    )
    backend = FasterWhisperBackend(WhisperSettings(a.model, device="cpu", threads=a.threads))
    audio = decode_audio_file(a.out / "talk.wav")
    timing = read_words_tsv(a.out / "timing.tsv")
    cost: dict[str, list[float]] = {"without": [], "with": []}
    n = int(a.window * 16000)
    for k, start in enumerate(range(0, len(audio) - n, n)):
        t0 = start / 16000
        prompt = join_words([w.text for w in timing if w.end <= t0])[-200:]
        order = ("without", "with") if k % 2 == 0 else ("with", "without")
        for name in order:
            backend.set_hotwords(hotwords if name == "with" else "")
            c0 = time.perf_counter()
            backend.transcribe(audio[start : start + n], t0=t0, prompt=prompt, language="en")
            cost[name].append(time.perf_counter() - c0)
    print(json.dumps({
        "windows": len(cost["with"]),
        "hotwords": hotwords,
        "ms_without": _ms(cost["without"]),
        "ms_with": _ms(cost["with"]),
        "ratio_mean": round(float(np.mean(cost["with"]) / np.mean(cost["without"])), 3),
    }, ensure_ascii=False))  # fmt: skip
    return 0


def cmd_scale(a: argparse.Namespace) -> int:
    import os
    import random
    import string
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from subtitler.mt import glossary
    from subtitler.mt.terms import present
    from subtitler.ui.glossary_dialog import GlossaryDialog

    app = QApplication.instance() or QApplication([])
    rnd = random.Random(1)

    def word() -> str:
        return "".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(4, 10)))

    for n in (int(x) for x in a.sizes.split(",")):
        rows = [(" ".join(word().capitalize() for _ in range(rnd.randint(1, 3))), word())]
        rows += [(" ".join(word().capitalize() for _ in range(rnd.randint(1, 3))), word())
                 for _ in range(n - 1)]  # fmt: skip
        g = Glossary().with_pair("en", "de", rows)
        with tempfile.TemporaryDirectory() as tmp:
            path = glossary.save(g, Path(tmp) / "glossary.csv")
            t = time.perf_counter()
            glossary.load(path)
            load_ms = (time.perf_counter() - t) * 1000
        terms = g.translations("en", "de")
        lines = [f"so we moved {rows[rnd.randrange(n)][0]} to the new cluster today, right"
                 for _ in range(200)]  # fmt: skip
        t = time.perf_counter()
        for line in lines:
            present(line, terms)
        find_ms = (time.perf_counter() - t) * 1000 / len(lines)
        t = time.perf_counter()
        g.hotwords("en")
        hot_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        d = GlossaryDialog(g, "en", "de")
        d.show()
        app.processEvents()
        open_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        d.save()
        save_ms = (time.perf_counter() - t) * 1000
        d.close()
        print(
            f"{n} terms: load {load_ms:.1f} ms, terms found per update {find_ms:.2f} ms, "
            f"hotwords {hot_ms:.2f} ms, window opened {open_ms:.0f} ms, Save {save_ms:.0f} ms"
        )
    return 0


def cmd_import(a: argparse.Namespace) -> int:
    import os
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from subtitler.ui.gc_guard import GuiThreadCollector
    from subtitler.ui.glossary_dialog import GlossaryDialog

    app = QApplication.instance() or QApplication([])
    collector = GuiThreadCollector()
    collector.start()
    for n in (int(x) for x in a.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"terms-{n}.csv"
            short = n > 50_000  # (4 MB holds 400,000 terms without their translations)
            path.write_text(
                "".join(f"t{i}\n" if short else f"t{i};x{i}\n" for i in range(n)),
                encoding="utf-8",
            )
            d = GlossaryDialog(Glossary(), "en", "de")
            d.show()
            app.processEvents()
            gaps: list[float] = []
            last = [time.perf_counter()]

            def tick(gaps: list[float] = gaps, last: list[float] = last) -> None:
                now = time.perf_counter()
                gaps.append(now - last[0])
                last[0] = now

            timer = QTimer()
            timer.setInterval(5)
            timer.timeout.connect(tick)
            timer.start()
            done: list[int] = []
            d.imported.connect(done.append)
            t = time.perf_counter()
            d.import_file(path)
            while not done:
                app.processEvents()
                time.sleep(0.001)
            whole = time.perf_counter() - t
            timer.stop()
            d.close()
            size = path.stat().st_size
        print(
            f"{n:,} terms ({size / 1e6:.1f} MB): import {whole:.2f} s, "
            f"window's thread held at most {max(gaps) * 1000:.0f} ms; {d.status.text()}"
        )
    collector.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mt")
    m.add_argument("--model", type=Path, default=ROOT / "fixtures" / "translator" / "model.gguf")
    m.add_argument("--source", type=Path, required=True)
    m.add_argument("--reference", type=Path, required=True)
    m.add_argument("--glossary", type=Path, help="CSV to import (term[,translation])")
    m.add_argument("--src-lang", default="en")
    m.add_argument("--tgt-lang", default="de")
    m.add_argument("--limit", type=int, default=1000)
    m.add_argument("--threads", type=int, default=2)
    m.add_argument("--examples", type=int, default=8)
    m.add_argument("--bias", type=float, help="TERM_BIAS instead of subtitler.mt.terms'")
    m.add_argument("--json", type=Path)
    s = sub.add_parser("asr-score")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--terms", required=True)
    s.add_argument("runs", nargs="+", type=Path)
    c = sub.add_parser("asr-cost")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--model", required=True)
    c.add_argument("--terms", required=True)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--window", type=float, default=6.0)
    sc = sub.add_parser("scale")
    sc.add_argument("--sizes", default="500,2000,5000,20000")
    im = sub.add_parser("import")
    im.add_argument("--sizes", default="50000,400000")
    a = ap.parse_args(argv)
    cmds = {
        "mt": cmd_mt,
        "asr-score": cmd_asr_score,
        "asr-cost": cmd_asr_cost,
        "scale": cmd_scale,
        "import": cmd_import,
    }
    return cmds[a.cmd](a)


if __name__ == "__main__":
    raise SystemExit(main())
