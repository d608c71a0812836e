"""``reconciler schema``: the JSON Schema of each file reconciler reads or writes.

Every schema the README and docs/ cite is one kind here (``SCHEMAS``), generated from its model, and
the repository's ``schemas/<file>`` is the same text (tests/test_bundled_files.py).
"""

from __future__ import annotations

from typing import NamedTuple


class SchemaKind(NamedTuple):
    file: str  # its name in schemas/
    describes: str


SCHEMAS: dict[str, SchemaKind] = {
    "manifest": SchemaKind("manifest.schema.json", "a manifest file (the default; for editors)"),
    "plan": SchemaKind("plan.schema.json", "the plan 'plan --format json' writes"),
    "report": SchemaKind("access-report.schema.json", "the access.json 'report' writes"),
    "review-campaign": SchemaKind("review-campaign.schema.json", "a review's reviews/NAME/campaign.yaml"),
    "review-decisions": SchemaKind("review-decisions.schema.json",
                                   "a reviewer's file, reviews/NAME/EMAIL.yaml"),
}


def schema_list() -> str:
    """One line per kind: its name, the file schemas/ keeps it in, what it describes."""
    width = max(map(len, SCHEMAS))
    return "".join(f"{kind:<{width}}  schemas/{spec.file:<30}  {spec.describes}\n" for kind, spec in SCHEMAS.items())


def schema(*, kind: str) -> str:
    """The JSON Schema text of ``kind`` (a key of ``SCHEMAS``), generated from the models this version checks
    against."""
    if kind == "report":
        from reconciler.report.schema import report_json_schema_text

        return report_json_schema_text()
    if kind == "plan":
        from reconciler.plan.schema import plan_json_schema_text

        return plan_json_schema_text()
    if kind in ("review-campaign", "review-decisions"):
        from reconciler.manifest.reviews import review_json_schema_text

        return review_json_schema_text("campaign" if kind == "review-campaign" else "decisions")
    if kind != "manifest":
        raise ValueError(f"no schema {kind!r}")
    from reconciler.manifest.schema import manifest_json_schema_text

    return manifest_json_schema_text()
