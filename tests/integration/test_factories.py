"""The real translator loader: paths, catalog ids and bad files give one-line reasons."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from subtitler import paths
from subtitler.config import MtConfig
from subtitler.mt.loading import load_translator


def test_loads_a_gguf_and_resolves_its_template(tiny_gguf: Path) -> None:
    m = load_translator(MtConfig(model_path=str(tiny_gguf), n_ctx=512))
    try:
        assert m.template == "gguf" and m.lm.n_vocab == 50257
    finally:
        m.close()


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("qwen3-4b-q4_k_m", "not downloaded"),
        ("/nope/model.gguf", "not found"),
        ("", "no translation"),
    ],
)
def test_unusable_models_are_refused_with_one_line(
    value: str, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBTITLER_MODELS_DIR", str(tmp_path))
    with pytest.raises(RuntimeError) as e:
        load_translator(MtConfig(model_path=value))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_truncated_gguf_is_refused_before_llama_cpp(tiny_gguf: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_gguf.read_bytes()[:200_000])
    with pytest.raises(Exception) as e:
        load_translator(MtConfig(model_path=str(cut)))
    assert "truncated" in str(e.value).lower() or "incomplete" in str(e.value).lower()


def test_models_that_do_not_fit_are_refused_before_loading(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subtitler.asr.loading import load_recognizer
    from subtitler.config import AsrConfig
    from subtitler.models import hardware
    from subtitler_research.asr.tiny_model import build_tiny_whisper

    small = hardware.HardwareInfo("Linux", "x86_64", 2, 64 * 2**20, 16 * 2**20, False, False, 0)
    monkeypatch.setattr(hardware, "detect", lambda probe_backends=True: small)
    with pytest.raises(hardware.InsufficientMemoryError) as e:
        load_translator(MtConfig(model_path=str(tiny_gguf)))
    assert "\n" not in str(e.value)
    whisper = build_tiny_whisper(tmp_path / "w")
    with pytest.raises(hardware.InsufficientMemoryError):
        load_recognizer(AsrConfig(model=str(whisper)))


def test_loads_the_draft_model_next_to_the_translator(tiny_gguf: Path) -> None:
    from subtitler.mt.drafting import DraftModel

    m = load_translator(
        MtConfig(model_path=str(tiny_gguf), n_ctx=512, draft_model_path=str(tiny_gguf))
    )
    try:
        assert isinstance(m.draft, DraftModel) and m.draft.lm is not m.lm
        assert m.draft.lm.n_vocab == m.lm.n_vocab
    finally:
        m.close()


@pytest.mark.parametrize("case", ["missing", "vocabulary", "truncated"])
def test_unusable_draft_models_leave_the_translator_working(
    tiny_gguf: Path, tmp_path: Path, case: str
) -> None:
    """A bad draft model is an optimisation lost, not a translator lost: the model loads
    without it and carries a one-line notice for the user."""
    draft = {
        "missing": tmp_path / "nope.gguf",
        "vocabulary": Path(__file__).resolve().parents[2]
        / "fixtures"
        / "translator"
        / "model.gguf",
        "truncated": tmp_path / "cut.gguf",
    }[case]
    if case == "truncated":
        draft.write_bytes(tiny_gguf.read_bytes()[:200_000])
    m = load_translator(MtConfig(model_path=str(tiny_gguf), n_ctx=512, draft_model_path=str(draft)))
    try:
        assert m.draft is None and m.lm.n_vocab == 50257
        assert m.notice.startswith("draft model") and "\n" not in m.notice
        assert "translating without it" in m.notice and "Advanced" in m.notice
        if case == "vocabulary":
            assert "12000 tokens" in m.notice
    finally:
        m.close()


def test_speech_model_not_downloaded_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subtitler.asr.backend import AsrError
    from subtitler.asr.loading import load_recognizer
    from subtitler.config import AsrConfig

    monkeypatch.setenv(paths.MODELS_DIR_ENV, str(tmp_path / "models"))  # nothing downloaded
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # nor in the Hugging Face cache
    for value in ("whisper-small", "small"):  # the catalog id and the size name
        with pytest.raises(AsrError) as err:
            load_recognizer(AsrConfig(model=value))
        # Not handed to faster-whisper (it would download it itself): the user is told what
        # to do (tests/integration/test_asr_offline_loading.py: no request is made).
        assert str(err.value) == (
            "speech model Whisper small is not downloaded: click Download in Models (tray menu), "
            "or choose a model folder in Settings"
        )


# A chat template in none of the dialects llama.cpp recognises (it formats chat templates by
# recognising their markers; it does not run the Jinja).
UNKNOWN_TO_LLAMA_CPP = (
    "{% for m in messages %}@@{{ m['role'] }}@@ {{ m['content'] }}\n{% endfor %}@@bot@@"
)


def odd_chat_template_gguf(tmp_path: Path) -> Path:
    """A small GGUF whose chat template llama.cpp does not know, odd.gguf in ``tmp_path``."""
    from subtitler_research.bench.random_model import PRESETS, build_random_llama

    return build_random_llama(
        tmp_path / "odd.gguf", PRESETS["tiny"],
        tiktoken=Path(__file__).resolve().parents[1] / "data" / "gpt2.tiktoken",
        chat_template=UNKNOWN_TO_LLAMA_CPP,
    )  # fmt: skip


def test_a_chat_template_llama_cpp_does_not_know_is_shown_examples_with_auto(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the prompt template "auto" such a model was asked through its own template, and
    every translation failed, 'llama.cpp does not support this model's chat template': it is
    shown example translations (as a model without a chat template), said once."""
    from subtitler.mt.engine import LocalEngine

    path = odd_chat_template_gguf(tmp_path)
    mt = MtConfig(model_path=str(path), template="auto", n_ctx=1024, max_new_tokens=4)
    m = load_translator(mt)
    try:
        assert m.template == "fewshot"
        assert m.notice == (
            "odd.gguf: llama.cpp cannot use its chat template (a kind it does not know), so "
            "it is shown example translations instead (Settings > Translation > How the model "
            "is asked)"
        )
        engine = LocalEngine(m, mt, path.name)
        for seg, line in enumerate(("Good morning.", "The meeting starts at ten.")):
            r = engine.translate(seg, line, True, "de", "en")
            assert r.stats.prompt_tokens + r.stats.prompt_reused > 100  # (the examples first)
        notice = m.notice
    finally:
        m.close()
    said = [r for r in caplog.records if "chat template" in r.getMessage()]
    assert [r.levelname for r in said] == ["WARNING"]
    # With a draft model (the same file: the same vocabulary) the notice is kept too.
    m = load_translator(dataclasses.replace(mt, draft_model_path=str(path)))
    try:
        assert m.template == "fewshot" and m.draft is not None and m.notice == notice
    finally:
        m.close()


# What a load of such a model with its own chat template chosen says, in the app and in
# `subtitler models verify --template gguf`.
ODD_CHAT_TEMPLATE_REFUSED = (
    "odd.gguf: llama.cpp cannot use its chat template (a kind it does not know): choose "
    "'As the model file says' (auto) or 'Shown example translations' (fewshot) in Settings > "
    "Translation > How the model is asked"
)


def test_a_chat_template_llama_cpp_does_not_know_chosen_by_name_is_refused_at_the_load(
    tmp_path: Path,
) -> None:
    """With the prompt template "gguf" (the model's own chat template) chosen for such a
    model, the load went through and every translation failed, 'llama.cpp does not support
    this model's chat template': the load is refused in one line saying what to choose, in
    this process and in the worker process the app loads it in."""
    from subtitler.mt.isolated import WorkerEngine

    path = odd_chat_template_gguf(tmp_path)
    mt = MtConfig(model_path=str(path), template="gguf", n_ctx=1024, max_new_tokens=4)
    with pytest.raises(Exception) as here:
        load_translator(mt)
    assert str(here.value) == ODD_CHAT_TEMPLATE_REFUSED
    with pytest.raises(Exception) as there:
        WorkerEngine(mt, path, restarts=0)
    assert str(there.value) == ODD_CHAT_TEMPLATE_REFUSED


def test_models_verify_says_the_chat_template_llama_cpp_does_not_know(tmp_path: Path) -> None:
    """`subtitler models verify` of such a model says the template "auto" gives it as the
    load found it, example translations (it said 'template gguf', the file's chat template,
    which the app does not use); with --template gguf it fails it in the load's one line (it
    failed on the test sentence, in llama.cpp's words, naming no way out)."""
    import subprocess
    import sys

    path = odd_chat_template_gguf(tmp_path)
    main = Path(__file__).resolve().parents[2] / "main.py"
    verify = [sys.executable, str(main), "models", "verify", str(path)]
    out = subprocess.run(verify, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"ok   {path}: GGUF translator (llama, ")
    assert out.stdout.endswith(", template fewshot)\n")
    assert "so it is shown example translations instead" in out.stderr  # (the load's why)
    out = subprocess.run([*verify, "--template", "gguf"], capture_output=True, text=True)
    refused = f"FAIL {ODD_CHAT_TEMPLATE_REFUSED}\n"
    assert (out.returncode, out.stdout, out.stderr) == (1, refused, "")
