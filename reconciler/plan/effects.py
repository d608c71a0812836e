"""What the plan does to access: every workspace's list after the apply.

A plan is a list of calls, and one call can change the access of workspaces
it does not name: connected workspaces share one list, so ``POST
/workspaces/{id}/access`` on one changes every member; a workspace joining
a group takes over the group's list and loses its own; a creation with
``workspaceUsers``/``workspaceDomains`` replaces the list of the whole group.
This module follows the changes in apply's order with the service's
documented rules (docs/design.md, "The effects model") and returns, for each
workspace whose users or domains will differ, its list now and after.

Pure: it reads the planned changes and the live lists, nothing else, and it
shares no code with the emulator (which reads the same description on its
own, so the two cannot be wrong the same way).

The rules followed (the service's connected-workspaces rules, numbered as
the description numbers them):

- rule 1, connect with ``workspaceId``: the workspace takes over the
  group's access settings; an unpublished one is published with the
  homepage's users and domains, replacing its own. Either way its list
  becomes the group's (the description does not say whether a published
  workspace's own entries survive; the conservative reading, which shows
  the reviewer every loss, is that they do not);
- a workspace not yet in a group that is the ``{id}`` of a connect becomes
  the homepage, and its list is the group's;
- rule 2, one already in the group: nothing changes;
- rule 3, with ``templateId``: the new workspace holds the group's list;
  with ``workspaceUsers``/``workspaceDomains`` those replace the group's
  users/domains, for every workspace of the group;
- ``POST /access`` replaces the users when ``workspaceUsers`` is given and
  the domains when ``workspaceDomains`` is, on the list the workspace shares
  with its group; ``PATCH /workspace-users/{id}`` (and domains) changes one
  entry's role on that list.

Which workspaces share a list: those showing the same entry ids (the
service gives a shared entry one id on every member), and the members the
manifests name in a group the plan does not connect (the planner already
treats them as in the group).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.live import Live, one_list_each
from reconciler.plan.access import diff_entries
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    AccessView,
    AccessViews,
    Action,
    Change,
    ConnectChange,
    CreateChange,
    Effect,
    EntryChange,
    made,
)
from reconciler.vocabulary import Role

# A workspace this plan creates has no id yet: it is known by its creation's address.
_NEW = "new:"


@dataclass
class Simulation:
    """The lists as the changes are made, one at a time, in apply's order.

    ``holder`` maps each workspace (its id, or ``new:<address>``) to the list
    it holds; several workspaces holding one list are one group.
    """

    lists: dict[int, AccessSnapshot]
    holder: dict[str, int]
    names: dict[str, str | None]
    # The reverse of ``holder``: list -> the workspaces holding it (a change of one list is O(its members)).
    members: dict[int, set[str]] = field(default_factory=dict)
    because: dict[str, list[str]] = field(default_factory=dict)
    # The connects that moved a workspace onto another list (a join), by address.
    joined: set[str] = field(default_factory=set)
    # Which access change first wrote each side (user, domain) of each list, and every later one that wrote it
    # again: (first, second). Each was diffed against the list as fetched, so the second undoes the first.
    written: dict[tuple[int, str], AccessChange] = field(default_factory=dict)
    written_twice: list[tuple[AccessChange, AccessChange]] = field(default_factory=list)

    def holding(self, workspace: str) -> list[str]:
        """Every workspace holding the list ``workspace`` holds once applied (itself included), sorted."""
        return sorted(self.members.get(self.holder[workspace], ())) if workspace in self.holder else []

    def list_of(self, workspace: str) -> AccessSnapshot:
        return self.lists[self.holder[workspace]]

    def set_list(self, list_id: int, after: AccessSnapshot, *addresses: str) -> None:
        """Give list ``list_id`` new content; every workspace holding it is changed by ``addresses``."""
        if self.lists[list_id] == after:
            return
        self.lists[list_id] = after
        for workspace in sorted(self.members.get(list_id, ())):
            for address in addresses:
                _add(self.because, workspace, address)

    def hold(self, workspace: str, list_id: int) -> None:
        """``workspace`` holds ``list_id`` from now on."""
        old = self.holder.get(workspace)
        if old is not None:
            self.members[old].discard(workspace)
        self.holder[workspace] = list_id
        self.members.setdefault(list_id, set()).add(workspace)

    def move(self, workspace: str, to: int, address: str) -> None:
        """``workspace`` now holds list ``to`` (a join): its own list is gone."""
        before = self.lists[self.holder[workspace]] if workspace in self.holder else AccessSnapshot()
        self.hold(workspace, to)
        self.joined.add(address)
        if before != self.lists[to]:
            _add(self.because, workspace, address)


def simulate(changes: Sequence[Change], live: Live, groups: Iterable[tuple[str, Iterable[str]]] = ()) -> Simulation:
    """Make ``changes`` on the live lists, in order, and return the result.

    ``groups``: (homepage id, member ids) the manifests name as already in
    one group (members this plan connects are left out: the connect moves them).
    """
    if not any(isinstance(c, (ConnectChange, CreateChange)) or (isinstance(c, AccessChange) and c.calls)
               for c in changes):
        return Simulation(lists={}, holder={}, names={})  # nothing sent changes a list: the steady state is free
    sim = _start(live, groups)
    for change in changes:
        if isinstance(change, AccessChange):
            _access(sim, change)
        elif isinstance(change, ConnectChange):
            if change.homepage_id in sim.holder and sim.holder.get(change.workspace_id) != sim.holder[change.homepage_id]:
                sim.move(change.workspace_id, sim.holder[change.homepage_id], change.address)
        elif isinstance(change, CreateChange):
            _create(sim, change)
    return sim


def effects(sim: Simulation, live: Live) -> tuple[Effect, ...]:
    """Every workspace whose users or domains differ after the apply from
    what the service reports now: the live ones by id, then the new ones in
    plan order."""
    # Shared, not copied (issue 40): every workspace holding one list holds one view of it after, and a
    # view after holds the very entries of the views before wherever they are the same (``AccessViews``).
    # One AccessViews per list, dropped once its workspaces are done: one over the whole company held every
    # (email, role) of 10,000 lists at once, 26 MiB at the plan's peak, to share what one list's views share.
    holding: dict[int, list[tuple[int, str]]] = {}
    for order, workspace in enumerate(sim.because):  # a workspace no change touched keeps its list
        holding.setdefault(sim.holder[workspace], []).append((order, workspace))
    found: list[tuple[tuple[bool, str, int], Effect]] = []
    for list_id, workspaces in holding.items():
        views = AccessViews()
        after = sim.lists[list_id]
        after_view: AccessView | None = None
        for order, workspace in workspaces:
            new = workspace.startswith(_NEW)
            users, domains = ({}, {}) if new else _roles(live, workspace)
            if users == after.users and domains == after.domains:
                continue  # a new workspace always differs: its list has an owner, it had nothing
            if after_view is None:
                after_view = views.of(after.users, after.domains)
            found.append(((new, "" if new else workspace, order), Effect(
                workspace=None if new else workspace, name=sim.names.get(workspace),
                creates=workspace[len(_NEW):] if new else None, before=views.of(users, domains), after=after_view,
                because=tuple(sim.because.get(workspace, ())))))
    return tuple(effect for _, effect in sorted(found, key=lambda item: item[0]))


def _start(live: Live, groups: Iterable[tuple[str, Iterable[str]]]) -> Simulation:
    """Every live workspace holding its list: one list per set of workspaces that share entries."""
    joined = [(homepage, member) for homepage, members in groups for member in members]
    lists = one_list_each(live.workspaces.values(), live.sharing, joined)
    sim = Simulation(lists=_LiveLists(live, {i: holders[0] for i, holders in enumerate(lists)}), holder={},
                     names={w.id: w.name for w in live.workspaces.values()})
    for list_id, holders in enumerate(lists):
        for workspace_id in holders:
            sim.hold(workspace_id, list_id)
    return sim


class _LiveLists(dict[int, AccessSnapshot]):
    """The lists by id, each read from the live workspace that holds it the
    first time it is asked for: at 10,000 workspaces most are never touched."""

    def __init__(self, live: Live, roots: Mapping[int, str]) -> None:
        super().__init__()
        self._live = live
        self._roots = roots

    def __missing__(self, list_id: int) -> AccessSnapshot:
        found = self[list_id] = _snapshot(self._live, self._roots[list_id])
        return found


def _access(sim: Simulation, change: AccessChange) -> None:
    """``POST /access`` or one ``PATCH`` per entry, on the list the workspace shares."""
    if not change.calls or change.workspace_id not in sim.holder:
        return  # riding on a creation (the creation sets it), or what a join does (the connect does)
    list_id = sim.holder[change.workspace_id]
    for kind in sorted(change.sides):
        first = sim.written.setdefault((list_id, kind), change)
        if first is not change:
            sim.written_twice.append((first, change))
    now = sim.lists[list_id]
    if change.strategy == "patch":
        users, domains = dict(now.users), dict(now.domains)
        for entry in change.entries:
            side = users if entry.kind == "user" else domains
            if entry.key in side and entry.after is not None:
                side[entry.key] = entry.after
        after = _sorted(AccessSnapshot(users=users, domains=domains))
    else:
        # The change's own lists, not copies (issue 40: 10,000 copies were 20 MiB at the plan's peak): a
        # snapshot's dicts are never changed in place, here or by anyone reading the simulation.
        kinds = change.sides
        after = (change.after if kinds == {"user", "domain"} else
                 made(AccessSnapshot, users=change.after.users if "user" in kinds else now.users,
                      domains=change.after.domains if "domain" in kinds else now.domains))
    sim.set_list(list_id, after, change.address, *change.carries)  # the entries it carries too


def _create(sim: Simulation, change: CreateChange) -> None:
    """The new workspace holds the group's list; lists in the body replace it for the whole group."""
    if change.homepage_id not in sim.holder:
        return
    list_id = sim.holder[change.homepage_id]
    if change.access is not None:
        sim.set_list(list_id, _sorted(change.access), change.access_address or change.address)
    workspace = _NEW + change.address
    sim.names[workspace] = change.name
    sim.hold(workspace, list_id)
    _add(sim.because, workspace, change.address)


def _roles(live: Live, workspace_id: str) -> tuple[dict[str, Role], dict[str, Role]]:
    """A live workspace's (users, domains) as ``key -> role``."""
    ws = live.workspaces[workspace_id]
    return {k: e.role for k, e in ws.users.items()}, {k: e.role for k, e in ws.domains.items()}


def _snapshot(live: Live, workspace_id: str) -> AccessSnapshot:
    ws = live.workspaces[workspace_id]
    return made(AccessSnapshot, users={k: e.role for k, e in sorted(ws.users.items())},
                domains={k: e.role for k, e in sorted(ws.domains.items())})


def _sorted(snapshot: AccessSnapshot) -> AccessSnapshot:
    return made(AccessSnapshot, users=_by_key(snapshot.users), domains=_by_key(snapshot.domains))


def _by_key(roles: Mapping[str, Role]) -> dict[str, Role]:
    return dict(sorted(roles.items()))


def _add(because: dict[str, list[str]], workspace: str, address: str) -> None:
    found = because.setdefault(workspace, [])
    if address not in found:
        found.append(address)


def with_joins(changes: Sequence[Change], sim: Simulation, live: Live) -> list[Change]:
    """``changes`` with, after each creation in a group, the list it gives
    the new workspace (``governs: "create"``: every entry a grant, judged like
    any other), and after each connect that changes the joining
    workspace's access, the access change it makes (``governs: "join"``):
    what the workspace loses and gains, from its own list to the list it
    holds once the plan is applied (the group's, after any change of it in
    the same plan).  A change of the group's list later in the plan then
    leaves that workspace out of its ``reach``, so nothing is counted twice."""
    joined: set[str] = set()
    created: set[str] = set()  # the reach labels of the workspaces created so far
    out: list[Change] = []
    for change in changes:
        if isinstance(change, AccessChange) and (joined or created) and change.reach:
            change = change.model_copy(update={"reach": tuple(
                r for r in change.reach if r.workspace_id not in joined
                and not (r.workspace_id is None and r.workspace in created))})
        out.append(change)
        if isinstance(change, CreateChange) and _NEW + change.address in sim.holder:
            out.append(_create_change(change, sim.list_of(_NEW + change.address)))
            created.add(f'new "{change.name}"')
            continue
        if not isinstance(change, ConnectChange) or change.address not in sim.joined:
            continue
        after = sim.list_of(change.workspace_id)
        if after == _snapshot(live, change.workspace_id):
            continue
        joined.add(change.workspace_id)
        out.append(_join_change(change, live, after))
    return out


def _join_change(connect: ConnectChange, live: Live, after: AccessSnapshot) -> AccessChange:
    ws = live.workspaces[connect.workspace_id]
    entries = [*diff_entries("user", ws.users, after.users, {}), *diff_entries("domain", ws.domains, after.domains, {})]
    entries = sorted((e.model_copy(update={"reason": _join_reason(e, connect.group)}) for e in entries),
                     key=lambda e: (_JOIN_ORDER[e.action], e.kind, e.key))
    return AccessChange(
        address=connect.address, location=connect.location, depends_on=(connect.address,),
        governs="join", workspace_id=connect.workspace_id, workspace_name=ws.name,
        rides_on=connect.address, strategy="replace", entries=tuple(entries),
        before=_snapshot(live, connect.workspace_id), after=_sorted(after),
        reason=f"the connect replaces its list with {connect.group}'s")


def _create_change(create: CreateChange, after: AccessSnapshot) -> AccessChange:
    entries = [*diff_entries("user", {}, after.users, {}), *diff_entries("domain", {}, after.domains, {})]
    entries = [e.model_copy(update={"reason": f"{create.group}'s list gives the new workspace {e.after}"})
               for e in entries]
    return AccessChange(
        address=create.address, location=create.location, depends_on=(create.address,),
        governs="create", workspace_id="", workspace_name=create.name, rides_on=create.address,
        strategy="replace", entries=tuple(entries), before=AccessSnapshot(), after=_sorted(after),
        reason=f"the creation gives it {create.group}'s list")


_JOIN_ORDER = {Action.DELETE: 0, Action.UPDATE: 1, Action.CREATE: 2}


def _join_reason(entry: EntryChange, group: str) -> str:
    if entry.action is Action.DELETE:
        return f"the workspace takes over {group}'s list"
    if entry.action is Action.CREATE:
        return f"{group}'s list gives it {entry.after}"
    return f"{entry.before} on its own list, {entry.after} on {group}'s"
