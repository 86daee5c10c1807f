"""The real app under Xvfb: --replay a real speech file with the tiny test models, wait for
subtitles, take the overlay's picture and check its pixels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

from subtitler_research.bench.random_model import PRESETS, build_random_llama
from tests.helpers import pulse
from tests.helpers.system import needs_programs

ROOT = Path(__file__).resolve().parents[2]
CLIP = ROOT / "tests" / "data" / "LJ001-0008.flac"

pytestmark = needs_programs("Xvfb", why="a real X server")


@pytest.fixture()
def xvfb():  # type: ignore[no-untyped-def]
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x800x24"],
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    with os.fdopen(r) as f:
        display = f.readline().strip()
    yield f":{display}"
    proc.terminate()
    proc.wait(10)


def test_real_app_shows_subtitles(xvfb: str, tmp_path: Path, tiny_en: Path) -> None:
    whisper = tiny_en  # real words: random weights may say nothing at all
    gguf = build_random_llama(tmp_path / "mt.gguf", PRESETS["tiny"], seed=5)
    shot = tmp_path / "overlay.png"
    env = {
        **os.environ,
        "DISPLAY": xvfb,
        "QT_QPA_PLATFORM": "xcb",
    }
    cmd = [
        sys.executable,
        "-m",
        "tests.helpers.shot_app",  # main.py that saves the overlay's picture
        str(shot),
        "--replay",
        str(CLIP),
        "--asr-model",
        str(whisper),
        "--mt-model",
        str(gguf),
        "--data-dir",
        str(tmp_path / "data"),
        "--config",
        str(tmp_path / "config.toml"),
        "--speed",
        "2",
    ]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 90
        transcripts = tmp_path / "data" / "transcripts"
        while time.monotonic() < deadline:
            done = list(transcripts.glob("*.jsonl")) if transcripts.exists() else []
            if shot.exists() and done and done[0].read_text().strip():
                break
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.2)
        else:
            pytest.fail("no subtitles within 90 s")
        # Started again (same data folder): the running app is brought forward instead, and
        # the second start says its replay was not done.
        again = subprocess.run(
            cmd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert again.returncode == 1, again.stdout
        assert "error: subtitler is already running with this data folder" in again.stdout
        log = tmp_path / "data" / "subtitler.log"
        deadline = time.monotonic() + 10
        while "asked this instance to show itself" not in log.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, log.read_text(encoding="utf-8")[-2000:]
            time.sleep(0.1)
        assert proc.poll() is None  # the first one is still running
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    rec = json.loads(done[0].read_text().splitlines()[0])
    assert rec["source"] and rec["translation"] and rec["tgt_lang"] == "de"
    img = QImage(str(shot))
    assert img.hasAlphaChannel() and img.width() > 200
    alphas = {QColor.fromRgba(img.pixel(x, 4)).alpha() for x in range(20, img.width() - 20, 7)}
    assert all(0 < a < 255 for a in alphas), alphas  # the background is translucent
    bright = sum(
        1
        for x in range(0, img.width(), 2)
        for y in range(0, img.height(), 2)
        if QColor.fromRgba(img.pixel(x, y)).lightness() > 200
    )
    assert bright > 100, "subtitle text is drawn"


@needs_programs("pulseaudio", "paplay", why="PulseAudio meeting audio")
def test_real_app_captions_meeting_audio(xvfb: str, tmp_path: Path, tiny_en: Path) -> None:
    """The whole live path: a meeting app's voice (paplay into a PulseAudio sink) -> the
    sink's monitor chosen in the settings file -> capture -> VAD + Whisper -> translation ->
    overlay and transcript, in the real app under Xvfb."""
    whisper = tiny_en
    gguf = build_random_llama(tmp_path / "mt.gguf", PRESETS["tiny"], seed=5)
    config = tmp_path / "config.toml"
    config.write_text(f'[audio]\ndevice = "{pulse.MONITOR}"\n', encoding="utf-8")
    data = tmp_path / "data"
    with pulse.pulse_server(tmp_path) as env:
        env = {**env, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
        cmd = [
            sys.executable,
            str(ROOT / "main.py"),
            "--asr-model",
            str(whisper),
            "--mt-model",
            str(gguf),
            "--data-dir",
            str(data),
            "--config",
            str(config),
        ]
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        player: subprocess.Popen[bytes] | None = None
        try:
            deadline = time.monotonic() + 90
            transcripts = data / "transcripts"
            while time.monotonic() < deadline:
                done = list(transcripts.glob("*.jsonl")) if transcripts.exists() else []
                if done and done[0].read_text().strip():
                    break
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                # The speaker talks, then pauses long enough to end the utterance.
                if player is None or player.poll() is not None:
                    time.sleep(1.5)
                    player = pulse.play(env, CLIP)
                time.sleep(0.2)
            else:
                pytest.fail("no finished line from meeting audio within 90 s")
        finally:
            if player is not None:
                player.terminate()
            proc.terminate()
            out = proc.communicate(timeout=10)[0]
    log = (data / "subtitler.log").read_text(encoding="utf-8")
    assert f"capturing from {pulse.MONITOR} at 16000 Hz" in log, out
    rec = json.loads(done[0].read_text().splitlines()[0])
    assert rec["source"] and rec["translation"] and rec["tgt_lang"] == "de"


def test_a_translator_that_aborts_llama_cpp_leaves_the_app_running(
    xvfb: str, tmp_path: Path, tiny_en: Path
) -> None:
    """A settings file naming a GGUF whose header parses but makes llama.cpp abort (two equal
    token strings): the app starts, says so in one line in its log, and captions the replay
    untranslated (before: every start ended with SIGABRT, nothing printed or logged)."""
    from tests.helpers import gguf_edit

    whisper = tiny_en  # real words, whatever the CPU (random weights may emit none)
    fixture = ROOT / "fixtures" / "translator" / "model.gguf"
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(gguf_edit.duplicate_token(gguf_edit.parse(fixture.read_bytes())))
    config = tmp_path / "config.toml"
    config.write_text(f"[mt]\nmodel_path = {json.dumps(str(bad))}\n", encoding="utf-8")
    data = tmp_path / "data"
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
    cmd = [sys.executable, str(ROOT / "main.py"), "--replay", str(CLIP)]
    cmd += ["--asr-model", str(whisper), "--data-dir", str(data), "--config", str(config)]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    log = data / "subtitler.log"
    try:
        done = _first_line(proc, data)
        assert proc.poll() is None  # still running
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    text = log.read_text(encoding="utf-8")
    assert "broken.gguf: llama.cpp crashed loading it (llama-vocab.cpp" in text
    # The engine's own abort message reached the log file too.
    assert "GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed" in text
    rec = json.loads(done.read_text().splitlines()[0])
    assert rec["source"] and rec["translation"] == ""


ASIDE_CHECK = """
import sys, tempfile
from pathlib import Path
from PySide6.QtWidgets import QApplication
qapp = QApplication(sys.argv[:1])
from tests.helpers.windows import make_app, settle
app = make_app(Path(tempfile.mkdtemp()))
o = app.overlay
o.show()
settle(300)
home = o.geometry()
for name, open_it, attr in (("settings", app.open_settings, "settings"),
                            ("glossary", app.open_glossary, "glossary_dialog")):
    open_it()
    w = getattr(app, attr)
    w.move(home.x(), home.bottom() - w.frameGeometry().height() + 40)  # over the overlay
    w.activateWindow()
    settle(800)
    clear = not o.geometry().intersects(w.frameGeometry())
    print(name, QApplication.activeWindow() is w, clear, flush=True)
    w.close()
    settle(800)
    print(name, "back", o.geometry() == home, flush=True)
app.quit()
"""


def test_a_window_of_the_app_in_use_is_never_under_the_overlay(xvfb: str, tmp_path: Path) -> None:
    """Issue 27 point 5, on a real X server: Settings and the Glossary moved over the overlay
    and made active; the overlay (always on top) moves aside, then back to its place."""
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
    env["SUBTITLER_MODELS_DIR"] = str(tmp_path / "models")
    out = subprocess.run(
        [sys.executable, "-c", ASIDE_CHECK],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = [ln for ln in out.stdout.splitlines() if ln.split(" ")[0] in ("settings", "glossary")]
    assert lines == [
        "settings True True",
        "settings back True",
        "glossary True True",
        "glossary back True",
    ], out.stdout + out.stderr


def test_a_terminate_signal_quits_the_app_as_quit_does(
    xvfb: str, tmp_path: Path, tiny_en: Path
) -> None:
    """SIGTERM (a logout, `kill`, a service manager) ends the app through its own Quit: the
    pipeline stops, the lines are written, the engines end and leave nothing behind (before:
    Python's default ended the process on the spot, exit status -15)."""
    gguf = build_random_llama(tmp_path / "mt.gguf", PRESETS["tiny"], seed=5)
    data, temp = tmp_path / "data", tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "TMPDIR": str(temp)}
    cmd = [sys.executable, str(ROOT / "main.py"), "--replay", str(CLIP), "--data-dir", str(data)]
    cmd += ["--asr-model", str(tiny_en), "--mt-model", str(gguf)]
    cmd += ["--config", str(tmp_path / "config.toml")]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        done = _first_line(proc, data)
        proc.terminate()
        out = proc.communicate(timeout=30)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 0, out[-2000:]
    log = (data / "subtitler.log").read_text(encoding="utf-8")
    assert "SIGTERM: quitting" in log
    assert json.loads(done.read_text().splitlines()[0])["source"]
    assert list(temp.glob("subtitler-engine-*.log")) == []


def _first_line(proc: subprocess.Popen[str], data: Path) -> Path:
    """The app's transcript once it holds a line (the app must stay up meanwhile)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        done = list((data / "transcripts").glob("*.jsonl")) if data.exists() else []
        if done and done[0].read_text().strip():
            return done[0]
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.2)
    pytest.fail("no transcript line within 90 s")
