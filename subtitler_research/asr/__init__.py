"""Streaming ASR measurement: the replay, the oracle recogniser, talk builder, WER, tiny models."""
