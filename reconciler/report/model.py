"""The access report: the company read, as the quarterly access review reads it.

An ``AccessReport`` is made from the one company read
(``reconciler.company.CompanyAccess``) by ``make_report``, a pure function
that adds only what a review needs on top: whether each person or domain is
internal or external, and the "how is it managed" line.  ``access.json`` is
this document; ``access.csv``, the page and the change list are drawn from
it and compute nothing it does not hold, so the views cannot disagree (as
the plan's renderers read one plan).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from reconciler.company.model import CompanyAccess, EntryKind, Leaver, Why

# 1: the first report document.
REPORT_FORMAT_VERSION = 1
REPORT_KIND = "reconciler-access-report"


class _Frozen(BaseModel):
    # Every field is always written, so the JSON Schema requires them all.
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)


class ReportRow(_Frozen):
    """One person (email) or domain with a role on one workspace, and why."""

    workspace_id: str
    workspace_name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    group_homepage: str | None = Field(default=None, description="The homepage of the workspace's group, when known.")
    kind: EntryKind
    key: str = Field(description="The email (kind user) or the domain (kind domain), lower-case.")
    role: str
    external: bool = Field(description="Outside the internal domains (policy allowedDomains or --internal-domain).")
    managed_by: str = Field(description="How the row is managed, for people: the manifest list and file:line, "
                                        "the team, the rule, or 'not managed'.")
    why: Why
    expires: datetime.date | None = None

    @property
    def managed(self) -> bool:
        return self.why.source != "unmanaged"

    def sort_key(self) -> tuple[str, int, str]:
        """Workspace id, then users before domains, then the email or domain."""
        return (self.workspace_id, 0 if self.kind == "user" else 1, self.key)


class ReportWorkspace(_Frozen):
    """One workspace of the company, whether or not anyone has access to it."""

    id: str
    name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    group_homepage: str | None = None
    address: str | None = Field(default=None, description="The manifest access list that governs it, if any.")
    managed: bool = Field(description="Whether a manifest names it: a group's homepage or member (found by its "
                                      "shared entries too), or a standalone workspace.")
    rules_only: bool = Field(default=False, description="In no manifest, but a rule matches it (reached only by rules).")
    rules: tuple[str, ...] = Field(default=(), description="The rules matching it, in manifest order.")


class AccessReport(_Frozen):
    """The company's access at ``generated_at``: every workspace and every row, in a stable order
    (workspaces by id; rows by workspace id, users before domains, then email or domain)."""

    kind: str = Field(default=REPORT_KIND, pattern=f"^{REPORT_KIND}$")
    format_version: int = Field(default=REPORT_FORMAT_VERSION, ge=1, le=REPORT_FORMAT_VERSION)
    generated_at: datetime.datetime
    internal_domains: tuple[str, ...] = ()
    workspaces: tuple[ReportWorkspace, ...] = ()
    rows: tuple[ReportRow, ...] = ()
    leavers: tuple[Leaver, ...] = Field(default=(), description="Every user and domain a rule revokes, at its line.")
    min_owners: int = Field(default=1, ge=1, description="policy.minOwners: fewer owners than this is flagged.")


def make_report(company: CompanyAccess, *, generated_at: datetime.datetime,
                internal_domains: Iterable[str], min_owners: int = 1) -> AccessReport:
    """The report of ``company``: each row judged internal or external by ``internal_domains``
    (an email's domain, or a domain entry, equal to one of them or below it)."""
    internal = tuple(sorted({normal_domain(d) for d in internal_domains}))
    workspaces = [
        ReportWorkspace(id=w.id, name=w.name, account_id=w.account_id, account_name=w.account_name,
                        group_homepage=w.group_homepage, address=w.address,
                        managed=w.managed == "manifest", rules_only=w.managed == "rules", rules=w.rules)
        for w in company.workspaces
    ]
    # Each domain judged once, each Why's line written once: both repeat on every workspace.
    external: dict[str, bool] = {}
    lines: dict[Why, str] = {}
    ordered = sorted(company.rows, key=lambda r: (r.workspace_id, r.kind != "user", r.key))
    rows = []
    for r in ordered:
        domain = subject_domain(r.kind, r.key)
        outside = external.get(domain)
        if outside is None:
            outside = external[domain] = not is_internal(domain, internal)
        line = lines.get(r.why)
        if line is None:
            line = lines[r.why] = managed_by(r.why)
        rows.append(ReportRow(
            workspace_id=r.workspace_id, workspace_name=r.workspace_name, account_id=r.account_id,
            account_name=r.account_name, group_homepage=r.group_homepage, kind=r.kind, key=r.key, role=r.role,
            external=outside, managed_by=line, why=r.why, expires=r.expires))
    return AccessReport(generated_at=generated_at, internal_domains=internal,
                        workspaces=tuple(sorted(workspaces, key=lambda w: w.id)), rows=tuple(rows),
                        leavers=company.leavers, min_owners=min_owners)


def managed_by(why: Why) -> str:
    """The "how is it managed" line: ``Why.text()``, with the unmanaged case in the review's words."""
    return "not managed" if why.source == "unmanaged" else why.text()


def normal_domain(domain: str) -> str:
    return domain.strip().lower().rstrip(".")


def is_internal(domain: str, internal_domains: Iterable[str]) -> bool:
    """Whether ``domain`` is one of ``internal_domains`` or below one (as policy allowedDomains reads)."""
    domain = normal_domain(domain)
    return any(domain == d or domain.endswith(f".{d}") for d in internal_domains)


def subject_domain(kind: EntryKind, key: str) -> str:
    """The domain a row's subject belongs to: an email's part after '@', or the domain itself."""
    return key.rpartition("@")[2] if kind == "user" else key
