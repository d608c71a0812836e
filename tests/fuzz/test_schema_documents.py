"""Fuzz: every document the manifest JSON Schema allows validates cleanly.

Documents come from ``schemas/manifest.schema.json`` (hypothesis-jsonschema),
are written as YAML in several styles, and are checked with ``reconciler
validate`` in-process: exit 0, or exit 1 with every problem at file:line.
(A schema-valid document may still break a rule the schema cannot state: an
authoritative list without an owner, an asset file that does not exist.)

Objects and arrays are capped at a few entries in the copy of the schema used
here, which keeps each document small enough for hundreds of examples in
seconds; every document is still one the real schema allows.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from tests.fuzz import jsonschema_compat  # noqa: F401  (patches hypothesis-jsonschema; import first)
from tests.fuzz.outcome import assert_clean, validate
from tests.fuzz.settings import FUZZ

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "manifest.schema.json"
MAX_ENTRIES = 3



def _capped(node: Any) -> Any:
    if isinstance(node, dict):
        node = {key: _capped(value) for key, value in node.items()}
        if node.get("type") == "object":
            node.setdefault("maxProperties", MAX_ENTRIES)
        if node.get("type") == "array":
            node.setdefault("maxItems", MAX_ENTRIES)
    elif isinstance(node, list):
        node = [_capped(value) for value in node]
    return node


SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
DOCUMENTS = from_schema(_capped(SCHEMA))
DUMP_STYLES = st.fixed_dictionaries({
    "default_flow_style": st.sampled_from([False, True, None]),
    "allow_unicode": st.booleans(),
    "sort_keys": st.booleans(),
})


def _write(directory: Path, name: str, document: Any, style: dict[str, Any]) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(document, **style), encoding="utf-8")
    return path


@settings(FUZZ, max_examples=250)
@given(document=DOCUMENTS, style=DUMP_STYLES)
def test_documents_the_schema_allows_validate_cleanly(document: dict[str, Any], style: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), "manifest.yaml", document, style)
        outcome = validate(path)
        event(f"exit {outcome.code}")
        assert_clean(outcome, [path])


@settings(FUZZ, max_examples=80)
@given(documents=st.lists(DOCUMENTS, min_size=2, max_size=3), style=DUMP_STYLES)
def test_directories_of_schema_documents_validate_cleanly(documents: list[dict[str, Any]], style: dict[str, Any]) -> None:
    # Merging: keys and workspace ids defined in two files are problems naming both.
    with tempfile.TemporaryDirectory() as folder:
        paths = [_write(Path(folder), f"part-{i}.yaml", d, style) for i, d in enumerate(documents)]
        outcome = validate(Path(folder))
        event(f"exit {outcome.code}")
        assert_clean(outcome, paths)
