"""The Qt desktop UI: the only package that imports PySide6."""
