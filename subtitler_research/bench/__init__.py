"""Benchmarks: ``python -m subtitler_research.bench`` prints the SSBD paper's tables for a GGUF."""
