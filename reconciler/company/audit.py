"""``reconciler audit``: the whole company against the manifests' policy and rules.

A pure view of the company read: every live entry of every workspace,
managed or not, judged by the policy's own judgement functions
(``reconciler.manifest.policy.grant_breach`` and ``owner_breach``, the same
that judge the manifests' entries); and every change the rules would make,
taken from the plan of the same read (``reconciler.plan.make_plan``: its
entry changes whose source is a rule, on each workspace they reach), so the
audit says exactly what the next apply would do for the rules, no more, no
less.  The findings are one value (``AuditReport``); the renderers are in
``reconciler.company.audit_render``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date
from typing import Literal

from reconciler.company.build import location_text
from reconciler.company.model import (
    CompanyWorkspace,
    COMPANY_FORMAT_VERSION,
    AccessRow,
    CompanyAccess,
    EntryKind,
    Why,
)
from reconciler.manifest.desired import Desired, DesiredCampaign, DesiredPolicy
from reconciler.manifest.policy import Breach, grant_breach, owner_breach
from reconciler.manifest.review_meaning import undecided_items
from reconciler.models import Frozen
from reconciler.plan.model import AccessChange, EntryChange, Plan

FindingKind = Literal["policy", "rule", "review"]


class Finding(Frozen):
    """One thing the audit reports on one workspace, for one user or domain.

    ``kind`` policy: the entry breaks ``rule`` (allowedDomains,
    maxRoleOutside, protectedOwners) written at ``location``; ``role`` is
    its role now, ``wanted`` the most the policy allows (None: no access at
    all) and ``why`` why it is there.  ``kind`` rule: the manifest rule
    ``rule`` at ``location`` would change the entry from ``role`` (None: no
    access now) to ``wanted`` (None: revoked).  ``kind`` review: an item of
    the access review ``rule`` (the campaign) nobody decided by its due date,
    with ``onDue: flag``; ``location`` is the item's decision line.  ``message`` says it in one
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
    managed: int  # workspaces a manifest names (company.model.ManagedBy "manifest")
    rules_only: int = 0  # workspaces in no manifest that a rule reaches
    calls: int
    findings: tuple[Finding, ...] = ()
    # Workspaces the rules skip because only a person can give them an owner
    # (the plan's needs_person): "address (file:line): reason. What to do."
    needs_person: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.findings and not self.needs_person

    def of(self, kind: FindingKind) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]


def audit(desired: Desired, company: CompanyAccess, plan: Plan, today: date | None = None) -> AuditReport:
    """Every policy violation of the live access, then every change the
    rules would make (``plan``: made from the same read), then every access
    review item flagged for not being decided by its due date (on ``today``)."""
    findings: list[Finding] = []
    if desired.policy is not None:
        findings += policy_findings(desired.policy, company)
    findings += rule_findings(plan, company)
    if today is not None:
        findings += review_findings(desired.reviews, company, today)
    return AuditReport(workspaces=company.total, managed=company.count("manifest"),
                       rules_only=company.count("rules"), calls=company.calls, findings=tuple(findings),
                       needs_person=tuple(f"{n.address} ({n.location}): {n.reason}. {n.check}"
                                          for n in plan.needs_person if n.kind == "access"))


def review_findings(campaigns: Sequence[DesiredCampaign], company: CompanyAccess, today: date) -> list[Finding]:
    """Every item of a campaign with ``onDue: flag`` that nobody decided by its due date (an entry two
    reviewers hold is decided when either decided it: ``reconciler.manifest.review_meaning``), in the
    campaign's order."""
    workspaces = {w.id: w for w in company.workspaces}
    found: list[Finding] = []
    for campaign in campaigns:
        if campaign.on_due != "flag" or not campaign.overdue(today):
            continue
        for item in undecided_items(campaign):
            ws = workspaces.get(item.workspace)
            what = f"not reviewed by {campaign.due.isoformat()} ({item.reviewer}, {location_text(item.location)})"
            found.append(Finding(
                kind="review", rule=campaign.name, location=location_text(item.location),
                workspace_id=item.workspace, workspace_name=ws.name if ws else item.name,
                account_id=ws.account_id if ws else None, account_name=ws.account_name if ws else None,
                address=ws.address if ws else None, entry_kind=item.kind, key=item.key, role=item.role,
                problem=what, message=f"review {campaign.name}: {item.kind} {item.key} {item.role} on "
                                      f"{item.workspace} was {what}"))
    return found


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


def rule_findings(plan: Plan, company: CompanyAccess) -> list[Finding]:
    """Every entry change of ``plan`` that a rule causes (its ensure, its
    revoke, or an entry it had put there and no longer ensures), on each
    workspace the list is on whose role differs, in the plan's order."""
    workspaces = {w.id: w for w in company.workspaces}
    found: list[Finding] = []
    for change in plan.access_changes:
        reach = [(r.workspace_id, r.before) for r in change.reach if r.workspace_id] or [
            (change.workspace_id, change.before)]
        for entry in change.entries:
            if entry.source is None or entry.source.kind != "rule":
                continue
            for workspace_id, before in reach:
                now = (before.users if entry.kind == "user" else before.domains).get(entry.key)
                if now != entry.after:
                    found.append(_rule_finding(change, entry, workspace_id, now, workspaces.get(workspace_id)))
    return found


def _rule_finding(change: AccessChange, entry: EntryChange, workspace_id: str, now: str | None,
                  workspace: CompanyWorkspace | None) -> Finding:
    source = entry.source
    assert source is not None  # rule_findings passes rule-sourced entries only
    rule, at = source.rule or "", source.location
    if entry.after is None:
        what = f"rule {rule} revokes it ({at})" if at else f"rule {rule} put it there and no longer ensures it here"
    else:
        what = f"rule {rule} ensures {entry.after} ({at})"
    return Finding(kind="rule", rule=rule, location=at or "", workspace_id=workspace_id,
                   workspace_name=workspace.name if workspace else None,
                   account_id=workspace.account_id if workspace else None,
                   account_name=workspace.account_name if workspace else None,
                   address=change.address if change.governs == "list" else None, entry_kind=entry.kind,
                   key=entry.key, role=now, wanted=entry.after,
                   why=Why(source="rule", location=at, team=source.team, rule=rule, role=entry.after),
                   problem=what, message=f"{entry.kind} {entry.key} {now or 'no access'}: {what}")
