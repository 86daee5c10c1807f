"""A talk as a meeting may deliver it: in a reverberant room, through a telephone's band,
with pink noise."""

from __future__ import annotations

import numpy as np


def degraded(
    audio: np.ndarray,
    *,
    snr_db: float | None,
    band: str | None,
    reverb_s: float | None = None,
) -> np.ndarray:
    """``audio`` (16 kHz) heard in a room whose reverberation falls by 60 dB in ``reverb_s``
    (a seeded exponentially decaying noise tail after the direct sound, at the level of the
    audio as it was), then only a telephone's band, 300-3400 Hz (``band``: "telephone", a
    6th-order Butterworth band-pass's gain without its phase; "sharp", nothing outside the
    band at all), then with pink noise at ``snr_db`` over its louder half; clipped to
    [-1, 1]."""
    x = np.asarray(audio, dtype=np.float64)
    if reverb_s is not None:
        t = np.arange(round(reverb_s * 16000)) / 16000
        tail = np.random.default_rng(7).standard_normal(len(t)) * 10 ** (-3 * t / reverb_s)
        tail[0] = 3 * np.abs(tail).max()  # the direct sound, above the first reflections
        n = len(x) + len(t)
        wet = np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(tail, n), n)[: len(x)]
        x = wet * np.sqrt((x**2).mean() / max((wet**2).mean(), 1e-30))
    if band is not None:
        spec = np.fft.rfft(x)
        hz = np.maximum(np.fft.rfftfreq(len(x), 1 / 16000), 1e-3)
        if band == "sharp":
            spec[(hz < 300) | (hz > 3400)] = 0
        else:
            spec /= np.sqrt((1 + (300 / hz) ** 12) * (1 + (hz / 3400) ** 12))
        x = np.fft.irfft(spec, n=len(x))
    if snr_db is not None:
        frames = x[: len(x) // 320 * 320].reshape(-1, 320)
        energy = (frames**2).mean(axis=1)
        speech = energy[energy > np.median(energy)].mean()  # the louder half: speech
        spec = np.fft.rfft(np.random.default_rng(7).standard_normal(len(x)))
        spec /= np.sqrt(np.maximum(np.arange(len(spec)), 1))  # 1/f power: pink
        noise = np.fft.irfft(spec, n=len(x))
        x = x + noise * np.sqrt(speech / 10 ** (snr_db / 10) / (noise**2).mean())
    return np.clip(x, -1.0, 1.0).astype(np.float32)
