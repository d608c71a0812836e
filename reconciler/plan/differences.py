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

from dataclasses import dataclass

from reconciler.plan.model import AccessChange, AccessView, EntryChange, EntryKind, Plan
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
    roles: dict[int, tuple[dict[str, Role], dict[str, Role]]] = {}  # by view: the views after are shared

    def of(view: AccessView) -> tuple[dict[str, Role], dict[str, Role]]:
        known = roles.get(id(view))  # the plan holds every view while this runs: an id is one view
        if known is None:
            known = roles[id(view)] = ({u.email: u.role for u in view.users},
                                       {d.domain: d.role for d in view.domains})
        return known

    for effect in plan.effects:
        label = (f'{effect.workspace} "{effect.name}"' if effect.workspace and effect.name else
                 effect.workspace or f'new "{effect.name}"')
        before, after = of(effect.before), of(effect.after)
        sides: tuple[tuple[EntryKind, dict[str, Role], dict[str, Role]], ...] = (
            ("user", before[0], after[0]), ("domain", before[1], after[1]))
        for kind, old, new in sides:
            keys = ([k for k in old if k not in new] if removals_only else
                    [k for k in old if old[k] != new.get(k)] + [k for k in new if k not in old])
            found += [Difference(workspace=label, workspace_id=effect.workspace, kind=kind,
                                 key=key, before=old.get(key), after=new.get(key), because=effect.because)
                      for key in sorted(keys)]
    return found


def removals(plan: Plan) -> list[Difference]:
    """Every person or domain that loses all access to a workspace."""
    return differences(plan, removals_only=True)


def entry_of(plan: Plan, difference: Difference) -> tuple[AccessChange, EntryChange] | None:
    """The change entry behind ``difference``: of the changes that make it, the one changing that person or
    domain to that role (for its manifest line and its why); None when none does alone."""
    for change in plan.access_changes:
        if change.address not in difference.because:
            continue
        for entry in change.entries:
            if (entry.kind, entry.key, entry.after) == (difference.kind, difference.key, difference.after):
                return change, entry
    return None
