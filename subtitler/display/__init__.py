"""What the reader sees, decided in one place and without Qt: what an unfinished line shows
of its translation (``masking``, display-only mask-k), how an open line stays steady across
its updates (``steadiness``) and which lines a display shows (``lines``). The pipeline, the
browser page and the overlay all use these rules."""
