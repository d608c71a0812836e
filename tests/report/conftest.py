"""Hand-made company reads for the report's unit tests."""

from __future__ import annotations

import datetime

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Why
from reconciler.report.model import AccessReport, make_report

GENERATED = datetime.datetime(2027, 1, 15, 9, 30, tzinfo=datetime.UTC)
TODAY = GENERATED.date()
ENTRY = Why(source="entry", location="manifests/acme.yaml:12", address="group.customer-inc", role="owner")
UNMANAGED = Why(source="unmanaged")


def row(wid: str, kind: EntryKind, key: str, role: str, why: Why = UNMANAGED, **extra: object) -> AccessRow:
    fields: dict[str, object] = {"workspace_name": f"Name {wid}", **extra}
    return AccessRow(workspace_id=wid, kind=kind, key=key, role=role, why=why,
                     **fields)  # type: ignore[arg-type]  # the optional fields, by name


def company(*rows: AccessRow, workspaces: tuple[str, ...] = ()) -> CompanyAccess:
    names = {r.workspace_id: r.workspace_name for r in rows}
    ids = workspaces or tuple(names)
    # As the company read decides it: a workspace a manifest's line reaches is named by a manifest.
    named = {r.workspace_id for r in rows if r.why.source in ("entry", "team")}
    return CompanyAccess(workspaces=tuple(CompanyWorkspace(id=w, name=names.get(w, f"Name {w}"),
                                                           managed="manifest" if w in named else "none")
                                          for w in ids),
                         rows=rows, calls=1)


def report_of(*rows: AccessRow, workspaces: tuple[str, ...] = (),
              internal: tuple[str, ...] = ("acme.com",)) -> AccessReport:
    return make_report(company(*rows, workspaces=workspaces), generated_at=GENERATED, internal_domains=internal)
