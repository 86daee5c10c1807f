"""Streaming resampling to 16 kHz for devices that cannot capture at 16 kHz."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Samples = npt.NDArray[np.float32]
_TAPS = 31  # low-pass length: enough to keep aliasing of 16-24 kHz content out of speech


def _lowpass(cutoff: float) -> Samples:
    """Windowed-sinc FIR; ``cutoff`` as a fraction of the input sample rate (0..0.5)."""
    n = np.arange(_TAPS) - (_TAPS - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(_TAPS)
    return np.asarray(h / h.sum(), dtype=np.float32)


class StreamResampler:
    """Linear interpolation after an anti-alias filter, continuous across blocks.

    Block boundaries leave no clicks: the filter keeps its history and the output position is
    carried as a fraction, so resampling a signal in pieces equals resampling it whole.
    """

    def __init__(self, rate_in: int, rate_out: int = 16000) -> None:
        if rate_in <= 0 or rate_out <= 0:
            raise ValueError("sample rates must be positive")
        self.rate_in, self.rate_out = rate_in, rate_out
        self._step = rate_in / rate_out  # input samples per output sample
        self._fir = _lowpass(0.45 * rate_out / rate_in) if rate_in > rate_out else None
        self._hist = np.zeros(_TAPS - 1, dtype=np.float32)  # filter memory
        self._prev = np.zeros(1, dtype=np.float32)  # last filtered sample, for interpolation
        self._pos = 1.0  # next output position, in input samples, relative to _prev[0]

    def __call__(self, x: Samples) -> Samples:
        x = np.asarray(x, dtype=np.float32).reshape(-1)
        if self.rate_in == self.rate_out:
            return x
        if self._fir is not None:
            padded = np.concatenate([self._hist, x])
            self._hist = padded[len(padded) - (_TAPS - 1) :]
            x = np.convolve(padded, self._fir, mode="valid").astype(np.float32)
        y = np.concatenate([self._prev, x])  # y[0] is the sample before this block
        last = len(y) - 1
        pos = np.arange(self._pos, last + 1e-9, self._step)
        i = np.minimum(pos.astype(np.int64), last - 1) if last > 0 else pos.astype(np.int64)
        frac = (pos - i).astype(np.float32)
        out = np.asarray(y[i] * (1 - frac) + y[np.minimum(i + 1, last)] * frac, np.float32)
        self._pos = (pos[-1] + self._step - last) if len(pos) else self._pos - last
        self._prev = y[-1:].copy()
        return out
