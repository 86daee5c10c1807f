"""``python -m subtitler_research.bench``: RT vs SSBD vs CD on one GGUF and one parallel corpus.

The app's translation settings are flags made from their declarations in ``subtitler.config``
(every ``mt`` field the bench does not choose itself, as ``--mt-field``, a few under their old
names: ``--n-ctx``, ``--threads``, ``--len-ratio``, ...), checked by the declaration and mapped
to the model (LlamaSettings.from_config) and the translators (StreamTranslator.reconfigure,
translator.apply_settings) as the app does. What the bench sweeps (methods, betas, k), what
translates (--model, --draft-model, --server) and the corpus are flags of its own.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from subtitler.config import (
    SECTIONS,
    SETTING_DEST,
    AppConfig,
    MtConfig,
    add_setting_flags,
    flag_of,
    given_settings,
    specs,
    with_settings,
)
from subtitler.models.templates import TemplateError, resolve_template
from subtitler.mt.drafting import VocabularyMismatchError, check_same_vocabulary
from subtitler.mt.languages import UnknownLanguageError, language_name, normalize_code
from subtitler.mt.prompts import PromptBuilder
from subtitler_research.bench.report import cost_table, quality_table, score_runs
from subtitler_research.bench.runner import (
    draft_model_specs,
    run_all,
    run_remote_all,
    standard_specs,
)
from subtitler_research.bench.streams import CorpusError, read_parallel

log = logging.getLogger("subtitler_research.bench")


class UsageError(ValueError):
    pass


def _floats(s: str) -> list[float]:
    try:
        vals = [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {s!r}") from None
    if any(not 0.0 <= v <= 1.0 for v in vals):
        raise argparse.ArgumentTypeError("betas must lie in [0, 1]")
    return vals


def _ints(s: str) -> list[int]:
    try:
        vals = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {s!r}") from None
    if any(v < 0 for v in vals):
        raise argparse.ArgumentTypeError("k must be >= 0")
    return vals


def _progress(a: argparse.Namespace, sentences: int, runs: int) -> Any:
    """A progress bar on stderr over the sentences (None with --no-progress)."""
    if a.no_progress:
        return None
    from tqdm import tqdm

    return tqdm(total=sentences, desc=f"{runs} runs", unit="sent", file=sys.stderr)


# Old names of the settings' flags (the rest are --mt-field, as the app's).
SHORT_FLAGS = {
    "mt.template": "--template",
    "mt.src_lang": "--src-lang",
    "mt.tgt_lang": "--tgt-lang",
    "mt.threads": "--threads",
    "mt.n_ctx": "--n-ctx",
    "mt.n_ubatch": "--n-ubatch",
    "mt.gpu_layers": "--gpu-layers",
    "mt.max_new_tokens": "--max-new-tokens",
    "mt.len_ratio": "--len-ratio",
    "mt.server_model": "--server-model",
    "mt.server_api_key": "--api-key",
    "mt.server_timeout_s": "--timeout",
}

# Flags kept from before that turn a setting off.
ALIASES = (("--no-flash-attn", "mt.flash_attn", "without flash attention: --mt-flash-attn false"),)

# Translation settings the bench chooses itself: the runs sweep the decoding (RunSpec),
# --model, --draft-model and --server say what translates, and it translates into one target
# (several targets: python -m subtitler_research.bench.targets).
OWN = frozenset(
    {"method", "beta", "verify", "top_b", "tau", "lookahead", "resync", "draft_tokens",
     "adaptive_guessing", "model_path", "draft_model_path", "backend", "server_url",
     "extra_targets"}
)  # fmt: skip

# Where the bench's default is not the app's: a server shared with other jobs answers slower.
BENCH_DEFAULTS: dict[str, Any] = {"mt.server_timeout_s": 30.0}


def setting_keys() -> list[str]:
    """The settings this bench takes: every translation setting of the schema but those the
    bench chooses itself (:data:`OWN`)."""
    return [f"mt.{f.name}" for f, _ in specs(SECTIONS["mt"]) if f.name not in OWN]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m subtitler_research.bench",
        description="Streaming re-translation benchmark: RT, SSBD for each beta, CD, output "
        "mask-k and display-only mask-k on one model, printed as the SSBD paper's tables.",
    )
    ap.add_argument("--model", type=Path, help="GGUF translation model (or --server)")
    ap.add_argument(
        "--server",
        default=None,
        help="translate on an OpenAI-compatible completions server instead (its API root, "
        "e.g. http://gpu-box:8000/v1): RT, SSBD and CD over HTTP",
    )
    ap.add_argument("--source", required=True, type=Path, help="source sentences, one per line")
    ap.add_argument("--reference", required=True, type=Path, help="references, line-aligned")
    ap.add_argument("--step", type=int, default=3, help="source words revealed per update")
    ap.add_argument("--betas", type=_floats, default=[0, 0.1, 0.2, 0.3, 0.4, 0.5])
    ap.add_argument("--ks", type=_ints, default=[3, 5], help="k values for the mask-k runs")
    ap.add_argument("--mask-beta", type=float, default=0.2, help="beta of the mask-k runs")
    ap.add_argument("--limit", type=int, default=None, help="first N sentence pairs")
    ap.add_argument("--n-batch", type=int, default=512)
    ap.add_argument(
        "--fuse-prompt",
        action="store_true",
        help="evaluate prompt tail and draft in one pass (the app's default); off by "
        "default so TPS excludes prompt evaluation, as in the paper",
    )
    ap.add_argument(
        "--beyond",
        action="store_true",
        help="also run n-gram lookahead, resync and SpecDec verification (issue 8)",
    )
    ap.add_argument(
        "--draft-model",
        type=Path,
        default=None,
        help="a smaller GGUF with the same vocabulary: also run it guessing past the draft",
    )
    ap.add_argument(
        "--draft-tokens",
        type=_ints,
        default=[4],
        help="tokens the draft model guesses per pass (comma-separated: one run set each)",
    )
    ap.add_argument("--json", type=Path, default=None, help="write all results here")
    ap.add_argument("--no-progress", action="store_true")
    # The app's translation settings, from their declarations in subtitler.config.
    bench_defaults = ", ".join(
        f"{SHORT_FLAGS.get(k) or flag_of(*k.split('.'))} {v}" for k, v in BENCH_DEFAULTS.items()
    )
    g = ap.add_argument_group("settings (the app's)", f"defaults: the app's, but {bench_defaults}")
    add_setting_flags(g, only=setting_keys(), names=SHORT_FLAGS)
    for flag, key, doc in ALIASES:
        g.add_argument(flag, dest=SETTING_DEST + key, action="store_const", const=False, help=doc)
    return ap


def settings(a: argparse.Namespace) -> MtConfig:
    """The app's default translation settings with the bench's defaults and the setting flags
    given (languages as codes), and --server as the server to translate with."""
    given = {**BENCH_DEFAULTS, **given_settings(a)}
    for key in ("mt.src_lang", "mt.tgt_lang"):
        if key in given:
            try:
                given[key] = normalize_code(given[key])
            except UnknownLanguageError as e:
                raise UsageError(str(e)) from None
    mt = with_settings(AppConfig(), given).mt
    if a.server is not None:
        mt = dataclasses.replace(mt, backend="server", server_url=a.server)
    return mt


def run(a: argparse.Namespace) -> dict[str, Any]:
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings

    mt = settings(a)
    src_lang, tgt_lang = mt.src_lang, mt.tgt_lang
    if a.step < 1:
        raise UsageError("--step must be at least 1")
    if (a.server is None) == (a.model is None):
        raise UsageError("give --model (a GGUF file) or --server (a completions server)")
    sources, refs = read_parallel(a.source, a.reference, a.limit)
    if a.server is not None:
        return run_on_server(a, mt, sources, refs)
    from subtitler.models.validate import read_gguf

    info = read_gguf(a.model)  # a missing, truncated or corrupt file: one line, exit 2
    # The app's mapping (as the app loads a model), and the bench's own batch size.
    llama = dataclasses.replace(
        LlamaSettings.from_config(mt, str(a.model), info.usable_context(mt.n_ctx)),
        n_batch=a.n_batch,
    )
    if not a.draft_tokens or min(a.draft_tokens) < 1:
        raise UsageError("--draft-tokens must be at least 1")
    draft_lm = None
    if a.draft_model is not None:
        dinfo = read_gguf(a.draft_model)
        draft_lm = LlamaLM(
            dataclasses.replace(
                llama, model_path=str(a.draft_model), n_ctx=dinfo.usable_context(mt.n_ctx)
            )
        )
    try:
        lm = LlamaLM(llama)
    except Exception:
        if draft_lm is not None:
            draft_lm.close()
        raise
    try:
        if draft_lm is not None:
            try:
                check_same_vocabulary(lm, draft_lm)
            except VocabularyMismatchError as e:
                raise UsageError(f"--draft-model: {e}") from None
        template = resolve_template(mt.template, lm.metadata)
        prompts = PromptBuilder(template, src_lang, tgt_lang, formatter=lm)
        run_specs = standard_specs(a.betas, a.ks, a.mask_beta, beyond=a.beyond)
        if draft_lm is not None:
            for k in a.draft_tokens:
                run_specs += draft_model_specs(k, a.mask_beta)
        bar = _progress(a, len(sources), len(run_specs))
        t0 = time.perf_counter()
        results = run_all(
            lm,
            prompts,
            sources,
            run_specs,
            mt=mt,
            step=a.step,
            fuse_prompt=a.fuse_prompt,
            on_sentence=(lambda _i: bar.update(1)) if bar else None,
            draft_lm=draft_lm,
        )
        wall = time.perf_counter() - t0
        if bar is not None:
            bar.close()
    finally:
        lm.close()
        if draft_lm is not None:
            draft_lm.close()
    rows = score_runs(results, refs, tgt_lang)
    return {
        "model": str(a.model),
        "pair": f"{src_lang}-{tgt_lang}",
        "languages": [language_name(src_lang), language_name(tgt_lang)],
        "template": template,
        "sentences": len(sources),
        "step": a.step,
        "threads": llama.n_threads,
        "n_ubatch": llama.n_ubatch,
        "flash_attn": llama.flash_attn,
        "fuse_prompt": a.fuse_prompt,
        "gpu_offload": lm.gpu_offload,
        "draft_model": None if a.draft_model is None else str(a.draft_model),
        "wall_s": round(wall, 1),
        "runs": rows,
    }


def run_on_server(
    a: argparse.Namespace, mt: MtConfig, sources: list[str], refs: list[str]
) -> dict[str, Any]:
    """The same runs on a completions server (issue 19); the model is the server's."""
    from subtitler.mt.completions import CompletionsClient
    from subtitler.mt.remote import resolve_server_template, server_settings

    if a.beyond or a.draft_model is not None:
        raise UsageError("--beyond and --draft-model run only on a local --model")
    src_lang, tgt_lang = mt.src_lang, mt.tgt_lang
    client = CompletionsClient(server_settings(mt))
    try:
        ids = [m["id"] for m in client.list_models()]
        if mt.server_model and mt.server_model not in ids:
            raise UsageError(f"the server serves no model {mt.server_model!r} (it serves {ids})")
        if not ids and not mt.server_model:
            raise UsageError("the server serves no model")
        client.model = mt.server_model or ids[0]
        template = resolve_server_template(mt.template, client.model)
        prompts = PromptBuilder(template, src_lang, tgt_lang)
        run_specs = standard_specs(a.betas, a.ks, a.mask_beta)
        bar = _progress(a, len(sources), len(run_specs))
        t0 = time.perf_counter()
        results = run_remote_all(
            client,
            prompts,
            sources,
            run_specs,
            mt=mt,
            step=a.step,
            on_sentence=(lambda _i: bar.update(1)) if bar else None,
        )
        wall = time.perf_counter() - t0
        if bar is not None:
            bar.close()
    finally:
        client.close()
    rows = score_runs(results, refs, tgt_lang)
    return {
        "model": f"{client.model} on {client.where}",
        "server": a.server,
        "pair": f"{src_lang}-{tgt_lang}",
        "languages": [language_name(src_lang), language_name(tgt_lang)],
        "template": template,
        "sentences": len(sources),
        "step": a.step,
        "wall_s": round(wall, 1),
        "runs": rows,
    }


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    a = parser().parse_args(argv)
    from subtitler.models.validate import InvalidModelError
    from subtitler.mt.completions import ServerError
    from subtitler.mt.llama_backend import ModelLoadError

    try:
        out = run(a)
    except (
        UsageError,
        CorpusError,
        ModelLoadError,
        TemplateError,
        InvalidModelError,
        ServerError,
    ) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows = out["runs"]
    print(f"## {out['model']} · {out['pair']} · {out['sentences']} sentences · step {out['step']}")
    print()
    print(quality_table(rows))
    print()
    print("Verify pass vs decode steps (time per token):")
    print()
    print(cost_table(rows))
    if a.json is not None:
        a.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0
