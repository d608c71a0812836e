"""Two lists of the manifests on one list of the service: the list the plan leaves is what each wants.

Workspaces connected by hand in the web app hold one access list; two lists
of the manifests (two standalone workspaces, a group and a standalone
workspace) may then govern it without knowing.  Each is planned against the
list as fetched, so one that changes nothing there (a non-authoritative
list, or one that already matches) says nothing, while the other's write
leaves the list with what the first does not want: the next plan writes it
back, the one after undoes that, and no apply settles (issue 38).

So once the simulation (``plan/effects.py``) has followed every call, each
list of the manifests governing a list the plan writes, with another list of
the manifests, is planned again against the list the simulation leaves, as
the next plan would plan it; one that would change it disagrees with the
others, and the plan is refused before any call (``plan/refusals.py``).
Pure: the planning itself is the caller's (``Replan``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date

from reconciler.live import Live, LiveEntry
from reconciler.manifest import AccessList, Desired
from reconciler.plan.access import plan_access
from reconciler.plan.company import CompanyPlanner
from reconciler.plan.effects import Simulation
from reconciler.plan.groups import ProbableMembers
from reconciler.plan.model import AccessChange, Action, EntryChange
from reconciler.plan.reach import label, named_sharers, without_list
from reconciler.state.model import State
from reconciler.text import and_list

# (address, workspace id, list) -> its change, or None when the lists planned against match it.
PlanList = Callable[[str, str, AccessList], AccessChange | None]
# The live lists to plan against -> how a list of the manifests is planned against them.
Replan = Callable[[Live], PlanList]


def replanner(desired: Desired, state: State, today: date | None, named: set[str], live: Live, *,
              company: bool, member_id: Callable[[str], str | None]) -> Replan:
    """How the planner plans a list of the manifests (``plan/standalone.py``, ``plan/groups.py``), against
    other live lists: with its teams, the rules matching the workspaces holding it and the reviews when
    ``company``; the workspaces holding it are found as the plan found them (``named``, ``live``)."""
    probable = ProbableMembers(live, named)
    groups = {g.address: g for g in desired.groups}
    listless = without_list(desired.workspaces)

    def against(now: Live) -> PlanList:
        if not company:
            return lambda address, workspace_id, access: plan_access(address, workspace_id, access, now, state,
                                                                     today)
        planner = CompanyPlanner(desired, now, state, today=today, member_id=member_id)

        def plan(address: str, workspace_id: str, access: AccessList) -> AccessChange | None:
            group = groups.get(address)
            holding = (*probable.of(workspace_id), *(w for w in named_sharers(workspace_id, live, named)
                                                     if w in listless))
            spaces = (planner.group_workspaces(group, probable.of(group.homepage)) if group is not None else
                      [now.workspaces[i] for i in (workspace_id, *holding) if i in now.workspaces])
            return planner.list_change(address, workspace_id, access, spaces)
        return plan

    return against


@dataclass(frozen=True)
class Disagreement:
    """A list of the manifests that the list the plan leaves does not satisfy, and the others on that list."""

    change: AccessChange  # what it would change, planned against the list the plan leaves
    others: tuple[tuple[str, str], ...]  # (location, address) of every other list of the manifests on it
    workspace_ids: tuple[str, ...]  # every workspace holding the list
    workspaces: tuple[str, ...]  # the same, labelled


def disagreements(sim: Simulation, live: Live, lists: Iterable[tuple[str, str, AccessList]],
                  replan: Replan) -> list[Disagreement]:
    """For each list of the service the plan writes and two lists of the manifests or more govern
    (``lists``: address, workspace id, list), the first of them the list the plan leaves does not satisfy
    (the changes writing one list are one write already: ``plan/merge.py``)."""
    written = {sim.holder[w] for w in sim.because if w in sim.holder}
    governing: dict[int, list[tuple[str, str, AccessList]]] = {}
    for address, workspace_id, access in lists:
        list_id = sim.holder.get(workspace_id)
        if list_id in written:
            governing.setdefault(list_id, []).append((address, workspace_id, access))
    shared = {list_id: found for list_id, found in governing.items() if len(found) > 1}
    if not shared:
        return []
    plan = replan(_holding(sim, live, shared))
    problems = []
    for list_id, found in shared.items():
        for address, workspace_id, access in found:
            change = plan(address, workspace_id, access)
            if change is None:
                continue
            holders = sorted(w for w in sim.members.get(list_id, ()) if w in live.workspaces)
            problems.append(Disagreement(
                change=change, workspace_ids=tuple(holders), workspaces=tuple(label(w, live) for w in holders),
                others=tuple((str(a.location), other) for other, _, a in found if other != address)))
            break
    return problems


def _holding(sim: Simulation, live: Live, list_ids: Iterable[int]) -> Live:
    """``live`` with every workspace of ``list_ids`` holding the list the simulation leaves; an entry keeps
    its id where the list had it (the ids say which workspaces share a list)."""
    spaces = dict(live.workspaces)
    for list_id in list_ids:
        holders = [w for w in sorted(sim.members.get(list_id, ())) if w in live.workspaces]
        ids = {(kind, e.key): e.id for w in holders
               for kind, side in (("user", live.workspaces[w].users), ("domain", live.workspaces[w].domains))
               for e in side.values()}
        after = sim.lists[list_id]
        users = {k: LiveEntry(ids.get(("user", k), f"planned-user:{k}"), k, r) for k, r in after.users.items()}
        domains = {k: LiveEntry(ids.get(("domain", k), f"planned-domain:{k}"), k, r)
                   for k, r in after.domains.items()}
        for w in holders:
            spaces[w] = replace(live.workspaces[w], users=dict(users), domains=dict(domains))
    return replace(live, workspaces=spaces)


def described(problem: Disagreement) -> str:
    """One refusal line: every list's file:line, every workspace holding the list, what would change back."""
    change = problem.change
    homepage, *rest = problem.workspace_ids
    members = ", ".join(f"KEY: {{id: {w}}}" for w in rest)
    others = " and ".join(f"{location}: {address}" for location, address in problem.others)
    return (f"{others} and {change.location}: {change.address} want different entries on one access list in "
            f"the service: workspaces {and_list(problem.workspaces)} hold it (they show the same entry ids: "
            "connected by hand in the web app; the service does not say so). Once this plan is applied, "
            f"{change.address} would {and_list([_undo(e) for e in change.entries])} there, and every plan "
            f"would undo the one before. Make the lists agree, declare the workspaces as one group with one list "
            f"(homepage: {homepage}, workspaces: {{{members}}}), or disconnect them in the web app.")


def _undo(entry: EntryChange) -> str:
    if entry.action is Action.DELETE:
        return f"remove {entry.kind} {entry.key}"
    if entry.action is Action.CREATE:
        return f"add {entry.kind} {entry.key} as {entry.after}"
    return f"make {entry.kind} {entry.key} {entry.after}"

