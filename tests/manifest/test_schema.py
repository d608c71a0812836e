"""The committed JSON Schema is exactly what the models generate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from reconciler.manifest.schema import manifest_json_schema, manifest_json_schema_text

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "schemas" / "manifest.schema.json"
REGENERATE = "python -m reconciler.manifest.schema > schemas/manifest.schema.json"


def test_committed_schema_matches_the_models() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == manifest_json_schema_text(), (
        f"{COMMITTED.relative_to(REPO)} is out of date with reconciler/manifest/models.py; "
        f"regenerate it with: {REGENERATE}"
    )


def test_schema_names_its_dialect_and_title() -> None:
    schema = manifest_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "Workspace reconciler manifest"
    assert schema["required"] == ["version"]
    assert schema["additionalProperties"] is False


def test_schema_constrains_keys_and_roles() -> None:
    schema = manifest_json_schema()
    groups = schema["properties"]["groups"]
    assert list(groups["patternProperties"]) == ["^[a-z0-9][a-z0-9-]*$"]
    assert groups["additionalProperties"] is False
    role = schema["$defs"]["UserEntrySpec"]["properties"]["role"]
    assert role["enum"] == ["owner", "editor", "collaborator", "viewer", "commenter"]


def test_module_prints_the_schema() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "reconciler.manifest.schema"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert json.loads(result.stdout) == manifest_json_schema()
    assert result.stdout == manifest_json_schema_text()
