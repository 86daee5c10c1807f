"""A decoding loop: the one rule for what no working translator or recogniser writes.

A translator's output that ends in a loop is not a translation (mt/output_rules.py), and a
model whose test output loops has damaged weights (models/smoke_test.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

# A phrase of up to _LOOP_PERIOD tokens said again and again: at least this many tokens of
# it, and at least _LOOP_REPEATS copies ("words, words, words, words" is 4 copies of 2 tokens,
# which a person says; 6 copies of it are a decoding loop).
_LOOP_PERIOD = 4
_LOOP_TOKENS = 12
_LOOP_REPEATS = 4

LOOP = "the model repeated itself"


def loops(tokens: Sequence[Hashable]) -> bool:
    """Does the output end in a decoding loop: the same phrase of 1 to 4 tokens over and over
    (at least 4 copies and 12 tokens)?"""
    n = len(tokens)
    for p in range(1, _LOOP_PERIOD + 1):
        copies = max(_LOOP_REPEATS, math.ceil(_LOOP_TOKENS / p))
        k = p * copies
        if n < k:
            continue
        tail = tokens[n - k :]
        if all(tail[i] == tail[i % p] for i in range(k)):
            return True
    return False
