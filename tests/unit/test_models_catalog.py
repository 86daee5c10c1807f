"""The packaged catalog parses, covers what issue 6 asks for, and bad data fails in one line."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from subtitler.models.catalog import (
    CATALOG_FILE,
    LICENCES_FILE,
    CatalogError,
    load_catalog,
    parse_catalog,
)
from tests.helpers.bounded import run_bounded


def raw() -> dict[str, Any]:
    with CATALOG_FILE.open("rb") as f:
        return tomllib.load(f)


def test_packaged_catalog_loads_and_covers_the_issue() -> None:
    cat = load_catalog()
    asr = {e.size_name for e in cat.of_kind("asr")}
    assert {"tiny", "base", "small", "medium", "large-v3", "large-v3-turbo"} <= asr
    assert any(n and n.startswith("distil") for n in asr)
    mt = {e.id: e for e in cat.of_kind("mt")}
    assert mt["tower-plus-2b-q4_k_m"].template == "tower"
    assert mt["qwen3-4b-q4_k_m"].template == "qwen3"
    sizes = sorted(e.size_mb for e in mt.values() if e.repo)
    assert sizes[0] < mt["tower-plus-2b-q4_k_m"].size_mb < mt["qwen3-4b-q4_k_m"].size_mb
    assert sizes[-1] > mt["qwen3-4b-q4_k_m"].size_mb  # a smaller and a larger choice exist
    for e in cat:
        assert e.size_mb > 0 and e.memory_mb > 0 and e.licence and e.languages and e.speed
    assert set(cat.defaults) >= {"cpu", "cpu-small", "apple", "cuda"}


def test_whisper_repos_match_faster_whisper() -> None:
    from faster_whisper.utils import _MODELS

    for e in load_catalog().of_kind("asr"):
        assert e.size_name is not None
        assert _MODELS[e.size_name] == e.repo


def test_local_fixture_entry_only_when_the_file_exists() -> None:
    from tests.helpers.catalogs import FIXTURE_ENTRY, FIXTURE_ID, packaged_data, with_fixture

    full = with_fixture(include_missing_local=True)
    fixture = full.get(FIXTURE_ID)
    present = fixture.local_path is not None and fixture.local_path.is_file()
    assert present  # (a source checkout)
    assert FIXTURE_ID in {e.id for e in with_fixture()}
    data = packaged_data()
    data["model"] = [*data["model"], {**FIXTURE_ENTRY, "local": "fixtures/nothing-here.gguf"}]
    assert FIXTURE_ID not in {e.id for e in parse_catalog(data)}
    assert FIXTURE_ID in {e.id for e in parse_catalog(data, include_missing_local=True)}


def test_the_packaged_catalog_offers_users_no_test_model() -> None:
    """Issue 27: the project's 6M test translator was offered as "Project test translator
    — Included" in the Models window and translated into nonsense; it is a test asset."""
    cat = load_catalog(include_missing_local=True)
    assert all(e.downloadable and e.local is None for e in cat), [e.id for e in cat]
    assert not any("test" in e.name.lower() for e in cat)


def test_lookup_by_size_name_and_unknown_id() -> None:
    cat = load_catalog()
    small = cat.by_size_name("small")
    assert small is not None and small.id == "whisper-small"
    assert cat.by_size_name("whisper-small") is small
    with pytest.raises(KeyError) as e:
        cat.get("nope")
    assert str(e.value) == "unknown model 'nope' (see `subtitler models list` for the catalog)"


def test_supports_languages() -> None:
    cat = load_catalog()
    tower = cat.get("tower-plus-2b-q4_k_m")
    assert tower.supports("de") and tower.supports("pt-BR") and not tower.supports("th")
    assert cat.get("qwen3-4b-q4_k_m").supports("th")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["model"][0].pop("licence"), "model 'whisper-tiny': missing field 'licence'"),
        (lambda d: d["model"][0].update(speed="warp"), "speed must be one of"),
        (lambda d: d["model"][0].update(kind="tts"), "kind must be one of"),
        (lambda d: d["model"][0].update(local="x"), "exactly one of 'repo' or 'local'"),
        (lambda d: d["model"][0].update(size_mb="big"), "field 'size_mb' must be int"),
        (lambda d: d["model"][0].update(colour="red"), "unknown field(s) colour"),
        (lambda d: d["model"][1].update(id="whisper-tiny"), "duplicate model id(s): whisper-tiny"),
        (lambda d: d["model"][0]["files"][0].update(sha256="xyz"), "not 64 hex digits"),
        (lambda d: d["model"][0]["files"][0].update(path="../x"), "bad file path"),
        (lambda d: d["defaults"]["cpu"].update(asr="qwen3-4b-q4_k_m"), "is not an asr model"),
        (lambda d: d.update(schema=9), "unsupported catalog schema 9"),
        (
            lambda d: d["model"][0].update(licence="Made-Up-1.0"),
            "model 'whisper-tiny': licence 'Made-Up-1.0' is not described",
        ),
        (
            lambda d: d["defaults"]["cpu"].update(mt=["tower-plus-2b-q4_k_m"]),
            "defaults.cpu: 'tower-plus-2b-q4_k_m' cannot be a default: its licence "
            "(CC-BY-NC-SA-4.0) does not allow use at work",
        ),
        (
            lambda d: d.update(licence={"X": {"name": "X", "commercial": "yes", "words": "w"}}),
            "licence.\"X\": field 'commercial' must be bool",
        ),
        (
            lambda d: d.update(licence={"X": {"name": "X", "words": "w"}}),
            "licence.\"X\": missing field 'commercial'",
        ),
        (
            lambda d: d.update(
                licence={"X": {"name": "X", "commercial": True, "words": "w", "nc": 1}}
            ),
            'licence."X": unknown field(s) nc',
        ),
        (lambda d: d["model"][0].update(revision="../x"), "revision must be a commit"),
        (lambda d: d["model"][0].update(revision=""), "revision must be a commit"),
    ],
)
def test_bad_catalog_data_is_one_line(mutate: Any, message: str) -> None:
    d = raw()
    mutate(d)
    with pytest.raises(CatalogError) as e:
        parse_catalog(d)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_mt_entry_needs_a_template() -> None:
    d = raw()
    mt = next(m for m in d["model"] if m["kind"] == "mt")
    mt.pop("template")
    with pytest.raises(CatalogError, match="template must be one of"):
        parse_catalog(d)


def test_unreadable_catalog_file(tmp_path: Path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text("schema = [", encoding="utf-8")
    with pytest.raises(CatalogError, match="not valid TOML"):
        load_catalog(bad)
    with pytest.raises(CatalogError, match="not found"):
        load_catalog(tmp_path / "missing.toml")


def test_a_catalog_file_of_any_shape_is_one_line(tmp_path: Path) -> None:
    """`models --catalog FILE` with a FIFO (would block), a link to an endless device (would
    fill the memory) or nesting deep enough to exhaust the parser's recursion."""
    fifo, zero, deep = tmp_path / "fifo.toml", tmp_path / "zero.toml", tmp_path / "deep.toml"
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    deep.write_text("x = " + "[" * 100_000, encoding="utf-8")
    for path, why in ((fifo, "not a regular file"), (zero, "not a regular file"), (deep, "TOML")):
        with pytest.raises(CatalogError, match=why) as e:
            run_bounded(lambda path=path: load_catalog(path))  # type: ignore[misc]
        assert "\n" not in str(e.value)


def test_catalog_is_package_data() -> None:
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"models/*.toml"' in text


# -- licences (issue 30) -----------------------------------------------------------------------


def test_every_licence_of_the_catalog_is_described() -> None:
    with LICENCES_FILE.open("rb") as f:
        described = tomllib.load(f)["licence"]
    used = {m["licence"] for m in raw()["model"]}
    assert used <= set(described), used - set(described)
    for e in load_catalog(include_missing_local=True):
        assert e.terms is not None and e.terms.id == e.licence
        assert e.licence_text.startswith(e.terms.name + ": ") and "\n" not in e.licence_text


def test_the_defaults_allow_use_at_work() -> None:
    """What the first run offers must be usable in a company's meetings: every default model
    of every hardware tier is under a licence that allows commercial use."""
    cat = load_catalog()
    for tier, d in cat.defaults.items():
        for mid in (d.asr, *d.mt):
            e = cat.get(mid)
            assert e.commercial and e.terms is not None and e.terms.commercial, (tier, mid)
            assert e.at_work == "yes", (tier, mid)


def test_non_commercial_models_stay_in_the_catalog_and_say_so() -> None:
    tower = load_catalog().get("tower-plus-2b-q4_k_m")
    assert not tower.commercial and tower.at_work == "no"
    assert "not for commercial use" in tower.licence_text


def test_a_catalog_may_describe_its_own_licences_with_territory_limits() -> None:
    """A licence that does not apply in some places says where (a made-up licence here: none
    of the packaged catalog's has such limits)."""
    d = raw()
    d["licence"] = {
        "Regional-1.0": {
            "name": "Regional Model Licence 1.0",
            "commercial": True,
            "words": "free to use, also at work",
            "territory": "the European Union",
        }
    }
    d["model"][0]["licence"] = "Regional-1.0"
    e = parse_catalog(d).get("whisper-tiny")
    assert e.at_work == "yes, but not in the European Union"
    assert e.licence_text == (
        "Regional Model Licence 1.0: free to use, also at work; "
        "it does not apply in the European Union"
    )


def test_a_pinned_revision_and_checksum_are_read() -> None:
    d = raw()
    d["model"][0]["revision"] = "0123456789abcdef0123456789abcdef01234567"
    d["model"][0]["files"][0]["sha256"] = "AB" * 32
    e = parse_catalog(d).get("whisper-tiny")
    assert e.revision == "0123456789abcdef0123456789abcdef01234567"
    assert e.files[0].sha256 == "ab" * 32


def test_entries_are_pinned_where_a_listing_of_their_files_was_found() -> None:
    """Each entry is fetched at a commit and its weights checked against a sha256 and size
    (models/README.md says where each was read); the Tower+ exports had no listing anywhere,
    and Gemma 3 4B's repository was squashed after the commits others pinned, so it follows
    main with its weights still checked."""
    cat = load_catalog()
    weights = {e.id: [f for f in e.files if f.path.endswith((".bin", ".gguf"))] for e in cat}
    unchecked = {i for i, fs in weights.items() if not all(f.sha256 and f.size for f in fs)}
    assert unchecked == {"tower-plus-2b-q4_k_m", "tower-plus-9b-q4_k_m"}
    for fs in weights.values():
        assert all(re.fullmatch(r"[0-9a-f]{64}", f.sha256) for f in fs if f.sha256)
    on_main = {e.id for e in cat if e.revision == "main"}
    assert on_main == unchecked | {"gemma3-4b-it-q4_k_m"}
    assert all(re.fullmatch(r"[0-9a-f]{40}", e.revision) for e in cat if e.id not in on_main)


def test_the_catalog_offers_current_laptop_translators_usable_at_work() -> None:
    """Qwen3 1.7B and Gemma 3 4B (issue 30): usable at work, with their own chat templates,
    and planned from measured costs of their shapes."""
    from subtitler.models.hardware import TRANSLATOR_COST_MS

    cat = load_catalog()
    for model_id, template in (("qwen3-1.7b-q8_0", "qwen3"), ("gemma3-4b-it-q4_k_m", "gguf")):
        e = cat.get(model_id)
        assert e.commercial and e.at_work == "yes" and e.template == template
        assert e.shape in TRANSLATOR_COST_MS
    assert "prohibited use policy" in cat.get("gemma3-4b-it-q4_k_m").licence_text


def test_the_tiny_en_pin_is_the_file_the_speech_tests_hold(tiny_en: Path) -> None:
    """The one pin this machine can check byte for byte: the catalog's tiny.en weights are
    the real tiny.en of the speech tests (its own package, not downloaded from the hub)."""
    from tests.conftest import TINY_EN_SHA256

    entry = load_catalog().get("whisper-tiny-en")
    weights = next(f for f in entry.files if f.path == "model.bin")
    assert weights.sha256 == TINY_EN_SHA256  # the fixture checked the file against it
    assert weights.size == (tiny_en / "model.bin").stat().st_size
    required = {f.path for f in entry.files if not f.optional}
    assert required <= {p.name for p in tiny_en.iterdir()}
