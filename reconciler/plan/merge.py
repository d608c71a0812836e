"""One list, one change: the lists of the manifests that govern one list of the service are written by one call.

Workspaces connected by hand in the web app hold one access list; two lists
of the manifests (two standalone workspaces, a group and a standalone
workspace) may then govern it without knowing.  Each is planned against the
list as fetched, so two writes of the same side would each send the fetched
list with only their own entries changed: the second would put back what
the first took away (issue 38: a reviewed revocation came back).

So the changes the simulation (``plan/effects.py``) finds writing one side
of one list (``Simulation.written_twice``) become one write: the first in
apply's order sends the list with every entry any of them changes
(``carries``), the others send nothing and name it (``carried_by``).  Each
keeps the entries it wants, under its own address and manifest line, so the
reviewer reads each entry once, under the list of the manifests that wants
it, and the state records each list (and a review's revocations) where it
is governed.  An entry two of them change alike is kept by the first only,
except that an access review's revocation is kept by every list it was
decided on (each is a review item whose evidence must show it carried out),
and any other source of the same removal yields to it.
Two of them changing one entry differently (one revokes what the other
grants, two roles) is a clash: refused before any call, naming both sources
and every workspace holding the list.  Whether the merged list then
satisfies every list of the manifests on it (an authoritative list that
does not list what another adds) is ``plan/agreement.py``'s question.

Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.errors import PlanError
from reconciler.live import Live
from reconciler.plan.effects import Simulation
from reconciler.plan.model import AccessChange, AccessSnapshot, Action, ApiCall, Change, EntryChange, made
from reconciler.plan.reach import label
from reconciler.text import and_list


@dataclass(frozen=True)
class Clash:
    """Two changes of one list of the service wanting one entry differently."""

    first: AccessChange
    first_entry: EntryChange
    second: AccessChange
    second_entry: EntryChange
    workspaces: tuple[str, ...]  # every workspace holding the list, labelled


def one_write_per_list(changes: Sequence[Change], sim: Simulation, live: Live) -> list[Change]:
    """``changes`` with every set of changes writing one list made one write (see the module); the plan is
    refused (``PlanError``) when two of them change one entry differently."""
    carriers = _carriers(sim)
    if not carriers:
        return list(changes)
    by_address = {c.address: c for c in changes if isinstance(c, AccessChange)}
    made_of: dict[str, AccessChange] = {}
    clashes: list[Clash] = []
    for carrier, riders in carriers.items():
        merged, found = _merged(by_address[carrier], [by_address[r] for r in riders], sim, live)
        made_of.update(merged)
        clashes += found
    if clashes:
        raise PlanError("\n".join(["The plan cannot be made:", *(f"  {_described(c)}" for c in clashes)]))
    out: list[Change] = []
    for change in changes:
        if not isinstance(change, AccessChange) or change.address not in made_of:
            out.append(change)
        elif made_of[change.address].entries:  # a list whose every entry another one writes adds nothing
            out.append(made_of[change.address])
    return out


def _carriers(sim: Simulation) -> dict[str, list[str]]:
    """For each list the simulation saw written twice, the address of its first change -> the later ones,
    in apply's order (a change writing both sides of a list may pair with two others)."""
    first_of: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for first, second in sim.written_twice:
        carrier = first_of.get(first.address, first.address)
        first_of.setdefault(first.address, carrier)
        riders = found.setdefault(carrier, [])
        if second.address not in riders and second.address != carrier:
            riders.append(second.address)
            first_of[second.address] = carrier
    return found


def _merged(carrier: AccessChange, riders: Sequence[AccessChange], sim: Simulation,
            live: Live) -> tuple[dict[str, AccessChange], list[Clash]]:
    """The carrier writing every rider's entries, and the riders with no call, each with the entries no
    earlier one of them changes alike; the clashes between them."""
    holders = tuple(label(w, live) for w in sim.holding(carrier.workspace_id) if w in live.workspaces)
    wanted: dict[tuple[str, str], tuple[EntryChange, AccessChange]] = {}
    kept: dict[str, list[EntryChange]] = {}
    clashes: list[Clash] = []
    for change in (carrier, *riders):
        mine = kept.setdefault(change.address, [])
        for entry in change.entries:
            seen = wanted.get((entry.kind, entry.key))
            if seen is None:
                wanted[(entry.kind, entry.key)] = (entry, change)
                mine.append(entry)
            elif (seen[0].action, seen[0].after) != (entry.action, entry.after):
                clashes.append(Clash(seen[1], seen[0], change, entry, holders))
            elif _reviewed(entry):
                # A review's decision (or its onDue) is what the evidence must show carried out, under the list
                # it was decided on: each review item keeps its entry; any other source yields to it.
                if not _reviewed(seen[0]):
                    kept[seen[1].address].remove(seen[0])
                    wanted[(entry.kind, entry.key)] = (entry, change)
                mine.append(entry)
    after = _after(carrier.before, [entry for entry, _ in wanted.values()])
    notifying = [c for c in (carrier, *riders) if c.notify]
    written = carrier.model_copy(update={
        "entries": tuple(kept[carrier.address]), "after": after, "strategy": "replace",
        "calls": (made(ApiCall, method="POST", path=f"/workspaces/{carrier.workspace_id}/access"),),
        "carries": tuple(r.address for r in riders if kept[r.address]),
        "notify": bool(notifying), "message": notifying[0].message if notifying else None,
        "notified": tuple(sorted({k for c in (carrier, *riders) for k in c.notified}))})
    found = {carrier.address: written}
    for rider in riders:
        found[rider.address] = rider.model_copy(update={
            "entries": tuple(kept[rider.address]), "after": after, "strategy": "replace",
            "calls": (), "carried_by": carrier.address,
            "depends_on": (*rider.depends_on, carrier.address)})
    return found, clashes


def _reviewed(entry: EntryChange) -> bool:
    return entry.source is not None and entry.source.kind == "review"


def _after(before: AccessSnapshot, entries: Sequence[EntryChange]) -> AccessSnapshot:
    """``before`` with every entry change made."""
    users, domains = dict(before.users), dict(before.domains)
    for entry in entries:
        side = users if entry.kind == "user" else domains
        if entry.action is Action.DELETE:
            side.pop(entry.key, None)
        elif entry.after is not None:
            side[entry.key] = entry.after
    return made(AccessSnapshot, users=dict(sorted(users.items())), domains=dict(sorted(domains.items())))


def _described(clash: Clash) -> str:
    """One refusal line: both changes' file:line and what each wants of the entry, every workspace
    holding the list, the ways out."""
    first, second = clash.first, clash.second
    return (f"{first.location}: {first.address} would {_wants(clash.first_entry)} and {second.location}: "
            f"{second.address} would {_wants(clash.second_entry)}, on one access list in the service: workspaces "
            f"{and_list(clash.workspaces)} hold it (they show the same entry ids: connected by hand in the web "
            "app; the service does not say so). One call writes the list, so only one of them can hold. Make "
            "the lists agree, declare the workspaces as one group with one list, or disconnect them in the web "
            "app.")


def _wants(entry: EntryChange) -> str:
    """``remove user bob@x.com (revoked in review q4 by jane@acme.com, reviews/q4/jane.yaml:7)``."""
    what = (f"remove {entry.kind} {entry.key}" if entry.action is Action.DELETE else
            f"add {entry.kind} {entry.key} as {entry.after}" if entry.action is Action.CREATE else
            f"make {entry.kind} {entry.key} {entry.after}")
    why = [entry.why] if entry.why else []
    where = entry.source.location if entry.source is not None and entry.source.location else entry.location
    if where:
        why.append(where)
    return f"{what} ({', '.join(why)})" if why else what
