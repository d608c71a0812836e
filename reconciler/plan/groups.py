"""Plan one group: its members' joins, its access list, their settings.

A group's list is on every workspace of the group, so its change says which
workspaces it reaches (``reaches``, ``reach``), and waits for the members
joining in the same plan; when a member is created in the same plan, the
final list rides in that creation's body instead.  Pure, like the rest of
``plan/``.
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.live import Live
from reconciler.manifest import AccessList, Desired, DesiredGroup
from reconciler.plan.access import plan_access
from reconciler.plan.model import AccessChange, ConnectChange, CreateChange, Reach
from reconciler.plan.reach import label, named_sharers, reach_of, without_list
from reconciler.plan.steps import Inputs, Planned
from reconciler.plan.workspaces import plan_members
from reconciler.state.model import State


def plan_groups(groups: Sequence[DesiredGroup], lists: dict[str, AccessList], named: set[str],
                inputs: Inputs) -> Planned:
    """Each group in manifest order; ``named`` is every workspace id a
    manifest names (the others that show a homepage's entries are probable
    members connected by hand)."""
    planned = Planned()
    probable = ProbableMembers(inputs.live, named)
    for group in groups:
        planned += plan_group(group, lists.get(group.address), probable, inputs)
    return planned


def plan_group(group: DesiredGroup, access: AccessList | None, probable: ProbableMembers,
               inputs: Inputs) -> Planned:
    """The members' connections and creations, then the group's access list
    (so the list reaches the new members), then the members' sections, pages
    and tasks."""
    live, state = inputs.live, inputs.state
    members = plan_members(group, live, state, scope=lambda a: inputs.scope(a) and a not in inputs.blocked,
                           reassert=inputs.reassert)
    planned = Planned(warnings=list(members.warnings))
    change = None
    if access is not None:
        change = (inputs.company.list_change(group.address, group.homepage, access,
                                             inputs.company.group_workspaces(group, probable.of(group.homepage)))
                  if inputs.company is not None else
                  plan_access(group.address, group.homepage, access, live, state, inputs.today))
        if change is None:
            planned.unchanged.append(group.address)
        else:
            hand_made = probable.of(group.homepage)
            change = change.model_copy(update={"reaches": _reaches(group, live, state, hand_made),
                                               "reach": _reach(group, live, state, hand_made)})
            planned.warnings += [_probable_warning(group, change, live, wid) for wid in hand_made]
    joins, change = ride(members.joins, change)
    planned.changes += [*joins, *([change] if change is not None else []), *members.settings]
    return planned


def ride(
    joins: list[ConnectChange | CreateChange], access: AccessChange | None
) -> tuple[list[ConnectChange | CreateChange], AccessChange | None]:
    """Joins first, then the access list, which waits for them.

    When the group's list changes and a workspace is created in the same
    plan, the final lists travel in the first creation's body (one call
    fewer; the new workspace never holds the old list).  Not when people are
    to be notified: the creation body has no ``notifyPeople``.
    """
    if access is None:
        return joins, None
    first = next((j for j in joins if isinstance(j, CreateChange)), None)
    if first is None or access.notify:
        depends = tuple(j.address for j in joins)
        return joins, access.model_copy(update={"depends_on": depends}) if depends else access
    carrier = first.model_copy(update={"access": access.after, "access_address": access.address})
    joins = [carrier if j is first else j for j in joins]
    riding = access.model_copy(update={"rides_on": first.address, "calls": (), "depends_on": (first.address,)})
    return joins, riding


def _reaches(group: DesiredGroup, live: Live, state: State, probable: Sequence[str] = ()) -> tuple[str, ...]:
    """Every workspace of the group: the homepage, then the members in manifest
    order, then those probably connected by hand that no manifest names."""
    found = [label(group.homepage, live)]
    for member in group.members:
        workspace_id = member.workspace_id(state.recorded_id)
        found.append(label(workspace_id, live) if workspace_id else f'new "{member.name}"')
    return (*found, *(reach_of(wid, live, probable=True).workspace for wid in probable))


def _reach(group: DesiredGroup, live: Live, state: State, probable: Sequence[str]) -> tuple[Reach, ...]:
    """The workspaces that hold the group's list once applied, each with the
    list it holds now: the homepage and the members already in the group
    hold the group's; a member joining holds its own until the join replaces
    it (the service's rule 1); one this plan creates holds none (its first
    list is the group's, carried by the creation or set right after it); a
    member the service no longer has holds nothing and is left out."""
    found = [reach_of(group.homepage, live)]
    for member in group.members:
        workspace_id = member.workspace_id(state.recorded_id)
        if workspace_id is None:
            found.append(Reach(workspace=f'new "{member.name}"'))
        elif workspace_id in live.workspaces:
            found.append(reach_of(workspace_id, live))
    found += [reach_of(wid, live, probable=True) for wid in probable]
    return tuple(found)


class ProbableMembers:
    """Workspaces no manifest names that show a homepage's access entries:
    connected to its group by hand, so the group's list is theirs too.

    Needs the complete listing (``needs_complete_listing`` asks for it when a
    group has a list); the shared entries are worked out once per listing (``Live.sharing``).
    """

    def __init__(self, live: Live, named: set[str]) -> None:
        self._live = live
        self._named = named

    def of(self, homepage: str) -> tuple[str, ...]:
        if not self._live.complete:
            return ()
        shared = self._live.sharing.get(homepage)
        if not shared:  # most workspaces share no entry: asked of each list of the manifests, twice a plan
            return ()
        return tuple(sorted(shared - self._named))


def _probable_warning(group: DesiredGroup, change: AccessChange, live: Live, workspace_id: str) -> str:
    ws = live.workspaces[workspace_id]
    return (f"{change.location}: {group.address}: workspace {label(workspace_id, live)} is in no manifest but "
            f"shows the same access entries as the homepage {group.homepage}: it is probably connected to the "
            f"group by hand, so this change of the group's list reaches it too. Declare it among the group's "
            f"workspaces (KEY: {{id: {ws.id}}}) to say so.")


def company_governed(desired: Desired, live: Live, state: State, named: set[str]) -> set[str]:
    """The workspace ids a manifest's access list is on: rules there merge into that list."""
    probable = ProbableMembers(live, named)
    found: set[str] = set()
    for group in desired.groups:
        if group.access is None:
            continue
        found.add(group.homepage)
        found.update(i for i in (m.workspace_id(state.recorded_id) for m in group.members) if i is not None)
        found.update(probable.of(group.homepage))
    listless = without_list(desired.workspaces)
    for ws in desired.workspaces:
        if ws.access is not None:
            found.add(ws.id)
            found.update(probable.of(ws.id))  # connected to it by hand: its list is planned with it
            # so is a workspace of the manifests without a list of its own that holds it by hand
            found.update(w for w in named_sharers(ws.id, live, named) if w in listless)
    return found


def company_groups_without_list(desired: Desired, live: Live, state: State, named: set[str]) -> dict[str, list[str]]:
    """Homepage -> the group's other workspaces, for each group the manifests name without a list."""
    probable = ProbableMembers(live, named)
    return {g.homepage: [*(i for i in (m.workspace_id(state.recorded_id) for m in g.members) if i is not None),
                         *probable.of(g.homepage)]
            for g in desired.groups if g.access is None}
