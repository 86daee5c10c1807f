"""The project's own test translator (fixtures/translator, a 6M model trained on Multi30k) as a
catalog entry: a test asset, not in the catalog users see (issue 27: it was offered as
"Project test translator — Included" and translates into nonsense)."""

from __future__ import annotations

import tomllib
from typing import Any

from subtitler.models.catalog import CATALOG_FILE, Catalog, parse_catalog

FIXTURE_ID = "fixture-translator"
FIXTURE_ENTRY: dict[str, Any] = {
    "id": FIXTURE_ID,
    "kind": "mt",
    "name": "Project test translator (tiny, en-de)",
    "local": "fixtures/translator/model.gguf",
    "template": "chatml",
    "size_mb": 30,
    "memory_mb": 100,
    "licence": "MIT",
    "languages": ["en", "de"],
    "speed": "fast",
    "files": [{"path": "model.gguf"}],
}


def packaged_data() -> dict[str, Any]:
    with CATALOG_FILE.open("rb") as f:
        return tomllib.load(f)


def with_fixture(*, include_missing_local: bool = False) -> Catalog:
    """The packaged catalog and the test translator (listed where its file exists, as any
    local entry)."""
    data = packaged_data()
    data["model"] = [*data["model"], dict(FIXTURE_ENTRY)]
    return parse_catalog(data, include_missing_local=include_missing_local)
