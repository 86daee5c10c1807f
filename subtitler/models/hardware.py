"""What the machine offers (Metal, CUDA, CPU cores, memory) and how the models should use it.

Probing imports llama_cpp and ctranslate2 lazily, inside :func:`detect`, so importing this module
stays cheap; each probe failing just means "not available".
"""

from __future__ import annotations

import logging
import math
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import psutil

if TYPE_CHECKING:
    from subtitler.models.validate import GgufInfo

log = logging.getLogger(__name__)

Accelerator = Literal["metal", "cuda", "cpu"]
GB = 1 << 30
MB = 1 << 20
# Headroom for the app itself, Qt and the OS's appetite while a meeting app runs.
RESERVE_BYTES = 1 * GB


class InsufficientMemoryError(RuntimeError):
    """A model would not fit; the one-line message says by how much and what to do."""


@dataclass(frozen=True)
class HardwareInfo:
    system: str  # platform.system(): "Linux", "Darwin", "Windows"
    machine: str  # "x86_64", "arm64", ...
    cpu_count: int  # logical cores
    total_memory: int | None  # bytes
    available_memory: int | None  # bytes free for new allocations, when the OS says
    apple_silicon: bool
    llama_gpu_offload: bool  # this llama.cpp build offloads to a GPU (Metal or CUDA)
    cuda_devices: int  # CUDA devices CTranslate2 sees

    @property
    def accelerator(self) -> Accelerator:
        if self.apple_silicon and self.llama_gpu_offload:
            return "metal"
        if self.cuda_devices > 0 or (self.llama_gpu_offload and self.system != "Darwin"):
            return "cuda"
        return "cpu"

    @property
    def usable_memory(self) -> int | None:
        return self.available_memory if self.available_memory is not None else self.total_memory


@dataclass(frozen=True)
class RuntimePlan:
    """How the pipeline should run on this machine (what the settings pane shows)."""

    accelerator: Accelerator
    asr_device: str  # "cpu" | "cuda"
    asr_compute_type: str  # "int8" | "float16"
    asr_threads: int
    mt_gpu_layers: int  # -1: all layers on the GPU, 0: CPU
    mt_threads: int

    def describe(self) -> list[str]:
        mt = "GPU (all layers)" if self.mt_gpu_layers else f"CPU, {self.mt_threads} threads"
        asr = f"{self.asr_device.upper()} {self.asr_compute_type}"
        if self.asr_device == "cpu":
            asr += f", {self.asr_threads} threads"
        return [
            f"Accelerator: {ACCEL_NAMES[self.accelerator]}",
            f"Speech recognition (faster-whisper): {asr}",
            f"Translation (llama.cpp): {mt}",
        ]


ACCEL_NAMES: dict[Accelerator, str] = {
    "metal": "Apple Silicon (Metal)",
    "cuda": "NVIDIA CUDA",
    "cpu": "CPU only",
}


def _memory() -> tuple[int | None, int | None]:
    """(total, available) bytes. psutil's "available" is what can be allocated without swapping
    on every OS (macOS included, where installed memory says nothing about what is free)."""
    try:
        vm = psutil.virtual_memory()
    except (OSError, RuntimeError) as e:  # a sandbox without /proc, say: no check then
        log.warning("memory size unknown: %s", e)
        return None, None
    return int(vm.total), int(vm.available)


def _llama_offload() -> bool:
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception as e:  # missing or broken build: CPU
        log.debug("llama.cpp offload probe failed: %s", e)
        return False


def _cuda_devices() -> int:
    try:
        import ctranslate2

        return int(ctranslate2.get_cuda_device_count())
    except Exception as e:
        log.debug("CTranslate2 CUDA probe failed: %s", e)
        return 0


def detect(*, probe_backends: bool = True) -> HardwareInfo:
    """Look at this machine. ``probe_backends=False`` skips loading llama.cpp and CTranslate2."""
    system, machine = platform.system(), platform.machine().lower()
    total, avail = _memory()
    return HardwareInfo(
        system=system,
        machine=machine,
        cpu_count=os.cpu_count() or 1,
        total_memory=total,
        available_memory=avail,
        apple_silicon=system == "Darwin" and machine in ("arm64", "aarch64"),
        llama_gpu_offload=_llama_offload() if probe_backends else False,
        cuda_devices=_cuda_devices() if probe_backends else 0,
    )


# One streaming recogniser run on a 4 s window (encoder on the window plus padding, beam-5
# decoding of 14 tokens, word alignment), seconds with 1 and 2 CTranslate2 threads, int8,
# measured on the project's reference machine (x86-64, 2 vCPUs, AVX-512, CTranslate2 4.8.5)
# with random weights of the real shapes: python -m subtitler_research.bench.asr_cost (figures and
# command in docs/benchmarks/asr.md). Two threads were slower than one there (the two vCPUs
# share a core), so the estimate never assumes a second thread helps; the recogniser itself
# runs a part on one thread where its first passes find that faster (asr/faster_whisper.py),
# so more threads never cost more than the lesser of the two figures.
WHISPER_RUN_COST_S: dict[str, tuple[float, float]] = {
    "tiny": (0.078, 0.099),
    "base": (0.158, 0.215),
    "small": (0.507, 0.564),
}
# The recogniser runs again every max(0.5 s, cost / 0.85) of audio (StreamingOptions.duty):
# a run of at most 0.25 s keeps the shortest cadence, and with it the lowest latency, with room
# to spare: these are 4 s windows, and the stream's windows, with their prefix, cost more
# (Whisper base here: 0.63 s per call in the stream, docs/benchmarks/asr.md, session S).
RUN_BUDGET_S = 0.25
_SCALING_PER_DOUBLING = 0.7  # threads beyond 2 (not measured here): CTranslate2 int8 on cores


def whisper_run_cost(size_name: str, threads: int) -> float | None:
    """Estimated seconds of one recogniser run for a faster-whisper size name (None when no
    shape of that size was measured: medium, large)."""
    name = size_name.removesuffix(".en")
    shape = "small" if name == "distil-small" else name  # fewer decoder layers: cheaper
    costs = WHISPER_RUN_COST_S.get(shape)
    if costs is None:
        return None
    one, two = costs
    best = min(one, two) if threads >= 2 else one
    if threads > 2:
        best = min(best, one * _SCALING_PER_DOUBLING ** math.log2(threads))
    return best


# What a translator costs on the project's reference machine (x86-64, 2 vCPUs of one core,
# AVX-512, llama-cpp-python 0.3.36 CPU build, flash attention, n_ubatch 512): ms per decode
# step, per verified token (a batch with logits at every row) and per prompt token, by
# llama.cpp threads; random weights of each catalog translator's shape, vocabulary size and
# quantization (python -m subtitler_research.bench.mt_cost; docs/benchmarks/translator.md);
# Gemma 3 270M's own weights. Four threads cannot be measured on this 2-vCPU machine: more
# threads than measured are scaled per doubling (translator_load).
TRANSLATOR_COST_MS: dict[str, dict[int, tuple[float, float, float]]] = {
    "gemma3-270m": {1: (39.0, 9.8, 3.6), 2: (31.4, 8.0, 3.1)},
    "qwen3-0.6b": {1: (80.8, 19.7, 11.0), 2: (48.1, 12.2, 6.6)},
    "qwen3-1.7b": {1: (273.2, 57.4, 46.7), 2: (153.8, 32.1, 28.0)},
    "tower-plus-2b": {1: (341.5, 86.0, 67.1), 2: (189.9, 53.0, 39.6)},
    "gemma3-4b": {1: (437.1, 145.7, 111.0), 2: (230.5, 82.8, 67.3)},
    "qwen3-4b": {1: (403.1, 130.6, 101.7), 2: (255.5, 84.0, 65.8)},
    "qwen3-8b": {1: (896.4, 265.4, 225.5), 2: (470.2, 172.2, 128.0)},
}
# An SSBD translator's work per second of speech (beta 0.2, Gemma 3 270M on the pipeline
# replay of real talks, docs/benchmarks/translator.md): prompt tokens, verified tokens and
# decode steps. A bigger model accepts about as much of its draft, so the counts carry over;
# what changes with the model is the cost of each.
SPEECH_WORK_PER_S = (9.5, 36.7, 5.3)  # the busier of two talks, each component
# The share of its threads' time a translator may take and still keep up: the rest absorbs
# bursts (a new line's prompt, a final's full decode) and the recogniser's use of the cores.
KEEP_UP_SHARE = 0.7


def translator_load(shape: str, threads: int) -> float | None:
    """The share of its threads' time a translator of ``shape`` needs to keep up with speech
    (over 1: it cannot); None when that shape was not measured."""
    costs = TRANSLATOR_COST_MS.get(shape)
    if not costs:
        return None
    # The measurement at the most threads not above ``threads`` (fewer than any measured: the
    # fewest measured, which flatters the machine a little).
    have = max((t for t in costs if t <= threads), default=min(costs))
    step, verified, prompt = costs[have]
    if threads > have:  # more threads than measured here: llama.cpp scales sub-linearly
        scale = _SCALING_PER_DOUBLING ** math.log2(threads / have)
        step, verified, prompt = step * scale, verified * scale, prompt * scale
    p, v, d = SPEECH_WORK_PER_S
    return (p * prompt + v * verified + d * step) / 1000.0


def keeps_up(shape: str, threads: int) -> bool | None:
    """Whether a translator of ``shape`` keeps up with speech with room to spare."""
    load = translator_load(shape, threads)
    return None if load is None else load <= KEEP_UP_SHARE


def split_threads(cpu_count: int, *, asr_on_gpu: bool, mt_on_gpu: bool) -> tuple[int, int]:
    """(ASR threads, MT threads). Both on the CPU share the cores; on 2 cores one each was
    faster than two each (FACTS.md). From 4 cores one is left for audio, UI and the OS."""
    usable = cpu_count - 1 if cpu_count >= 4 else cpu_count
    usable = max(1, usable)
    if asr_on_gpu and mt_on_gpu:
        return 1, 1
    if mt_on_gpu:
        return min(8, usable), 1
    if asr_on_gpu:
        return 1, min(8, usable)
    asr = max(1, usable // 2)
    mt = max(1, usable - asr)
    # llama.cpp token generation is memory-bound: more than ~8 threads rarely helps.
    return min(8, asr), min(8, mt)


def plan_runtime(hw: HardwareInfo) -> RuntimePlan:
    accel = hw.accelerator
    asr_gpu = hw.cuda_devices > 0  # CTranslate2 has no Metal backend: CPU on Macs
    mt_gpu = hw.llama_gpu_offload
    asr_t, mt_t = split_threads(hw.cpu_count, asr_on_gpu=asr_gpu, mt_on_gpu=mt_gpu)
    return RuntimePlan(
        accelerator=accel,
        asr_device="cuda" if asr_gpu else "cpu",
        asr_compute_type="float16" if asr_gpu else "int8",
        asr_threads=asr_t,
        mt_gpu_layers=-1 if mt_gpu else 0,
        mt_threads=mt_t,
    )


def tier(hw: HardwareInfo) -> str:
    """The catalog's defaults tier for this machine."""
    if hw.accelerator == "metal":
        return "apple"
    if hw.accelerator == "cuda" and hw.cuda_devices > 0:
        return "cuda"
    total = hw.total_memory or 0
    if total < 8 * GB - 512 * MB or hw.cpu_count < 4:  # "8 GB" machines report a little less
        return "cpu-small"
    return "cpu"


# -- memory needed ---------------------------------------------------------------------------


def gguf_memory_needed(path: str | os.PathLike[str], n_ctx: int = 2048) -> int:
    """Weights (the file) plus an f16 KV cache for ``n_ctx`` tokens plus compute buffers."""
    from subtitler.models.validate import read_gguf

    return gguf_memory_for(read_gguf(path), n_ctx)


def gguf_memory_for(info: GgufInfo, n_ctx: int = 2048) -> int:
    """:func:`gguf_memory_needed` for a header already read."""
    n_layer = info.arch_int("block_count") or 0
    n_embd = info.arch_int("embedding_length") or 0
    n_head = info.arch_int("attention.head_count") or 1
    n_head_kv = info.arch_int("attention.head_count_kv") or n_head
    head_dim = info.arch_int("attention.key_length") or (n_embd // max(1, n_head))
    kv = 2 * n_layer * n_ctx * n_head_kv * head_dim * 2  # K and V, f16
    return info.file_size + kv + 64 * MB


def whisper_memory_needed(model_dir: str | os.PathLike[str], compute_type: str = "int8") -> int:
    """model.bin is float16 on the hub; int8 halves it once loaded, plus work buffers."""
    size = (Path(model_dir) / "model.bin").stat().st_size
    weights = size // 2 if compute_type.startswith("int8") else size
    return weights + 200 * MB


def check_fits(needs: list[tuple[str, int]], hw: HardwareInfo) -> None:
    """Raise InsufficientMemoryError before loading models whose sum would not fit."""
    have = hw.usable_memory
    if have is None:
        return  # unknown: let the backends try
    want = sum(n for _, n in needs) + RESERVE_BYTES
    if want <= have:
        return
    what = " + ".join(f"{label} {n / GB:.1f} GB" for label, n in needs)
    kind = "available" if hw.available_memory is not None else "installed"
    raise InsufficientMemoryError(
        f"not enough memory: {what} (+{RESERVE_BYTES / GB:.0f} GB reserve) needs "
        f"{want / GB:.1f} GB, {have / GB:.1f} GB {kind}; close other programs or choose a "
        "smaller model"
    )
