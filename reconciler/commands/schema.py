"""``reconciler schema``: the JSON Schema of a manifest or of a JSON plan."""

from __future__ import annotations

from typing import Literal


def schema(*, kind: Literal["manifest", "plan"]) -> str:
    """The JSON Schema text, generated from the models this version checks against."""
    if kind == "plan":
        from reconciler.plan.schema import plan_json_schema_text

        return plan_json_schema_text()
    from reconciler.manifest.schema import manifest_json_schema_text

    return manifest_json_schema_text()
