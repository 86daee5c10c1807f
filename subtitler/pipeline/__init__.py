"""The live pipeline: audio, ASR and translation threads (no Qt; the UI subscribes to events)."""
