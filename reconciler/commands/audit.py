"""``reconciler audit``: the whole company against the manifests' policy and rules."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.company.audit import AuditReport
    from reconciler.service import Service


def audit(path: Path, *, service: Service, state_path: Path | str | None = None, today: date | None = None,
          directory: str = "committed") -> AuditReport:
    """Read the company once and judge it against the manifests' policy and
    rules (what the plan of that read would change for them).  Nothing is
    written: no state, no lock.  ``today`` (UTC; default: now) decides
    which grants have expired, as for ``plan``; ``directory`` as ``plan --directory`` reads it."""
    from reconciler.commands.plan import chosen_directory, utc_today
    from reconciler.company.audit import audit as judge
    from reconciler.company.read import load_and_read
    from reconciler.plan import make_plan

    day = today or utc_today()
    read = load_and_read(path, service=service, today=day, state_path=state_path,
                         people=chosen_directory(directory, state_path, path))
    plan = make_plan(read.desired, read.live, read.state, today=day)
    return judge(read.desired, read.company, plan, today=day)


def render(report: AuditReport, fmt: str) -> str:
    """The report as ``text``, ``markdown``, ``json`` or ``csv``."""
    from reconciler.company.audit_render import render_audit

    return render_audit(report, fmt)
