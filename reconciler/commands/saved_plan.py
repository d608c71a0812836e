"""The saved plan's file: ``plan --out FILE`` writes it, ``apply --plan FILE`` reads it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from reconciler.errors import ConfigError

if TYPE_CHECKING:
    from reconciler.plan import Plan

SAVED_PLAN_KIND = "reconciler-plan"


def save_plan(result: Plan, out: Path, *, manifest_path: Path) -> None:
    """Write the plan to ``out`` atomically (temp file beside it, fsync,
    ``os.replace``), readable by this user only; a link at ``out`` is refused,
    so a link planted in the checkout cannot redirect the write."""
    import json  # here, not at the top: validate and --help never need it

    from reconciler.owned_files import write_owned

    # Relative to the plan file's own directory, so `apply --plan DIR/plan.json`
    # finds the manifests from wherever it is run (an absolute path stays absolute).
    import os

    stored = manifest_path if manifest_path.is_absolute() else Path(
        os.path.relpath(manifest_path.resolve(), out.resolve().parent))
    doc = {"kind": SAVED_PLAN_KIND, "manifest_path": stored.as_posix(), "plan": result.model_dump(mode="json")}
    write_owned(out, (json.dumps(doc, indent=2) + "\n").encode("utf-8"), what="plan file", error=ConfigError)


def saved_manifest_path(plan_file: Path) -> Path:
    """The manifests a saved plan was made from (for the commands messages suggest)."""
    return load_plan_file(plan_file)[1]


def load_plan(plan_file: Path) -> Plan:
    return load_plan_file(plan_file)[0]


def load_plan_file(plan_file: Path) -> tuple[Plan, Path]:
    """A saved plan and the manifest path it was made from."""
    import json

    from reconciler.plan import Plan

    from reconciler.owned_files import MAX_PLAN_BYTES, read_owned

    data = read_owned(plan_file, what="saved plan", limit=MAX_PLAN_BYTES, error=ConfigError)
    try:
        if data is None:
            raise FileNotFoundError("no such file")
        doc = json.loads(data.decode("utf-8"))
        if doc.get("kind") != SAVED_PLAN_KIND:
            raise ValueError("not a saved reconciler plan")
        return Plan.model_validate(doc["plan"]), _beside(plan_file, Path(doc["manifest_path"]))
    except (OSError, ValueError, KeyError, AttributeError, TypeError, ValidationError) as exc:
        raise ConfigError(f"{plan_file} is not a plan saved by reconciler plan --out: {exc}.") from exc


def _beside(plan_file: Path, stored: Path) -> Path:
    """The saved manifest path, read relative to the plan file's directory."""
    import os

    return stored if stored.is_absolute() else Path(os.path.normpath(plan_file.parent / stored))
