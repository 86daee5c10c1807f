"""The Qt-free session: settings loaded, overridden for one run and saved; the pipeline built,
reconfigured and stopped from one place."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from subtitler import settings_store
from subtitler.config import AppConfig, MtConfig
from subtitler.models import hardware
from subtitler.pipeline.events import SubtitleEvent
from subtitler.pipeline.pipeline import Factories
from subtitler.session import Overrides, Session, prepare
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm, loader_for
from tests.unit.test_pipeline import Events, wait_for


def test_no_override_changes_nothing_and_the_settings_are_saved() -> None:
    cfg = AppConfig()
    assert Overrides().apply(cfg) == (cfg, False)


def test_overrides_apply_for_one_run() -> None:
    given = {"asr.model": "tiny", "mt.tgt_lang": "ja"}
    cfg, changed = Overrides(given, replay=Path("talk.wav")).apply(AppConfig())
    assert changed
    assert cfg.asr.model == "tiny" and cfg.mt.tgt_lang == "ja" and cfg.mt.model_path == ""
    assert (cfg.audio.source, cfg.audio.file_path, cfg.audio.realtime) == ("file", "talk.wav", True)


@pytest.fixture()
def machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known computer (no probing of llama.cpp / CTranslate2 here)."""
    hw = hardware.HardwareInfo("Linux", "x86_64", 2, 8 << 30, 6 << 30, False, False, 0)
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: hw)


def test_prepare_loads_the_file_and_plans_models(tmp_path: Path, machine: None) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mt]\ntgt_lang = "fr"\nthreads = 2000\n', encoding="utf-8")
    start = prepare(path, Overrides(replay=tmp_path / "talk.wav"))
    assert start.config.mt.tgt_lang == "fr"
    assert start.config.mt.threads == 64  # clamped into its range, with a notice
    assert any("mt.threads = 2000" in n for n in start.notices)
    assert start.overridden and start.save_path is None  # a replay run saves nothing
    assert not start.plan.ready  # no models in the settings
    assert start.hardware_line and start.translation_models is not None


@pytest.mark.parametrize(
    "model",
    [
        "[mt]\nmodel_path = '{long}.gguf'\n",
        "[mt]\nmodel_path = '/tmp/{long}/m.gguf'\n",
        "[asr]\nmodel = '{long}'\n",
        "[asr]\nmodel = '~{long}/whisper'\n",
        "[mt]\nmodel_path = 'a\\u0000b.gguf'\n",
    ],
)
def test_a_model_path_no_file_system_accepts_is_an_invalid_model(
    tmp_path: Path, machine: None, model: str
) -> None:
    """A hand-edited path the OS refuses to look up (too long a name, a NUL) is a model that
    cannot be used, said in the first-run plan; the start goes on."""
    path = tmp_path / "config.toml"
    path.write_text(model.format(long="x" * 300), encoding="utf-8")
    start = prepare(path, Overrides(replay=tmp_path / "talk.wav"))
    role = start.plan.mt if "[mt]" in model else start.plan.asr
    assert role.state == "invalid" and "\n" not in role.reason
    assert any("cannot be used" in m for m in start.plan.messages)


def test_prepare_without_overrides_saves_the_first_run_choice(
    tmp_path: Path, machine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subtitler.session as session

    monkeypatch.setattr(session, "input_devices", lambda: ([], ""))
    path = tmp_path / "config.toml"
    start = prepare(path)
    assert start.save_path == path and start.notices == []
    chosen = dataclasses.replace(
        start.config, mt=dataclasses.replace(start.config.mt, model_path="m.gguf")
    )
    assert start.choose(chosen) == ""
    assert settings_store.load(path).config.mt.model_path == "m.gguf"


def test_prepare_from_the_defaults_leaves_the_settings_file_alone(
    tmp_path: Path, machine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The self-test's start: the same on every machine, whatever the user's file says."""
    import subtitler.session as session

    monkeypatch.setattr(session, "input_devices", lambda: ([], ""))
    path = tmp_path / "config.toml"
    path.write_text("[mt\ntgt_lang = 'fr'\n", encoding="utf-8")  # damaged: would be set aside
    start = prepare(path, defaults=True)
    assert start.config.mt.tgt_lang == "de"
    assert start.config.mt.gpu_layers == 0  # the hardware plan still applies
    assert start.notices == [] and start.save_path is None
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]
    assert path.read_text(encoding="utf-8") == "[mt\ntgt_lang = 'fr'\n"


def test_session_builds_reconfigures_and_stops_the_pipeline(tmp_path: Path) -> None:
    loads: list[MtConfig] = []

    def loader(mt: MtConfig):  # type: ignore[no-untyped-def]
        loads.append(mt)
        return loader_for(echo_lm())(mt)

    script = [Step(0.3 * i, i, [f"w{i}", "x."], final=True) for i in range(1, 40)]
    factories = Factories(
        audio=lambda a, c: FakeSource(12.0, speed=10.0),
        recognizer=lambda a: ScriptedRecognizer(script),
        model=loader,
    )
    cfg = AppConfig(mt=MtConfig(model_path="one.gguf"))
    ev = Events()
    path = tmp_path / "config.toml"
    s = Session(cfg, factories, ev, config_path=path)
    p = s.start(tmp_path / "t.jsonl")
    assert s.pipeline is p and s.running
    assert wait_for(lambda: bool(ev.of(SubtitleEvent)))
    assert s.apply(dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, beta=0.6))) == ""
    assert settings_store.load(path).config.mt.beta == 0.6  # saved
    assert wait_for(lambda: p.config.mt.beta == 0.6) and len(loads) == 1  # no reload for beta
    s.stop()
    assert not s.running
    assert Session(cfg, factories, ev).save() == ""  # a session without a file saves nothing


def test_settings_that_cannot_be_saved_are_said_in_words_naming_the_file(tmp_path: Path) -> None:
    """A folder where the settings file should be (or a read-only folder, a full disk): the
    Settings window's Apply said "Settings not saved: [Errno 21] Is a directory:
    '…/.config-1a2b3c4d.toml' -> '…/config.toml'", naming a file written beside that the
    user never sees."""
    path = tmp_path / "config.toml"
    path.mkdir()
    factories = Factories(
        audio=lambda a, c: FakeSource(1.0),
        recognizer=lambda a: ScriptedRecognizer([]),
        model=loader_for(echo_lm()),
    )
    s = Session(AppConfig(), factories, Events(), config_path=path)
    cfg = dataclasses.replace(s.config, mt=dataclasses.replace(s.config.mt, beta=0.6))
    assert s.apply(cfg) == (
        f"Settings not saved to {path} (Is a directory); they apply until you quit."
    )
    assert s.config.mt.beta == 0.6 and list(tmp_path.iterdir()) == [path]


UNREADABLE = """
import dataclasses, sys
from pathlib import Path
from subtitler.config import AppConfig
from subtitler.pipeline.pipeline import Factories
from subtitler.session import Glossary, Session
folder = Path(sys.argv[1])
s = Session(AppConfig(), Factories(audio=None, recognizer=None, model=None), lambda e: None,
            config_path=folder / "config.toml", glossary_path=folder / "glossary.csv")
print(s.glossary_notice)
cfg = AppConfig()
print(s.apply(dataclasses.replace(cfg, mt=dataclasses.replace(cfg.mt, beta=0.6))))
print(s.set_glossary(Glossary().with_pair("en", "de", [("Kubernetes", "")])))
"""


def test_settings_and_a_glossary_this_user_cannot_read_are_not_replaced(tmp_path: Path) -> None:
    """A settings file or glossary the app could not open at its start (a permission) was
    left where it was, then replaced at the next save (Apply, a move of the overlay, a term
    added): the user's settings and terms lost. Now kept, and the save said not done. Run
    as the user nobody where the tests run as root (root reads a file of mode 000)."""
    import os
    import subprocess
    import sys
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="subtitler-unreadable-"))
    try:
        folder.chmod(0o777)  # (the user nobody writes there)
        (folder / "config.toml").write_text("[mt]\nbeta = 0.35\n", encoding="utf-8")
        (folder / "glossary.csv").write_text(
            "src_lang,tgt_lang,term,translation\nen,de,Subiaco,Subiaco\n", encoding="utf-8"
        )
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        for p in folder.iterdir():
            p.chmod(0)

        def as_nobody() -> None:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)

        root = Path(__file__).resolve().parents[2]
        out = subprocess.run(
            [sys.executable, "-c", UNREADABLE, str(folder)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root), "HOME": str(folder)},
            preexec_fn=as_nobody,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        kept = "(the file there cannot be read: Permission denied; it is kept, not replaced)"
        assert out.stdout.splitlines() == [
            "The glossary could not be opened (glossary.csv cannot be opened: Permission "
            "denied); an empty glossary is in use.",
            f"Settings not saved to {folder / 'config.toml'} {kept}; they apply until you quit.",
            f"Glossary not saved {kept}; it is in use until you quit.",
        ]
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def test_a_glossary_past_the_limit_at_the_start_is_kept_and_not_replaced(tmp_path: Path) -> None:
    """A glossary.csv with more terms for a pair than it takes (by hand, or from a version
    without the limit) was used whole, each update looking terms up among all of them (0.8 s
    at 400,000). Its first terms are in use, said at the start; a change to the glossary is
    in use and said not saved, the file kept with every term the user had."""
    from subtitler.mt import glossary as store

    rows = "".join(f"en,de,t{i},\n" for i in range(store.MAX_TERMS + 1))
    path = tmp_path / "glossary.csv"
    path.write_text("src_lang,tgt_lang,term,translation\n" + rows, encoding="utf-8")
    before = path.read_bytes()
    factories = Factories(
        audio=lambda a, c: FakeSource(1.0),
        recognizer=lambda a: ScriptedRecognizer([]),
        model=loader_for(echo_lm()),
    )
    s = Session(AppConfig(), factories, Events(), glossary_path=path)
    assert s.glossary_notice.startswith(
        "The glossary: glossary.csv holds 50,001 terms for English → German, and a language "
        "pair takes at most 50,000: its first 50,000 are in use;"
    )
    assert len(s.glossary.pair("en", "de")) == store.MAX_TERMS
    new = s.glossary.with_pair("fr", "en", [("Pannartz", "")])
    assert s.set_glossary(new) == (
        "Glossary not saved (glossary.csv holds more terms for English → German than are in "
        "use; it is kept, not replaced); it is in use until you quit."
    )
    assert s.glossary is new and path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["glossary.csv"]
