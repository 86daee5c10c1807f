"""subtitler: live, translated subtitles over any meeting."""

import os
from importlib.metadata import PackageNotFoundError, version

# Speech recognition (CTranslate2) and translation (llama.cpp) both run on OpenMP (libgomp),
# whose idle worker threads by default spin for a while after every parallel region before
# they sleep: with the two engines on the same machine, one engine's spinning threads take the
# other's cores (measured: translation latency and commit delay, docs/benchmarks/asr.md).
# libgomp reads this when it loads, so it is set before either engine can be imported; an
# explicit setting in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    __version__ = version("subtitler")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+local"
