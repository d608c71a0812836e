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
from reconciler.plan.differences import Difference, EntryIndex, differences, entry_index, entry_of
from reconciler.plan.model import AccessChange, EntryChange, Plan
from reconciler.gcpause import gc_paused

ALLOW_CLASSES: tuple[str, ...] = ("revocations", "escalations", "notified")


@gc_paused()
def policy_violations(plan: Plan, policy: DesiredPolicy | None, allow: Mapping[str, int]) -> list[str]:
    """Every rule the plan breaks, each naming the rule, the workspaces and entries, and their file:line.

    Judged on what every workspace gains and loses (``plan/differences.py``, from the effects): a
    revocation is a person or domain losing access to one workspace, so one entry of a list several
    workspaces hold counts once for each, and a workspace no manifest names cannot gain or lose unjudged."""
    if policy is None:
        return []
    found: list[str] = []
    each = differences(plan)
    index = entry_index(plan)
    caps = (
        ("revocations", policy.max_revocations, [d for d in each if d.privilege == "revocation"]),
        ("escalations", policy.max_escalations, [d for d in each if d.privilege == "escalation"]),
    )
    for name, cap, hits in caps:
        limit = allow.get(name, cap.value if cap is not None else None)
        if cap is not None and limit is not None and len(hits) > limit:
            listed = "; ".join(_described(index, d) for d in hits[:10])
            more = f"; and {len(hits) - 10} more" if len(hits) > 10 else ""
            found.append(f"{cap.location}: policy max{name.capitalize()} ({limit}): the plan makes {len(hits)} "
                         f"{name[:-1]}s, each on one workspace ({listed}{more}). Raise it for this run with "
                         f"--allow {name}={len(hits)} if they are intended.")
    notified = [(c, email) for c in plan.access_changes for email in c.notified]
    cap = policy.max_notified
    limit = allow.get("notified", cap.value if cap is not None else None)
    if cap is not None and limit is not None and len(notified) > limit:
        listed = ", ".join(f"{email} ({c.address})" for c, email in notified[:10])
        found.append(f"{cap.location}: policy maxNotified ({limit}): the plan emails {len(notified)} people "
                     f"({listed}{'...' if len(notified) > 10 else ''}). Raise it for this run with "
                     f"--allow notified={len(notified)} if they are intended.")
    found += _grant_breaches(index, policy, each)
    protected = {p.value: p.location for p in policy.protected_owners}
    for d in each:
        if d.kind == "user" and d.key in protected and d.before == "owner" and d.after != "owner":
            what = "revoke" if d.after is None else f"make {d.after}"
            found.append(f"{protected[d.key]}: policy protectedOwners: {d.cause} would {what} protected owner "
                         f"{d.key}{_at(_location(entry_of(index, d)))} on {d.workspace}; this tool never takes "
                         "ownership from a protected owner (change it in the web app if you must).")
    return found


def _grant_breaches(index: EntryIndex, policy: DesiredPolicy, each: list[Difference]) -> list[str]:
    """``allowedDomains`` and ``maxRoleOutside`` on what any workspace gains that no manifest line grants
    (the lines are checked when the manifests are read): a workspace joining a group or created in one gains
    the group's list, one connected by hand to a list gains what a write of it adds."""
    found = []
    for d in each:
        if d.after is None or d.privilege not in ("grant", "escalation"):
            continue
        domain = d.key.rpartition("@")[2] if d.kind == "user" else d.key
        breach = grant_breach(policy, domain, d.after)
        if breach is None:
            continue
        behind = entry_of(index, d)
        why = f": {behind[1].reason}" if behind is not None and behind[1].reason else ""
        found.append(f"{breach.at}: policy {breach.rule}: {d.cause} would give {d.kind} {d.key} {d.after} on "
                     f"workspace {d.workspace}{_at(_location(behind))}{why}.")
    return found


def _described(index: EntryIndex, d: Difference) -> str:
    """``ws_1 "Name": user bob@x.com (group.a, m.yaml:7)``."""
    where = _location(entry_of(index, d))
    return f"{d.workspace}: {d.kind} {d.key} ({d.cause}{', ' + where if where else ''})"


def _location(behind: tuple[AccessChange, EntryChange] | None) -> str | None:
    """The manifest line behind a difference: its entry's, else its change's."""
    if behind is None:
        return None
    change, entry = behind
    return entry.location or (entry.source.location if entry.source is not None else None) or change.location


def check_policy(plan: Plan, policy: DesiredPolicy | None, allow: Mapping[str, int]) -> None:
    """Refuse the plan (it is still shown) when it breaks the policy."""
    violations = policy_violations(plan, policy, allow)
    if violations:
        lines = "\n".join(f"  {v}" for v in violations)
        raise PlanRefused(f"The plan is refused by the manifests' policy; nothing was changed:\n{lines}", plan)


def _at(location: str | None) -> str:
    return f" ({location})" if location else ""
