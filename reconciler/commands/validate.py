"""``reconciler validate``: check the manifests, no token, no network."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from reconciler.manifest import load_desired
from reconciler.manifest.rules import DEFAULT_MAX_FILE_BYTES
from reconciler.text import plural


def validate(path: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, strict: bool = False,
             today: date | None = None) -> str:
    """Check the manifests; warnings (lint, grants already expired) are listed
    after the summary, and with ``strict`` they are errors."""
    from reconciler.errors import ManifestError

    desired = load_desired(path, max_file_bytes=max_file_bytes, today=today)
    if strict and desired.notes:
        raise ManifestError([f"{note} (an error with --strict)" for note in desired.notes])
    n = len(desired.access_lists())
    members = sum(len(g.members) for g in desired.groups)
    summary = (
        f"The manifests in {path} are valid: {plural(len(desired.groups), 'group')} with "
        f"{plural(members, 'member')}, {plural(len(desired.workspaces), 'standalone workspace')}, "
        f"{plural(n, 'access list')}, {plural(len(desired.assets), 'asset')}, {plural(len(desired.files), 'file')}"
        f"{', and a policy' if desired.policy is not None else ''}.\n"
    )
    return summary + "".join(f"Warning: {note}\n" for note in desired.notes)
