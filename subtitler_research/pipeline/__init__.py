"""The whole pipeline headless (the replay with its latency metrics)."""
