"""The policy rules that read the manifests alone: who may be granted what.

Checked when the manifests are read (validate, plan, apply), each broken
rule a problem at the entry's ``file:line``: a grant outside
``allowedDomains`` (above ``maxRoleOutside``, when given), a protected owner
listed with another role.  The rules about what a plan does (caps, taking
ownership) are in ``reconciler.plan.policy``.

The judgement itself (``grant_breach``, ``owner_breach``) takes one grant
(a domain, a role) and says which rule it breaks: the manifests' entries are
judged with it here, and ``reconciler audit`` judges every live entry of the
company with the same two functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, NamedTuple

from reconciler.domains import is_within
from reconciler.manifest.desired import AccessList, Desired, DesiredPolicy
from reconciler.manifest.governance import team_references
from reconciler.manifest.location import SourceLocation
from reconciler.vocabulary import rank

PolicyRule = Literal["allowedDomains", "maxRoleOutside", "protectedOwners"]


class Breach(NamedTuple):
    """A policy rule one grant breaks.

    ``at`` is where the rule is written (the first allowed domain, the cap,
    the protected owner's line); ``limit`` is the most the rule allows: the
    role of ``maxRoleOutside``, ``owner`` for a protected owner, None when
    the grant may not exist at all (outside ``allowedDomains``, no cap).
    """

    rule: PolicyRule
    at: SourceLocation
    limit: str | None = None


def grant_breach(policy: DesiredPolicy, domain: str, role: str) -> Breach | None:
    """The rule a grant of ``role`` to someone of ``domain`` (a user's email
    domain, or a domain entry) breaks, if any: outside ``allowedDomains``
    (a subdomain of an allowed domain is inside) with no ``maxRoleOutside``,
    or above that cap."""
    allowed = policy.allowed_domains
    if allowed is None or is_within(domain, (a.value for a in allowed)):
        return None
    cap = policy.max_role_outside
    if cap is None:
        return Breach("allowedDomains", allowed[0].location if allowed else policy.location)
    if rank(role) > rank(str(cap.value)):
        return Breach("maxRoleOutside", cap.location, str(cap.value))
    return None


def owner_breach(policy: DesiredPolicy, email: str, role: str) -> Breach | None:
    """``protectedOwners``: a protected owner holding any role but owner."""
    for owner in policy.protected_owners:
        if str(owner.value) == email and role != "owner":
            return Breach("protectedOwners", owner.location, "owner")
    return None


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
        # A successor is granted owner wherever a revoked owner was the last one: an owner grant like any.
        successor = rule.successor
        if successor is not None:
            yield from _outside(policy, f"{rule.address} (successor)", "user", successor.email,
                                successor.email.rpartition("@")[2], successor.role, str(successor.location))


def _lists(desired: Desired) -> Iterator[tuple[str, AccessList]]:
    for address, _, access in desired.access_lists():
        yield address, access


def _list_problems(policy: DesiredPolicy, address: str, access: AccessList) -> Iterator[str]:
    for user in access.users:
        yield from _outside(policy, address, "user", user.email, user.email.rpartition("@")[2], user.role,
                            str(user.location))
        owner = owner_breach(policy, user.email, user.role)
        if owner is not None:
            yield (f"{user.location}: {address}: user {user.email} is a protected owner (policy protectedOwners at "
                   f"{owner.at}) and must be listed as owner, not {user.role}")
    for entry in access.domains:
        yield from _outside(policy, address, "domain", entry.domain, entry.domain, entry.role, str(entry.location))


def _outside(policy: DesiredPolicy, address: str, kind: str, key: str, domain: str, role: str,
             location: str) -> Iterator[str]:
    breach = grant_breach(policy, domain, role)
    if breach is None:
        return
    if breach.limit is None:
        yield (f"{location}: {address}: {kind} {key} is outside the allowed domains (policy allowedDomains at "
               f"{breach.at}) and may not be granted access")
    else:
        yield (f"{location}: {address}: {kind} {key} is outside the allowed domains and may be given at most "
               f"{breach.limit} (policy maxRoleOutside at {breach.at}), not {role}")
