"""Mask-k: hide the unstable tail of an unfinished translation.

*Output* mask-k (the paper's baseline) shortens the output itself, so the next draft loses those
tokens. *Display-only* mask-k shortens only what is shown; the draft keeps every token.
Text is cut on whole characters: token pieces may end inside a UTF-8 sequence (a CJK character
split over byte-fallback or byte-level BPE tokens), and such a partial character is never shown.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence

MAX_K = 10  # display-only mask-k is chosen in 0..MAX_K


def output_mask(tokens: Sequence[int], k: int, final: bool) -> list[int]:
    """The paper's output mask-k: drop the last k tokens of a non-final output."""
    if final or k <= 0:
        return list(tokens)
    return list(tokens[: max(0, len(tokens) - k)])


def complete_text(data: bytes) -> str:
    """Decode UTF-8 up to the last complete character; an unfinished trailing one is dropped."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return dec.decode(data, final=False)


def display_text(
    detokenize: Callable[[Sequence[int]], bytes],
    tokens: Sequence[int],
    k: int,
    final: bool,
) -> str:
    """What the overlay shows for a translation: all of it when final, else minus k tokens."""
    shown = tokens if final or k <= 0 else tokens[: max(0, len(tokens) - k)]
    # Final or not, a character the output stopped in the middle of (a length limit) is left out.
    return complete_text(detokenize(shown))
