"""``reconciler audit``: explicit arguments in, the report out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.company.audit import AuditReport
    from reconciler.target import Target


def audit(path: Path, *, target: Target, state_path: Path | None = None) -> AuditReport:
    """Read the company once and judge it against the manifests' policy and
    rules.  Nothing is written: no state, no lock."""
    from reconciler.company.audit import audit as judge
    from reconciler.company.read import load_and_read

    read = load_and_read(path, target=target, state_path=state_path)
    return judge(read.desired, read.company)
