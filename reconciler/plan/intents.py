"""Creations the state does not record: adopted, created again, or left to a person.

A workspace made from a template costs a credit, and the service gives a
creation no key of ours: a kill between the call and the record of its
answer loses the new id.  Apply therefore journals an intent before the call
(``CreationIntent``: name, account, template, group, homepage, when).  Here,
before anything else is planned, each creation in scope that the state does
not bind to a workspace is settled:

- an open intent matched by exactly one workspace the state does not know,
  of the intent's account, template and name, created after the intent
  (where the service reports ``createdAt``), is **adopted**: the plan says
  so and apply records it first, with no call and no credit;
- an open intent matched by none: the creation was not made (the kill came
  before the service made it, or it was refused), so it is planned again;
- an open intent matched by several, or a creation without an intent of
  which a namesake exists (a state lost elsewhere), **needs a person**: the
  creation is not planned (a second credit is never spent on a guess), the
  commands that settle it are printed, and the rest of the plan goes on.

Pure, like the rest of ``plan/``.
"""

from __future__ import annotations

import datetime
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from reconciler.live import Live
from reconciler.manifest import Desired, DesiredGroup, DesiredMember
from reconciler.plan.assets import CommandPaths
from reconciler.plan.model import Adoption, NeedsPerson, Resolution
from reconciler.plan.steps import Scope
from reconciler.plan.workspaces import Identity, namesakes
from reconciler.state.model import CreationIntent, ResourceState, State

# A workspace created up to this long before its intent's time still matches
# it: the service's clock and the apply's may disagree by that much.
CLOCK_SKEW = datetime.timedelta(minutes=5)


@dataclass
class Settled:
    """What ``settle_creations`` found: the state as the rest of the plan
    reads it (adoptions bound, intents of creations not made dropped), and
    what the plan says besides its changes."""

    state: State
    adopted: list[Adoption] = field(default_factory=list)
    needs_person: list[NeedsPerson] = field(default_factory=list)
    # Member addresses whose creation is not planned: a person decides.
    blocked: frozenset[str] = frozenset()
    # Member address -> why its creation is planned again (its intent found nothing).
    retried: dict[str, str] = field(default_factory=dict)


def settle_creations(desired: Desired, live: Live, state: State, *, scope: Scope, paths: CommandPaths) -> Settled:
    """Adopt, plan again or leave to a person each creation in scope that the
    state does not bind (``live`` must be the complete listing to tell)."""
    if not live.complete:  # the plan lists everything whenever it may create (needs_complete_listing)
        return Settled(state=state)
    by_identity = namesakes(((ws.id, Identity(ws.account_id, ws.template_id, ws.name))
                             for ws in live.workspaces.values()), state.known_ids().__contains__)
    resources = dict(state.resources)
    found = Settled(state=state)
    blocked: set[str] = set()
    claimed: set[str] = set()  # one workspace is adopted once
    for group, member in _unbound_creations(desired, state, scope):
        record = resources.get(member.address)
        intent = record.intent if record is not None else None
        if intent is not None:
            same = [w for w in by_identity.get(Identity(intent.account, intent.template, intent.name), [])
                    if w not in claimed]
            after = [w for w in same if _created_after(live.workspaces[w].created_at, intent.at)]
            if len(after) == 1:
                claimed.add(after[0])
                resources[member.address] = ResourceState(id=after[0], connected_to=intent.homepage,
                                                          template=intent.template)
                found.adopted.append(_adoption(member, intent, after[0]))
                continue
            if len(after) > 1:
                blocked.add(member.address)
                found.needs_person.append(_several(member, intent, after, paths))
                continue
            del resources[member.address]  # none was made: the creation is planned again
            found.retried[member.address] = _retried(intent)
        homepage = live.workspaces.get(group.homepage)
        account = homepage.account_id if homepage is not None else None
        strangers = [w for w in by_identity.get(Identity(account, member.template, member.name), [])
                     if w not in claimed]
        if strangers:
            blocked.add(member.address)
            found.retried.pop(member.address, None)
            found.needs_person.append(_namesake(member, strangers, paths, intent))
    found.state = state.model_copy(update={"resources": resources})
    found.blocked = frozenset(blocked)
    return found


def _unbound_creations(desired: Desired, state: State, scope: Scope) -> Iterator[tuple[DesiredGroup, DesiredMember]]:
    """Each member made from a template, in scope, that the state binds to no workspace."""
    for group in desired.groups:
        for member in group.members:
            record = state.resources.get(member.address)
            if member.template is not None and scope(member.address) and (record is None or not record.id):
                yield group, member


def _created_after(created_at: str | None, intended_at: str) -> bool:
    """Whether a workspace created at ``created_at`` can be the intent's (unknown: yes)."""
    if created_at is None:
        return True
    try:
        created = datetime.datetime.fromisoformat(created_at.replace("Z", "+00:00"))
        intended = datetime.datetime.fromisoformat(intended_at.replace("Z", "+00:00"))
    except ValueError:
        return True  # a time that cannot be read decides nothing; name, account and template still must match
    if created.tzinfo is None or intended.tzinfo is None:
        return True
    return created >= intended - CLOCK_SKEW


def _adoption(member: DesiredMember, intent: CreationIntent, workspace_id: str) -> Adoption:
    return Adoption(
        address=member.address, location=str(member.location), workspace_id=workspace_id, group=intent.group,
        homepage_id=intent.homepage, template_id=intent.template, intended_at=intent.at,
        reason=(f"adopted {workspace_id}: created by the interrupted apply of {intent.at}, name, account and "
                "template match its recorded intent"))


def _retried(intent: CreationIntent) -> str:
    return (f"the interrupted apply of {intent.at} recorded this creation and no workspace matches it: it was not "
            "made, so it is created now (uses 1 workspace credit)")


def _where(paths: CommandPaths) -> str:
    state = f" --state {shlex.quote(paths.state)}" if paths.state else ""
    return f"{shlex.quote(paths.manifest)}{state}"


def _imports(member: DesiredMember, workspace_ids: list[str], paths: CommandPaths) -> tuple[Resolution, ...]:
    return tuple(Resolution(when=f"{wid} is the one it stands for",
                            command=f"reconciler import {shlex.quote(member.address)} {wid} {_where(paths)}")
                 for wid in workspace_ids)


def _several(member: DesiredMember, intent: CreationIntent, workspace_ids: list[str],
             paths: CommandPaths) -> NeedsPerson:
    return NeedsPerson(
        kind="workspace", address=member.address, location=str(member.location), cause="several-candidates",
        name=intent.name, workspace_ids=tuple(workspace_ids),
        reason=(f"the interrupted apply of {intent.at} sent its creation, and {len(workspace_ids)} workspaces "
                f"match its recorded intent ({', '.join(workspace_ids)}: \"{intent.name}\", account "
                f"{intent.account}, template {intent.template}); which one it made cannot be told, so none is "
                "adopted and no other is created"),
        check=f"Open {' and '.join(workspace_ids)} in the web app and find the one this entry stands for.",
        resolutions=_imports(member, workspace_ids, paths))


def _namesake(member: DesiredMember, workspace_ids: list[str], paths: CommandPaths,
              intent: CreationIntent | None) -> NeedsPerson:
    first = workspace_ids[0]
    why = ("records no intent to create it (an apply whose state was lost may have made it)" if intent is None else
           f"it was created before the interrupted apply of {intent.at} recorded its intent, so it is not that "
           "apply's creation")
    return NeedsPerson(
        kind="workspace", address=member.address, location=str(member.location), cause="namesake-exists",
        name=member.name, workspace_ids=tuple(workspace_ids),
        reason=(f"workspace {first} \"{member.name}\" of the same account and template {member.template} already "
                f"exists, the state does not know it and {why}; creating another would spend a second credit, so "
                "the creation is not planned"),
        check=(f"Open {first} in the web app: if it is the one this entry stands for, import it; if not, give the "
               "member another name in the manifest."),
        resolutions=_imports(member, workspace_ids[:1], paths))
