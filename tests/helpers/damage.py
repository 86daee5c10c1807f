"""Model files damaged where no header or size check looks: bytes of the weights flipped, as a
bad disk, a bad copy or a bit-rotting cache does it (seeded: the same bytes each run)."""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path


def flip_gguf_weights(src: Path, dst: Path, n: int, seed: int = 1) -> Path:
    """``src`` with ``n`` random bytes of its last 70% (tensor data: the header of a model
    with a 12k vocabulary is a few hundred kB of 7 MB) set to random values."""
    data = bytearray(src.read_bytes())
    rng = random.Random(seed)
    lo = len(data) * 3 // 10
    for _ in range(n):
        data[rng.randrange(lo, len(data))] = rng.randrange(256)
    dst.write_bytes(bytes(data))
    return dst


def ct2_weight_spans(model: bytes) -> list[tuple[int, int]]:
    """(offset, length) of each variable's data in a CTranslate2 model.bin: u32 version,
    u16 + spec name, u32 revision, u32 count, then per variable u16 + name, u8 rank, u32 dims,
    u8 dtype, u32 byte count and the bytes."""
    name_len = struct.unpack_from("<H", model, 4)[0]
    at = 4 + 2 + name_len + 4
    (count,) = struct.unpack_from("<I", model, at)
    at += 4
    spans = []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", model, at)
        at += 2 + length
        rank = model[at]
        at += 1 + 4 * rank + 1
        (nbytes,) = struct.unpack_from("<I", model, at)
        at += 4
        spans.append((at, nbytes))
        at += nbytes
    return spans


def flip_whisper_weights(src: Path, dst: Path, n: int, seed: int = 1) -> Path:
    """A copy of the Whisper folder ``src`` with ``n`` random bytes of its weights (never of
    the names and shapes around them) set to random values."""
    shutil.copytree(src, dst)
    path = dst / "model.bin"
    data = bytearray(path.read_bytes())
    spans = [(at, k) for at, k in ct2_weight_spans(bytes(data)) if k]
    total = sum(k for _, k in spans)
    rng = random.Random(seed)
    for _ in range(n):
        i = rng.randrange(total)
        for at, k in spans:
            if i < k:
                data[at + i] = rng.randrange(256)
                break
            i -= k
    path.write_bytes(bytes(data))
    return dst
