"""The saved plan's file: ``plan --out FILE`` writes it, ``apply --plan FILE`` reads it.

The file's format is ``reconciler.plan.saved``'s (pure); here are the file
and the paths: written owned and atomically, read with a size cap, the
manifest path stored relative to the plan file's directory.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from reconciler.errors import ConfigError

if TYPE_CHECKING:
    from reconciler.plan import Plan


def save_plan(result: Plan, out: Path, *, manifest_path: Path) -> None:
    """Write the plan to ``out`` atomically (temp file beside it, fsync,
    ``os.replace``), readable by this user only; a link at ``out`` is refused,
    so a link planted in the checkout cannot redirect the write."""
    from reconciler.owned_files import write_owned
    from reconciler.plan.saved import format_saved_plan

    # Relative to the plan file's own directory, so `apply --plan DIR/plan.json`
    # finds the manifests from wherever it is run (an absolute path stays absolute).
    stored = manifest_path if manifest_path.is_absolute() else Path(
        os.path.relpath(manifest_path.resolve(), out.resolve().parent))
    write_owned(out, format_saved_plan(result, PurePosixPath(stored.as_posix())), what="plan file",
                error=ConfigError)


def load_plan_file(plan_file: Path) -> tuple[Plan, Path]:
    """A saved plan and the manifest path it was made from."""
    from reconciler.owned_files import MAX_PLAN_BYTES, read_owned
    from reconciler.plan.saved import not_a_saved_plan, parse_saved_plan

    data = read_owned(plan_file, what="saved plan", limit=MAX_PLAN_BYTES, error=ConfigError)
    if data is None:
        raise not_a_saved_plan(str(plan_file), "no such file")
    saved = parse_saved_plan(data, str(plan_file))
    stored = Path(saved.manifest_path)
    # Read relative to the plan file's directory.
    return saved.plan, stored if stored.is_absolute() else Path(os.path.normpath(plan_file.parent / stored))
