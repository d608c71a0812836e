"""What each workspace gains, loses or changes, read from the plan's ``effects``.

A change's entries say what one list of the manifests does; the effects say
what every workspace will hold, whichever call makes it so: one entry of a
group's list is on every member, one of a list the service shares with a
workspace connected by hand is on that workspace too, a join replaces a
workspace's list, a creation gives one.  What guards the plan as a whole
(``--max-removals``, the policy's caps, ``protectedOwners``, who may be
granted what) counts here, per workspace, so a workspace no view would name
cannot lose or gain unseen (issue 38, item 3).  Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reconciler.plan.model import AccessChange, DomainRole, EntryChange, EntryKind, Plan, UserRole
from reconciler.vocabulary import Privilege, Role, privilege


@dataclass(frozen=True)
class Difference:
    """One person or domain on one workspace: its role there now and once applied."""

    workspace: str  # 'ws_1 "Name"', or 'new "Name"' for one this plan creates
    workspace_id: str | None  # None: this plan creates it
    kind: EntryKind
    key: str
    before: Role | None
    after: Role | None
    because: tuple[str, ...]  # the addresses of the changes that make the workspace's difference

    @property
    def privilege(self) -> Privilege:
        return privilege(self.before, self.after)

    @property
    def cause(self) -> str:
        """``group.onboarding``, or ``workspace.a and workspace.b``."""
        return " and ".join(self.because) if self.because else "this plan"

    def text(self) -> str:
        """``ws_1 "Name": user bob@x.com (group.onboarding)``."""
        return f"{self.workspace}: {self.kind} {self.key} ({self.cause})"


def differences(plan: Plan, *, removals_only: bool = False) -> list[Difference]:
    """Every (workspace, person or domain) whose role differs once the plan is applied, in the effects'
    order (live workspaces by id, then new ones), users before domains, by key; ``removals_only``: only
    those losing all access."""
    found: list[Difference] = []
    for effect in plan.effects:
        label = (f'{effect.workspace} "{effect.name}"' if effect.workspace and effect.name else
                 effect.workspace or f'new "{effect.name}"')
        sides: tuple[tuple[EntryKind, _Keyed, _Keyed], ...] = (
            ("user", _keyed(effect.before.users), _keyed(effect.after.users)),
            ("domain", _keyed(effect.before.domains), _keyed(effect.after.domains)))
        for kind, old, new in sides:
            found += [Difference(workspace=label, workspace_id=effect.workspace, kind=kind,
                                 key=key, before=before, after=after, because=effect.because)
                      for key, before, after in _changed(old, new) if after is None or not removals_only]
    return found


_Keyed = list[tuple[object, str, Role]]


def _keyed(entries: Sequence[UserRole] | Sequence[DomainRole]) -> _Keyed:
    """(the entry itself, its key, its role) of a view's entries, in the view's order (by key)."""
    return [(e, e.email, e.role) if isinstance(e, UserRole) else (e, e.domain, e.role) for e in entries]


def _changed(old: _Keyed, new: _Keyed) -> Iterator[tuple[str, Role | None, Role | None]]:
    """(key, role before, role after) of every key whose role differs between two views sorted by key: one
    walk of both, an entry the two views share (the same object: ``AccessViews``) passed at once."""
    i = j = 0
    while i < len(old) or j < len(new):
        if i < len(old) and j < len(new) and old[i][0] is new[j][0]:
            i, j = i + 1, j + 1
        elif j >= len(new) or (i < len(old) and old[i][1] < new[j][1]):
            yield old[i][1], old[i][2], None
            i += 1
        elif i >= len(old) or new[j][1] < old[i][1]:
            yield new[j][1], None, new[j][2]
            j += 1
        else:
            if old[i][2] != new[j][2]:
                yield old[i][1], old[i][2], new[j][2]
            i, j = i + 1, j + 1


def removals(plan: Plan) -> list[Difference]:
    """Every person or domain that loses all access to a workspace."""
    return differences(plan, removals_only=True)


# (change address, kind, key, role after) -> the change and its entry.
EntryIndex = dict[tuple[str, EntryKind, str, Role | None], tuple[AccessChange, EntryChange]]


def entry_index(plan: Plan) -> EntryIndex:
    """Every entry change of the plan by what ``entry_of`` looks it up by: one pass over the plan, so that
    naming the line behind each of 10,000 differences is not 10,000 passes."""
    return {(change.address, entry.kind, entry.key, entry.after): (change, entry)
            for change in plan.access_changes for entry in change.entries}


def entry_of(index: EntryIndex, difference: Difference) -> tuple[AccessChange, EntryChange] | None:
    """The change entry behind ``difference``: of the changes that make it (in apply's order), the first
    changing that person or domain to that role (for its manifest line and its why); None when none does
    alone. ``index``: the plan's ``entry_index``."""
    for address in difference.because:
        found = index.get((address, difference.kind, difference.key, difference.after))
        if found is not None:
            return found
    return None
