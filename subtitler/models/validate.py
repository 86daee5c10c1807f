"""One-line reasons for model files that cannot work, found before any backend loads them.

The GGUF header is parsed by hand (the ``gguf`` package is a dev/bench extra, not a runtime
dependency): key/value metadata, tensor infos and the end of the tensor data, which must not lie
beyond the end of the file. That catches interrupted copies and downloads that a 4-byte magic
check (``mt.llama_backend.check_gguf_file``) lets through and llama.cpp would reject with a far
less helpful message, or crash on.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from subtitler.mt.prompts import TemplateError, resolve_template

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# ggml type id -> (elements per block, bytes per block), as in ggml's type traits. Checked against
# gguf.constants.GGML_QUANT_SIZES in the tests.
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 40),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
    34: (256, 54),  # TQ1_0
    35: (256, 66),  # TQ2_0
    39: (32, 17),  # MXFP4
    40: (64, 36),  # NVFP4
    41: (128, 18),  # Q1_0
}

# GGUF value types: fixed-size scalars (struct format), 8 = string, 9 = array.
_SCALARS: dict[int, str] = {
    0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d",
}  # fmt: skip
_STRING, _ARRAY = 8, 9
# Strings longer than this in metadata are certainly corruption (chat templates are a few KB).
_MAX_STRING = 64 << 20


class InvalidModelError(ValueError):
    """A model file or directory is unusable; the message is one line for the user."""


@dataclass(frozen=True)
class GgufInfo:
    """What the header says about a GGUF file."""

    path: Path
    version: int
    n_tensors: int
    data_end: int  # byte offset where the last tensor's data ends
    file_size: int
    metadata: dict[str, Any] = field(repr=False)  # scalar and string values (arrays skipped)
    template: str | None = None  # resolved prompt template, when checked

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    def arch_int(self, key: str) -> int | None:
        v = self.metadata.get(f"{self.architecture}.{key}")
        return int(v) if isinstance(v, int) and not isinstance(v, bool) else None

    def usable_context(self, n_ctx: int) -> int:
        """``n_ctx`` capped at the context the model was trained on (longer gives nothing but
        a llama.cpp warning)."""
        trained = self.arch_int("context_length")
        return min(n_ctx, trained) if trained else n_ctx


class _Truncated(Exception):
    pass


class _Reader:
    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise _Truncated
        b = self.buf[self.pos : end]
        self.pos = end
        return bytes(b)

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.buf):
            raise _Truncated
        (v,) = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += size
        return v

    def string(self) -> str:
        n = self.unpack("Q")
        if n > _MAX_STRING:
            raise ValueError(f"implausible string length {n}")
        return self.take(n).decode("utf-8", errors="replace")

    def skip(self, n: int) -> None:
        if self.pos + n > len(self.buf):
            raise _Truncated
        self.pos += n

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            itype, n = self.unpack("I"), self.unpack("Q")
            if itype in _SCALARS:  # fixed size: jump over it (vocab scores, token types)
                self.skip(n * struct.calcsize("<" + _SCALARS[itype]))
            elif itype == _STRING:
                for _ in range(n):
                    self.skip(self.unpack("Q"))
            else:
                raise ValueError(f"unsupported array element type {itype}")
            return None
        raise ValueError(f"unknown metadata value type {vtype}")


def _parse_gguf(buf: mmap.mmap | bytes) -> tuple[int, int, int, dict[str, Any]]:
    r = _Reader(buf)
    if r.take(4) != GGUF_MAGIC:
        raise ValueError("bad magic")
    version = r.unpack("I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors, n_kv = r.unpack("Q"), r.unpack("Q")
    if n_tensors > 1_000_000 or n_kv > 1_000_000:
        raise ValueError("implausible tensor or key count")
    meta: dict[str, Any] = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.unpack("I"))
    extents: list[tuple[int, int]] = []
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.unpack("I")
        if n_dims > 8:
            raise ValueError(f"tensor {name}: implausible rank {n_dims}")
        n_el = 1
        for _d in range(n_dims):
            n_el *= r.unpack("Q")
        ttype, offset = r.unpack("I"), r.unpack("Q")
        if ttype not in GGML_BLOCKS:
            # An unknown (newer) type: its size is unknown, so only its start is checked.
            extents.append((offset, 0))
            continue
        blk, nbytes = GGML_BLOCKS[ttype]
        extents.append((offset, (n_el + blk - 1) // blk * nbytes))
    align = meta.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(align, int) or align <= 0:
        align = DEFAULT_ALIGNMENT
    data_start = (r.pos + align - 1) // align * align
    data_end = max((data_start + o + n for o, n in extents), default=data_start)
    return version, n_tensors, data_end, meta


def read_gguf(path: str | os.PathLike[str]) -> GgufInfo:
    """Parse a GGUF's header and check that all tensor data is present; one-line errors."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InvalidModelError(f"translation model not found: {p}")
    if p.is_dir():
        raise InvalidModelError(f"translation model is a directory, not a .gguf file: {p}")
    size = p.stat().st_size
    if size == 0:
        raise InvalidModelError(f"{p.name}: empty file")
    try:
        with p.open("rb") as f:
            if f.read(4) != GGUF_MAGIC:
                raise InvalidModelError(f"{p.name}: not a GGUF model file (bad header)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                version, n_tensors, data_end, meta = _parse_gguf(mm)
    except InvalidModelError:
        raise
    except _Truncated:
        raise InvalidModelError(
            f"{p.name}: truncated GGUF (the file ends inside its header; {size} bytes)"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InvalidModelError(f"{p.name}: corrupt GGUF header ({e})") from None
    except OSError as e:
        raise InvalidModelError(f"{p.name}: cannot read ({e.strerror or e})") from None
    if data_end > size:
        pct = 100.0 * size / data_end
        raise InvalidModelError(
            f"{p.name}: truncated GGUF ({size:,} of {data_end:,} bytes, {pct:.0f}%); "
            "download or copy it again"
        )
    return GgufInfo(p, version, n_tensors, data_end, size, meta)


def check_translator(path: str | os.PathLike[str], template: str = "auto") -> GgufInfo:
    """A GGUF that is complete and has a usable prompt template (its own or a known one)."""
    info = read_gguf(path)
    str_meta = {k: v for k, v in info.metadata.items() if isinstance(v, str)}
    try:
        resolved = resolve_template(template, str_meta)
    except TemplateError as e:
        raise InvalidModelError(f"{info.path.name}: {e}") from None
    return GgufInfo(
        info.path, info.version, info.n_tensors, info.data_end, info.file_size, info.metadata,
        resolved,
    )  # fmt: skip


# -- CTranslate2 Whisper directories ---------------------------------------------------------

WHISPER_REQUIRED = ("model.bin", "config.json", "tokenizer.json")
WHISPER_VOCABULARY = ("vocabulary.json", "vocabulary.txt")


def ct2_spec_name(model_bin: Path) -> str:
    """The spec name CTranslate2 writes after its binary version (e.g. "WhisperSpec")."""
    with model_bin.open("rb") as f:
        head = f.read(4 + 2 + 256)
    if len(head) < 7:
        raise InvalidModelError(f"{model_bin}: too short to be a CTranslate2 model")
    version = struct.unpack_from("<I", head, 0)[0]
    (n,) = struct.unpack_from("<H", head, 4)
    if not 1 <= version <= 100 or not 1 <= n <= 256 or len(head) < 6 + n:
        raise InvalidModelError(f"{model_bin.parent.name}: model.bin is not a CTranslate2 model")
    return head[6 : 6 + n].rstrip(b"\0").decode("ascii", errors="replace")


def check_whisper_dir(path: str | os.PathLike[str]) -> Path:
    """A CTranslate2 Whisper model directory as faster-whisper loads it offline."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InvalidModelError(f"speech model folder not found: {p}")
    if not p.is_dir():
        raise InvalidModelError(
            f"{p.name}: a Whisper model is a folder (model.bin, config.json, ...), not a file"
        )
    missing = [n for n in WHISPER_REQUIRED if not (p / n).is_file()]
    if not any((p / n).is_file() for n in WHISPER_VOCABULARY):
        missing.append("vocabulary.json or vocabulary.txt")
    if missing:
        raise InvalidModelError(
            f"{p.name}: not a CTranslate2 Whisper model folder (missing {', '.join(missing)})"
        )
    spec = ct2_spec_name(p / "model.bin")
    if "whisper" not in spec.lower():
        raise InvalidModelError(f"{p.name}: a CTranslate2 {spec} model, not Whisper")
    try:
        json.loads((p / "config.json").read_text(encoding="utf-8"))
        json.loads((p / "tokenizer.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise InvalidModelError(f"{p.name}: damaged config.json or tokenizer.json ({e})") from None
    return p


def check_model_path(path: str | os.PathLike[str], template: str = "auto") -> str:
    """Validate whatever a user points at; returns a short description of what it is."""
    p = Path(path).expanduser()
    if p.is_dir():
        check_whisper_dir(p)
        return f"Whisper model folder ({_mb((p / 'model.bin').stat().st_size)})"
    info = check_translator(p, template)
    return (
        f"GGUF translator ({info.architecture or 'unknown arch'}, {info.n_tensors} tensors, "
        f"{_mb(info.file_size)}, template {info.template})"
    )


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB"
