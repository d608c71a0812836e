"""The JSON Schema of ``access.json``, generated from the report model.

``python -m reconciler.report.schema > schemas/access-report.schema.json``
regenerates the committed copy; a test fails when the two differ, so
whoever reads access.json (a GRC tool, an auditor's script) validates
against the document this code writes.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.report.model import REPORT_FORMAT_VERSION, AccessReport

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TITLE = f"reconciler access report (format_version {REPORT_FORMAT_VERSION})"


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of access.json as ``reconciler report`` writes it."""
    schema = AccessReport.model_json_schema(mode="serialization")
    schema["title"] = TITLE
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def report_json_schema_text() -> str:
    """The schema as committed: 2-space indent, trailing newline."""
    return json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(report_json_schema_text(), end="")
