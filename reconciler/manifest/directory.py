"""The directory in the manifests: teams from its groups, its leavers revoked everywhere.

``directory:`` (one file, ``directory.yaml``, written by ``reconciler directory
sync``) holds the identity provider's groups and its deactivated people.  It
reaches the plan through what the planner already knows:

- a team ``{directoryGroup: NAME}`` gets the group's members, each at its line
  of the directory's file;
- every leaver is revoked from every workspace of the company by a rule of
  the directory's own (``DesiredRule.from_directory``, ``match: {all: true}``,
  ``revoke.users``): a leaver with a ``successor`` has a rule of their own
  naming it, so the offboarding machinery hands over where they were the last
  owner; the others share one rule without a successor (a workspace they were
  the last owner of is left to a person, as for any rule);
- a leaver a manifest still grants (an explicit entry, a hand-written team, a
  rule's ``ensure``): the directory wins, the grant is dropped, and a warning
  names the grant's line, so the manifests can be cleaned up in their own time.

``live_directory`` narrows the committed directory by the live one (``plan
--directory live``): it never grants, so a group keeps only the committed
members the live group still holds, and the leavers are both sides'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import NamedTuple

from reconciler.manifest.desired import (
    DIRECTORY_RULE,
    AccessList,
    Desired,
    DesiredDirectory,
    DesiredRule,
    DesiredTeam,
    DirectoryLeaver,
    RevokedEntry,
    RuleMatch,
    TeamMember,
)
from reconciler.manifest.location import SourceLocation
from reconciler.text import quoted


def directory_problems(desired: Desired) -> list[str]:
    """A team from a group the directory does not hold (or with no ``directory:`` at all), a rule that
    takes the directory's own name, and a successor who left too: each ``file:line: message``, sorted."""
    found: list[tuple[SourceLocation, str]] = []
    directory = desired.directory
    for team in desired.teams:
        if team.directory_group is None:
            continue
        group = quoted(team.directory_group)
        if directory is None:
            found.append((team.location, (
                f"{team.address}: directoryGroup {group}: no manifest holds directory: (reconciler directory sync "
                "writes it, as directory.yaml); run it, or list the team's emails")))
        elif directory.group(team.directory_group) is None:
            names = ", ".join(quoted(g.name) for g in directory.groups) or "none"
            found.append((team.location, (
                f"{team.address}: directoryGroup {group} is not a group of the directory at {directory.location} "
                f"(its groups: {names}); spell it as the identity provider does, or run reconciler directory sync")))
    if directory is not None:
        found += [(rule.location, (
            f"{rule.address}: the rules the directory's leavers make are called {DIRECTORY_RULE}; give this rule "
            "another name")) for rule in desired.rules if rule.key == DIRECTORY_RULE and not rule.from_directory]
        found += successor_problems(directory.leavers)
    return [f"{where}: {text}" for where, text in sorted(found)]


def successor_problems(leavers: Iterable[DirectoryLeaver]) -> list[tuple[SourceLocation, str]]:
    """A leaver whose successor is a leaver too: the handover would hand to someone who is gone."""
    gone = {leaver.email: leaver for leaver in leavers}
    found = []
    for leaver in gone.values():
        successor = leaver.successor
        if successor is not None and successor.email in gone:
            found.append((leaver.location, (
                f"directory: {leaver.email}'s successor {successor.email} was deactivated too "
                f"({gone[successor.email].location}); a successor must stay: give {leaver.email} an active manager "
                "in the identity provider and run reconciler directory sync")))
    return found


def deactivated_words(since: date) -> str:
    """How every view says why a leaver loses access."""
    return f"deactivated in the directory on {since.isoformat()}"


def with_directory(desired: Desired, directory: DesiredDirectory | None) -> Desired:
    """``desired`` with ``directory``'s groups in the teams that name them and its leavers revoked
    everywhere (see the module's docstring); warnings for dropped grants are added to ``notes``.

    Applied again with another directory (``live_directory``'s), the result is as if it had been
    the committed one: the directory's rules are made anew, the teams filled anew."""
    if directory is None and desired.directory is None:
        return desired
    groups = {g.name: g.members for g in directory.groups} if directory is not None else {}
    teams = tuple(t._replace(members=groups.get(t.directory_group, ())) if t.directory_group is not None else t
                  for t in desired.teams)
    leavers = {leaver.email: leaver for leaver in directory.leavers} if directory is not None else {}
    rules = tuple(r for r in desired.rules if not r.from_directory)
    notes: list[str] = []
    if leavers:
        dropped = _Dropped(leavers, notes)
        teams = tuple(t._replace(members=dropped.members(t)) for t in teams)
        rules = tuple(dropped.rule(r) for r in rules)
        desired = desired._replace(
            groups=tuple(g._replace(access=dropped.access(g.address, g.access)) for g in desired.groups),
            workspaces=tuple(w._replace(access=dropped.access(w.address, w.access)) for w in desired.workspaces))
        assert directory is not None  # leavers come from it
        rules += leaver_rules(directory)
    return desired._replace(teams=teams, rules=rules, directory=directory,
                            notes=(*desired.notes, *sorted(set(notes) - set(desired.notes))))


def leaver_rules(directory: DesiredDirectory) -> tuple[DesiredRule, ...]:
    """The rules that revoke the directory's leavers from every workspace: one for those without a
    successor, one for each with one (a rule hands over to one successor)."""
    match = RuleMatch(location=directory.location, all=True)
    plain = tuple(RevokedEntry(key=leaver.email, location=leaver.location, since=leaver.since)
                  for leaver in directory.leavers if leaver.successor is None)
    rules = [DesiredRule(key=DIRECTORY_RULE, location=directory.location, match=match, revoke_users=plain,
                         from_directory=True)] if plain else []
    rules += [DesiredRule(key=DIRECTORY_RULE, location=leaver.location, match=match, successor=leaver.successor,
                          revoke_users=(RevokedEntry(key=leaver.email, location=leaver.location, since=leaver.since),),
                          from_directory=True)
              for leaver in directory.leavers if leaver.successor is not None]
    return tuple(rules)


class _Dropped:
    """Takes the leavers out of what grants them, with a warning at each line."""

    def __init__(self, leavers: Mapping[str, DirectoryLeaver], notes: list[str]) -> None:
        self.leavers = leavers
        self.notes = notes

    def _gone(self, email: str, location: SourceLocation, what: str) -> bool:
        leaver = self.leavers.get(email)
        if leaver is None:
            return False
        self.notes.append(f"{location}: {what}: {email} was {deactivated_words(leaver.since)} "
                          f"({leaver.location}): the directory wins, the grant is not made; remove the line")
        return True

    def access(self, address: str, access: AccessList | None) -> AccessList | None:
        if access is None:
            return None
        if not any(u.email in self.leavers for u in access.users):
            return access  # most lists: kept as they are (a company has 250,000 entries)
        return access._replace(users=tuple(u for u in access.users
                                           if not self._gone(u.email, u.location, address)))

    def members(self, team: DesiredTeam) -> tuple[TeamMember, ...]:
        return tuple(m for m in team.members if not self._gone(m.email, m.location, team.address))

    def rule(self, rule: DesiredRule) -> DesiredRule:
        if not any(u.email in self.leavers for u in rule.ensure_users):
            return rule
        return rule._replace(ensure_users=tuple(u for u in rule.ensure_users
                                                if not self._gone(u.email, u.location, rule.address)))


class LiveDirectory(NamedTuple):
    """The directory as the state's store holds it now (``plan --directory live``), by email and group name."""

    address: str  # the store's, for messages
    groups: Mapping[str, frozenset[str]]
    leavers: Mapping[str, date]


class LiveNarrowing(NamedTuple):
    """The committed directory narrowed by the live one, and how many additions to groups wait for a sync."""

    directory: DesiredDirectory
    waiting: int


def live_directory(committed: DesiredDirectory, live: LiveDirectory) -> LiveNarrowing:
    """The directory a plan with ``--directory live`` uses: removals apply, additions wait.

    A group keeps only the committed members that the live group still holds
    (a group gone from the live directory has none); the leavers are the
    committed ones (with their successors) and the live ones (with none: a
    successor is only ever one a reviewed ``directory.yaml`` names).
    """
    groups = []
    waiting = 0
    for group in committed.groups:
        held = live.groups.get(group.name, frozenset())
        groups.append(group._replace(members=tuple(m for m in group.members if m.email in held)))
        waiting += len(held - {m.email for m in group.members})
    known = {leaver.email for leaver in committed.leavers}
    at = SourceLocation(live.address, 1)  # nothing in the manifests names a live leaver: the store does
    leavers = (*committed.leavers, *(DirectoryLeaver(email=email, since=since, location=at)
                                     for email, since in sorted(live.leavers.items()) if email not in known))
    return LiveNarrowing(committed._replace(groups=tuple(groups), leavers=leavers), waiting)
