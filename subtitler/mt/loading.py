"""Where a translator comes from: a model file loaded in this process or in its own worker
process, or a translation server; the one place that turns settings into an engine.

Quick checks come first with one-line reasons (the file is there, a complete GGUF with a usable
template, it fits in memory) so that no process is started and no native code runs for a file
that cannot work.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from subtitler.config import MtConfig
from subtitler.models import hardware
from subtitler.models.catalog import load_catalog
from subtitler.models.resolve import mt_state, said_of
from subtitler.models.templates import FEWSHOT, TemplateError, resolve_template
from subtitler.models.validate import InvalidModelError, read_gguf
from subtitler.mt.drafting import DraftModel, VocabularyMismatchError, check_same_vocabulary
from subtitler.mt.engine import Engine, LoadedModel, LocalEngine
from subtitler.mt.isolated import WorkerEngine, first_load_test
from subtitler.mt.lm import LanguageModel
from subtitler.mt.remote import RemoteEngine

if TYPE_CHECKING:
    from subtitler.mt.llama_backend import LlamaLM

log = logging.getLogger(__name__)


def resolve_translator(mt: MtConfig) -> tuple[Path, str]:
    """The file a catalog id or path names and the template asked for it, after the quick
    checks (present, complete GGUF, usable template); one-line reasons."""
    st = mt_state(mt.model_path, mt.template, load_catalog())
    if st.state == "missing" and st.entry is not None:
        raise RuntimeError(
            f"{st.reason}: click Download in Models (tray menu), or "
            "choose a local .gguf in Settings"
        )
    if st.state != "ready" or st.path is None:
        raise RuntimeError(said_of("translation model", st.reason))
    template = mt.template
    if template == "auto" and st.entry is not None and st.entry.template:
        template = st.entry.template
    return st.path, template


def load_translator(mt: MtConfig) -> LoadedModel:
    """Resolve a catalog id or path, check the file (complete GGUF, usable template, fits in
    memory) with a one-line reason, then load it in this process."""
    path, template = resolve_translator(mt)
    lm = _load_gguf(path, mt)
    try:
        template = resolve_template(template, lm.metadata)
    except Exception:
        lm.close()
        raise
    notice = ""
    if template == "gguf":
        try:
            template, notice = _chat_template_or_examples(lm, path.name, mt.template)
        except TemplateError:
            lm.close()
            raise
    log.info("translation model %s with the %r prompt", path.name, template)
    draft_lm = None
    if mt.draft_model_path.strip():
        try:
            draft_lm = load_draft_model(mt, lm)
        except DraftModelError as e:
            # Translation works without the draft model: say why it is not used and go on.
            log.warning("%s", e)
            said = f"{e}; translating without it (Settings > Advanced > Draft model)"
            notice = f"{notice} {said}".strip()
    if draft_lm is None:
        return LoadedModel(lm, template, formatter=lm, close=lm.close, notice=notice)
    dlm = draft_lm

    def close_both() -> None:
        lm.close()
        dlm.close()

    return LoadedModel(
        lm, template, formatter=lm, close=close_both, draft=DraftModel(dlm), notice=notice
    )


def _chat_template_or_examples(lm: LlamaLM, name: str, requested: str) -> tuple[str, str]:
    """The model's own chat template ("gguf"), if llama.cpp can format it: it recognises the
    chat formats it knows by their markers and refuses others, which failed every line of the
    model. When it cannot, "auto" gives example translations (FEWSHOT) and the template chosen
    by name is refused (TemplateError, one line: the load fails as for any unusable model,
    not each line after it). Returns the template and the notice for the user ("" when it is
    the model's own)."""
    try:
        lm.apply_chat_template([{"role": "user", "content": "Translate: hello"}])
    except ValueError as e:
        if requested != "auto":
            log.info("%s: llama.cpp refused its chat template (%s)", name, e)
            raise TemplateError(
                f"{name}: llama.cpp cannot use its chat template (a kind it does not know): "
                "choose 'As the model file says' (auto) or 'Shown example translations' "
                "(fewshot) in Settings > Translation > How the model is asked"
            ) from None
        notice = (
            f"{name}: llama.cpp cannot use its chat template (a kind it does not know), so it "
            "is shown example translations instead (Settings > Translation > How the model "
            "is asked)"
        )
        log.warning("%s (%s)", notice, e)
        return FEWSHOT, notice
    return "gguf", ""


def _load_gguf(path: Path, mt: MtConfig) -> LlamaLM:
    """Check the file (complete GGUF, fits in memory) with a one-line reason, then load it with
    the translation settings, its context clamped to what the model was trained for."""
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings  # (llama.cpp: on demand)

    info = read_gguf(path)
    n_ctx = info.usable_context(mt.n_ctx)
    hw = hardware.detect(probe_backends=False)
    hardware.check_fits([(path.name, hardware.gguf_memory_for(info, n_ctx))], hw)
    return LlamaLM(LlamaSettings.from_config(mt, str(path), n_ctx))


class DraftModelError(RuntimeError):
    """The optional draft model cannot be used (the translator still can)."""


def load_draft_model(mt: MtConfig, target: LanguageModel) -> LlamaLM:
    """Load the optional draft model next to ``target``; a one-line reason if it cannot be
    used (missing, damaged, too big, or another vocabulary)."""
    from subtitler.mt.llama_backend import ModelLoadError

    path = Path(mt.draft_model_path.strip()).expanduser()
    try:
        lm = _load_gguf(path, mt)
    except (InvalidModelError, ModelLoadError, hardware.InsufficientMemoryError) as e:
        raise DraftModelError(f"draft model not used: {e}") from e
    try:
        check_same_vocabulary(target, lm)
    except VocabularyMismatchError as e:
        lm.close()
        raise DraftModelError(f"draft model {path.name} not used: {e}") from e
    log.info("draft model %s guesses %d tokens per pass", path.name, mt.draft_tokens)
    return lm


def load_translator_isolated(mt: MtConfig) -> Engine:
    """The translator in a worker process (quick checks here first: no process is started for
    a missing or truncated file), given its real test (engines.first_load_test); a crash of
    llama.cpp while loading is one line."""
    path, _template = resolve_translator(mt)
    engine = WorkerEngine(mt, path)
    try:
        # Weights damaged where no check looks load and run: a fixed sentence shows it.
        damage = first_load_test(engine, mt)
    except BaseException:
        engine.close()
        raise
    if damage:
        log.warning("%s", damage)
        engine.notice = f"{engine.notice} {damage}".strip()
    return engine


def connect_translator(mt: MtConfig) -> Engine:
    """A translation server (Settings: Translate with = server): no native code runs here, so
    it needs no worker process. Connects and checks the model once; one-line reasons."""
    if not mt.server_url.strip():
        raise RuntimeError("no translation server address: set one in Settings")
    return RemoteEngine(mt, connect_later=True)  # the app may start before the server


def load_any_translator(mt: MtConfig, isolate: bool) -> Engine:
    """The translator the settings ask for, configured with them: on a server, in a worker
    process (``isolate``) or in this process."""
    if mt.uses_server:
        return connect_translator(mt)
    if isolate:
        return load_translator_isolated(mt)
    return LocalEngine(load_translator(mt), mt, Path(mt.model_path).name)
