"""``reconciler audit``: the command and its renderer live with the company read
(``reconciler.company.cmd_audit``, ``reconciler.company.audit_render``)."""

from reconciler.company.audit_render import render_audit
from reconciler.company.cmd_audit import audit

__all__ = ["audit", "render_audit"]
