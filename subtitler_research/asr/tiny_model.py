"""A tiny random-weight Whisper with the real multilingual tokenizer, for offline tests.

Weights are random (it recognises nothing), but the model loads and runs through the real
faster-whisper/CTranslate2 code: mel features, encoder, decoding, language detection and word
alignment. It is written with CTranslate2's model-spec API (no torch), and the Whisper
tokenizer (``tokenizer.json`` + ``vocabulary.json``) is rebuilt from ``multilingual.tiktoken``.

    python -m subtitler_research.asr.tiny_model OUT_DIR [--tiktoken RANKS.tiktoken[.xz]]
"""

from __future__ import annotations

import argparse
import base64
import lzma
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_TIKTOKEN = (
    Path(__file__).resolve().parents[2] / "tests" / "data" / "whisper_multilingual.tiktoken.xz"
)
# Whisper v2's 99 languages, in token order (faster_whisper.tokenizer._LANGUAGE_CODES minus yue).
LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no "
    "th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw "
    "gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl "
    "mg as tt haw ln ha ba jw su"
).split()


def _byte_map() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (the BPE vocabulary's alphabet)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    cs = bs[:]
    for n, b in enumerate(b for b in range(256) if b not in bs[:188]):
        bs.append(b)
        cs.append(256 + n)
    return {b: chr(c) for b, c in zip(bs, cs, strict=True)}


def _load_ranks(path: Path) -> dict[bytes, int]:
    raw = lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()
    ranks: dict[bytes, int] = {}
    for line in raw.decode("ascii").splitlines():
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def _merge_of(ranks: dict[bytes, int], token: bytes) -> tuple[bytes, bytes]:
    """The two pieces BPE (using only lower ranks) joins last to make ``token``."""
    limit = ranks[token]
    parts = [bytes([b]) for b in token]
    while len(parts) > 2:
        best = min((ranks.get(parts[i] + parts[i + 1], limit), i) for i in range(len(parts) - 1))
        if best[0] >= limit:
            raise ValueError(f"token {token!r} is not a merge of lower-ranked tokens")
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts[0], parts[1]


def special_tokens() -> list[str]:
    timestamps = [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    return [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *[f"<|{c}|>" for c in LANGUAGES],
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
        *timestamps,
    ]


def write_tokenizer(out: Path, tiktoken: Path) -> list[str]:
    """Write ``tokenizer.json``; return the vocabulary in id order."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    ranks = _load_ranks(tiktoken)
    bmap = _byte_map()

    def enc(b: bytes) -> str:
        return "".join(bmap[x] for x in b)

    by_rank = sorted(ranks, key=ranks.__getitem__)
    vocab = {enc(t): ranks[t] for t in by_rank}
    merges = [(enc(a), enc(b)) for a, b in (_merge_of(ranks, t) for t in by_rank if len(t) > 1)]
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = special_tokens()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    tok.save(str(out / "tokenizer.json"))
    return [enc(t) for t in by_rank] + specials


@dataclass(frozen=True)
class WhisperShape:
    """The size of a Whisper model (OpenAI's model cards)."""

    layers: int  # encoder layers = decoder layers
    heads: int
    d_model: int
    n_mels: int = 80

    @property
    def ff(self) -> int:
        return 4 * self.d_model


# Real shapes, for timing with random weights (python -m subtitler_research.bench.asr_cost).
SHAPES = {
    "tiny": WhisperShape(4, 6, 384),
    "base": WhisperShape(6, 8, 512),
    "small": WhisperShape(12, 12, 768),
    "medium": WhisperShape(24, 16, 1024),
    "large-v3": WhisperShape(32, 20, 1280, n_mels=128),
}


def build_tiny_whisper(
    out: Path, tiktoken: Path = DEFAULT_TIKTOKEN, *, d_model: int = 32, seed: int = 0
) -> Path:
    """Write a random 1+1-layer Whisper (int8) that faster-whisper loads offline."""
    return build_random_whisper(
        out, WhisperShape(1, 2, d_model), tiktoken, seed=seed, ff=2 * d_model
    )


def build_random_whisper(
    out: Path,
    shape: WhisperShape,
    tiktoken: Path = DEFAULT_TIKTOKEN,
    *,
    seed: int = 0,
    ff: int | None = None,
) -> Path:
    """Write a random-weight Whisper of ``shape`` (int8) that faster-whisper loads offline;
    with 128 Mel bins it gets the preprocessor_config.json such models need."""
    import json

    from ctranslate2.specs import whisper_spec

    out.mkdir(parents=True, exist_ok=True)
    tokens = write_tokenizer(out, tiktoken)
    rng = np.random.default_rng(seed)
    d, n_vocab = shape.d_model, len(tokens)
    ff = ff or shape.ff
    spec = whisper_spec.WhisperSpec(shape.layers, shape.heads, shape.layers, shape.heads)
    if shape.n_mels != 80:
        (out / "preprocessor_config.json").write_text(
            json.dumps({"feature_size": shape.n_mels, "sampling_rate": 16000, "hop_length": 160})
        )

    def rand(*shape: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    def fill(layer: Any, name: str, value: Any) -> None:
        if value is not None:  # sizes that are set or optional stay as they are
            return
        leaf = name.rsplit("/", 1)[-1]
        scope = name.rsplit("/", 2)[-2] if "/" in name else ""
        if leaf == "gamma":
            arr = np.ones(d, np.float32)
        elif leaf == "beta":
            arr = np.zeros(d, np.float32)
        elif scope == "conv1":
            arr = rand(d, shape.n_mels, 3)
        elif scope == "conv2":
            arr = rand(d, d, 3)
        elif scope in ("embeddings", "projection"):
            arr = rand(n_vocab, d)
        elif "self_attention/linear_0" in name:
            arr = rand(3 * d, d)  # fused q, k, v
        elif "attention/linear_1" in name and "self_attention" not in name:
            arr = rand(2 * d, d)  # cross-attention k, v
        elif "ffn/linear_0" in name:
            arr = rand(ff, d)
        elif "ffn/linear_1" in name:
            arr = rand(d, ff)
        else:
            arr = rand(d, d)
        setattr(layer, leaf, arr)

    spec._visit(fill)
    spec.encoder.position_encodings.encodings = rand(1500, d)
    spec.decoder.position_encodings.encodings = rand(448, d)
    spec.register_vocabulary(tokens)
    lang_ids = [tokens.index(f"<|{c}|>") for c in LANGUAGES]
    eot = tokens.index("<|endoftext|>")
    spec.config.suppress_ids = []
    spec.config.suppress_ids_begin = [tokens.index("Ġ"), eot]
    spec.config.lang_ids = lang_ids
    spec.config.alignment_heads = [(shape.layers - 1, h) for h in range(min(2, shape.heads))]
    spec.validate()
    spec.optimize(quantization="int8")
    spec.save(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.asr.tiny_model", description=__doc__
    )
    ap.add_argument("out", type=Path, help="model directory to write")
    ap.add_argument("--tiktoken", type=Path, default=DEFAULT_TIKTOKEN)
    ap.add_argument("--d-model", type=int, default=32)
    a = ap.parse_args(argv)
    if not a.tiktoken.is_file():
        print(f"error: tokenizer ranks not found: {a.tiktoken}", file=sys.stderr)
        return 2
    build_tiny_whisper(a.out, a.tiktoken, d_model=a.d_model)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
