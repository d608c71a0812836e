"""``reconciler audit``: the whole company against the manifests' policy and rules.

A pure view of the company read: every live entry of every workspace,
managed or not, judged by the policy's own judgement functions
(``reconciler.manifest.policy.grant_breach`` and ``owner_breach``, the same
that judge the manifests' entries), and every change the rules would make.
The findings are one value (``AuditReport``); the renderers are in
``reconciler.company.audit_render``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from reconciler.company.build import location_text
from reconciler.company.model import (
    COMPANY_FORMAT_VERSION,
    AccessRow,
    CompanyAccess,
    EntryKind,
    Frozen,
    RuleChange,
    Why,
)
from reconciler.manifest.desired import Desired, DesiredPolicy
from reconciler.manifest.policy import Breach, grant_breach, owner_breach

FindingKind = Literal["policy", "rule"]


class Finding(Frozen):
    """One thing the audit reports on one workspace, for one user or domain.

    ``kind`` policy: the entry breaks ``rule`` (allowedDomains,
    maxRoleOutside, protectedOwners) written at ``location``; ``role`` is
    its role now, ``wanted`` the most the policy allows (None: no access at
    all) and ``why`` why it is there.  ``kind`` rule: the manifest rule
    ``rule`` at ``location`` would change the entry from ``role`` (None: no
    access now) to ``wanted`` (None: revoked).  ``message`` says it in one
    line for people, ``problem`` the same without the entry (both unescaped:
    each renderer escapes them).
    """

    kind: FindingKind
    rule: str
    location: str
    workspace_id: str
    workspace_name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    address: str | None = None  # the manifest list that governs the workspace, if any
    entry_kind: EntryKind
    key: str
    role: str | None = None
    wanted: str | None = None
    why: Why | None = None
    problem: str  # what is wrong, without naming the workspace or the entry
    message: str  # the entry and the problem


class AuditReport(Frozen):
    """What ``reconciler audit`` found in one read of the company."""

    format_version: int = COMPANY_FORMAT_VERSION
    workspaces: int
    managed: int  # workspaces a manifest list governs
    calls: int
    findings: tuple[Finding, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.findings

    def of(self, kind: FindingKind) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]


def audit(desired: Desired, company: CompanyAccess) -> AuditReport:
    """Every policy violation of the live access, then every rule difference."""
    findings: list[Finding] = []
    if desired.policy is not None:
        findings += policy_findings(desired.policy, company)
    findings += [rule_finding(change) for change in company.rule_changes]
    return AuditReport(workspaces=company.total, managed=sum(1 for w in company.workspaces if w.address),
                       calls=company.calls, findings=tuple(findings))


def policy_findings(policy: DesiredPolicy, company: CompanyAccess) -> list[Finding]:
    """Every live entry of the company that breaks ``policy``, in the company's order."""
    addresses = {w.id: w.address for w in company.workspaces}
    return [_policy_finding(row, breach, addresses.get(row.workspace_id))
            for row in company.rows for breach in _breaches(policy, row)]


def _breaches(policy: DesiredPolicy, row: AccessRow) -> Iterator[Breach]:
    domain = row.key.rpartition("@")[2] if row.kind == "user" else row.key
    for breach in (grant_breach(policy, domain, row.role),
                   owner_breach(policy, row.key, row.role) if row.kind == "user" else None):
        if breach is not None:
            yield breach


def _policy_finding(row: AccessRow, breach: Breach, address: str | None) -> Finding:
    at = location_text(breach.at)
    if breach.rule == "allowedDomains":
        what = f"outside the allowed domains (policy allowedDomains at {at}): no access allowed"
    elif breach.rule == "maxRoleOutside":
        what = (f"outside the allowed domains: at most {breach.limit} (policy maxRoleOutside at {at}), "
                f"not {row.role}")
    else:
        what = f"a protected owner (policy protectedOwners at {at}) holds {row.role}, not owner"
    return Finding(kind="policy", rule=breach.rule, location=at, workspace_id=row.workspace_id,
                   workspace_name=row.workspace_name, account_id=row.account_id, account_name=row.account_name,
                   address=address, entry_kind=row.kind, key=row.key, role=row.role,
                   wanted=breach.limit, why=row.why, problem=what,
                   message=f"{row.kind} {row.key} {row.role}: {what}")


def rule_finding(change: RuleChange) -> Finding:
    """A change the rules would make, as a finding."""
    rule = change.why.rule or ""
    if change.before is None:
        what = f"rule {rule} would grant {change.after}"
    elif change.after is None:
        what = f"rule {rule} would revoke it"
    else:
        what = f"rule {rule} would make it {change.after}"
    now = change.before or "no access"
    return Finding(kind="rule", rule=rule, location=change.why.location or "", workspace_id=change.workspace_id,
                   workspace_name=change.workspace_name, account_id=change.account_id,
                   account_name=change.account_name, address=change.address, entry_kind=change.kind,
                   key=change.key, role=change.before, wanted=change.after, why=change.why,
                   problem=f"{what} (at {change.why.location})",
                   message=f"{change.kind} {change.key} {now}: {what} (at {change.why.location})")
