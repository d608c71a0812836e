"""The per-person view of a plan: for each email and each domain, the
workspaces it gains, loses or changes role in.

A group's list is on every workspace of the group, so a change of it is a
change on each of them, but not the same one everywhere: each workspace is
compared from the list it holds now (``AccessChange.reach``: a member that
joins the group holds its own until the join, one this plan creates holds
none) to the group's list once applied.  That is what a reviewer asks ("what
can Raj see after this merge?").  Computed from the Plan alone, like every
renderer's input.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from reconciler.plan.model import AccessChange, EntryChange, EntryKind, Plan
from reconciler.vocabulary import Privilege, Role, privilege
from reconciler.text import plural


DEACTIVATED = "deactivated in the directory"  # a leaver's revocations: (deactivated in the directory on DAY)


@dataclass(frozen=True)
class PersonChange:
    """One workspace's change for one person."""

    workspace: str  # 'ws_1 "Name"', or 'new "Name"'
    address: str
    before: str | None
    after: str | None
    privilege: Privilege
    location: str | None
    cause: str | None = None  # the team or rule behind it: "rule offboarded", "team customer-success"


@dataclass
class Person:
    kind: str  # user or domain
    key: str  # email or domain
    changes: list[PersonChange] = field(default_factory=list)

    def count(self, privilege: Privilege) -> int:
        return sum(1 for c in self.changes if c.privilege == privilege)

    def loss_summary(self) -> str | None:
        """``ana@acme.com loses access to 312 workspaces: 300 via rule offboarded, 12 via team
        customer-success``: the revocations by what caused them, when a team or rule caused any."""
        lost = [c for c in self.changes if c.privilege == "revocation"]
        if not any(c.cause for c in lost):
            return None
        causes: dict[str, int] = {}
        for c in lost:
            key = (f"({c.cause})" if c.cause and c.cause.startswith(DEACTIVATED) else f"via {c.cause}" if c.cause
                   else "not in the manifest")
            causes[key] = causes.get(key, 0) + 1
        parts = ", ".join(f"{n} {cause}" for cause, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{self.key} loses access to {plural(len(lost), 'workspace')}: {parts}"


def people(plan: Plan) -> list[Person]:
    """Every user and domain the plan changes on some workspace, users first, each sorted."""
    found: dict[tuple[str, str], Person] = {}
    # A workspace this plan creates is counted by its creation's change (governs "create"), which the
    # group's list change leaves out of its reach (plan/effects.py ``with_joins``).
    for change in plan.access_changes:
        entries = {(e.kind, e.key): e for e in change.entries}
        for workspace, kind, key, before, after in workspace_changes(change):
            person = found.setdefault((kind, key), Person(kind, key))
            entry = entries.get((kind, key))
            person.changes.append(PersonChange(workspace, change.address, before, after, privilege(before, after),
                                               entry.location if entry else None, _cause(entry)))
    return [found[k] for k in sorted(found, key=lambda k: (k[0] != "user", k[1]))]


def _cause(entry: EntryChange | None) -> str | None:
    """The team, rule or review behind an entry's change, as the per-person view names it: ``team cs``,
    ``rule offboarded``, ``review q4 by bo@acme.com``, ``review q4 (not reviewed by 2027-02-01)``; None for
    an explicit entry.  (A review's revocation was once named from its empty team: "via team None".)"""
    source = entry.source if entry is not None else None
    if source is None:
        return None
    if source.kind == "review":
        return f"review {source.campaign}" + (f" (not reviewed by {source.due})" if source.due else
                                              f" by {source.reviewer}" if source.reviewer else "")
    if source.kind == "directory":
        return f"{DEACTIVATED} on {source.since}" if entry is not None and entry.after is None else "the directory"
    if source.kind == "rule":
        return f"rule {source.rule}"
    return f"team {source.team}" if source.kind == "team" and source.team else None


def workspace_changes(change: AccessChange) -> Iterator[tuple[str, EntryKind, str, Role | None, Role | None]]:
    """(workspace, kind, key, role before, role after) for every entry whose
    role differs between a workspace's list now and the list once applied."""
    reach = [(r.workspace, r.before) for r in change.reach] or [(_label(change), change.before)]
    for workspace, before in reach:
        sides: tuple[tuple[EntryKind, dict[str, Role], dict[str, Role]], ...] = (
            ("user", before.users, change.after.users), ("domain", before.domains, change.after.domains))
        for kind, now, then in sides:
            for key in sorted({*now, *then}):
                if now.get(key) != then.get(key):
                    yield workspace, kind, key, now.get(key), then.get(key)


def entry_workspaces(change: AccessChange, entry: EntryChange) -> int | None:
    """On how many workspaces ``entry`` (a change of a group's list) is that
    very change, role for role; None for a list on one workspace."""
    if len(change.reaches) <= 1:  # a list on one workspace (a joining one is in ``reaches``, not ``reach``)
        return None
    return sum(1 for _, kind, key, before, after in workspace_changes(change)
               if (kind, key, before, after) == (entry.kind, entry.key, entry.before, entry.after))


def totals(found: list[Person]) -> dict[Privilege, int]:
    """How many workspace-level grants, escalations, downgrades and revocations."""
    privileges: tuple[Privilege, ...] = ("grant", "escalation", "downgrade", "revocation")
    return {p: sum(person.count(p) for person in found) for p in privileges}


def _label(change: AccessChange) -> str:
    workspace = change.workspace_id or "new"  # a creation's list: the workspace has no id yet
    return f'{workspace} "{change.workspace_name}"' if change.workspace_name else workspace


def whose_list(change: AccessChange) -> str:
    """How the views name a list that reaches several workspaces: a group's, or
    a standalone workspace's that the service shares with workspaces connected
    to it by hand."""
    return "the group's list" if change.address.startswith("group.") else "this workspace's list"
