"""Checks of teams and rules that read all the manifests at once.

Run on the merged Desired (a team is defined in one file and named in
another), each problem ``file:line: message`` at the place to edit:

- a team named by an access list or a rule that no manifest defines;
- a rule whose ``match`` has no criterion (``all: true`` is how a rule says
  "every workspace": an empty match is a slip, not a wish);
- a rule with nothing to ensure and nothing to revoke;
- a person or domain that a rule revokes while another place grants it (an
  explicit entry, a member of a team that a list or rule names, another
  rule's ``ensure``): the two would undo each other on every plan, so the
  manifests must say which one they mean.  Both places are named;
- a rule's ``revoke.successor`` that has no revoked user to take over from,
  or that a rule revokes (the handover would hand to a leaver).

Shapes and single values (roles, emails, patterns) are the models' checks.
"""

from __future__ import annotations

from collections.abc import Iterator

from reconciler.manifest.desired import Desired, DesiredRule, TeamAccess
from reconciler.manifest.location import SourceLocation
from reconciler.text import quoted


def governance_problems(desired: Desired) -> list[str]:
    """Every problem of the manifests' teams and rules, sorted by place."""
    if not desired.teams and not desired.rules and not _any_team_reference(desired):
        return []
    problems: list[tuple[SourceLocation, str]] = []
    problems += _unknown_teams(desired)
    for rule in desired.rules:
        problems += _rule_shape(rule)
    problems += _granted_and_revoked(desired)
    problems += _successor_problems(desired)
    return [f"{where}: {text}" for where, text in sorted(problems)]


def _any_team_reference(desired: Desired) -> bool:
    return any(access.teams for _, _, access in desired.access_lists())


def team_references(desired: Desired) -> Iterator[tuple[str, TeamAccess]]:
    """(address of the list or rule, reference) for every team an access list or a rule's ``ensure`` names."""
    for address, _, access in desired.access_lists():
        for ref in access.teams:
            yield address, ref
    for rule in desired.rules:
        for ref in rule.ensure_teams:
            yield rule.address, ref


def _unknown_teams(desired: Desired) -> list[tuple[SourceLocation, str]]:
    defined = {t.key for t in desired.teams}
    known = f"the teams defined are {', '.join(sorted(defined))}" if defined else "no manifest defines teams:"
    return [(ref.location, f"{address}: team {quoted(ref.team)} is not defined ({known}); "
                           "define it under teams: or fix the name")
            for address, ref in team_references(desired) if ref.team not in defined]


def _rule_shape(rule: DesiredRule) -> list[tuple[SourceLocation, str]]:
    found: list[tuple[SourceLocation, str]] = []
    match = rule.match
    if not match.all and match.accounts is None and match.templates is None and match.names is None:
        found.append((match.location, (
            f"{rule.address}: match has no criterion; give all: true (every workspace of the company), "
            "or accounts, templates or names (except alone only narrows)")))
    if not (rule.ensure_users or rule.ensure_teams or rule.ensure_domains or rule.revoke_users
            or rule.revoke_domains):
        found.append((rule.location, (
            f"{rule.address}: has nothing to ensure and nothing to revoke; give ensure: (users, teams, "
            "domains) or revoke: (users, domains)")))
    return found


def _revoker(rule: DesiredRule) -> str:
    return "the directory (deactivated)" if rule.from_directory else rule.address


def _successor_problems(desired: Desired) -> list[tuple[SourceLocation, str]]:
    revoked = {e.key: (_revoker(rule), e.location) for rule in desired.rules for e in rule.revoke_users}
    found: list[tuple[SourceLocation, str]] = []
    for rule in desired.rules:
        successor = rule.successor
        # The directory's own successors are checked against its leavers (manifest/directory.py).
        if successor is None or rule.from_directory:
            continue
        if not rule.revoke_users:
            found.append((successor.location, (
                f"{rule.address}: revoke.successor takes over from the users the rule revokes, and it revokes "
                "none; give revoke.users or remove successor")))
        elif successor.email in revoked:
            by, where = revoked[successor.email]
            found.append((successor.location, (
                f"{rule.address}: successor {successor.email} is revoked by {by} at {where}; "
                "name a successor who stays")))
    return found


def _granted_and_revoked(desired: Desired) -> list[tuple[SourceLocation, str]]:
    revoked_users = {e.key: (_revoker(rule), e.location) for rule in desired.rules for e in rule.revoke_users}
    revoked_domains = {e.key: (rule.address, e.location) for rule in desired.rules for e in rule.revoke_domains}
    if not revoked_users and not revoked_domains:
        return []
    found: list[tuple[SourceLocation, str]] = []
    for kind, key, how, where in _grants(desired):
        revoked = (revoked_users if kind == "user" else revoked_domains).get(key)
        if revoked is None:
            continue
        rule_address, location = revoked
        found.append((location, (
            f"{rule_address}: revokes {kind} {key}, which {how} grants at {where}; a person is either granted "
            "or revoked: remove one of the two (to offboard someone, take them out of their teams and lists "
            "as well)")))
    return found


def _grants(desired: Desired) -> Iterator[tuple[str, str, str, SourceLocation]]:
    """(kind, email or domain, what grants it, where) for every grant the manifests make."""
    for address, _, access in desired.access_lists():
        for user in access.users:
            yield "user", user.email, address, user.location
        for domain in access.domains:
            yield "domain", domain.domain, address, domain.location
    for rule in desired.rules:
        for user in rule.ensure_users:
            yield "user", user.email, rule.address, user.location
        for domain in rule.ensure_domains:
            yield "domain", domain.domain, rule.address, domain.location
    named: dict[str, tuple[str, SourceLocation]] = {}
    for address, ref in team_references(desired):
        named.setdefault(ref.team, (address, ref.location))
    for team in desired.teams:
        if team.key not in named:
            continue  # a team no list names grants nothing
        address, location = named[team.key]
        for member in team.members:
            yield "user", member.email, f"{team.address} (named by {address} at {location})", member.location
