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
import re
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from subtitler import user_files
from subtitler.models.templates import TemplateError, resolve_template

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
# A whole header (metadata, vocabulary, tensor table) is a few MB even for a 256k vocabulary: a
# file that ends inside a longer one, or a field that asks for more, is corrupt, not cut short.
_MAX_HEADER = 64 << 20
# Characters of a file name quoted in a message (a hand-edited path can be hundreds long).
_MAX_NAME = 80


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
    """The header asks for ``need`` bytes at ``at``, past the end of the file."""

    def __init__(self, at: int, need: int) -> None:
        super().__init__(at, need)
        self.at, self.need = at, need


class _Reader:
    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise _Truncated(self.pos, n)
        b = self.buf[self.pos : end]
        self.pos = end
        return bytes(b)

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.buf):
            raise _Truncated(self.pos, size)
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
            raise _Truncated(self.pos, n)
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


def user_path(path: str | os.PathLike[str]) -> Path:
    """A path as a user wrote it, "~" expanded where there is a home folder to expand to."""
    p = Path(path)
    try:
        return p.expanduser()
    except RuntimeError:  # "~nobody/...": no such user
        return p


def shown(p: Path) -> str:
    """A path for a one-line message, at most _MAX_NAME characters."""
    text = str(p)
    return text if len(text) <= _MAX_NAME else "…" + text[-(_MAX_NAME - 1) :]


def _stat(p: Path, what: str) -> os.stat_result | None:
    """The file's status; None when there is nothing there; InvalidModelError when the
    system cannot look the path up (a name too long, a NUL in it)."""
    try:
        return p.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InvalidModelError(f"{what} {shown(p)} cannot be looked up ({why})") from None


def read_gguf(path: str | os.PathLike[str]) -> GgufInfo:
    """Parse a GGUF's header and check that all tensor data is present; one-line errors."""
    p = user_path(path)
    st = _stat(p, "translation model")
    if st is None:
        raise InvalidModelError(f"translation model not found: {shown(p)}")
    if stat.S_ISDIR(st.st_mode):
        raise InvalidModelError(f"translation model is a directory, not a .gguf file: {shown(p)}")
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the open below
        raise InvalidModelError(f"translation model is not a regular file: {shown(p)}")
    size = st.st_size
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
    except _Truncated as e:
        if size > _MAX_HEADER or e.need > _MAX_HEADER:
            # No header is that long: a length or count in it was damaged.
            raise InvalidModelError(
                f"{p.name}: corrupt GGUF header (a field at byte {e.at:,} asks for "
                f"{e.need:,} bytes); download or copy it again"
            ) from None
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


# GGUF architectures of models that write no text (llama.cpp's names): chosen as the
# translator they were refused by llama.cpp's own words ("key not found in model:
# bert.context_length", "CLIP cannot be used as main model").
NOT_WRITERS = {
    "bert": "text embeddings",
    "nomic-bert": "text embeddings",
    "nomic-bert-moe": "text embeddings",
    "jina-bert-v2": "text embeddings",
    "jina-bert-v3": "text embeddings",
    "neo-bert": "text embeddings",
    "modern-bert": "text embeddings",
    "t5encoder": "text embeddings",
    "clip": "images",
    "whisper": "speech",
    "wavtokenizer-dec": "speech",
}


# Encoder-decoder architectures (llama.cpp's names): they write text, but only after
# llama_encode has read the source, which a prompt continued by the decoder never calls:
# chosen as the translator, each translation aborted llama.cpp ("llama_encode must be called
# first"), said as a crash of a damaged file.
ENCODER_DECODERS = {"t5": "as MADLAD-400 and Flan-T5 are"}


def check_translator(path: str | os.PathLike[str], template: str = "auto") -> GgufInfo:
    """A GGUF that is complete, of a model that writes text, and has a usable prompt template
    (its own or a known one)."""
    info = read_gguf(path)
    if (what := NOT_WRITERS.get(info.architecture or "")) is not None:
        raise InvalidModelError(
            f"{info.path.name}: a {info.architecture} model ({what}), not a language model "
            "that writes text"
        )
    if (like := ENCODER_DECODERS.get(info.architecture or "")) is not None:
        raise InvalidModelError(
            f"{info.path.name}: a {info.architecture} model (an encoder-decoder, {like}); the "
            "app translates with a decoder-only language model (Gemma, Qwen, Llama, …)"
        )
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
# config.json's lists (CTranslate2's Whisper spec): key -> nesting (1: token ids; 2: pairs).
WHISPER_CONFIG_LISTS = {
    "alignment_heads": 2,
    "lang_ids": 1,
    "suppress_ids": 1,
    "suppress_ids_begin": 1,
}
MAX_JSON_BYTES = 64 << 20  # tokenizer.json is 2-3 MB; config.json a few kB
# preprocessor_config.json's keys that faster-whisper's feature extractor takes, as every
# Whisper was trained with them (the recogniser's windows count 100 frames a second of 16 kHz
# audio); feature_size, the Mel bins, is 80, or 128 from large-v3 on.
WHISPER_FEATURES = {"sampling_rate": 16000, "hop_length": 160, "n_fft": 400}
WHISPER_MELS = (80, 128)


def ct2_spec_name(model_bin: Path) -> str:
    """The spec name CTranslate2 writes after its binary version (e.g. "WhisperSpec")."""
    try:
        with model_bin.open("rb") as f:
            head = f.read(4 + 2 + 256)
    except OSError as e:  # (a read's error names no file)
        e.filename = e.filename or str(model_bin)
        raise
    if len(head) < 7:
        raise InvalidModelError(f"{model_bin}: too short to be a CTranslate2 model")
    version = struct.unpack_from("<I", head, 0)[0]
    (n,) = struct.unpack_from("<H", head, 4)
    if not 1 <= version <= 100 or not 1 <= n <= 256 or len(head) < 6 + n:
        raise InvalidModelError(f"{model_bin.parent.name}: model.bin is not a CTranslate2 model")
    return head[6 : 6 + n].rstrip(b"\0").decode("ascii", errors="replace")


MAX_CT2_VARIABLES = 1 << 16  # large-v3 has about 1,300
_DECODER_LAYER = re.compile(r"decoder/layer_(\d+)/")


def ct2_decoder_shape(model_bin: Path) -> tuple[int, int] | None:
    """(decoder layers, attention heads) of a CTranslate2 Whisper model.bin, read from its
    table of variables (names, shapes and sizes; the weights are skipped); None when the
    table cannot be read so (an older binary version, a damaged file: the load says why)."""
    try:
        with model_bin.open("rb") as f:
            version, n = struct.unpack("<IH", f.read(6))
            if version < 4:  # (the layout below: binary version 4 and later)
                return None
            f.seek(n + 4, os.SEEK_CUR)  # the spec's name, its revision
            (n_vars,) = struct.unpack("<I", f.read(4))
            if n_vars > MAX_CT2_VARIABLES:
                return None
            layers, heads = -1, None
            for _ in range(n_vars):
                (n,) = struct.unpack("<H", f.read(2))
                name = f.read(n).rstrip(b"\0").decode("ascii")
                (rank,) = struct.unpack("<B", f.read(1))
                f.seek(4 * rank, os.SEEK_CUR)
                dtype, size = struct.unpack("<BI", f.read(5))
                if (m := _DECODER_LAYER.match(name)) is not None:
                    layers = max(layers, int(m.group(1)))
                if name == "decoder/num_heads" and dtype in (1, 2, 3) and size in (1, 2, 4):
                    heads = int.from_bytes(f.read(size), "little", signed=True)
                else:
                    f.seek(size, os.SEEK_CUR)
    except (OSError, struct.error, ValueError, IndexError):
        return None
    return (layers + 1, heads) if layers >= 0 and heads is not None and heads > 0 else None


def check_whisper_dir(path: str | os.PathLike[str]) -> Path:
    """A CTranslate2 Whisper model directory as faster-whisper loads it offline."""
    p = user_path(path)
    st = _stat(p, "speech model folder")
    if st is None:
        raise InvalidModelError(f"speech model folder not found: {shown(p)}")
    if not stat.S_ISDIR(st.st_mode):
        raise InvalidModelError(
            f"{shown(Path(p.name))}: a Whisper model is a folder (model.bin, config.json, ...), "
            "not a file"
        )
    try:
        _check_whisper_files(p)
    except InvalidModelError:
        raise
    except OSError as e:  # a folder or a file this user may not read, a disk error
        named = Path(e.filename) if e.filename else None
        what = "the folder" if named == p else named.name if named else "a file of it"
        raise InvalidModelError(f"{p.name}: {what} cannot be read ({e.strerror or e})") from None
    return p


def _check_whisper_files(p: Path) -> None:
    os.listdir(p)  # (a folder this user may not read: said as such)
    for n in (*WHISPER_REQUIRED, *WHISPER_VOCABULARY):
        if (p / n).exists() and not (p / n).is_file():  # (what faster-whisper would open)
            kind = "a folder" if (p / n).is_dir() else "a pipe or a device"
            raise InvalidModelError(f"{p.name}: {n} is {kind}, not a file")
    missing = [n for n in WHISPER_REQUIRED if not (p / n).is_file()]
    if not any((p / n).is_file() for n in WHISPER_VOCABULARY):
        missing.append("vocabulary.json or vocabulary.txt")
    if (
        missing
        and "model.bin" in missing
        and any((p / n).is_file() for n in ("model.safetensors", "pytorch_model.bin"))
    ):
        # The Hugging Face (transformers) copy of a Whisper, as a hub's model page offers it.
        raise InvalidModelError(
            f"{p.name}: a Hugging Face (transformers) Whisper folder; faster-whisper reads the "
            "CTranslate2 copy of the model (ct2-transformers-converter makes one)"
        )
    if missing:
        raise InvalidModelError(
            f"{p.name}: not a CTranslate2 Whisper model folder (missing {', '.join(missing)})"
        )
    spec = ct2_spec_name(p / "model.bin")
    if "whisper" not in spec.lower():
        raise InvalidModelError(f"{p.name}: a CTranslate2 {spec} model, not Whisper")
    _check_ct2_config(p, _json_file(p / "config.json"), ct2_decoder_shape(p / "model.bin"))
    if (p / "preprocessor_config.json").is_file():  # (optional; faster-whisper reads it so)
        _check_features(p, _json_file(p / "preprocessor_config.json"))
    _check_tokenizer(p, _json_file(p / "tokenizer.json"))
    _check_vocabulary(p)


# The token every Whisper prompt starts with: a tokenizer or vocabulary without it is not
# Whisper's (CTranslate2 and faster-whisper failed at the first recognition: "list index out
# of range", "<|startoftranscript|> token was not found in the prompt").
START = "<|startoftranscript|>"


def _check_tokenizer(p: Path, tokenizer: Any) -> None:
    """tokenizer.json as the tokenizers library reads a Whisper's: a BPE model's vocabulary,
    with Whisper's special tokens among its added tokens."""
    if not isinstance(tokenizer, dict):
        raise InvalidModelError(f"{p.name}: damaged tokenizer.json (not a JSON object)")
    model = tokenizer.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if not isinstance(vocab, dict) or not vocab:
        raise InvalidModelError(f"{p.name}: damaged tokenizer.json (it holds no vocabulary)")
    added = tokenizer.get("added_tokens")
    added = added if isinstance(added, list) else []
    if START not in vocab and not any(
        isinstance(a, dict) and a.get("content") == START for a in added
    ):
        raise InvalidModelError(
            f"{p.name}: damaged tokenizer.json (it has no {START} token: not a Whisper's)"
        )


def _check_vocabulary(p: Path) -> None:
    """vocabulary.json (a list of tokens) or vocabulary.txt (a token a line), as CTranslate2
    reads the first of them there, with Whisper's start token."""
    name = next(n for n in WHISPER_VOCABULARY if (p / n).is_file())
    if name.endswith(".json"):
        tokens = _json_file(p / name)
        if not isinstance(tokens, list):
            raise InvalidModelError(f"{p.name}: damaged {name} (not a JSON list)")
    else:
        try:
            tokens = user_files.read_text(p / name, MAX_JSON_BYTES).splitlines()
        except user_files.FileProblem as e:
            raise InvalidModelError(f"{p.name}: {e}") from None
    if START not in tokens:
        raise InvalidModelError(f"{p.name}: damaged {name} (it has no {START} token)")


def _json_file(path: Path) -> Any:
    """A model's JSON metadata through the app's bounded reader; one-line errors."""
    try:
        return json.loads(user_files.read_text(path, MAX_JSON_BYTES))
    except user_files.FileProblem as e:
        raise InvalidModelError(f"{path.parent.name}: {e}") from None
    except (ValueError, RecursionError) as e:
        why = user_files.one_line(e)
        raise InvalidModelError(f"{path.parent.name}: damaged {path.name} ({why})") from None


def _ints(value: Any, depth: int) -> bool:
    """A list of integers (``depth`` 1) or of lists of them (2)."""
    if not isinstance(value, list):
        return False
    if depth == 1:
        return all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    return all(_ints(x, depth - 1) for x in value)


def _check_ct2_config(p: Path, config: Any, decoder: tuple[int, int] | None = None) -> None:
    """config.json as CTranslate2 and faster-whisper read it: an object whose token lists
    are lists of token ids (else the first recognition fails, not the load), and whose
    alignment heads are heads of the decoder (``decoder``: its layers and heads, where
    model.bin tells them). A token id beyond 32 bits or a head past the decoder's layers
    crashed CTranslate2 at the first recognition (SIGSEGV)."""
    if not isinstance(config, dict):
        raise InvalidModelError(f"{p.name}: damaged config.json (not a JSON object)")
    for key, depth in WHISPER_CONFIG_LISTS.items():
        if key in config and not _ints(config[key], depth):
            kind = "token ids" if depth == 1 else "pairs of numbers"
            raise InvalidModelError(
                f"{p.name}: damaged config.json ({key!r} is not a list of {kind})"
            )
        values = config.get(key, [])
        if depth == 1 and any(not -(2**31) <= x < 2**31 for x in values):
            raise InvalidModelError(
                f"{p.name}: damaged config.json ({key!r} holds a token id beyond 32 bits)"
            )
    heads = config.get("alignment_heads")
    if heads is None:
        return
    layers, per_layer = decoder if decoder is not None else (2**31, 2**31)
    for pair in heads:
        if len(pair) != 2 or not (0 <= pair[0] < layers and 0 <= pair[1] < per_layer):
            among = (
                f"not among the decoder's {layers} layers of {per_layer} heads"
                if decoder is not None
                else "no [layer, head] of the decoder"
            )
            raise InvalidModelError(
                f"{p.name}: damaged config.json (alignment head {pair} is {among})"
            )
    if not heads:
        raise InvalidModelError(f"{p.name}: damaged config.json (no alignment head)")


def _check_features(p: Path, config: Any) -> None:
    """preprocessor_config.json as faster-whisper's feature extractor reads it: an object
    whose values are Whisper's (else the load fails on a division by zero, an array of
    terabytes or a list's missing ``items``, or recognition hears nothing)."""
    if not isinstance(config, dict):
        raise InvalidModelError(f"{p.name}: damaged preprocessor_config.json (not a JSON object)")
    wanted: dict[str, tuple[int, ...]] = {k: (v,) for k, v in WHISPER_FEATURES.items()}
    wanted["feature_size"] = WHISPER_MELS
    for key, values in wanted.items():
        value = config.get(key, values[0])
        if type(value) is not int or value not in values:  # (not 16000.0: a float's shapes)
            said = json.dumps(value)
            said = said if len(said) <= 20 else said[:19] + "…"
            whisper = " or ".join(map(str, values))
            raise InvalidModelError(
                f"{p.name}: damaged preprocessor_config.json ({key} is {said}; a Whisper's "
                f"is {whisper})"
            )


def check_model_path(path: str | os.PathLike[str], template: str = "auto") -> str:
    """Validate whatever a user points at; returns a short description of what it is."""
    p = user_path(path)
    if (st := _stat(p, "model")) is not None and stat.S_ISDIR(st.st_mode):
        if p.suffix.lower() == ".gguf" and not (p / "model.bin").exists():
            check_translator(p, template)  # (raises: meant as a .gguf file, it is a folder)
        check_whisper_dir(p)
        return f"Whisper model folder ({_mb((p / 'model.bin').stat().st_size)})"
    info = check_translator(p, template)
    return (
        f"GGUF translator ({info.architecture or 'unknown arch'}, {info.n_tensors} tensors, "
        f"{_mb(info.file_size)}, template {info.template})"
    )


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.1f} kB"
