"""A translator slower than the speech, for the replay: the real model, with each llama.cpp
evaluation taking a set time (a 1-4B model on a laptop CPU, without one to download).

A decoding step costs ``step_s``; a batch (the prompt, a verify pass) costs ``batch_share`` of
that per token (about what a batched token costs against a decoded one on these machines:
docs/BENCHMARKS.md, 6.4 vs 17.5 ms). The outputs are the model's own, so the display shows
real translations at the pace of a slow one. The wait is a sleep: the cost is the same whatever
else the machine does, so runs compare.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from subtitler.config import MtConfig
from subtitler.mt.engine import Engine, LocalEngine
from subtitler.mt.lm import LanguageModel, Logits
from subtitler.pipeline.pipeline import Factories

BATCH_SHARE = 0.37


class SlowLM:
    """A :class:`LanguageModel` whose evaluations take at least their set cost."""

    def __init__(self, lm: LanguageModel, step_s: float, batch_share: float = BATCH_SHARE):
        self.lm, self.step_s, self.batch_share = lm, step_s, batch_share

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        t0 = time.perf_counter()
        rows = self.lm.evaluate(tokens, logits_at)
        n = len(tokens)
        cost = self.step_s if n == 1 else self.batch_share * self.step_s * n
        time.sleep(max(0.0, cost - (time.perf_counter() - t0)))
        return rows

    def __getattr__(self, name: str) -> Any:  # the rest of the model, as it is
        return getattr(self.lm, name)


def slowed(factories: Factories, step_s: float) -> Factories:
    """``factories`` with the translator loaded in this process and slowed to ``step_s`` per
    decoding step (a server translator is left as it is)."""
    from subtitler.mt.loading import load_translator

    def model(mt: MtConfig) -> Engine:
        if mt.uses_server:
            return factories.model(mt)
        loaded = load_translator(mt)
        slow = dataclasses.replace(loaded, lm=cast(LanguageModel, SlowLM(loaded.lm, step_s)))
        return LocalEngine(slow, mt, Path(mt.model_path).name)

    return dataclasses.replace(factories, model=model)
