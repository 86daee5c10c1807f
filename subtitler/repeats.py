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

# A longer phrase going round: said twice in a row (the last copy perhaps cut short), at least
# this many tokens in all. Only an output its length limit stopped is judged by it (a model
# that ends its line by itself did not go round).
_ROUND_MIN_PERIOD = 3
_ROUND_TOKENS = 12

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


def goes_round(tokens: Sequence[Hashable]) -> bool:
    """Does the output end going round a phrase of 3 tokens or more: two copies of it in a row
    at least, the last perhaps cut short, 12 tokens or more in all ('in der Datei "x.py" in
    der Datei "x.py" in der Da')? What a model writes until its length limit stops it."""
    n = len(tokens)
    for p in range(_ROUND_MIN_PERIOD, n // 2 + 1):
        m = 0  # trailing tokens equal to the token p before them
        while m < n - p and tokens[n - 1 - m] == tokens[n - 1 - m - p]:
            m += 1
        if m >= p and m + p >= _ROUND_TOKENS:
            return True
    return False
