"""The per-person view of a plan: for each email and each domain, the
workspaces it gains, loses or changes role in.

A group's list is on every workspace of the group, so one entry change on it
is a change on each of them: the view expands it, which is what a reviewer
asks ("what can Raj see after this merge?").  Computed from the Plan alone,
like every renderer's input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.plan.model import AccessChange, Plan
from reconciler.roles import Privilege


@dataclass(frozen=True)
class PersonChange:
    """One workspace's change for one person."""

    workspace: str  # 'ws_1 "Name"', or 'new "Name"'
    address: str
    before: str | None
    after: str | None
    privilege: Privilege
    location: str | None


@dataclass
class Person:
    kind: str  # user or domain
    key: str  # email or domain
    changes: list[PersonChange] = field(default_factory=list)

    def count(self, privilege: Privilege) -> int:
        return sum(1 for c in self.changes if c.privilege == privilege)


def people(plan: Plan) -> list[Person]:
    """Every user and domain the plan changes, users first, each sorted."""
    found: dict[tuple[str, str], Person] = {}
    for change in plan.changes:
        if not isinstance(change, AccessChange):
            continue
        workspaces = change.reaches or (_label(change),)
        for entry in change.entries:
            person = found.setdefault((entry.kind, entry.key), Person(entry.kind, entry.key))
            person.changes += [
                PersonChange(ws, change.address, entry.before, entry.after, entry.privilege, entry.location)
                for ws in workspaces
            ]
    return [found[k] for k in sorted(found, key=lambda k: (k[0] != "user", k[1]))]


def totals(found: list[Person]) -> dict[Privilege, int]:
    """How many workspace-level grants, escalations, downgrades and revocations."""
    privileges: tuple[Privilege, ...] = ("grant", "escalation", "downgrade", "revocation")
    return {p: sum(person.count(p) for person in found) for p in privileges}


def _label(change: AccessChange) -> str:
    return f'{change.workspace_id} "{change.workspace_name}"' if change.workspace_name else change.workspace_id
