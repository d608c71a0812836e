"""``access.csv`` and ``changes.csv``: the report as a spreadsheet opens it.

RFC 4180 (comma separated, CRLF line ends, a field quoted when it holds a
comma, a quote or a line break, quotes doubled), UTF-8 with a byte-order
mark (for Excel), a header row.
Values come from the service and from manifests, and a spreadsheet runs a
cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (a workspace
named ``=HYPERLINK(...)`` would become a link on the reviewer's screen), so
such a value, and one starting with a tab or a carriage return, is written
with a leading ``'``: shown as text, never run (OWASP "CSV injection").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from reconciler.report.diff import AccessChange
from reconciler.report.model import AccessReport

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

ACCESS_HEADER = ("workspace_id", "workspace_name", "account", "group_homepage", "kind", "email_or_domain", "role",
                 "internal_or_external", "managed_by", "expires")
CHANGES_HEADER = ("change", "workspace_id", "workspace_name", "kind", "email_or_domain", "role_before", "role_after",
                  "internal_or_external", "managed_by")


def cell(value: str | None) -> str:
    """One value as a cell: empty for None, a formula start neutralised."""
    if value is None:
        return ""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


# A UTF-8 byte-order mark first: without it Excel reads the file as the
# system's code page and shows "–" as "â€“"; every other reader skips it.
BOM = "\ufeff"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[str | None]]) -> str:
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out, dialect="excel", lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue()


def _reach(external: bool) -> str:
    return "external" if external else "internal"


def access_csv(report: AccessReport) -> str:
    """One line per (workspace, person or domain), in the report's order."""
    return csv_text(ACCESS_HEADER, (
        (r.workspace_id, r.workspace_name, r.account_name or r.account_id, r.group_homepage, r.kind, r.key, r.role,
         _reach(r.external), r.managed_by, r.expires.isoformat() if r.expires else None)
        for r in report.rows))


def changes_csv(changes: Iterable[AccessChange]) -> str:
    """One line per grant, revocation, escalation or downgrade, in the change list's order."""
    return csv_text(CHANGES_HEADER, (
        (c.change, c.workspace_id, c.workspace_name, c.kind, c.key, c.before, c.after, _reach(c.external),
         c.managed_by)
        for c in changes))
