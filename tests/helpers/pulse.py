"""A private PulseAudio server with one null sink, "meeting" (its monitor: "Monitor of
Meeting"), for tests of meeting-audio capture. Needs Debian's pulseaudio and pulseaudio-utils
(installed by .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MONITOR = "Monitor of Meeting"


def available() -> bool:
    return shutil.which("pulseaudio") is not None and shutil.which("paplay") is not None


@contextmanager
def pulse_server(tmp_path: Path, sinks: tuple[str, ...] = ("meeting",)) -> Iterator[dict[str, str]]:
    """Start the server with a null sink per name ("meeting": its monitor is "Monitor of
    Meeting"); yields the environment its clients (and paplay) need."""
    run = tmp_path / "pulse"
    run.mkdir()
    socket = run / "native"
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        XDG_RUNTIME_DIR=str(run),
        PULSE_RUNTIME_PATH=str(run),
        PULSE_SERVER=f"unix:{socket}",
    )
    server = subprocess.Popen(
        [
            "pulseaudio",
            "-n",  # no default.pa: exactly these modules
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--use-pid-file=no",
            "--disallow-exit",
            *(
                arg
                for name in sinks
                for arg in (
                    "-L",
                    f"module-null-sink sink_name={name} "
                    f"sink_properties=device.description={name.capitalize()}",
                )
            ),
            "-L",
            f"module-native-protocol-unix socket={socket} auth-anonymous=1",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(200):
            if socket.exists() or server.poll() is not None:
                break
            time.sleep(0.05)
        if not socket.exists():
            ended = server.poll() is not None and server.stderr is not None
            err = server.stderr.read().decode() if ended and server.stderr else ""
            raise RuntimeError(f"PulseAudio did not start: {err}")
        yield env
    finally:
        server.terminate()
        server.wait(10)


def play(
    env: dict[str, str], clip: Path, sink: str = "meeting", volume: float = 1.0
) -> subprocess.Popen[bytes]:
    """Play ``clip`` into a sink (the meeting's: what a meeting app's voice output would do),
    its samples scaled by ``volume`` (0.1: 20 dB quieter)."""
    # PulseAudio's software volume is cubic: a volume of v scales samples by (v / NORM) ** 3.
    level = f"--volume={round(65536 * volume ** (1 / 3))}"
    return subprocess.Popen(["paplay", f"--device={sink}", level, str(clip)], env=env)
