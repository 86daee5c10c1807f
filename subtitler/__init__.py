"""subtitler: live, translated subtitles over any meeting."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("subtitler")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+local"
