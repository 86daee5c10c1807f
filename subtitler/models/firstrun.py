"""First run, without Qt: which models are configured, which are missing, what to offer.

The UI shows :attr:`FirstRunPlan.messages`, offers :attr:`FirstRunPlan.offer` for download (with
``download.download`` on a worker thread), lets the user pick local files instead, and writes
the result into the settings with :func:`with_models`. Nothing here touches the network except
:func:`check_network` (bounded in time, DNS included); the app does not call it at start (no
connection before the user asks for a download).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from subtitler.config import AppConfig, AsrConfig
from subtitler.models import download as dl
from subtitler.models.catalog import Catalog, CatalogEntry, Kind, load_catalog
from subtitler.models.hardware import (
    ACCEL_NAMES,
    GB,
    KEEP_UP_SHARE,
    MB,
    RESERVE_BYTES,
    RUN_BUDGET_S,
    HardwareInfo,
    RuntimePlan,
    plan_runtime,
    tier,
    translator_load,
    whisper_run_cost,
)

# (the resolver lives in models.resolve; its names stay importable from here)
from subtitler.models.resolve import ModelState as ModelState
from subtitler.models.resolve import Role, asr_state, mt_state

ROLE_NAMES: dict[Role, str] = {"asr": "speech model", "mt": "translation model"}


@dataclass(frozen=True)
class FirstRunPlan:
    tier: str
    asr: ModelState
    mt: ModelState
    offer: tuple[CatalogEntry, ...]  # downloads to offer, in order (speech first)
    download_bytes: int  # approximate, from the catalog
    network: bool | None  # None: not checked
    messages: tuple[str, ...]

    @property
    def ready(self) -> bool:
        return self.asr.state == "ready" and self.mt.state == "ready"

    @property
    def can_download(self) -> bool:
        return bool(self.offer) and self.network is not False


def choose_defaults(
    catalog: Catalog, hw: HardwareInfo, src_lang: str, tgt_lang: str
) -> tuple[CatalogEntry, CatalogEntry | None]:
    """The speech and translation models to offer on this machine for this language pair."""
    t = tier(hw)
    usable = hw.usable_memory
    chosen: tuple[CatalogEntry, CatalogEntry | None] | None = None
    for name in (t, "cpu-small"):
        d = catalog.defaults.get(name)
        if d is None:
            continue
        asr = catalog.get(d.asr)
        if not asr.supports(src_lang):
            asr = next(
                (e for e in catalog.of_kind("asr") if e.supports(src_lang)), asr
            )  # e.g. an English-only distil model for a German speaker
        if hw.cuda_devices == 0:  # faster-whisper on the CPU: it must keep up there
            asr = _affordable_asr(catalog, hw, src_lang, asr)
        mts = [catalog.get(m) for m in d.mt]
        mt = next((m for m in mts if m.supports(src_lang) and m.supports(tgt_lang)), None)
        if mt is None:  # (a default: its licence must allow use at work, as the tiers')
            at_work = [m for m in catalog.of_kind("mt") if m.repo and m.commercial]
            mt = next((m for m in at_work if "*" in m.languages), None)
        if not hw.llama_gpu_offload:  # llama.cpp on the CPU: the translator must keep up
            room = None if usable is None else usable - asr.memory_mb * MB - RESERVE_BYTES
            mt = affordable_mt(catalog, hw, src_lang, tgt_lang, room) or mt
        chosen = (asr, mt)
        need = (asr.memory_mb + (mt.memory_mb if mt else 0)) * MB + RESERVE_BYTES
        if usable is None or need <= usable:
            break  # else fall back to the small tier
    if chosen is None:
        raise LookupError("the catalog defines no default models")
    return chosen


def affordable_mt(
    catalog: Catalog, hw: HardwareInfo, src_lang: str, tgt_lang: str, room: int | None
) -> CatalogEntry | None:
    """The largest downloadable translator usable at work for the pair that keeps up with
    speech on the threads the plan gives translation (measured costs: hardware.translator_load)
    and fits in ``room`` bytes; if none keeps up, the one that comes closest. None: no measured
    one."""
    known = [
        (load, e)
        for load, e in _measured_mts(catalog, hw, (src_lang, tgt_lang))
        if e.repo and e.commercial  # a default: usable at work
        and (room is None or e.memory_mb * MB <= room)
    ]  # fmt: skip
    fits = [e for load, e in known if load <= KEEP_UP_SHARE]
    if fits:
        return max(fits, key=lambda e: e.memory_mb)
    return min(known, key=lambda le: le[0])[1] if known else None


def _measured_mts(
    catalog: Catalog, hw: HardwareInfo, pair: tuple[str, str]
) -> list[tuple[float, CatalogEntry]]:
    """(load, entry) of each catalog translator for ``pair`` whose cost was measured, on the
    threads the plan gives translation on this machine."""
    threads = plan_runtime(hw).mt_threads
    return [
        (load, e)
        for e in catalog.of_kind("mt")
        if e.shape and e.supports(pair[0]) and e.supports(pair[1])
        and (load := translator_load(e.shape, threads)) is not None
    ]  # fmt: skip


def _falls_behind(
    catalog: Catalog, entry: CatalogEntry, hw: HardwareInfo, pair: tuple[str, str]
) -> str:
    """A plain warning when ``entry`` on this machine's processor cannot keep up with speech
    (measured costs), saying what does; "" when it keeps up or its cost is not known."""
    if hw.llama_gpu_offload or not entry.shape:
        return ""
    load = translator_load(entry.shape, plan_runtime(hw).mt_threads)
    if load is None or load <= 1.0:
        return ""
    cheaper = any(other < load for other, _ in _measured_mts(catalog, hw, pair))
    fix = "A smaller translation model or a" if cheaper else "A"
    return (
        f"On this computer's processor {entry.name} translates about {100 / load:.0f}% as fast "
        "as people speak: the subtitles will fall behind and finished lines catch up later. "
        f"{fix} translation server (Settings → Translation) keeps up."
    )


def _affordable_asr(
    catalog: Catalog, hw: HardwareInfo, src_lang: str, preferred: CatalogEntry
) -> CatalogEntry:
    """``preferred`` if one run of it fits RUN_BUDGET_S with the threads the plan gives the
    recogniser, else the most capable (costliest) Whisper that does, else the cheapest."""
    threads = plan_runtime(hw).asr_threads

    def cost(e: CatalogEntry) -> float | None:
        return whisper_run_cost(e.size_name, threads) if e.size_name else None

    own = cost(preferred)
    if own is not None and own <= RUN_BUDGET_S:
        return preferred
    known = [(c, e) for e in catalog.of_kind("asr") if e.supports(src_lang) and (c := cost(e))]
    fits = [(c, e) for c, e in known if c <= RUN_BUDGET_S]
    if fits:
        return max(fits, key=lambda ce: ce[0])[1]
    return min(known, key=lambda ce: ce[0])[1] if known else preferred


def _describe(entry: CatalogEntry) -> str:
    return f"{entry.name} · {size_label(entry.size_mb)} · {entry.licence_text}"


def size_label(mb: int) -> str:
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb} MB"


def model_choices(catalog: Catalog, kind: Kind, root: Path | None = None) -> list[tuple[str, str]]:
    """(label, value) of the catalog's models of one kind, for a settings list.

    A downloaded model's value is its path, which is what the first run writes to the settings,
    so a configured model shows by name; one not downloaded yet is offered by id (Whisper: by
    size name, which faster-whisper can also fetch itself) and says so. A project-local model
    is listed only where its file exists (a source checkout).
    """
    out = []
    for e in catalog.of_kind(kind):
        lp = e.local_path
        if lp is not None and not lp.exists():
            continue
        installed = dl.is_installed(e, root)
        label = f"{e.name} · {size_label(e.size_mb)}" + ("" if installed else " · not downloaded")
        if installed:
            value = str(dl.model_path(e, root))
        else:
            value = (e.size_name or e.id) if kind == "asr" else e.id
        out.append((label, value))
    return out


def hardware_line(hw: HardwareInfo) -> str:
    mem = f", {hw.total_memory / GB:.0f} GB memory" if hw.total_memory else ""
    return f"{ACCEL_NAMES[hw.accelerator]}, {hw.cpu_count} cores{mem}"


def plan_first_run(
    cfg: AppConfig,
    hw: HardwareInfo,
    catalog: Catalog | None = None,
    *,
    root: Path | None = None,
    network: bool | None = None,
) -> FirstRunPlan:
    """Decide what the first-run dialog says and offers. Pure apart from reading the disk."""
    cat = catalog or load_catalog()
    asr = asr_state(cfg.asr.model, cat, root)
    mt = mt_state(cfg.mt.model_path, cfg.mt.template, cat, root)
    if cfg.mt.uses_server and cfg.mt.translator_chosen:
        # A shared translation server: nothing to download here (it is reached at start).
        mt = ModelState("mt", "ready", None, None, f"translation on {cfg.mt.server_url.strip()}")
    def_asr, def_mt = choose_defaults(cat, hw, cfg.mt.src_lang, cfg.mt.tgt_lang)
    offer: list[CatalogEntry] = []
    msgs: list[str] = []
    for st, default in ((asr, def_asr), (mt, def_mt)):
        role = ROLE_NAMES[st.role]
        if st.state == "ready":
            continue
        # A model the user chose that is merely missing is offered as such; the untouched
        # default setting ("small") is not a choice, so the machine's default is offered.
        chosen = st.state == "missing" and st.entry is not None and st.entry.repo is not None
        if st.role == "asr" and cfg.asr.model == AsrConfig().model:
            chosen = False
        pick = st.entry if chosen else default
        if st.state == "invalid":
            msgs.append(f"The {role} cannot be used: {st.reason}.")
        if pick is None:
            msgs.append(f"No downloadable {role} covers {cfg.mt.src_lang}->{cfg.mt.tgt_lang}.")
            continue
        if not dl.is_installed(pick, root):
            offer.append(pick)
            msgs.append(f"Recommended {role} for this computer: {_describe(pick)}.")
        pair = (cfg.mt.src_lang, cfg.mt.tgt_lang)
        if st.role == "mt" and (slow := _falls_behind(cat, pick, hw, pair)):
            msgs.append(slow)
    if asr.state == "ready" and mt.state == "ready":
        msgs.insert(0, f"Models ready: {asr.reason}; {mt.reason}.")
    else:
        msgs.insert(0, f"This computer: {hardware_line(hw)}.")
    total = sum(e.size_mb for e in offer) * 1_000_000
    if offer and network is False:
        msgs.append(
            "No network connection: models cannot be downloaded now. Use model files on "
            "this computer instead (a Whisper model folder and a .gguf translation model), or "
            "skip for now and download them later (tray menu → Models…)."
        )
    elif offer:
        msgs.append(
            f"Download {total / 1e9:.1f} GB now, or use model files on this computer. The "
            f"models come from {_hub_host()}, which is looked up only when you click Download."
        )
    return FirstRunPlan(tier(hw), asr, mt, tuple(offer), total, network, tuple(msgs))


def _hub_host() -> str:
    """Where a download goes (HF_ENDPOINT where set), for the first-run dialog."""
    ep = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return urlparse(ep).hostname or ep


def with_models(
    cfg: AppConfig,
    *,
    asr_path: Path | None = None,
    mt_path: Path | None = None,
    mt_entry: CatalogEntry | None = None,
) -> AppConfig:
    """A copy of ``cfg`` that uses the given model files (downloaded or picked by the user)."""
    asr = cfg.asr if asr_path is None else dataclasses.replace(cfg.asr, model=str(asr_path))
    mt = cfg.mt
    if mt_path is not None:
        template = mt.template
        if mt_entry is not None and mt_entry.template and template == "auto":
            template = mt_entry.template
        mt = dataclasses.replace(mt, model_path=str(mt_path), template=template)
    return dataclasses.replace(cfg, asr=asr, mt=mt)


def with_runtime(cfg: AppConfig, plan: RuntimePlan) -> AppConfig:
    """A copy of ``cfg`` with the detected device, compute type, threads and GPU layers, where
    the settings still say "auto" (devices) or hold the untouched defaults (threads)."""
    defaults = AppConfig()
    asr, mt = cfg.asr, cfg.mt
    if asr.device == "auto":
        asr = dataclasses.replace(asr, device=plan.asr_device)
    if asr.compute_type == "auto":
        asr = dataclasses.replace(asr, compute_type=plan.asr_compute_type)
    if asr.threads == defaults.asr.threads:
        asr = dataclasses.replace(asr, threads=plan.asr_threads)
    if mt.threads == defaults.mt.threads:
        mt = dataclasses.replace(mt, threads=plan.mt_threads)
    if mt.gpu_layers is None:
        mt = dataclasses.replace(mt, gpu_layers=plan.mt_gpu_layers)
    return dataclasses.replace(cfg, asr=asr, mt=mt)


def check_network(endpoint: str | None = None, timeout: float = 3.0) -> tuple[bool, str]:
    """Can the hub be reached? (ok, one-line message). A TCP connect, no HTTP request."""
    import huggingface_hub.constants as hfc

    if hfc.HF_HUB_OFFLINE:
        return False, "offline mode is on (HF_HUB_OFFLINE): models cannot be downloaded"
    ep = endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    u = urlparse(ep)
    host = u.hostname or ep
    port = u.port or (443 if u.scheme == "https" else 80)
    # The socket timeout does not cover the name lookup (getaddrinfo cannot be cancelled), so
    # the whole attempt runs on a daemon thread and the answer is waited for ``timeout`` s at
    # most; a resolver still stuck after that is left to finish on its own.
    result: list[OSError | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as e:
            result.append(e)
        else:
            result.append(None)

    worker = threading.Thread(target=attempt, name="network-check", daemon=True)
    worker.start()
    worker.join(timeout)
    if not result:
        return False, f"no network: {host} did not answer within {timeout:g} s"
    err = result[0]
    if err is not None:
        return False, f"no network: cannot reach {host} ({err.strerror or type(err).__name__})"
    return True, f"{host} is reachable"
