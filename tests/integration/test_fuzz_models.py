"""Fuzz: structure-aware corruptions of the fixture GGUF and of a Whisper folder, run through
``models verify`` and through the pipeline replay. Whatever the file, no signal exit, no hang,
no traceback: each problem is one line.

The cases are fixed (each field kind corrupted with values chosen to break it: zero, one past,
huge, wrong type) plus a few drawn from a seeded generator, so a run is repeatable and bounded.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import gguf_edit
from tests.helpers.gguf_edit import Layout, put, put_bytes

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "translator" / "model.gguf"
DATA = ROOT / "tests" / "data"
SEED = 15
RANDOM_GGUF_CASES = 8
HUGE = 2**40


def gguf_cases() -> Iterator[tuple[str, bytes]]:
    data = FIXTURE.read_bytes()
    lay = gguf_edit.parse(data)
    n_tensors, n_kv = len(lay.tensors), len(lay.kv)
    # -- header counts
    yield "version-1", put(data, 4, "I", 1)
    yield "version-huge", put(data, 4, "I", 0xFFFFFFFF)
    yield "n_tensors-0", put(data, 8, "Q", 0)
    yield "n_tensors-minus-1", put(data, 8, "Q", n_tensors - 1)
    yield "n_tensors-plus-1", put(data, 8, "Q", n_tensors + 1)
    yield "n_tensors-huge", put(data, 8, "Q", HUGE)
    yield "n_kv-0", put(data, 16, "Q", 0)
    yield "n_kv-minus-1", put(data, 16, "Q", n_kv - 1)
    yield "n_kv-plus-1", put(data, 16, "Q", n_kv + 1)
    # -- strings
    arch = lay.kv["general.architecture"]
    yield "key-length-huge", put(data, arch.key.at, "Q", HUGE)
    yield "key-length-plus-1", put(data, arch.key.at, "Q", arch.key.length + 1)
    yield "value-type-unknown", put(data, arch.type_at, "I", 99)
    yield "architecture-unknown", put_bytes(data, arch.value_at + 8, b"llamb")
    yield "architecture-length-0", put(data, arch.value_at, "Q", 0)
    name = lay.kv["general.name"]
    yield "name-invalid-utf8", put_bytes(data, name.value_at + 8, b"\xff\xfe\xfd")
    # -- arrays
    toks = lay.kv["tokenizer.ggml.tokens"]
    n_vocab = len(toks.items)
    yield "tokens-count-0", put(data, toks.count_at, "Q", 0)
    yield "tokens-count-minus-1", put(data, toks.count_at, "Q", n_vocab - 1)
    yield "tokens-count-huge", put(data, toks.count_at, "Q", HUGE)
    yield "tokens-item-type-u32", put(data, toks.value_at, "I", 4)
    types = lay.kv["tokenizer.ggml.token_type"]
    yield "token-types-count-minus-1", put(data, types.count_at, "Q", n_vocab - 1)
    yield "token-types-item-type-string", put(data, types.value_at, "I", gguf_edit.STRING)
    merges = lay.kv["tokenizer.ggml.merges"]
    yield "merges-count-0", put(data, merges.count_at, "Q", 0)
    # -- vocabulary
    yield "duplicate-token", gguf_edit.duplicate_token(lay)
    yield "special-token-duplicated", put_bytes(data, lay.token(1).data, lay.text(lay.token(0)))
    yield "token-length-0", put(data, lay.token(50).at, "Q", 0)
    t5 = types.items[5]
    assert isinstance(t5, int)
    yield "token-type-99", put(data, t5, "i", 99)
    yield "token-type-negative", put(data, t5, "i", -7)
    for key, value in (("eos", 99_999), ("eos", 0xFFFFFFFF), ("bos", 12_000), ("padding", 2**31)):
        at, fmt = lay.scalar(f"tokenizer.ggml.{key}_token_id")
        yield f"{key}-id-{value}", put(data, at, fmt, value)
    yield (
        "tokenizer-model-unknown",
        put_bytes(data, lay.kv["tokenizer.ggml.model"].value_at + 8, b"zzzz"),
    )
    m0 = merges.items[0]
    assert isinstance(m0, gguf_edit.Str)
    yield "merge-without-space", put_bytes(data, m0.data, lay.text(m0).replace(b" ", b"x"))
    # -- hyper-parameters
    for key, values in (
        ("block_count", (0, 1000, 3)),
        ("embedding_length", (0, 255)),
        ("feed_forward_length", (0,)),
        ("attention.head_count", (0, 3)),
        ("attention.head_count_kv", (0, 3)),
        ("context_length", (0, 2**31)),
        ("rope.dimension_count", (0, 1000)),
        ("vocab_size", (0, 50_000)),
    ):
        at, fmt = lay.scalar(f"llama.{key}")
        for v in values:
            yield f"{key}-{v}", put(data, at, fmt, v)
    for key in ("attention.layer_norm_rms_epsilon", "rope.freq_base"):
        at, fmt = lay.scalar(f"llama.{key}")
        for v in (float("nan"), -1.0, 0.0):
            yield f"{key}-{v}", put(data, at, fmt, v)
    # -- tensor table
    emb, q, k = lay.tensors[0], lay.tensors[3], lay.tensors[4]
    yield "n_dims-0", put(data, emb.n_dims_at, "I", 0)
    yield "n_dims-5", put(data, q.n_dims_at, "I", 5)
    yield "dim-0", put(data, emb.dims_at[1], "Q", 0)
    yield "dim-huge", put(data, q.dims_at[0], "Q", HUGE)
    yield "dim-plus-1", put(data, q.dims_at[0], "Q", 257)
    yield "type-unknown", put(data, q.type_at, "I", 99)
    yield "type-f16", put(data, q.type_at, "I", 1)
    yield (
        "offset-unaligned",
        put(data, q.offset_at, "Q", struct.unpack_from("<Q", data, q.offset_at)[0] + 1),
    )
    yield "offset-past-end", put(data, q.offset_at, "Q", len(data))
    yield (
        "offset-overlaps",
        put(data, k.offset_at, "Q", struct.unpack_from("<Q", data, q.offset_at)[0]),
    )
    assert lay.text(q.name) == b"blk.0.attn_q.weight" and lay.text(k.name) == b"blk.0.attn_k.weight"
    yield "tensor-name-duplicate", put_bytes(data, k.name.data, lay.text(q.name))
    yield "tensor-name-unknown", put_bytes(data, k.name.data, b"blk.0.attn_z.weight")
    yield from random_gguf_cases(lay, random.Random(SEED), RANDOM_GGUF_CASES)


def random_gguf_cases(lay: Layout, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """A random field of the header or tensor table gets a random value of its own width."""
    data = lay.data
    slots: list[tuple[str, int, str]] = []
    for key, kv in lay.kv.items():
        if kv.vtype in gguf_edit._SCALARS:
            slots.append((key, kv.value_at, gguf_edit._SCALARS[kv.vtype]))
        slots.append((f"{key}.type", kv.type_at, "I"))
    for i, t in enumerate(lay.tensors):
        slots += [(f"tensor{i}.dim{j}", at, "Q") for j, at in enumerate(t.dims_at)]
        slots += [(f"tensor{i}.type", t.type_at, "I"), (f"tensor{i}.offset", t.offset_at, "Q")]
    for i in range(n):
        name, at, fmt = rng.choice(slots)
        width = struct.calcsize("<" + fmt)
        raw = rng.getrandbits(8 * width).to_bytes(width, "little")
        yield f"random{i}-{name}", put_bytes(data, at, raw)


def whisper_cases(good: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    """Edits applied to a copy of a good random-weight Whisper folder."""
    model = (good / "model.bin").read_bytes()
    size = len(model)
    name_len = struct.unpack_from("<H", model, 4)[0]
    n_vars_at = 4 + 2 + name_len + 4
    first_var = n_vars_at + 4  # u16 name length, name, u8 rank, u32 dims, u8 dtype, u32 bytes
    var_name_len = struct.unpack_from("<H", model, first_var)[0]
    rank_at = first_var + 2 + var_name_len
    rank = model[rank_at]
    dtype_at = rank_at + 1 + 4 * rank

    def write_model(data: bytes) -> Callable[[Path], None]:
        return lambda d: (d / "model.bin").write_bytes(data)

    def write(name: str, text: str) -> Callable[[Path], None]:
        return lambda d: (d / name).write_text(text, encoding="utf-8")

    yield "model-bin-empty", write_model(b"")
    for pct in (10, 50, 99):
        yield f"model-bin-cut-{pct}", write_model(model[: size * pct // 100])
    yield "model-bin-noise", write_model(random.Random(SEED).randbytes(size))
    yield "binary-version-999", write_model(put(model, 0, "I", 999))
    yield "spec-name-length-huge", write_model(put(model, 4, "H", 0xFFFF))
    yield "variables-0", write_model(put(model, n_vars_at, "I", 0))
    yield "variables-huge", write_model(put(model, n_vars_at, "I", 0xFFFFFFF))
    yield "variable-rank-9", write_model(put(model, rank_at, "B", 9))
    yield "variable-dim-0", write_model(put(model, rank_at + 1, "I", 0))
    yield "variable-dim-huge", write_model(put(model, rank_at + 1, "I", 0xFFFFFFF))
    yield "variable-dtype-99", write_model(put(model, dtype_at, "B", 99))
    yield "variable-bytes-huge", write_model(put(model, dtype_at + 1, "I", 0xFFFFFFF))
    yield "config-not-json", write("config.json", "{not json")
    yield "config-empty-object", write("config.json", "{}")
    yield (
        "config-wrong-types",
        write(
            "config.json", json.dumps({"alignment_heads": "x", "lang_ids": 3, "suppress_ids": None})
        ),
    )
    yield "tokenizer-not-json", write("tokenizer.json", "[")
    yield "tokenizer-empty-object", write("tokenizer.json", "{}")
    yield "vocabulary-empty", write("vocabulary.json", "[]")
    yield "vocabulary-short", write("vocabulary.json", json.dumps(["a", "b", "c"]))
    yield "vocabulary-missing", lambda d: (d / "vocabulary.json").unlink()


def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def assert_one_line_each(out: subprocess.CompletedProcess[str], what: str) -> None:
    """No signal exit, no traceback; every message is a single line."""
    text = out.stdout + out.stderr
    assert out.returncode >= 0, f"{what}: killed by signal {-out.returncode}\n{text[-2000:]}"
    assert "Traceback" not in text, f"{what}:\n{text[-3000:]}"
    for line in out.stderr.splitlines():
        # A continuation line (indented, or a dump) means a multi-line message.
        assert line[:1].strip(), f"{what}: multi-line output\n{out.stderr[-2000:]}"


def kind_of(verify_line: str) -> str:
    if verify_line.startswith("ok   "):
        return "ok"
    if "crashed" in verify_line:
        return "crashed"
    if ": damaged: it " in verify_line:
        return "damaged"  # it loads and runs, and its real test writes nothing or a loop
    return "refused" if "could not load" in verify_line else "header"


def worth_replaying(outcome: dict[Path, str]) -> list[Path]:
    """Every file the engine loaded or died on; one of each kind it never reached (those
    stop at the same check in the replay, before any engine starts)."""
    keep = [p for p, k in outcome.items() if k in ("ok", "crashed")]
    for kind in ("header", "refused", "damaged"):
        keep += [p for p, k in outcome.items() if k == kind][:2]
    return keep


def verify_all(paths: list[Path]) -> list[str]:
    out = run(["main.py", "models", "verify", *map(str, paths)], timeout=600)
    assert_one_line_each(out, "models verify")
    assert out.returncode in (0, 1), out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(paths), out.stdout
    for line, p in zip(lines, paths, strict=True):
        assert line.startswith(("ok   ", "FAIL ")) and p.name in line, line
    return lines


@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("words") / "w.tsv"
    w.write_text("\n".join((DATA / "ljspeech_talk.words.tsv").read_text().splitlines()[:10]))
    return w


def test_fuzzed_translators_are_refused_or_run_in_one_line_each(
    tmp_path: Path, words: Path
) -> None:
    cases = list(gguf_cases())
    assert len(cases) == len({n for n, _ in cases})  # one file per case
    paths = []
    for name, data in cases:
        p = tmp_path / f"{name}.gguf"
        p.write_bytes(data)
        paths.append(p)
    lines = verify_all(paths)
    outcome = {p: kind_of(ln) for p, ln in zip(paths, lines, strict=True)}
    kinds = set(outcome.values())
    # The corruptions reach every layer: the header check, llama.cpp's refusal, its abort
    # while loading and while translating, and files it runs with.
    assert kinds - {"damaged"} == {"header", "refused", "crashed", "ok"}, kinds
    assert any("duplicate-token.gguf: llama.cpp crashed loading it" in ln for ln in lines)
    assert any("llama.cpp crashed translating (ops.cpp" in ln for ln in lines)
    refused = {p for p, k in outcome.items() if k not in ("ok", "damaged")}

    def replay(p: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        argv = [
            "-m",
            "subtitler_research.pipeline.replay",
            "--oracle",
            str(words),
            "--mt-model",
            str(p),
        ]
        argv += ["--speed", "20", "--timeout", "60", "--quiet", "--json", str(p) + ".json"]
        return p, run(argv, timeout=120)

    with ThreadPoolExecutor(2) as pool:
        for p, out in pool.map(replay, worth_replaying(outcome)):
            assert_one_line_each(out, f"replay {p.name}")
            assert out.returncode == 0, f"{p.name}: {out.stderr[-2000:]}"
            # Translation may be lost, never the transcript.
            segs = json.loads(Path(str(p) + ".json").read_text())["segments"]
            assert segs and all(s["source"] for s in segs), p.name
            if p in refused:
                assert not any(s["translation"] for s in segs), p.name


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from subtitler_research.asr.tiny_model import build_tiny_whisper

    return build_tiny_whisper(tmp_path_factory.mktemp("whisper") / "tiny")


def test_fuzzed_whisper_folders_are_refused_or_run_in_one_line_each(
    tmp_path: Path, whisper_dir: Path
) -> None:
    dirs = []
    for name, edit in whisper_cases(whisper_dir):
        d = tmp_path / name
        shutil.copytree(whisper_dir, d)
        edit(d)
        dirs.append(d)
    lines = verify_all(dirs)
    outcome = {d: kind_of(ln) for d, ln in zip(dirs, lines, strict=True)}
    assert sum(k != "ok" for k in outcome.values()) > len(dirs) // 2
    # A model that loads but cannot recognise is caught by verify's one recognition (how it
    # fails, an error or the engine's death, may differ between machines; never "ok").
    (empty,) = [ln for ln in lines if "config-empty-object" in ln]
    assert empty.startswith("FAIL config-empty-object: ") and (
        "cannot recognise with it" in empty or "crashed" in empty
    ), empty

    def replay(d: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        argv = ["-m", "subtitler_research.pipeline.replay", str(DATA / "LJ001-0002.flac")]
        argv += ["--asr-model", str(d), "--speed", "4", "--timeout", "60", "--quiet"]
        return d, run(argv, timeout=120)

    with ThreadPoolExecutor(2) as pool:
        for d, out in pool.map(replay, worth_replaying(outcome)):
            assert_one_line_each(out, f"replay {d.name}")
            # A speech model that cannot load ends the replay with one "error:" line.
            assert out.returncode in (0, 2), f"{d.name}: {out.stderr[-2000:]}"
            about_it = [
                ln
                for ln in out.stderr.splitlines()
                if ln.strip() and "no translation model chosen" not in ln  # (none was given)
            ]
            if out.returncode == 2:
                assert len(about_it) == 1 and about_it[0].startswith("error: "), out.stderr


def tiny_t5(out: Path) -> Path:
    """A T5 of random weights with a SentencePiece-style vocabulary: what llama.cpp loads as
    an encoder-decoder (MADLAD-400's architecture), small."""
    import gguf
    import numpy as np

    n_embd, n_head, head_dim, n_ff, buckets = 32, 2, 16, 64, 32
    tokens = ["<pad>", "</s>", "<unk>", *("\u2581" + w for w in "the a dog runs".split())]
    tokens += list("abcdefghijklmnopqrstuvwxyz.,!?")
    w = gguf.GGUFWriter(str(out), "t5")
    w.add_context_length(8192)  # (the few-shot prompt in single letters)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(1)
    w.add_head_count(n_head)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_relative_attn_buckets_count(buckets)
    w.add_decoder_start_token_id(0)
    w.add_tokenizer_model("t5")
    w.add_token_list(tokens)
    w.add_token_scores([0.0, 0.0, 0.0] + [-float(i) for i in range(len(tokens) - 3)])
    w.add_token_types([3, 3, 2] + [1] * (len(tokens) - 3))
    w.add_eos_token_id(1)
    w.add_unk_token_id(2)
    w.add_pad_token_id(0)
    rng = np.random.default_rng(SEED)

    def mat(name: str, cols: int, rows: int) -> None:  # (GGUF's shape order: cols first)
        w.add_tensor(name, (rng.standard_normal((rows, cols)) * 0.1).astype(np.float32))

    def norm(name: str) -> None:
        w.add_tensor(name, np.ones(n_embd, np.float32))

    mat("token_embd.weight", n_embd, len(tokens))
    mat("output.weight", n_embd, len(tokens))
    for part in ("enc", "dec"):
        blk = f"{part}.blk.0."
        attns = ("attn", "cross_attn") if part == "dec" else ("attn",)
        for attn in attns:
            norm(f"{blk}{attn}_norm.weight")
            for x in "qkv":
                mat(f"{blk}{attn}_{x}.weight", n_embd, n_head * head_dim)
            mat(f"{blk}{attn}_o.weight", n_head * head_dim, n_embd)
        mat(f"{blk}attn_rel_b.weight", n_head, buckets)
        norm(f"{blk}ffn_norm.weight")
        mat(f"{blk}ffn_up.weight", n_embd, n_ff)
        mat(f"{blk}ffn_gate.weight", n_embd, n_ff)
        mat(f"{blk}ffn_down.weight", n_ff, n_embd)
        norm(f"{part}.output_norm.weight")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def test_an_encoder_decoder_translator_is_refused_in_one_line(tmp_path: Path) -> None:
    """A T5 GGUF (MADLAD-400, a translation model, is one) chosen as the translator: llama.cpp
    loads it, and aborted at each translation ("llama_encode must be called first"), said as
    'crashed translating', a damaged file to download again. Now refused as what it is."""
    t5 = tiny_t5(tmp_path / "madlad-tiny.gguf")
    (line,) = verify_all([t5])
    assert line == (
        "FAIL madlad-tiny.gguf: a t5 model (an encoder-decoder, as MADLAD-400 and Flan-T5 "
        "are); the app translates with a decoder-only language model (Gemma, Qwen, Llama, …)"
    )


def test_a_chat_template_jinja_cannot_parse_does_not_refuse_the_model(tmp_path: Path) -> None:
    """llama-cpp-python compiles every chat template of a GGUF with Jinja as it loads it, for a
    chat API the app never calls: a template Jinja cannot parse (a tag of another dialect, a
    damaged string) refused the whole model, "FAIL model.gguf: Encountered unknown tag
    'garbage'.". The app renders prompts itself (here the fixture's named template)."""
    bad = tmp_path / "odd-template.gguf"
    made = run(
        [
            "-m",
            "gguf.scripts.gguf_new_metadata",
            "--chat-template",
            "{% garbage %}{{ messages",
            "--force",
            str(FIXTURE),
            str(bad),
        ],
        timeout=120,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    (line,) = verify_all([bad])
    assert line.startswith(f"ok   {bad}: GGUF translator (llama, 38 tensors"), line
