"""Research and measurement code beside the product: benchmarks, the oracle recogniser, the talk
builder, random-weight models, the headless replays and their metrics.

It imports the product (``subtitler``) and is never imported by it; it is not installed with the
wheel nor bundled by the installer. Run it from a checkout (``python -m subtitler_research...``).
"""
