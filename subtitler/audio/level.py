"""The input level a meter shows, in dBFS from the input to the screen."""

from __future__ import annotations

import math

import numpy as np

from subtitler.audio.resample import Samples
from subtitler.types import SILENCE_DBFS


def level_dbfs(samples: Samples) -> float:
    """RMS level in dBFS (SILENCE_DBFS for silence): what a level meter shows."""
    if len(samples) == 0:
        return SILENCE_DBFS
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return max(SILENCE_DBFS, 20 * math.log10(rms)) if rms > 0 else SILENCE_DBFS
