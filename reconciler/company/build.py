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

from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import date
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Leaver, Why, WhyLine
from reconciler.live import Live, LiveWorkspace
from reconciler.manifest.desired import (AccessList, Desired, DesiredGroup, DesiredRule, DesiredTeam, DomainAccess,
                                        RevokedEntry, UserAccess)
from reconciler.manifest.location import SourceLocation
from reconciler.plan.moves import moved_state
from reconciler.plan.rules import matching_rules
from reconciler.plan.teams import ExpandedAccess, Grant, expand_access
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


def company_access(desired: Desired, live: Live, state: State, today: date | None = None) -> CompanyAccess:
    """Every workspace of ``live`` (a complete listing) and every entry on it, with why; on ``today`` (UTC),
    a grant whose ``expires`` date has come is ``expired``, as the plan of that day removes it (None: no
    grant has expired, as a plan without a day)."""
    workspaces: list[CompanyWorkspace] = []
    rows: list[AccessRow] = []
    models: dict[WhyLine, Why] = {}
    for workspace, entries in attributed(desired, live, state, today):
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


def attributed(desired: Desired, live: Live, state: State,
               today: date | None = None) -> Iterator[tuple[CompanyWorkspace, Entries]]:
    """Each workspace of ``live`` (a complete listing), in listing order, with the entries on it and why
    (``today``: as ``company_access``'s)."""
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
        yield workspace, _entries(ws, reach, lists.of(reach, matching), _leaving(reach, state), today)


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
    probable members) and standalone workspaces.  The state is read with the manifests' pending
    ``moved:`` entries made, as the plan reads it: a member recorded under its old address is still
    the group's declared member, not a probable one."""
    state = moved_state(desired, state)
    reaches = {workspace_id: ListReach(node.address, node.access,
                                       node.homepage if isinstance(node, DesiredGroup) else None)
               for workspace_id, node in desired.list_holders(state.recorded_id)}
    homepages = {g.homepage: g for g in desired.groups}
    unreached = live.workspaces.keys() - reaches.keys()
    if not unreached or not homepages:  # no workspace left to find in a group, or no group to find it in
        return reaches
    sharing = live.sharing
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

_KINDS: tuple[EntryKind, EntryKind] = ("user", "domain")
_ROLE = attrgetter("role")
# What decided an entry of a list: its expiry and its why.
Decision = tuple[date | None, WhyLine]


class _Decided(NamedTuple):
    """What decides each user and each domain of a list (by email or domain)."""

    users: dict[str, Decision]
    domains: dict[str, Decision]

    def decide(self, kind: int, names: Sequence[str]) -> tuple[list[date | None], list[WhyLine]]:
        """The expiry and the why of each of ``names`` (the users' with ``kind`` 0, the domains'
        with 1): a name the list does not decide is not managed."""
        found = list(map((self.users, self.domains)[kind].get, names))
        return ([None if decision is None else decision[0] for decision in found],
                [_UNMANAGED if decision is None else decision[1] for decision in found])


class _Declared(NamedTuple):
    """A list that names no team, on a workspace no rule matches: its own entries are all there
    is to decide, so each entry is its own grant (``expand_access`` would copy each into one
    first, and ``decided`` make a why of each: 250,000 at 10,000 workspaces, where a why is
    made here only for an entry the workspace shows).  Decides as ``decided`` does."""

    users: dict[str, UserAccess]
    domains: dict[str, DomainAccess]
    address: str | None

    def decide(self, kind: int, names: Sequence[str]) -> tuple[list[date | None], list[WhyLine]]:
        """As ``_Decided.decide``."""
        found: list[UserAccess | DomainAccess | None] = list(map((self.users, self.domains)[kind].get, names))
        new, address = tuple.__new__, self.address
        return ([None if entry is None else entry.expires for entry in found],
                [_UNMANAGED if entry is None else
                 new(WhyLine, ("entry", location_text(entry.location), address, None, None, entry.role))
                 for entry in found])


def decided(expanded: ExpandedAccess, address: str | None) -> _Decided:
    """Each grant ``expand_access`` decided on the list at ``address``, with its why; and each entry a
    matching rule revokes (a leaver of the directory, a rule's ``revoke:``), which the next apply removes
    wherever it is: not "granted in the web app", whoever granted it."""
    users, domains = ({key: (grant.expires, line) for (key, grant), line in
                       zip(grants.items(), why_lines(grants.values(), address), strict=True)}
                      for grants in (expanded.users, expanded.domains))
    for found, revoked in ((users, expanded.revoked_users), (domains, expanded.revoked_domains)):
        for key, source in revoked.items():
            found[key] = (None, WhyLine("revoked", location_text(source.location), address, None, source.rule,
                                        None))
    return _Decided(users, domains)


def declared(access: AccessList | None, address: str | None) -> _Declared:
    """The ``_Declared`` decisions of ``access``, the list at ``address``."""
    if access is None:
        return _Declared({}, {}, address)
    # entry[0]: the email of a user entry, the domain of a domain entry.
    return _Declared({entry[0]: entry for entry in access.users}, {entry[0]: entry for entry in access.domains},
                     address)


def why_lines(grants: Iterable[Grant], address: str | None) -> list[WhyLine]:
    """The ``Why`` of each grant ``expand_access`` decided on the list at ``address``.  A review
    only ever revokes, and a revocation has no row, so each source is an entry, a team or a
    rule; a rule's line is the rule's, not the list's."""
    new = tuple.__new__
    return [new(WhyLine, (source.kind, location_text(source.location), None if source.kind == "rule" else address,
                          source.team, source.rule, grant.role))
            for grant in grants for source in (grant.source,)]


class _Lists:
    """Each list decided once: a group's list is on every member, and the rules alone decide a
    workspace no manifest names, so those are kept (their whys made once for every workspace
    they are on); a standalone workspace's list is on that one workspace and is let go with
    its rows."""

    def __init__(self, teams: dict[str, DesiredTeam]) -> None:
        self._teams = teams
        self._shared: dict[tuple[str | None, tuple[str, ...]], _Decided] = {}

    def of(self, reach: ListReach | None, matching: Sequence[DesiredRule]) -> _Decided | _Declared:
        if reach is not None and reach.homepage is None:
            if not matching and (reach.access is None or not reach.access.teams):
                return declared(reach.access, reach.address)
            return decided(expand_access(reach.access, self._teams, matching), reach.address)
        key = (reach.address if reach is not None else None, tuple(r.key for r in matching))
        found = self._shared.get(key)
        if found is None:
            access, address = (reach.access, reach.address) if reach is not None else (None, None)
            found = self._shared[key] = decided(expand_access(access, self._teams, matching), address)
        return found


class _Leaving(NamedTuple):
    """What the next apply removes of a managed list besides what the rules revoke (``target_roles``, the
    plan's own rule): on an authoritative list every entry it does not decide, on another one the entries
    the state records it put there and it no longer decides."""

    authoritative: bool
    recorded: tuple[Collection[str], Collection[str]]  # users, domains
    why: WhyLine

    def removes(self, kind: int, key: str) -> bool:
        return self.authoritative or key in self.recorded[kind]


def _leaving(reach: ListReach | None, state: State) -> _Leaving | None:
    """The ``_Leaving`` of the list a workspace holds; None when no manifest list governs it (the rules alone
    never remove what they do not revoke)."""
    if reach is None or reach.access is None:
        return None
    record = state.access_record(reach.address)
    recorded = (record.users, record.domains) if record is not None else ((), ())
    why = WhyLine("leaving", location_text(reach.access.location), reach.address, None, None, None)
    return _Leaving(reach.access.authoritative, recorded, why)


def _entries(ws: LiveWorkspace, reach: ListReach | None, decisions: _Decided | _Declared,
             leaving: _Leaving | None = None, today: date | None = None) -> Entries:
    """The workspace's entries, users before domains, each sorted (the report's order), a column
    at a time: each column one expression over the workspace's keys; an entry the list does not decide
    and the next apply removes (``leaving``) says so, and so does one whose grant has expired by ``today``."""
    head = (ws.id, ws.name, ws.account_id, ws.account_name, reach.homepage if reach is not None else None,
            reach.probable if reach is not None else False)
    kinds: list[EntryKind] = []
    keys: list[str] = []
    roles: list[str] = []
    expires: list[date | None] = []
    whys: list[WhyLine] = []
    for kind, entries in enumerate((ws.users, ws.domains)):
        names = sorted(entries)
        decided_expires, decided_whys = decisions.decide(kind, names)
        if leaving is not None and _UNMANAGED in decided_whys:  # most lists decide every entry they hold
            decided_whys = [leaving.why if why is _UNMANAGED and leaving.removes(kind, name) else why
                            for name, why in zip(names, decided_whys, strict=True)]
        kinds += repeat(_KINDS[kind], len(names))
        keys += names
        roles += map(_ROLE, map(entries.__getitem__, names))
        if today is not None and any(decided_expires) and min(d for d in decided_expires if d is not None) <= today:
            decided_whys = [why._replace(source="expired") if d is not None and d <= today else why
                            for d, why in zip(decided_expires, decided_whys, strict=True)]
        expires += decided_expires
        whys += decided_whys
    return Entries(head, kinds, keys, roles, expires, whys)
