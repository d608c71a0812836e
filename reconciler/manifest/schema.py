"""The manifest's JSON Schema, generated from the pydantic models.

``python -m reconciler.manifest.schema > schemas/manifest.schema.json``
regenerates the committed copy; a test fails when the two differ, so editors
always complete against the format this code accepts.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.manifest.models import ManifestSpec

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TITLE = "Workspace reconciler manifest"


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of one manifest file."""
    schema = ManifestSpec.model_json_schema()
    schema["title"] = TITLE
    _close_keyed_maps(schema)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def _close_keyed_maps(node: Any) -> None:
    """Pydantic renders ``dict[Key, X]`` as patternProperties only, which lets any
    other key through; editors should flag a badly spelled key as the loader does."""
    if isinstance(node, dict):
        if "patternProperties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _close_keyed_maps(value)
    elif isinstance(node, list):
        for value in node:
            _close_keyed_maps(value)


def manifest_json_schema_text() -> str:
    """The schema as committed: 2-space indent, trailing newline."""
    return json.dumps(manifest_json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(manifest_json_schema_text(), end="")
