"""Settings' Apply checks the models chosen in it: a path with nothing usable at it is refused
with one line, not found at the meeting's start."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLineEdit

from subtitler.config import AppConfig, with_settings
from subtitler.models.validate import shown
from subtitler.ui.settings_pane import SettingsPane
from tests.helpers.fake_hub import fake_whisper_files
from tests.ui.test_overlay_settings import pick


def applied(pane: SettingsPane) -> list[AppConfig]:
    got: list[AppConfig] = []
    pane.applied.connect(got.append)
    return got


def test_a_translation_model_typed_in_is_checked_at_apply(
    qtbot, tmp_path: Path, tiny_gguf: Path
) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    got = applied(pane)
    gone = tmp_path / "models" / "gone.gguf"
    pane.mt_model.setEditText(str(gone))
    assert not pane.apply() and not got
    assert pane.error.text() == f"Not saved: translation model not found: {shown(gone)}"
    junk = tmp_path / "notes.gguf"
    junk.write_bytes(b"not a model, some notes" * 10)
    pane.mt_model.setEditText(str(junk))
    assert not pane.apply() and not got
    assert (
        pane.error.text()
        == "Not saved: translation model: notes.gguf: not a GGUF model file (bad header)"
    )
    pane.mt_model.setEditText(str(tiny_gguf))
    assert pane.apply() and pane.error.text() == "" and got[-1].mt.model_path == str(tiny_gguf)


def test_a_speech_model_folder_and_a_draft_model_are_checked_at_apply(
    qtbot, tmp_path: Path, tiny_gguf: Path
) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    got = applied(pane)
    folder = tmp_path / "whisper"
    pane.asr_model.setEditText(str(folder))
    pane.draft_model.setText(str(tmp_path / "small.gguf"))
    assert not pane.apply() and not got
    assert pane.error.text() == (
        f"Not saved: speech model folder not found: {shown(folder)}; "
        f"draft model not found: {shown(tmp_path / 'small.gguf')}"
    )
    folder.mkdir()
    for name, data in fake_whisper_files().items():
        (folder / name).write_bytes(data)
    pane.draft_model.setText(str(tiny_gguf))
    assert pane.apply() and got[-1].asr.model == str(folder)
    assert got[-1].mt.draft_model_path == str(tiny_gguf)


def test_a_model_in_use_is_not_asked_about_again(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A model file that went away since it was chosen is the meeting's to say (with how to
    choose another): the other settings are still saved."""
    cfg = with_settings(AppConfig(), {"mt.model_path": str(tmp_path / "moved.gguf")})
    pane = SettingsPane(cfg)
    qtbot.addWidget(pane)
    got = applied(pane)
    pane.widget("mt.beta").setValue(60)
    assert pane.apply() and got[-1].mt.beta == 0.6


def test_a_server_translating_needs_no_model_file(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pane = SettingsPane(AppConfig())
    qtbot.addWidget(pane)
    got = applied(pane)
    pane.mt_model.setEditText(str(tmp_path / "gone.gguf"))
    pick(pane, "mt.backend", "server")
    url = pane.widget("mt.server_url")
    assert isinstance(url, QLineEdit)
    url.setText("http://127.0.0.1:8080/v1")
    assert pane.apply() and got[-1].mt.uses_server
