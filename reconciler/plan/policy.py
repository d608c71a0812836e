"""A company's access policy, checked on every plan before any call.

The manifest's ``policy:`` block sets the rules; this module judges a plan
against them.  Rules about what the manifests list (domains allowed, roles
outside them, protected owners listed with another role) are checked when
the manifests are read (``reconciler.manifest.policy``); the rules here are
about what a plan does: how many entries it revokes or escalates, how many
people it emails, whether it takes ownership from a protected owner.

Caps can be raised for one run with ``--allow CLASS=N`` (classes
``revocations``, ``escalations``, ``notified``), so an intended large change
is a deliberate act on the command line, visible in the CI log.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.errors import PlanRefused
from reconciler.manifest.desired import DesiredPolicy
from reconciler.manifest.policy import grant_breach
from reconciler.plan.model import Plan

ALLOW_CLASSES: tuple[str, ...] = ("revocations", "escalations", "notified")


def policy_violations(plan: Plan, policy: DesiredPolicy | None, allow: Mapping[str, int]) -> list[str]:
    """Every rule the plan breaks, each naming the rule, the entries and their file:line."""
    if policy is None:
        return []
    found: list[str] = []
    entries = [(c, e) for c in plan.access_changes for e in c.entries]
    caps = (
        ("revocations", policy.max_revocations, [(c, e) for c, e in entries if e.privilege == "revocation"]),
        ("escalations", policy.max_escalations, [(c, e) for c, e in entries if e.privilege == "escalation"]),
    )
    for name, cap, hits in caps:
        limit = allow.get(name, cap.value if cap is not None else None)
        if cap is not None and limit is not None and len(hits) > limit:
            listed = "; ".join(f"{c.address}: {e.kind} {e.key}{_at(e.location)}" for c, e in hits[:10])
            more = f"; and {len(hits) - 10} more" if len(hits) > 10 else ""
            found.append(f"{cap.location}: policy max{name.capitalize()} ({limit}): the plan makes {len(hits)} "
                         f"{name[:-1]}s ({listed}{more}). Raise it for this run with --allow {name}={len(hits)} "
                         "if they are intended.")
    notified = [(c, email) for c in plan.access_changes for email in c.notified]
    cap = policy.max_notified
    limit = allow.get("notified", cap.value if cap is not None else None)
    if cap is not None and limit is not None and len(notified) > limit:
        listed = ", ".join(f"{email} ({c.address})" for c, email in notified[:10])
        found.append(f"{cap.location}: policy maxNotified ({limit}): the plan emails {len(notified)} people "
                     f"({listed}{'...' if len(notified) > 10 else ''}). Raise it for this run with "
                     f"--allow notified={len(notified)} if they are intended.")
    found += _join_grant_breaches(plan, policy)
    protected = {p.value: p.location for p in policy.protected_owners}
    for change, entry in entries:
        if entry.kind == "user" and entry.key in protected and entry.before == "owner" and entry.after != "owner":
            what = "revoke" if entry.after is None else f"make {entry.after}"
            found.append(f"{protected[entry.key]}: policy protectedOwners: {change.address} would {what} "
                         f"protected owner {entry.key}{_at(entry.location or change.location)}; this tool "
                         "never takes ownership from a protected owner (change it in the web app if you must).")
    return found


def _join_grant_breaches(plan: Plan, policy: DesiredPolicy) -> list[str]:
    """``allowedDomains`` and ``maxRoleOutside`` on what a workspace gains by
    joining a group or being created in one: no manifest line grants it (the
    lines are checked when the manifests are read), the connect or the
    creation does."""
    found = []
    for change in plan.access_changes:
        if change.governs not in ("join", "create"):
            continue
        for entry in change.entries:
            if entry.after is None:
                continue
            domain = entry.key.rpartition("@")[2] if entry.kind == "user" else entry.key
            breach = grant_breach(policy, domain, entry.after)
            if breach is not None:
                where = change.workspace_id or f'new "{change.workspace_name}"'
                found.append(f"{breach.at}: policy {breach.rule}: {change.address} would give {entry.kind} "
                             f"{entry.key} {entry.after} on workspace {where}{_at(change.location)}: "
                             f"{entry.reason}.")
    return found


def check_policy(plan: Plan, policy: DesiredPolicy | None, allow: Mapping[str, int]) -> None:
    """Refuse the plan (it is still shown) when it breaks the policy."""
    violations = policy_violations(plan, policy, allow)
    if violations:
        lines = "\n".join(f"  {v}" for v in violations)
        raise PlanRefused(f"The plan is refused by the manifests' policy; nothing was changed:\n{lines}", plan)


def _at(location: str | None) -> str:
    return f" ({location})" if location else ""
