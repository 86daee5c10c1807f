"""A stand-in for PyAV in the installers (packaging/README.md, "FFmpeg").

PyAV's wheels carry an FFmpeg built with x264 and x265, which are GPL: the installers leave
PyAV out. faster-whisper imports ``av`` when it is imported (``faster_whisper/audio.py``) but
uses it only to decode files, which the app does with soundfile instead
(``subtitler.audio.sources``). This module lets that import succeed; anything asked of it
says why it is not there.
"""

SUBTITLER_STAND_IN = True


def __getattr__(name: str) -> object:
    if name.startswith("__") and name.endswith("__"):
        # Probes of a module's protocol (``hasattr(av, "__wrapped__")``: the PyInstaller
        # bundle's self-test met one) expect AttributeError; an ImportError escapes hasattr.
        raise AttributeError(name)
    raise ImportError(
        f"av.{name}: PyAV (FFmpeg) is not part of this build; audio files are decoded with "
        "soundfile (WAV, FLAC, Ogg, MP3)"
    )
