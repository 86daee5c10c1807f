"""Write the tiny models of ``--self-test`` into assets/selftest/ (run once; outputs are committed).

    python tools/make_selftest_assets.py [--out assets/selftest]

Both models have random weights and a 512-token byte-level BPE vocabulary (the first 512
ranks of GPT-2's BPE: the 256 single bytes and the 256 earliest merges), which keeps them
small (under 1 MB together) while the real code paths run: faster-whisper/CTranslate2 (mel
features, encoder, decoder, tokenizer) and llama.cpp (GGUF loading, tokenizer, batched
evaluation). They recognise and translate nothing;
the self-test only checks that the libraries load and produce output.

Needs the ``gguf``, ``ctranslate2`` and ``tokenizers`` packages (``pip install -e .[dev]``).
The speech clip is copied from tests/data (LJSpeech, public domain).
"""

from __future__ import annotations

import argparse
import base64
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLIP = ROOT / "tests" / "data" / "LJ001-0002.flac"
GPT2_RANKS = ROOT / "tests" / "data" / "gpt2.tiktoken"  # MIT, see tests/data/README.md
N_RANKS = 512
LLAMA_NAME = "llama-random-q8_0.gguf"
WHISPER_NAME = "whisper-random"
CLIP_NAME = "LJ001-0002.flac"


def small_ranks(path: Path, n: int = N_RANKS) -> Path:
    """The first ``n`` ranks of GPT-2's BPE: the 256 single bytes, then the earliest merges.

    llama.cpp refuses a BPE vocabulary without merges, and a prefix of the rank list is a
    complete BPE of its own (every merge joins two lower-ranked tokens).
    """
    lines = [ln for ln in GPT2_RANKS.read_text(encoding="ascii").splitlines() if ln.strip()][:n]
    ranks = [int(ln.split()[1]) for ln in lines]
    if ranks != list(range(n)) or any(
        len(base64.b64decode(ln.split()[0])) != 1 for ln in lines[:256]
    ):
        raise ValueError(f"{GPT2_RANKS}: unexpected rank order")
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "selftest")
    a = ap.parse_args(argv)

    from subtitler_research.asr.tiny_model import build_tiny_whisper
    from subtitler_research.bench.random_model import Shape, build_random_llama

    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        ranks = small_ranks(Path(tmp) / "gpt2-512.tiktoken")
        build_random_llama(
            out / LLAMA_NAME,
            Shape(n_layer=1, n_embd=64, n_head=2, n_head_kv=1, n_ff=128, n_ctx=512),
            tiktoken=ranks,
            seed=7,
            name="subtitler-selftest-llama",
        )
        wdir = out / WHISPER_NAME
        if wdir.exists():
            shutil.rmtree(wdir)
        build_tiny_whisper(wdir, ranks, d_model=32, seed=7)
    shutil.copyfile(CLIP, out / CLIP_NAME)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
