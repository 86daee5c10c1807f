"""What a translator keeps of its own output: output mask-k and whole characters.

*Output* mask-k (the paper's baseline) shortens the output itself, so the next draft loses
those tokens. What a display hides of an unfinished line (display-only mask-k, the draft
untouched) is decided in :mod:`subtitler.display.masking`.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def output_mask(tokens: Sequence[T], k: int, final: bool) -> list[T]:
    """The paper's output mask-k: drop the last k tokens of a non-final output (token ids,
    or a server's token texts)."""
    if final or k <= 0:
        return list(tokens)
    return list(tokens[: max(0, len(tokens) - k)])


def complete_text(data: bytes) -> str:
    """Decode UTF-8 up to the last complete character; an unfinished trailing one is dropped."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return dec.decode(data, final=False)
