"""Tests that need a system program (Xvfb, PulseAudio): run wherever `tools/dev.py test` ran.

`python tools/dev.py test` installs what these tests need on Linux and says so in the
environment (SUBTITLER_SYSTEM_CHECKED); there a missing program is a failure, never a skip. A
plain `pytest` on a machine without them skips with the command that sets them up.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

SYSTEM_CHECKED_ENV = "SUBTITLER_SYSTEM_CHECKED"  # set by tools/dev.py


def needs_programs(*programs: str, why: str) -> pytest.MarkDecorator:
    """Skip on other OSes (``why`` names the Linux-only part); on Linux, run unless the
    programs are missing and dev.py did not check the machine."""
    if not sys.platform.startswith("linux"):
        return pytest.mark.skip(reason=f"{why}: Linux only")
    missing = [p for p in programs if shutil.which(p) is None]
    checked = os.environ.get(SYSTEM_CHECKED_ENV) == "1"
    return pytest.mark.skipif(
        bool(missing) and not checked,
        reason=f"{', '.join(missing)} not installed: `python tools/dev.py test` installs it",
    )
