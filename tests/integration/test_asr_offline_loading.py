"""A Whisper size name that was never downloaded is not fetched behind the user's back: the
recogniser loads local files only and says in one line how to download the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json
from subtitler.asr.backend import AsrError
from subtitler.asr.faster_whisper import FasterWhisperBackend, WhisperSettings
from subtitler.config import AsrConfig
from subtitler.asr.loading import load_recognizer

out = {}
for name, load in [
    ("recognizer", lambda: load_recognizer(AsrConfig(model="tiny", vad=False))),
    ("backend", lambda: FasterWhisperBackend(WhisperSettings(model="tiny", device="cpu"))),
]:
    try:
        load()
        out[name] = "loaded"
    except AsrError as e:
        out[name] = str(e)
print(json.dumps(out))
"""


def test_a_size_name_never_downloaded_is_not_fetched(tmp_path: Path) -> None:
    hub = FakeHub().start()  # stands in for the hub: it records every request it gets
    try:
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            HF_HUB_OFFLINE="0",  # the network is allowed: only the code may not use it
            HF_ENDPOINT=hub.endpoint,
            HF_HOME=str(tmp_path / "hf"),
            SUBTITLER_MODELS_DIR=str(tmp_path / "models"),
        )
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        hub.stop()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert hub.requests == []
    assert out["recognizer"] == (
        "speech model Whisper tiny is not downloaded: click Download in Models (tray menu), "
        "or choose a model folder in Settings"
    )
    assert out["backend"].startswith("cannot load Whisper model 'tiny': ")
    assert "\n" not in out["backend"]
