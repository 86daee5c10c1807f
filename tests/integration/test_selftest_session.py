"""The self-test builds its engines as the app does: settings from the session (the defaults
planned for this machine, the tiny models and the self-test's settings over them) and the
parts from the pipeline's factories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from subtitler import selftest
from subtitler.config import AppConfig
from subtitler.models import hardware
from subtitler.session import Session

# A machine without GPU offload and with 8 cores: the hardware plan gives 0 GPU layers.
MACHINE = hardware.HardwareInfo("Linux", "x86_64", 8, 16 << 30, 12 << 30, False, False, 0)


@pytest.fixture()
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, AppConfig]]:
    """(part, settings) of every part the self-test had a session build."""
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: MACHINE)
    seen: list[tuple[str, AppConfig]] = []
    recognizer, translator = Session.recognizer, Session.translator

    def spy_recognizer(self: Session):  # type: ignore[no-untyped-def]
        seen.append(("recognizer", self.config))
        return recognizer(self)

    def spy_translator(self: Session):  # type: ignore[no-untyped-def]
        seen.append(("translator", self.config))
        return translator(self)

    monkeypatch.setattr(Session, "recognizer", spy_recognizer)
    monkeypatch.setattr(Session, "translator", spy_translator)
    return seen


def test_the_checks_build_their_engines_through_the_session(
    built: list[tuple[str, AppConfig]],
) -> None:
    assert "aligned 4 known words" in selftest.check_whisper()
    assert selftest.check_llama().startswith("tiny GGUF on CPU: ")
    assert [part for part, _ in built] == ["recognizer", "translator"]
    asr, mt = built[0][1].asr, built[1][1].mt
    assert asr.model == str(selftest.selftest_dir() / selftest.WHISPER_DIR)
    assert mt.model_path == str(selftest.selftest_dir() / selftest.LLAMA_FILE)
    # The hardware plan filled in what the settings leave to it, the self-test's settings
    # the rest.
    assert (asr.compute_type, mt.gpu_layers) == ("int8", 0)
    assert (asr.device, asr.threads, mt.threads, mt.n_ctx) == ("cpu", 1, 1, 512)


def test_the_worker_check_builds_both_engines_in_workers_through_the_session(
    built: list[tuple[str, AppConfig]],
) -> None:
    assert selftest.check_worker().startswith("llama.cpp and CTranslate2 in processes ")
    assert sorted(part for part, _ in built) == ["recognizer", "translator"]
    cfg = built[0][1]
    assert (cfg.asr.beam_size, cfg.mt.max_new_tokens) == (5, 8)  # the check's own settings


def test_a_setting_of_the_self_test_reaches_the_translator_it_checks(
    built: list[tuple[str, AppConfig]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(selftest.SETTINGS, "mt.max_new_tokens", 2)
    detail = selftest.check_llama()
    found = re.search(r"(\d+) then (\d+) token", detail)
    assert found, detail
    first, last = int(found[1]), int(found[2])
    assert first <= 2 and 1 <= last <= 2, detail  # (12 each with the self-test's own cap)


def test_a_damaged_translator_fails_the_self_test(
    built: list[tuple[str, AppConfig]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its load's real test said "damaged ... translating with it anyway" on stderr while
    the self-test said "ok" and passed (exit 0); `models verify` failed the same file."""
    import shutil

    from tests.helpers.damage import flip_gguf_weights

    copy = tmp_path / "selftest"
    shutil.copytree(selftest.selftest_dir(), copy)
    gguf = copy / selftest.LLAMA_FILE
    flip_gguf_weights(selftest.selftest_dir() / selftest.LLAMA_FILE, gguf, 20000)
    monkeypatch.setattr(selftest, "selftest_dir", lambda: copy)
    with pytest.raises(RuntimeError, match=r"^llama-random-q8_0\.gguf: damaged: "):
        selftest.check_worker()
