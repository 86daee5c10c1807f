"""One-line reasons for bad model files (GGUF parsed by hand, CTranslate2 folders)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from subtitler.models.validate import (
    GGML_BLOCKS,
    InvalidModelError,
    check_model_path,
    check_translator,
    check_whisper_dir,
    read_gguf,
    shown,
)
from subtitler_research.bench.random_model import PRESETS, build_random_llama
from tests.helpers import gguf_edit
from tests.helpers.bounded import run_bounded
from tests.helpers.fake_hub import fake_whisper_files

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def gguf_no_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("v") / "plain.gguf"
    return build_random_llama(
        out, PRESETS["tiny"], tiktoken=DATA / "gpt2.tiktoken", seed=3, chat_template=None
    )


def one_line(e: pytest.ExceptionInfo[InvalidModelError]) -> str:
    msg = str(e.value)
    assert msg and "\n" not in msg
    return msg


def test_good_gguf(tiny_gguf: Path) -> None:
    info = read_gguf(tiny_gguf)
    assert info.version == 3 and info.architecture == "llama"
    assert info.n_tensors == 3 + 9 * PRESETS["tiny"].n_layer
    assert info.data_end <= info.file_size < info.data_end + 64
    assert info.arch_int("block_count") == PRESETS["tiny"].n_layer
    assert check_translator(tiny_gguf).template == "gguf"
    assert check_translator(tiny_gguf, "tower").template == "tower"
    assert "template gguf" in check_model_path(tiny_gguf)


@pytest.mark.parametrize("keep", [0.5, 0.999])
def test_truncated_gguf(tiny_gguf: Path, tmp_path: Path, keep: float) -> None:
    data = tiny_gguf.read_bytes()
    bad = tmp_path / "cut.gguf"
    bad.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(InvalidModelError) as e:
        read_gguf(bad)
    assert one_line(e).startswith("cut.gguf: truncated GGUF (")


def test_gguf_cut_inside_header(tiny_gguf: Path, tmp_path: Path) -> None:
    bad = tmp_path / "head.gguf"
    bad.write_bytes(tiny_gguf.read_bytes()[:5000])
    with pytest.raises(InvalidModelError) as e:
        read_gguf(bad)
    assert "ends inside its header" in one_line(e)


def test_a_damaged_count_in_a_full_size_gguf_is_corrupt_not_truncated(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    """Flipped bytes in the key-value header of a whole file: a count that asks for more than
    any header holds is damage (download it again), not a file cut short."""
    data = tiny_gguf.read_bytes()
    toks = gguf_edit.parse(data).kv["tokenizer.ggml.tokens"]
    bad = tmp_path / "flipped.gguf"
    # The high bytes of the token count: billions of tokens.
    bad.write_bytes(gguf_edit.put_bytes(data, toks.count_at + 5, b"\x5a\x5a\x5a"))
    with pytest.raises(InvalidModelError) as e:
        read_gguf(bad)
    assert one_line(e).startswith("flipped.gguf: corrupt GGUF header (a field at byte ")
    # A full-size file (a sparse 100 MB one here) ends inside no header: a string length
    # damaged by a few bits is damage too.
    big = tmp_path / "big.gguf"
    at = toks.items[5]
    assert isinstance(at, gguf_edit.Str)
    with big.open("wb") as f:
        f.write(gguf_edit.put(data, at.at, "Q", 5_000_000))
        f.truncate(100 << 20)
    with pytest.raises(InvalidModelError) as e:
        read_gguf(big)
    assert "corrupt GGUF header" in one_line(e)


def test_a_model_path_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    with pytest.raises(InvalidModelError) as e:
        run_bounded(lambda: read_gguf(fifo))
    assert one_line(e).startswith("translation model is not a regular file: ")


def test_random_bytes(tmp_path: Path) -> None:
    bad = tmp_path / "noise.gguf"
    bad.write_bytes(os.urandom(100_000))
    with pytest.raises(InvalidModelError) as e:
        check_translator(bad)
    assert one_line(e) == "noise.gguf: not a GGUF model file (bad header)"


def test_corrupt_counts_after_magic(tmp_path: Path) -> None:
    bad = tmp_path / "c.gguf"
    bad.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + b"\xff" * 16 + os.urandom(1000))
    with pytest.raises(InvalidModelError) as e:
        read_gguf(bad)
    assert "corrupt GGUF header" in one_line(e)


def test_missing_empty_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidModelError, match="not found"):
        read_gguf(tmp_path / "none.gguf")
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(InvalidModelError, match="empty file"):
        read_gguf(tmp_path / "empty.gguf")
    with pytest.raises(InvalidModelError, match="is a directory"):
        read_gguf(tmp_path)


def test_gguf_without_chat_template(gguf_no_template: Path) -> None:
    # A base model: it is shown example translations (issue 25: it used to be refused).
    assert check_translator(gguf_no_template).template == "fewshot"
    with pytest.raises(InvalidModelError, match="no chat template"):
        check_translator(gguf_no_template, "gguf")
    # An explicit built-in template makes it usable.
    assert check_translator(gguf_no_template, "chatml").template == "chatml"


def test_block_table_matches_gguf_package() -> None:
    from gguf.constants import GGML_QUANT_SIZES

    for t, sizes in GGML_QUANT_SIZES.items():
        assert GGML_BLOCKS[int(t)] == tuple(sizes), t


def write_dir(d: Path, files: dict[str, bytes]) -> Path:
    d.mkdir()
    for name, data in files.items():
        (d / name).write_bytes(data)
    return d


def test_whisper_dir_ok(tmp_path: Path) -> None:
    d = write_dir(tmp_path / "w", fake_whisper_files())
    assert check_whisper_dir(d) == d
    assert check_model_path(d).startswith("Whisper model folder")


def test_a_folder_named_as_a_gguf_file_is_said_to_be_a_folder(tmp_path: Path) -> None:
    """It was called "not a CTranslate2 Whisper model folder": true, but not what was meant."""
    d = write_dir(tmp_path / "model.gguf", {"a.txt": b"x"})
    with pytest.raises(InvalidModelError) as e:
        check_model_path(d)
    assert str(e.value) == f"translation model is a directory, not a .gguf file: {shown(d)}"
    w = write_dir(tmp_path / "whisper.gguf", fake_whisper_files())  # a Whisper folder, oddly named
    assert check_model_path(w).startswith("Whisper model folder")


def test_non_model_directory(tmp_path: Path) -> None:
    d = write_dir(tmp_path / "photos", {"a.jpg": b"x"})
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e) == (
        "photos: not a CTranslate2 Whisper model folder (missing model.bin, config.json, "
        "tokenizer.json, vocabulary.json or vocabulary.txt)"
    )


def test_a_transformers_whisper_folder_is_named_with_what_to_do(tmp_path: Path) -> None:
    """Said to be "not a CTranslate2 Whisper model folder (missing model.bin, ...)" only."""
    d = write_dir(
        tmp_path / "whisper-small",
        {"config.json": b"{}", "model.safetensors": b"x", "tokenizer.json": b"{}"},
    )
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e) == (
        "whisper-small: a Hugging Face (transformers) Whisper folder; faster-whisper reads the "
        "CTranslate2 copy of the model (ct2-transformers-converter makes one)"
    )


def test_whisper_dir_without_tokenizer(tmp_path: Path) -> None:
    files = fake_whisper_files()
    del files["tokenizer.json"]
    d = write_dir(tmp_path / "w", files)
    with pytest.raises(InvalidModelError, match=r"missing tokenizer\.json\)$"):
        check_whisper_dir(d)


def test_ct2_model_that_is_not_whisper(tmp_path: Path) -> None:
    import struct

    files = fake_whisper_files()
    name = b"TransformerSpec\0"
    files["model.bin"] = struct.pack("<IH", 6, len(name)) + name + b"\0" * 100
    d = write_dir(tmp_path / "nllb", files)
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e) == "nllb: a CTranslate2 TransformerSpec model, not Whisper"


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ({"alignment_heads": "x", "lang_ids": 3, "suppress_ids": None}, "'alignment_heads' is"),
        ({"lang_ids": [1, "2"]}, "'lang_ids' is not a list of token ids"),
        ({"suppress_ids_begin": [[1]]}, "'suppress_ids_begin' is not a list of token ids"),
        ([1, 2], "damaged config.json (not a JSON object)"),
        ({"alignment_heads": []}, "(no alignment head)"),  # (no time for any word)
        ({"alignment_heads": [[-1, 0]]}, "alignment head [-1, 0] is no [layer, head] of"),
        ({"lang_ids": [2**31]}, "'lang_ids' holds a token id beyond 32 bits"),
    ],
)
def test_a_whisper_config_of_the_wrong_shape_is_damaged(
    tmp_path: Path, config: object, why: str
) -> None:
    """CTranslate2 loads such a folder and fails at its first recognition: found here."""
    import json

    files = fake_whisper_files()
    files["config.json"] = json.dumps(config).encode()
    d = write_dir(tmp_path / "w", files)
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e).startswith("w: damaged config.json (") and why in one_line(e)


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ([1, 2], "not a JSON object"),
        ({"hop_length": 0}, "hop_length is 0; a Whisper's is 160"),
        ({"n_fft": 10**12}, "n_fft is 1000000000000; a Whisper's is 400"),
        ({"sampling_rate": 16000.0}, "sampling_rate is 16000.0; a Whisper's is 16000"),
        ({"feature_size": 0}, "feature_size is 0; a Whisper's is 80 or 128"),
        (
            {"feature_size": "x" * 100},
            "feature_size is \"xxxxxxxxxxxxxxxxxx…; a Whisper's is 80 or 128",
        ),
    ],
)
def test_a_preprocessor_config_of_no_whisper_is_damaged(
    tmp_path: Path, config: object, why: str
) -> None:
    """faster-whisper's feature extractor takes what the file says: a list failed the load
    with "'list' object has no attribute 'items'", a hop of 0 with "integer division or
    modulo by zero", a huge n_fft with "Unable to allocate 3.64 TiB"."""
    import json

    files = fake_whisper_files()
    files["preprocessor_config.json"] = json.dumps(config).encode()
    d = write_dir(tmp_path / "w", files)
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e) == f"w: damaged preprocessor_config.json ({why})"
    # Whisper's own (openai/whisper-large-v3's keys; those faster-whisper does not take too).
    files["preprocessor_config.json"] = json.dumps(
        {"feature_size": 128, "sampling_rate": 16000, "hop_length": 160, "n_fft": 400,
         "chunk_length": 30, "padding_value": 0.0, "processor_class": "WhisperProcessor"}
    ).encode()  # fmt: skip
    assert check_whisper_dir(write_dir(tmp_path / "ok", files)) == tmp_path / "ok"


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("tokenizer.json", b'{"a": 1}', "damaged tokenizer.json (it holds no vocabulary)"),
        (
            "tokenizer.json",
            b'{"model": {"type": "BPE", "vocab": {"a": 0}}, "added_tokens": []}',
            "damaged tokenizer.json (it has no <|startoftranscript|> token: not a Whisper's)",
        ),
        ("vocabulary.json", b"{}", "damaged vocabulary.json (not a JSON list)"),
        ("vocabulary.json", b"[]", "damaged vocabulary.json (it has no <|startoftranscript|>"),
    ],
)
def test_a_tokenizer_or_vocabulary_of_no_whisper_is_damaged(
    tmp_path: Path, name: str, data: bytes, why: str
) -> None:
    """CTranslate2 and faster-whisper loaded such a folder and failed at the first
    recognition ("list index out of range", "<|startoftranscript|> token was not found")."""
    files = fake_whisper_files()
    files[name] = data
    d = write_dir(tmp_path / "w", files)
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e).startswith(f"w: {why}"), one_line(e)


def test_whisper_json_files_go_through_the_bounded_reader(tmp_path: Path) -> None:
    files = fake_whisper_files()
    del files["tokenizer.json"]
    d = write_dir(tmp_path / "w", files)
    (d / "tokenizer.json").symlink_to("/dev/zero")
    with pytest.raises(InvalidModelError) as e:
        run_bounded(lambda: check_whisper_dir(d))
    # Only regular files count, and what is there is said (it was "missing tokenizer.json").
    assert one_line(e) == "w: tokenizer.json is a pipe or a device, not a file"
    (d / "tokenizer.json").unlink()
    (d / "tokenizer.json").write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(d)
    assert one_line(e).startswith("w: damaged tokenizer.json (")


@pytest.mark.parametrize(
    ("name", "make", "kind"),
    [
        ("model.bin", Path.mkdir, "a folder"),
        ("model.bin", os.mkfifo, "a pipe or a device"),
        ("config.json", Path.mkdir, "a folder"),
        ("vocabulary.json", os.mkfifo, "a pipe or a device"),
    ],
)
def test_a_model_file_that_is_no_file_is_said_to_be_what_it_is(
    tmp_path: Path, name: str, make: Any, kind: str
) -> None:
    """A folder or a FIFO where model.bin should be was 'missing model.bin', the name there."""
    files = fake_whisper_files()
    del files[name]
    d = write_dir(tmp_path / "w", files)
    make(d / name)
    with pytest.raises(InvalidModelError) as e:
        run_bounded(lambda: check_whisper_dir(d))
    assert one_line(e) == f"w: {name} is {kind}, not a file"


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux's /proc")
def test_a_model_bin_that_cannot_be_read_fails_that_model_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model.bin whose read fails (a disk error; a file this user may not read): `models
    verify` ended at it with "error: Input/output error: None" (exit 2, the models after it
    not checked), the Settings' check with the OSError. /proc/self/mem reads as a disk error
    at its start, for any user (root reads a file of mode 000)."""
    from subtitler.models_cli import main

    bad = write_dir(tmp_path / "bad", fake_whisper_files())
    (bad / "model.bin").unlink()
    (bad / "model.bin").symlink_to("/proc/self/mem")
    with pytest.raises(InvalidModelError) as e:
        check_whisper_dir(bad)
    assert one_line(e) == "bad: model.bin cannot be read (Input/output error)"
    good = write_dir(tmp_path / "good", fake_whisper_files())
    assert main(["verify", "--no-load", str(bad), str(good)]) == 1
    out = capsys.readouterr()
    assert out.err == "" and out.out.splitlines() == [
        "FAIL bad: model.bin cannot be read (Input/output error)",
        f"ok   {good}: Whisper model folder (16.4 kB)",
    ]


def test_whisper_path_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "model.bin"
    f.write_bytes(b"x")
    with pytest.raises(InvalidModelError, match="is a folder"):
        check_whisper_dir(f)


def test_ct2_header_layout_matches_ctranslate2() -> None:
    """Our reader follows ctranslate2's writer: uint32 version, uint16 length, name + NUL."""
    import inspect

    from ctranslate2.specs import model_spec

    src = inspect.getsource(model_spec)
    assert 'struct.pack("I", CURRENT_BINARY_VERSION)' in src
    assert 'struct.pack("H", len(string) + 1)' in src


@pytest.mark.parametrize(("arch", "what"), [("bert", "text embeddings"), ("clip", "images")])
def test_a_gguf_of_a_model_that_writes_no_text_is_said_to_be_one(
    tmp_path: Path, arch: str, what: str
) -> None:
    """Chosen as the translator, it passed the header check and llama.cpp refused it in its
    own words ("key not found in model: bert.context_length")."""
    import gguf
    import numpy as np

    path = tmp_path / f"{arch}-small.gguf"
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(512)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    for check in (check_translator, check_model_path):
        with pytest.raises(InvalidModelError) as e:
            check(path)
        assert str(e.value) == (
            f"{arch}-small.gguf: a {arch} model ({what}), not a language model that writes text"
        )


def test_a_gguf_of_an_encoder_decoder_is_said_to_be_one(tmp_path: Path) -> None:
    """A T5 (MADLAD-400, a translation model published as GGUF) passed the header check and
    aborted llama.cpp at each translation ("llama_encode must be called first"), said as a
    crash of a damaged file (tests/integration/test_fuzz_models.py runs a real one)."""
    import gguf
    import numpy as np

    path = tmp_path / "madlad400-3b-mt.gguf"
    w = gguf.GGUFWriter(str(path), "t5")
    w.add_context_length(512)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    for check in (check_translator, check_model_path):
        with pytest.raises(InvalidModelError) as e:
            check(path)
        assert str(e.value) == (
            "madlad400-3b-mt.gguf: a t5 model (an encoder-decoder, as MADLAD-400 and Flan-T5 "
            "are); the app translates with a decoder-only language model (Gemma, Qwen, Llama, …)"
        )
