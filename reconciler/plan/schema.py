"""The plan's JSON Schema, generated from the pydantic models.

``python -m reconciler.plan.schema > schemas/plan.schema.json`` regenerates
the committed copy; a test fails when the two differ, so whoever reads
``reconciler plan --format json`` (a CI bot, a policy check) validates
against the document this code writes.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.plan.model import PLAN_FORMAT_VERSION, Plan

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TITLE = f"reconciler plan (format_version {PLAN_FORMAT_VERSION})"


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a plan as ``--format json`` writes it (a file saved with ``--out`` holds
    the same document under its ``plan`` key)."""
    # Serialization mode: the schema of what is written, not of what is accepted.
    schema = Plan.model_json_schema(mode="serialization")
    schema["title"] = TITLE
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def plan_json_schema_text() -> str:
    """The schema as committed: 2-space indent, trailing newline."""
    return json.dumps(plan_json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(plan_json_schema_text(), end="")
