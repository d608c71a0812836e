"""Who has access where, and why: the company read as a pure function.

``company_access(desired, live, state)`` pairs each live entry of each
workspace with the manifest line that grants it, as the plan decides it
(``reconciler.plan.teams.expand_access`` over the list's teams and the rules
matching any workspace the list is on).  It does no I/O: the
listing is read before (``reconciler.company.read``), so a test can build
all three inputs by hand.

Precedence is the manifests': an entry of the list wins over a team the
list names, which wins over a rule matching the workspace; what none of them
grants is "not managed".  A group's list is on every workspace of the group:
the homepage, the members the manifests declare or the state records, and
the workspaces that show the homepage's access entries (connected by hand;
``reconciler.live.shared_entries``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date
from itertools import repeat
from typing import NamedTuple

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Leaver, Why, WhyLine
from reconciler.live import Live, LiveEntry, LiveWorkspace, shared_entries
from reconciler.manifest.desired import AccessList, Desired, DesiredRule, DesiredTeam, RevokedEntry
from reconciler.manifest.location import SourceLocation
from reconciler.plan.rules import matching_rules
from reconciler.plan.teams import ExpandedAccess, Grant, GrantSource, expand_access
from reconciler.state import State


class ListReach(NamedTuple):
    """The manifest list a workspace holds: its address, the list, and the
    homepage of its group (None for a standalone workspace)."""

    address: str
    access: AccessList | None
    homepage: str | None
    probable: bool = False


# A workspace's values on each of its rows: id, name, account id, account name, group homepage,
# probable member.
WorkspaceHead = tuple[str, str | None, str | None, str | None, str | None, bool]


class Entries(NamedTuple):
    """One workspace's entries, a column at a time, users before domains, each sorted (the
    report's order): ``company_access`` makes the company's rows of them, and the report its
    columns, without a tuple for each of the company's rows (250,000 at 10,000 workspaces)."""

    workspace: WorkspaceHead
    kinds: list[EntryKind]
    keys: list[str]
    roles: list[str]
    expires: list[date | None]
    whys: list[WhyLine]


def company_access(desired: Desired, live: Live, state: State) -> CompanyAccess:
    """Every workspace of ``live`` (a complete listing) and every entry on it, with why."""
    workspaces: list[CompanyWorkspace] = []
    rows: list[AccessRow] = []
    models: dict[WhyLine, Why] = {}
    for workspace, entries in attributed(desired, live, state):
        workspaces.append(workspace)
        workspace_id, name, account_id, account_name, homepage, probable = entries.workspace
        for kind, key, role, expires, reason in zip(entries.kinds, entries.keys, entries.roles, entries.expires,
                                                    entries.whys, strict=True):
            model = models.get(reason)
            if model is None:
                model = models[reason] = reason.model()
            rows.append(AccessRow(workspace_id=workspace_id, workspace_name=name, account_id=account_id,
                                  account_name=account_name, group_homepage=homepage, probable_member=probable,
                                  kind=kind, key=key, role=role, expires=expires, why=model))
    return CompanyAccess(workspaces=tuple(workspaces), rows=tuple(rows), calls=live.pages_read,
                         leavers=leavers(desired))


def attributed(desired: Desired, live: Live, state: State) -> Iterator[tuple[CompanyWorkspace, Entries]]:
    """Each workspace of ``live`` (a complete listing), in listing order, with the entries on it and why."""
    reaches = list_reaches(desired, live, state)
    teams = {team.key: team for team in desired.teams}
    rules = _list_rules(desired, live, reaches)
    lists = _Lists(teams)
    for ws in live.workspaces.values():
        reach = reaches.get(ws.id)
        matching = rules[reach.address] if reach is not None else matching_rules(desired.rules, ws)
        workspace = CompanyWorkspace(
            id=ws.id, name=ws.name, account_id=ws.account_id, account_name=ws.account_name,
            template_id=ws.template_id, group_homepage=reach.homepage if reach else None,
            probable_member=reach.probable if reach else False, address=reach.address if reach else None,
            managed="manifest" if reach is not None else "rules" if matching else "none",
            rules=tuple(r.key for r in matching))
        yield workspace, _entries(ws, reach, lists.of(reach, matching))


def leavers(desired: Desired) -> tuple[Leaver, ...]:
    """The people and domains any revoke rule names, with the rule and its line."""
    return tuple(Leaver(kind=kind, key=entry.key, rule=rule.key, location=location_text(entry.location))
                 for rule in desired.rules
                 for kind, entries in _revoked(rule)
                 for entry in entries)


def _revoked(rule: DesiredRule) -> tuple[tuple[EntryKind, tuple[RevokedEntry, ...]], ...]:
    return (("user", rule.revoke_users), ("domain", rule.revoke_domains))


def _list_rules(desired: Desired, live: Live, reaches: dict[str, ListReach]) -> dict[str, tuple[DesiredRule, ...]]:
    """Manifest list address → the rules matching any of its workspaces: a
    group's list is on every member, so a rule matching one member is on the
    list (as the plan reads it, ``reconciler.plan.company``)."""
    spaces: dict[str, list[LiveWorkspace]] = {}
    for workspace_id, reach in reaches.items():
        if workspace_id in live.workspaces:
            spaces.setdefault(reach.address, []).append(live.workspaces[workspace_id])
    found = {address: {rule.key for ws in members for rule in matching_rules(desired.rules, ws)}
             for address, members in spaces.items()}
    return {address: tuple(r for r in desired.rules if r.key in keys) for address, keys in found.items()}


def list_reaches(desired: Desired, live: Live, state: State) -> dict[str, ListReach]:
    """Workspace id → the manifest list it holds, for every workspace a
    manifest reaches: groups (homepage, declared and recorded members,
    probable members) and standalone workspaces."""
    reaches: dict[str, ListReach] = {}
    for group in desired.groups:
        reaches[group.homepage] = ListReach(group.address, group.access, group.homepage)
        for member in group.members:
            recorded = state.resources.get(member.address)
            workspace_id = member.id or (recorded.id if recorded is not None else None)
            if workspace_id:
                reaches[workspace_id] = ListReach(group.address, group.access, group.homepage)
    for ws in desired.workspaces:
        reaches[ws.id] = ListReach(ws.address, ws.access, None)
    homepages = {g.homepage: g for g in desired.groups}
    unreached = live.workspaces.keys() - reaches.keys()
    if not unreached or not homepages:  # no workspace left to find in a group, or no group to find it in
        return reaches
    sharing = shared_entries({w.id: w.entry_ids() for w in live.workspaces.values()})
    for workspace_id in unreached:
        found = sorted(sharing.get(workspace_id, set()) & homepages.keys())
        if found:
            group = homepages[found[0]]
            reaches[workspace_id] = ListReach(group.address, group.access, group.homepage, probable=True)
    return reaches


def location_text(location: SourceLocation) -> str:
    """``file:line`` unescaped: ``str(SourceLocation)`` escapes the file name
    for a terminal, while the model keeps the raw value and each renderer
    escapes it for where it shows it (a terminal, markdown, CSV)."""
    return f"{location.file}:{location.line}"


_UNMANAGED = WhyLine("unmanaged", None, None, None, None, None)


def why(source: GrantSource, role: str | None, address: str | None) -> WhyLine:
    """The ``Why`` of a grant ``expand_access`` decided (``role`` None: of a revocation).  A
    review only ever revokes, and a revocation has no row, so ``source`` is an entry, a team or
    a rule."""
    assert source.kind != "review", "a review grants nothing"
    return tuple.__new__(WhyLine, (source.kind, location_text(source.location),
                                   address if source.kind != "rule" else None, source.team, source.rule, role))


class _Expanded(NamedTuple):
    """A list as ``expand_access`` decided it, and the why of each of its grants (by the
    grant's ``id``: the grants live as long as this), made when a row first needs it."""

    access: ExpandedAccess
    whys: dict[int, WhyLine]


class _Lists:
    """Each list expanded once: a group's list is on every member, and the rules alone decide
    a workspace no manifest names, so those are kept; a standalone workspace's list is on that
    one workspace and is let go with its rows."""

    def __init__(self, teams: dict[str, DesiredTeam]) -> None:
        self._teams = teams
        self._shared: dict[tuple[str | None, tuple[str, ...]], _Expanded] = {}

    def of(self, reach: ListReach | None, matching: Sequence[DesiredRule]) -> _Expanded:
        if reach is not None and reach.homepage is None:
            return _Expanded(expand_access(reach.access, self._teams, matching), {})
        key = (reach.address if reach is not None else None, tuple(r.key for r in matching))
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = _Expanded(
                expand_access(reach.access if reach is not None else None, self._teams, matching), {})
        return found


def _kinds(ws: LiveWorkspace, expanded: ExpandedAccess) -> Iterator[
        tuple[EntryKind, dict[str, LiveEntry], dict[str, Grant], dict[str, GrantSource]]]:
    yield "user", ws.users, expanded.users, expanded.revoked_users
    yield "domain", ws.domains, expanded.domains, expanded.revoked_domains


def _entries(ws: LiveWorkspace, reach: ListReach | None, expanded: _Expanded) -> Entries:
    """The workspace's entries, users before domains, each sorted (the report's order), a column
    at a time: each column one expression over the workspace's keys."""
    address = reach.address if reach is not None else None
    head = (ws.id, ws.name, ws.account_id, ws.account_name, reach.homepage if reach is not None else None,
            reach.probable if reach is not None else False)
    known = expanded.whys
    kinds: list[EntryKind] = []
    keys: list[str] = []
    roles: list[str] = []
    expires: list[date | None] = []
    whys: list[WhyLine] = []
    for kind, entries, granted, _ in _kinds(ws, expanded.access):
        names = sorted(entries)
        grants = list(map(granted.get, names))
        kinds += repeat(kind, len(names))
        keys += names
        roles += [entries[name].role for name in names]
        expires += [None if grant is None else grant.expires for grant in grants]
        whys += [_UNMANAGED if grant is None
                 else known.get(id(grant)) or known.setdefault(id(grant), why(grant.source, grant.role, address))
                 for grant in grants]
    return Entries(head, kinds, keys, roles, expires, whys)
