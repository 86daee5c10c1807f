"""Benchmarks: ``python -m subtitler.bench`` prints the SSBD paper's tables for a GGUF."""
