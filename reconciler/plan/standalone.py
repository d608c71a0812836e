"""Plan the standalone workspaces of the manifests: each its access list, then its settings.

A standalone workspace may share its list with workspaces no manifest names:
connected to it by hand in the web app (the API never says which workspaces
form a group). They are found as a group's hand-connected members are, by
the entry ids they share (``ProbableMembers``), and the list is then planned
ONCE for all of them: the rules and reviews of every workspace holding it
merge into that one change, a rule's ``except`` the sharing defeats is
refused, and the change names each of them (``reach``), so that no view of
the plan names fewer workspaces than the write reaches.  A workspace that a
manifest names and that shows the same entry ids holds the list too (two
standalone workspaces connected by hand): the change names it as well,
whatever its own manifest says; whether its own list agrees with the list
the plan leaves is ``plan/agreement.py``'s to judge.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.manifest import AccessList, DesiredWorkspace
from reconciler.plan.access import plan_access
from reconciler.plan.groups import ProbableMembers
from reconciler.plan.reach import label, named_sharer_note, named_sharers, reach_of, without_list
from reconciler.plan.model import AccessChange
from reconciler.plan.steps import Inputs, Planned
from reconciler.plan.workspaces import plan_settings


def plan_standalone(workspaces: Sequence[DesiredWorkspace], lists: dict[str, AccessList], named: set[str],
                    inputs: Inputs) -> Planned:
    """Each standalone workspace in manifest order: its access list, then its
    settings. ``named``: every workspace id a manifest names."""
    planned = Planned()
    probable = ProbableMembers(inputs.live, named)
    addresses = {w.id: w.address for w in workspaces}
    governed = without_list(workspaces)  # by the list they hold by hand, if any
    for ws in workspaces:
        if not inputs.scope(ws.address):
            continue
        if ws.address in lists:
            partners = probable.of(ws.id) if ws.id in inputs.live.workspaces else ()
            twins = named_sharers(ws.id, inputs.live, named)
            listless = tuple(t for t in twins if t in governed)
            change = _list_change(ws, lists[ws.address], (*partners, *listless), inputs)
            if change is None:
                planned.unchanged.append(ws.address)
            else:
                change = _reaching(change, ws, partners, {t: addresses.get(t) for t in twins}, inputs)
                planned.changes.append(change)
                planned.warnings += [_partner_warning(ws, change, partner, inputs) for partner in partners]
                planned.warnings += [_twin_warning(ws, change, twin, addresses.get(twin), inputs) for twin in twins]
        planned.changes += plan_settings(ws, ws.id, inputs.state, reassert=inputs.reassert)
    return planned


def _list_change(ws: DesiredWorkspace, access: AccessList, holding: Sequence[str],
                 inputs: Inputs) -> AccessChange | None:
    """The list's change, with the rules and reviews of every workspace ``holding`` it besides ``ws`` (those
    no manifest names, and those a manifest names without a list of their own)."""
    live = inputs.live
    if inputs.company is None:
        return plan_access(ws.address, ws.id, access, live, inputs.state, inputs.today)
    spaces = [live.workspaces[i] for i in (ws.id, *holding) if i in live.workspaces]
    return inputs.company.list_change(ws.address, ws.id, access, spaces)


def _reaching(change: AccessChange, ws: DesiredWorkspace, partners: Sequence[str],
              twins: Mapping[str, str | None], inputs: Inputs) -> AccessChange:
    """The change naming every workspace holding the list: its own, the manifests' workspaces connected to it
    by hand (``twins``: id -> address), then those no manifest names."""
    if not partners and not twins:
        return change
    live = inputs.live
    reach = (reach_of(ws.id, live),
             *(reach_of(t, live, probable=True, note=named_sharer_note(address)) for t, address in twins.items()),
             *(reach_of(p, live, probable=True, note=_PARTNER_NOTE) for p in partners))
    return change.model_copy(update={"reach": reach, "reaches": tuple(r.workspace for r in reach)})


_PARTNER_NOTE = "probably connected by hand: in no manifest, it shows the same access entries; the service does not say"


def _partner_warning(ws: DesiredWorkspace, change: AccessChange, partner: str, inputs: Inputs) -> str:
    return (f"{change.location}: {ws.address}: workspace {label(partner, inputs.live)} is in no manifest but "
            f"shows the same access entries as {ws.id}: it is probably connected to it by hand, so this change "
            f"of the list reaches it too. Declare the two as a group (homepage: {ws.id}) to say so.")


def _twin_warning(ws: DesiredWorkspace, change: AccessChange, twin: str, address: str | None,
                  inputs: Inputs) -> str:
    whose = f" ({address})" if address else ""
    return (f"{change.location}: {ws.address}: workspace {label(twin, inputs.live)}{whose} shows the same access "
            f"entries as {ws.id}: it is probably connected to it by hand, so this change of the list reaches it "
            f"too, whatever its own manifest says. Declare the two as one group with one list (homepage: {ws.id}) "
            "to say so.")
