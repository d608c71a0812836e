"""The policy rules that read the manifests alone: who may be granted what.

Checked when the manifests are read (validate, plan, apply), each broken
rule a problem at the entry's ``file:line``: a grant outside
``allowedDomains`` (above ``maxRoleOutside``, when given), a protected owner
listed with another role.  The rules about what a plan does (caps, taking
ownership) are in ``reconciler.plan.policy``.
"""

from __future__ import annotations

from collections.abc import Iterator

from reconciler.manifest.desired import AccessList, Desired, DesiredPolicy
from reconciler.manifest.governance import team_references
from reconciler.vocabulary import rank


def policy_problems(desired: Desired) -> list[str]:
    policy = desired.policy
    if policy is None:
        return []
    found = [problem for address, access in _lists(desired) for problem in _list_problems(policy, address, access)]
    return found + list(_governance_problems(desired, policy))


def _governance_problems(desired: Desired, policy: DesiredPolicy) -> Iterator[str]:
    """The grants teams and rules make, held to the same domains: a team's
    member at the member's line, a rule's entry at its own."""
    teams = {t.key: t for t in desired.teams}
    for address, ref in team_references(desired):
        team = teams.get(ref.team)
        for member in team.members if team is not None else ():
            yield from _outside(policy, f"{address} (team {ref.team}, {ref.location})", "user", member.email,
                                member.email.rpartition("@")[2], ref.role, str(member.location))
    for rule in desired.rules:
        for user in rule.ensure_users:
            yield from _outside(policy, rule.address, "user", user.email, user.email.rpartition("@")[2], user.role,
                                str(user.location))
        for entry in rule.ensure_domains:
            yield from _outside(policy, rule.address, "domain", entry.domain, entry.domain, entry.role,
                                str(entry.location))


def _lists(desired: Desired) -> Iterator[tuple[str, AccessList]]:
    for address, _, access in desired.access_lists():
        yield address, access


def _list_problems(policy: DesiredPolicy, address: str, access: AccessList) -> Iterator[str]:
    protected = {str(p.value): p.location for p in policy.protected_owners}
    for user in access.users:
        yield from _outside(policy, address, "user", user.email, user.email.rpartition("@")[2], user.role,
                            str(user.location))
        if user.email in protected and user.role != "owner":
            yield (f"{user.location}: {address}: user {user.email} is a protected owner (policy protectedOwners at "
                   f"{protected[user.email]}) and must be listed as owner, not {user.role}")
    for entry in access.domains:
        yield from _outside(policy, address, "domain", entry.domain, entry.domain, entry.role, str(entry.location))


def _outside(policy: DesiredPolicy, address: str, kind: str, key: str, domain: str, role: str,
             location: str) -> Iterator[str]:
    allowed = policy.allowed_domains
    if allowed is None or any(domain == a.value or domain.endswith(f".{a.value}") for a in allowed):
        return
    where = allowed[0].location if allowed else policy.location
    cap = policy.max_role_outside
    if cap is None:
        yield (f"{location}: {address}: {kind} {key} is outside the allowed domains (policy allowedDomains at "
               f"{where}) and may not be granted access")
    elif rank(role) > rank(str(cap.value)):
        yield (f"{location}: {address}: {kind} {key} is outside the allowed domains and may be given at most "
               f"{cap.value} (policy maxRoleOutside at {cap.location}), not {role}")
