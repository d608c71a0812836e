"""Who an access list grants which role, and why: teams and rules expanded.

An access list may name teams (each member gets the team's role), and a
rule (``rules:``) that matches the list's workspace adds its ``ensure``
entries and its ``revoke`` entries.  ``expand_access`` turns all of that into
one flat ``email → Grant`` (and ``domain → Grant``) map, each grant with the
``GrantSource`` that decided it: the planner diffs it against the service,
and ``who``/``audit`` show it.

When one list reaches a person more than once (two teams, a team and a rule,
an explicit entry and anything):

- an explicit ``users:`` entry of the list wins, whatever the others say
  (a manifest's own line is the most specific statement there is);
- otherwise the highest role wins (reconciler.vocabulary); on equal roles, the
  first source in list order (the list's teams in order, then the rules in
  manifest order, each its users before its teams).

The grants that lost are kept in ``Grant.also``, so the plan can say which
one decided.  Domains work the same, without teams.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Literal, NamedTuple

from reconciler.manifest.desired import AccessList, DesiredRule, DesiredTeam, TeamAccess
from reconciler.manifest.location import SourceLocation
from reconciler.vocabulary import Role
from reconciler.vocabulary import rank

SourceKind = Literal["entry", "team", "rule", "review", "directory"]


class GrantSource(NamedTuple):
    """Why a list holds (or loses) an entry.

    entry: an explicit ``users:``/``domains:`` line of the list; team: a team
    the list names (``team``); rule: a rule's ``ensure`` or ``revoke``
    (``rule``; ``team`` too when the rule names a team); review: a reviewer's
    revoke (only ever a revocation).  ``location`` is the
    line to edit: the entry, the list's team reference, or the rule's entry.
    """

    kind: SourceKind
    location: SourceLocation
    team: str | None = None
    rule: str | None = None
    # review: an access review's decision (reconciler.plan.reviews); ``due`` when
    # the item was revoked for not being reviewed by then.
    campaign: str | None = None
    reviewer: str | None = None
    due: str | None = None
    # directory: a leaver of the directory (its line under directory.deactivated), deactivated on this day.
    since: str | None = None

    def __str__(self) -> str:
        if self.kind == "directory":
            return f"the directory ({self.location})"
        if self.kind == "review":
            return f"review {self.campaign} ({self.location})"
        if self.kind == "rule":
            via = f" via team {self.team}" if self.team else ""
            return f"rule {self.rule}{via} ({self.location})"
        if self.kind == "team":
            return f"team {self.team} ({self.location})"
        return f"entry {self.location}"


class Alternative(NamedTuple):
    """Another way the same list reaches the same person, which did not decide the role."""

    role: Role
    source: GrantSource


class Grant(NamedTuple):
    """One entry of an expanded list: its role, what decided it, what else reached it."""

    key: str  # email or domain, lower-cased
    role: Role
    source: GrantSource
    expires: date | None = None
    also: tuple[Alternative, ...] = ()

    def explanation(self) -> str | None:
        """Which source won and why, when more than one reached the entry; None otherwise."""
        if not self.also:
            return None
        others = "; ".join(f"{a.role} from {a.source}" for a in self.also)
        why = "an explicit entry wins" if self.source.kind == "entry" else "the highest role wins"
        return f"{self.role} from {self.source} ({why} over {others})"


class ExpandedAccess(NamedTuple):
    """A list with its teams and matching rules expanded.

    ``revoked_*``: what the matching rules revoke (never also granted: the
    manifests are refused when a revoked entry is granted anywhere).
    """

    users: dict[str, Grant]
    domains: dict[str, Grant]
    revoked_users: dict[str, GrantSource]
    revoked_domains: dict[str, GrantSource]

    def user_roles(self) -> dict[str, Role]:
        return {k: g.role for k, g in self.users.items()}

    def domain_roles(self) -> dict[str, Role]:
        return {k: g.role for k, g in self.domains.items()}


# ``expand_access`` gives every field of these two: one added must be given there too.
assert len(GrantSource._fields) == 8 and len(Grant._fields) == 5  # noqa: S101


class _Candidate(NamedTuple):
    key: str
    role: Role
    source: GrantSource
    expires: date | None


def expand_access(
    access: AccessList | None,
    teams: Mapping[str, DesiredTeam],
    rules: Sequence[DesiredRule] = (),
) -> ExpandedAccess:
    """Every user and domain that ``access`` plus the ``rules`` matching its
    workspace grant, each with its role and reason (see the module doc).

    ``access`` None: a workspace no manifest names, which holds only what the
    rules ensure.  ``teams``: every team by key (an unknown team was refused
    when the manifests were read; one missing here grants nobody).
    """
    users: list[_Candidate] = []
    domains: list[_Candidate] = []
    explicit_users: dict[str, Grant] = {}
    explicit_domains: dict[str, Grant] = {}
    if access is not None:
        # Grants made directly (no candidate in between): most entries of a
        # company's lists are explicit, and this runs for every list.
        # ``tuple.__new__``: a NamedTuple's own __new__ is Python code, called twice an entry (250,000 entries
        # at 10,000 lists, issue 40); every field given, in order.
        make = tuple.__new__
        explicit_users = {u.email: make(Grant, (u.email, u.role, make(GrantSource, (
            "entry", u.location, None, None, None, None, None, None)), u.expires, ())) for u in access.users}
        explicit_domains = {d.domain: make(Grant, (d.domain, d.role, make(GrantSource, (
            "entry", d.location, None, None, None, None, None, None)), d.expires, ())) for d in access.domains}
        users += _members(access.teams, teams, None)
    revoked_users: dict[str, GrantSource] = {}
    revoked_domains: dict[str, GrantSource] = {}
    for rule in rules:
        users += [_Candidate(u.email, u.role, GrantSource("rule", u.location, rule=rule.key), u.expires)
                  for u in rule.ensure_users]
        users += _members(rule.ensure_teams, teams, rule.key)
        domains += [_Candidate(d.domain, d.role, GrantSource("rule", d.location, rule=rule.key), d.expires)
                    for d in rule.ensure_domains]
        for entry in rule.revoke_users:
            revoked_users.setdefault(entry.key, GrantSource("rule", entry.location, rule=rule.key) if entry.since is None
                                     else GrantSource("directory", entry.location, rule=rule.key,
                                                      since=entry.since.isoformat()))
        for entry in rule.revoke_domains:
            revoked_domains.setdefault(entry.key, GrantSource("rule", entry.location, rule=rule.key))
    return ExpandedAccess(
        users=_decide(explicit_users, users),
        domains=_decide(explicit_domains, domains),
        revoked_users=revoked_users,
        revoked_domains=revoked_domains,
    )


def _members(refs: Iterable[TeamAccess], teams: Mapping[str, DesiredTeam], rule: str | None) -> list[_Candidate]:
    found = []
    for ref in refs:
        team = teams.get(ref.team)
        if team is None:
            continue
        source = GrantSource("rule" if rule else "team", ref.location, team=ref.team, rule=rule)
        found += [_Candidate(m.email, ref.role, source, None) for m in team.members]
    return found


def _decide(explicit: dict[str, Grant], others: list[_Candidate]) -> dict[str, Grant]:
    """One grant per key: explicit entries win, then the highest role, then the first."""
    if not others:
        return explicit
    decided = dict(explicit)
    for c in others:
        held = decided.get(c.key)
        if held is None:
            decided[c.key] = Grant(c.key, c.role, c.source, c.expires)
        elif held.source.kind != "entry" and rank(c.role) > rank(held.role):
            decided[c.key] = Grant(c.key, c.role, c.source, c.expires,
                                   (*held.also, Alternative(held.role, held.source)))
        else:
            decided[c.key] = held._replace(also=(*held.also, Alternative(c.role, c.source)))
    return decided
