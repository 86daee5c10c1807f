"""Where every field of a GGUF file lies, so tests can corrupt one field at a time in place
(header counts, strings, arrays, vocabulary, hyper-parameters, tensor table)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
STRING, ARRAY = 8, 9


@dataclass
class Str:
    """A GGUF string: its u64 length at ``at``, its bytes after."""

    at: int
    length: int

    @property
    def data(self) -> int:
        return self.at + 8


@dataclass
class KV:
    key: Str
    type_at: int  # u32 value type
    vtype: int
    value_at: int  # scalar value, string, or array header (u32 item type, u64 count)
    item_type: int = -1
    items: list[int | Str] = field(default_factory=list)  # scalar offsets or strings

    @property
    def count_at(self) -> int:
        return self.value_at + 4


@dataclass
class Tensor:
    name: Str
    n_dims_at: int
    dims_at: list[int]
    type_at: int
    offset_at: int


@dataclass
class Layout:
    data: bytes
    kv: dict[str, KV]
    tensors: list[Tensor]

    def scalar(self, key: str) -> tuple[int, str]:
        """(offset, struct format) of a scalar metadata value."""
        kv = self.kv[key]
        return kv.value_at, _SCALARS[kv.vtype]

    def token(self, i: int) -> Str:
        s = self.kv["tokenizer.ggml.tokens"].items[i]
        assert isinstance(s, Str)
        return s

    def text(self, s: Str) -> bytes:
        return self.data[s.data : s.data + s.length]


def parse(data: bytes) -> Layout:
    pos = 0

    def u(fmt: str) -> int:
        nonlocal pos
        (v,) = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return int(v)

    def string() -> Str:
        nonlocal pos
        s = Str(pos, struct.unpack_from("<Q", data, pos)[0])
        pos += 8 + s.length
        return s

    assert data[:4] == b"GGUF"
    pos = 8
    n_tensors, n_kv = u("Q"), u("Q")
    kvs: dict[str, KV] = {}
    for _ in range(n_kv):
        key = string()
        type_at = pos
        vtype = u("I")
        kv = KV(key, type_at, vtype, pos)
        if vtype == STRING:
            string()
        elif vtype == ARRAY:
            kv.item_type, n = u("I"), u("Q")
            for _ in range(n):
                if kv.item_type == STRING:
                    kv.items.append(string())
                else:
                    kv.items.append(pos)
                    pos += struct.calcsize("<" + _SCALARS[kv.item_type])
        else:
            pos += struct.calcsize("<" + _SCALARS[vtype])
        kvs[data[key.data : key.data + key.length].decode()] = kv
    tensors = []
    for _ in range(n_tensors):
        name = string()
        n_dims_at = pos
        n_dims = u("I")
        dims_at = [pos + 8 * i for i in range(n_dims)]
        pos += 8 * n_dims
        tensors.append(Tensor(name, n_dims_at, dims_at, pos, pos + 4))
        pos += 12
    return Layout(data, kvs, tensors)


def put(data: bytes, at: int, fmt: str, value: float | int) -> bytes:
    b = bytearray(data)
    struct.pack_into("<" + fmt, b, at, value)
    return bytes(b)


def put_bytes(data: bytes, at: int, new: bytes) -> bytes:
    b = bytearray(data)
    b[at : at + len(new)] = new
    return bytes(b)


def duplicate_token(lay: Layout, start: int = 3) -> bytes:
    """Two tokens with the same text (llama.cpp asserts a one-to-one vocabulary)."""
    seen: dict[int, Str] = {}
    items = lay.kv["tokenizer.ggml.tokens"].items
    for i in range(start, len(items)):
        s = lay.token(i)
        if s.length in seen:
            return put_bytes(lay.data, s.data, lay.text(seen[s.length]))
        seen[s.length] = s
    raise AssertionError("no two tokens of the same length")
