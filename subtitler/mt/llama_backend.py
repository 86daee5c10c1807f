"""The llama-cpp-python implementation of the LM protocol (the only module importing llama_cpp).

It owns one llama.cpp context with one sequence. ``evaluate`` fills a raw ``llama_batch`` and
flags logits only at the requested positions, so a verify pass returns exactly the rows SSBD
needs; the KV cache is cut with ``llama_memory_seq_rm``. Batches larger than n_batch are split
(llama.cpp aborts the process otherwise).
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from subtitler.config import MtConfig
from subtitler.mt.lm import Logits

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"


class ModelLoadError(RuntimeError):
    """A translation model could not be opened; the message is meant for the user."""


class ContextFullError(RuntimeError):
    pass


@dataclass(frozen=True)
class LlamaSettings:
    """How llama.cpp runs a GGUF translator."""

    model_path: str
    n_ctx: int = 2048  # tokens of context: prompt + output
    n_batch: int = 512  # largest batch handed to llama_decode at once
    n_ubatch: int = 512  # micro-batch; < 64 (with Q8_0/Q4_0 and flash attention) is bit-exact
    n_threads: int | None = None  # None: half the logical cores, at least 1
    n_gpu_layers: int | None = None  # None: all layers when the build offloads (Metal/CUDA), else 0
    flash_attn: bool = True

    @classmethod
    def from_config(cls, mt: MtConfig, model_path: str, n_ctx: int) -> LlamaSettings:
        """How the translation settings load ``model_path`` (the one mapping from MtConfig, for
        the app and the benchmark); ``n_ctx``: the settings' context as the model allows it."""
        return cls(
            model_path=model_path,
            n_ctx=n_ctx,
            n_ubatch=mt.n_ubatch,
            n_threads=mt.threads,
            n_gpu_layers=mt.gpu_layers,
            flash_attn=mt.flash_attn,
        )


class _NativeLog:
    """llama.cpp's log, once routed to ``logging`` (see route_native_log)."""

    routed = False
    callback: Any = None  # the ctypes callback: must stay referenced while llama.cpp uses it
    partial = ""  # text of a line not ended yet
    level = 2  # of the line being written
    last_error = ""  # the first error line since the last load began


def route_native_log() -> None:
    """Send llama.cpp's own log to ``logging`` (logger "llama.cpp", at INFO: the user sees our
    one-line message, the log file gets the engine's details) and keep its last error line for
    load messages.

    For the engine worker, whose stderr is captured: once routed, models load with
    llama-cpp-python's ``verbose=True``, because ``verbose=False`` points fd 2 at /dev/null
    during a load and so hides the GGML_ASSERT line that says why llama.cpp aborted.
    """
    import llama_cpp

    if _NativeLog.routed:
        return
    logger = logging.getLogger("llama.cpp")

    def on_log(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        # ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continues the previous line.
        if level != 5:
            _NativeLog.level = level
        *done, _NativeLog.partial = (
            _NativeLog.partial + text.decode("utf-8", errors="replace")
        ).split("\n")
        for msg in done:
            if msg.strip():
                debug = _NativeLog.level == 1
                logger.log(logging.DEBUG if debug else logging.INFO, "%s", msg)
                # The first error of a load says why; the ones after say "failed to load".
                if _NativeLog.level == 4 and not _NativeLog.last_error:
                    _NativeLog.last_error = msg.strip()

    _NativeLog.callback = llama_cpp.llama_log_callback(on_log)
    llama_cpp.llama_log_set(_NativeLog.callback, ctypes.c_void_p(0))
    _NativeLog.routed = True


def default_threads() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def check_gguf_file(path: str | os.PathLike[str]) -> Path:
    """Fail early, with a one-line reason, on a missing, empty or non-GGUF file."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"translation model not found: {p}")
    if p.is_dir():
        raise ModelLoadError(f"translation model is a directory, not a .gguf file: {p}")
    with p.open("rb") as f:
        head = f.read(4)
    if head != GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF model file (bad header): {p}")
    return p


_params_lock = threading.Lock()


def has_amx(lib: Any) -> bool:
    """Whether this llama.cpp build would run matrix products on the CPU's AMX tiles."""
    return b"AMX_INT8 = 1" in bytes(lib.llama_print_system_info() or b"")


@contextmanager
def amx_safe_load(lib: Any) -> Iterator[None]:
    """Load models with llama.cpp's extra buffer types off on CPUs with AMX.

    ggml's AMX matrix product segfaults on Sapphire Rapids-class Xeons (seen here in the first
    decode of the fixture translator; upstream ggml-org/llama.cpp#20824, closed without a fix),
    which a native build picks on its own. Off, the weights stay in plain CPU buffers (AVX-512),
    so nothing else changes. llama-cpp-python's ``Llama`` has no argument for
    ``llama_model_params.use_extra_bufts``, so its default-params factory is wrapped while a
    model loads.
    """
    if not has_amx(lib):
        yield
        return
    module = lib.llama_cpp
    with _params_lock:
        original = module.llama_model_default_params

        def safe_params() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        module.llama_model_default_params = safe_params
        try:
            yield
        finally:
            module.llama_model_default_params = original


_handlers_lock = threading.Lock()  # (one load at a time replaces the formatter)


class _NoChatHandler:
    """Stands for llama-cpp-python's Jinja2ChatFormatter while a model loads (see
    :func:`without_chat_handlers`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def to_chat_handler(self) -> Any:
        def unused(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("subtitler renders chat templates through llama.cpp")

        return unused


@contextmanager
def without_chat_handlers(lib: Any) -> Iterator[None]:
    """Load a model without llama-cpp-python compiling its chat templates with Jinja.

    ``Llama`` compiles every ``tokenizer.chat_template*`` of the file for its
    ``create_chat_completion``, which the app never calls (a prompt is rendered by its own
    templates, or by llama.cpp's ``llama_chat_apply_template``): a template Jinja cannot parse
    (a tag of another dialect, a damaged string) refused the whole model, "Encountered
    unknown tag 'garbage'.", as if the file were no model at all (abetlen/llama-cpp-python
    #2225: the eager compile; its fix #2226 accepts one more tag, not any template).
    """
    module = lib.llama_chat_format
    with _handlers_lock:
        original = module.Jinja2ChatFormatter
        module.Jinja2ChatFormatter = _NoChatHandler
        try:
            yield
        finally:
            module.Jinja2ChatFormatter = original


class LlamaLM:
    """A GGUF model in llama.cpp behind :class:`~subtitler.mt.lm.LanguageModel`."""

    def __init__(self, settings: LlamaSettings) -> None:
        import llama_cpp

        self._lib: Any = llama_cpp
        path = check_gguf_file(settings.model_path)
        offload = bool(llama_cpp.llama_supports_gpu_offload())
        n_gpu = (
            settings.n_gpu_layers if settings.n_gpu_layers is not None else (-1 if offload else 0)
        )
        threads = settings.n_threads or default_threads()
        n_batch = max(1, settings.n_batch)
        self.settings = settings
        self.gpu_offload = offload and n_gpu != 0
        _NativeLog.last_error = ""
        try:
            with without_chat_handlers(llama_cpp), amx_safe_load(llama_cpp):
                self._llm: Any = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=settings.n_ctx,
                    n_batch=n_batch,
                    n_ubatch=min(n_batch, settings.n_ubatch),
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_gpu_layers=n_gpu,
                    flash_attn=settings.flash_attn,
                    logits_all=False,
                    verbose=_NativeLog.routed,
                )
        except (ValueError, RuntimeError, OSError) as e:
            # llama-cpp-python says only "Failed to load model"; llama.cpp logged why.
            why = _NativeLog.last_error.removeprefix("llama_model_load: ") or str(e)
            raise ModelLoadError(f"llama.cpp could not load {path.name}: {why}") from e
        self._ctx = self._llm.ctx
        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        self._n_vocab = int(self._llm.n_vocab())
        self._n_ctx = int(self._llm.n_ctx())
        self._n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._cached: list[int] = []
        self._contexts: list[Any] = []  # made by views(), freed by close()
        self._pieces: dict[int, bytes] = {}
        self._eos = frozenset(
            t for t in range(self._n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, t)
        )
        self.metadata: dict[str, str] = dict(self._llm.metadata)
        log.info(
            "loaded %s: vocab %d, ctx %d, threads %d, gpu layers %d",
            path.name,
            self._n_vocab,
            self._n_ctx,
            threads,
            n_gpu,
        )

    # -- LanguageModel ---------------------------------------------------------------------
    @property
    def n_vocab(self) -> int:
        return self._n_vocab

    @property
    def eos_ids(self) -> frozenset[int]:
        return self._eos

    @property
    def n_ctx(self) -> int:
        """Context length in tokens (prompt + output must fit)."""
        return self._n_ctx

    @property
    def cached(self) -> Sequence[int]:
        return self._cached

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def tokenize_prompt(self, prompt: str, plain: tuple[int, int]) -> list[int]:
        """``prompt`` as tokens, BOS first: the template's special-token texts are its control
        tokens, while the user's words ``prompt[plain[0]:plain[1]]`` are text whatever they
        spell (llama.cpp parses special tokens in the whole of a text or in none of it)."""
        whole = self.tokenize(prompt, add_bos=True, special=True)
        words = prompt[plain[0] : plain[1]]
        if self.tokenize(words, special=True) == self.tokenize(words, special=False):
            return whole  # nothing in them reads as a control token: the usual tokens
        return self._tokenize_parts(prompt, *plain)

    def _tokenize_parts(self, prompt: str, start: int, end: int) -> list[int]:
        """As llama.cpp tokenizes with special tokens parsed (the text cut at each one, each
        piece between them tokenized alone), but cut only at the template's own: outside
        ``start``..``end``."""
        marks: dict[str, int] = {}
        for part in (prompt[:start], prompt[end:]):
            for t in self.tokenize(part, special=True):
                text = self._control_text(t)
                if text:
                    marks[text] = t
        cuts: list[re.Match[str]] = []
        if marks:
            # Longest first, as llama.cpp looks for them.
            found = re.compile("|".join(map(re.escape, sorted(marks, key=len, reverse=True))))
            cuts = [*found.finditer(prompt, 0, start), *found.finditer(prompt, end)]
        out = self.tokenize("", add_bos=True, special=False)
        at = 0
        for m in cuts:
            if m.start() > at:
                out += self.tokenize(prompt[at : m.start()], special=False)
            out.append(marks[m.group()])
            at = m.end()
        if at < len(prompt):
            out += self.tokenize(prompt[at:], special=False)
        return out

    def _control_text(self, token: int) -> str:
        """The text of a control token (one llama.cpp parses only as a special token); ""
        for any other."""
        lib = self._lib
        attr = int(lib.llama_vocab_get_attr(self._vocab, token))
        if not attr & (lib.LLAMA_TOKEN_ATTR_CONTROL | lib.LLAMA_TOKEN_ATTR_UNKNOWN):
            return ""
        return bytes(lib.llama_vocab_get_text(self._vocab, token)).decode("utf-8", "replace")

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return b"".join(self.piece(t) for t in tokens)

    def piece(self, token: int) -> bytes:
        """The bytes of one token (special tokens render as nothing), cached.

        llama-cpp-python's own detokenizer uses a 32-byte buffer and returns b"" for longer
        pieces (long CJK merges); this one grows the buffer to what llama.cpp asks for.
        """
        got = self._pieces.get(token)
        if got is not None:
            return got
        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self._lib.llama_token_to_piece(self._vocab, token, buf, size, 0, False)
            if n >= 0:
                got = buf.raw[:n]
                break
            size = -n  # a negative result is the size needed
        self._pieces[token] = got
        return got

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        return self._decode(self._ctx, 0, self._cached, tokens, logits_at)

    def _decode(
        self,
        ctx: Any,
        seq_id: int,
        cached: list[int],
        tokens: Sequence[int],
        logits_at: Sequence[int],
    ) -> Logits:
        """``evaluate`` on one sequence of one context (``cached``: that sequence's tokens)."""
        n = len(tokens)
        if len(cached) + n > self._n_ctx:
            raise ContextFullError(f"context of {self._n_ctx} tokens is full ({len(cached)} + {n})")
        order = sorted(range(len(logits_at)), key=lambda j: logits_at[j])
        wanted = [logits_at[j] for j in order]
        if wanted and (wanted[0] < 0 or wanted[-1] >= n):
            raise IndexError("logits requested outside the evaluated tokens")
        out = np.empty((len(logits_at), self._n_vocab), dtype=np.float32)
        lib, b = self._lib, self._batch
        w = 0  # next entry of ``wanted``
        for start in range(0, n, self._n_batch):
            chunk = tokens[start : start + self._n_batch]
            pos0 = len(cached)
            flagged = 0
            for i, tok in enumerate(chunk):
                b.token[i] = tok
                b.pos[i] = pos0 + i
                b.n_seq_id[i] = 1
                b.seq_id[i][0] = seq_id
                flag = w + flagged < len(wanted) and wanted[w + flagged] == start + i
                b.logits[i] = flag
                flagged += flag
            b.n_tokens = len(chunk)
            rc = lib.llama_decode(ctx, b)
            if rc != 0:
                raise RuntimeError(f"llama_decode failed with code {rc}")
            cached.extend(chunk)
            if flagged:
                ptr = lib.llama_get_logits(ctx)
                rows = np.ctypeslib.as_array(ptr, shape=(flagged * self._n_vocab,))
                rows = rows.reshape(flagged, self._n_vocab)
                for r in range(flagged):
                    out[order[w + r]] = rows[r]
                w += flagged
        return out

    def truncate(self, n: int) -> None:
        if n >= len(self._cached):
            return
        self._lib.llama_memory_seq_rm(self._mem, -1, n, -1)
        del self._cached[n:]

    # -- several streams on one loaded model (issue 19: several target languages) ----------
    def new_stream(self) -> LlamaView:
        """One more llama.cpp context on these weights (closed with this model)."""
        return self.views(1, "contexts")[0]

    def views(self, n: int, layout: str = "sequences") -> list[LlamaView]:
        """``n`` independent streams on this model's weights, each a LanguageModel with its
        own KV cache of ``n_ctx`` tokens: "sequences" = sequences 0..n-1 of one new llama.cpp
        context; "contexts" = one new context each. Closed with this model."""
        if layout not in ("sequences", "contexts"):
            raise ValueError(f"layout must be sequences or contexts, not {layout!r}")
        lib = self._lib
        base = self._llm.context_params
        out: list[LlamaView] = []
        per_ctx = n if layout == "sequences" else 1
        for _ in range(n // per_ctx):
            params = type(base).from_buffer_copy(base)
            params.n_seq_max = per_ctx
            params.n_ctx = self._n_ctx * per_ctx  # without a unified cache each sequence
            params.kv_unified = False  # gets n_ctx / n_seq_max cells
            ctx = lib.llama_init_from_model(self._llm.model, params)
            if not ctx:
                raise ModelLoadError("llama.cpp could not create another context")
            self._contexts.append(ctx)
            out += [LlamaView(self, ctx, k) for k in range(per_ctx)]
        return out

    # -- extras ----------------------------------------------------------------------------
    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        """Render messages with the GGUF's own chat template through llama.cpp."""
        lib = self._lib
        tmpl = lib.llama_model_chat_template(self._llm.model, None)
        if not tmpl:
            raise ValueError("the model has no chat template")
        arr = (lib.llama_chat_message * len(messages))()
        keep = []
        for i, msg in enumerate(messages):
            role, content = msg["role"].encode(), msg["content"].encode()
            keep += [role, content]
            arr[i].role, arr[i].content = role, content
        size = 2 * sum(len(x) for x in keep) + 512
        for _ in range(2):
            buf = ctypes.create_string_buffer(size)
            got = lib.llama_chat_apply_template(tmpl, arr, len(messages), True, buf, size)
            if got < 0:
                raise ValueError("llama.cpp does not support this model's chat template")
            if got <= size:
                return buf.raw[:got].decode("utf-8", errors="replace")
            size = got + 1
        raise ValueError("chat template output did not fit")

    def close(self) -> None:
        for ctx in self._contexts:
            self._lib.llama_free(ctx)
        self._contexts = []
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()

    def __enter__(self) -> LlamaLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LlamaView:
    """One stream of :meth:`LlamaLM.views`: sequence ``seq_id`` of context ``ctx``, on the
    parent's weights, tokenizer and batch (used by one thread at a time, like the parent)."""

    def __init__(self, parent: LlamaLM, ctx: Any, seq_id: int) -> None:
        self.parent, self._ctx, self.seq_id = parent, ctx, seq_id
        self._mem = parent._lib.llama_get_memory(ctx)
        self._cached: list[int] = []
        self.metadata = parent.metadata

    @property
    def n_vocab(self) -> int:
        return self.parent.n_vocab

    @property
    def eos_ids(self) -> frozenset[int]:
        return self.parent.eos_ids

    @property
    def n_ctx(self) -> int:
        return self.parent.n_ctx

    def new_stream(self) -> LlamaView:
        return self.parent.new_stream()

    @property
    def cached(self) -> Sequence[int]:
        return self._cached

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        return self.parent.tokenize(text, add_bos=add_bos, special=special)

    def tokenize_prompt(self, prompt: str, plain: tuple[int, int]) -> list[int]:
        return self.parent.tokenize_prompt(prompt, plain)

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return self.parent.detokenize(tokens)

    def piece(self, token: int) -> bytes:
        return self.parent.piece(token)

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        return self.parent.apply_chat_template(messages)

    def evaluate(self, tokens: Sequence[int], logits_at: Sequence[int]) -> Logits:
        return self.parent._decode(self._ctx, self.seq_id, self._cached, tokens, logits_at)

    def truncate(self, n: int) -> None:
        if n >= len(self._cached):
            return
        self.parent._lib.llama_memory_seq_rm(self._mem, self.seq_id, n, -1)
        del self._cached[n:]
