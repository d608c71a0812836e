"""The planner: a pure function (Desired, Live, State) → Plan.

No I/O happens here and nothing from ``reconciler.api`` is imported: a test
can build all three inputs by hand.  Everything that is unsafe (an unknown
workspace, an access list left without an owner) is refused here, before
any call, with the manifest location that caused it.

``make_plan`` is the sequence of the steps, each the rule of its own module:
refusals (``refusals``), groups (``groups``), standalone workspaces
(``workspaces``), assets (``assets``), then what the plan says besides its
changes (``facts``) and what it costs (``cost``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from reconciler.gcpause import gc_paused
from reconciler.live import Live
from reconciler.manifest import Desired, DesiredGroup, DesiredMember
from reconciler.plan import facts
from reconciler.plan.agreement import disagreements, replanner
from reconciler.plan.assets import CommandPaths, plan_assets
from reconciler.plan.cost import plan_cost
from reconciler.plan.lookalikes import invisible_warnings
from reconciler.plan.intents import settle_creations
from reconciler.plan.groups import company_governed, company_groups_without_list, plan_groups
from reconciler.plan.company import CompanyPlanner
from reconciler.plan.effects import effects, simulate, with_joins
from reconciler.plan.model import (
    AccessChange,
    AssetChange,
    Change,
    ConnectChange,
    Cost,
    CreateChange,
    Effect,
    LeftAlone,
    Moved,
    NeedsPerson,
    Plan,
    ProbablySamePerson,
)
from reconciler.plan.merge import one_write_per_list
from reconciler.plan.moves import apply_moves
from reconciler.plan.refusals import (
    refuse_disagreements, refuse_ownerless, refuse_reviews_of_joined, refuse_unplannable)
from reconciler.plan.standalone import plan_standalone
from reconciler.plan.steps import Inputs, Planned
from reconciler.state.model import State


@gc_paused()
def make_plan(
    desired: Desired,
    live: Live,
    state: State,
    *,
    targets: Sequence[str] = (),
    limits: Mapping[str, int] | None = None,
    reassert: bool = False,
    show_unmanaged: bool = False,
    today: date | None = None,
    expiry_warning_days: int = 14,
    paths: CommandPaths | None = None,
) -> Plan:
    """Compute every change that makes the service match ``desired``.

    ``paths``: the manifests' PATH and ``--state`` as the user gave them, for
    the commands the plan prints (default: the manifest root, the default state).

    Order: per group, its members' connections and creations, then its
    access list (so the list reaches the new members), then the members'
    sections, pages and tasks; then standalone workspaces, each its access
    list and then its settings; then assets.  Otherwise manifest order, so
    two plans of the same manifests list their changes alike.
    """
    paths = paths or CommandPaths(manifest=str(desired.root))
    scope = lambda address: _targeted(address, targets)  # noqa: E731 - one line, read by every step
    # The manifests' moved: entries first: every step below reads the addresses as they are now.
    state, moves = apply_moves(desired, state)
    # Creations an interrupted apply left open are adopted next: the rest of the plan reads them as recorded.
    settled = settle_creations(desired, live, state, scope=scope, paths=paths)
    state = settled.state
    # Teams and rules (plan/company.py): every list expanded, then the workspaces no list governs.
    company = CompanyPlanner(desired, live, state, today=today, member_id=state.recorded_id)
    inputs = Inputs(live=live, state=state, scope=scope, reassert=reassert, today=today,
                    company=company if company.active else None, blocked=settled.blocked)
    refuse_unplannable(desired, inputs)
    lists = [item for item in desired.access_lists() if inputs.scope(item[0])]
    by_address = {address: access for address, _, access in lists}
    named = set(wanted_workspaces(desired, state))
    planned = plan_groups(desired.groups, by_address, named, inputs)
    planned += plan_standalone(desired.workspaces, by_address, named, inputs)
    named = _plan_company(company, desired, live, state, planned, inputs, targets)  # with those found by rules
    planned.changes = [_retried(c, settled.retried) for c in planned.changes]
    assets, doubts = plan_assets(desired.assets, state, scope=inputs.scope, reassert=reassert, paths=paths)
    planned.changes += assets
    # An unnamed workspace left without an owner waits for a person; a manifest's list so left refuses the plan.
    planned.changes, ownerless = company.set_aside_ownerless(planned.changes)
    # What the calls do to each workspace's access (plan/effects.py): a join's
    # loss and gain become an access change of its own, reviewed like any other.
    sim = simulate(planned.changes, live, _named_groups(desired, state, planned.changes))
    if sim.written_twice:  # lists of the manifests on one list of the service: one write (plan/merge.py)
        planned.changes = one_write_per_list(planned.changes, sim, live)
        sim = simulate(planned.changes, live, _named_groups(desired, state, planned.changes))
    replan = replanner(desired, state, today, set(wanted_workspaces(desired, state)), live, company=company.active,
                       member_id=state.recorded_id)
    refuse_disagreements(disagreements(sim, live, lists, replan))
    refuse_reviews_of_joined([c for c in planned.changes if isinstance(c, ConnectChange) and c.address in sim.joined],
                             company.review_revocations)
    planned.changes = with_joins(planned.changes, sim, live)
    refuse_ownerless(planned.changes, desired.rules)
    forgotten = facts.forgotten(desired, state, targets)
    planned.warnings += [*facts.warnings(desired, live, state, planned.changes, forgotten, today=today,
                                         expiry_warning_days=expiry_warning_days,
                                         state_in_postgres=paths.state_in_postgres),
                         *invisible_warnings((ws.id, ws.name, ws.users) for ws in live.workspaces.values())]
    plan = _plan(desired, live, state, planned, lists, [*settled.needs_person, *ownerless, *doubts], forgotten,
                 company, named, effects(sim, live), moves, targets=targets, limits=limits, reassert=reassert,
                 show_unmanaged=show_unmanaged)
    return plan.model_copy(update={"adopted": tuple(settled.adopted)}) if settled.adopted else plan


def _plan_company(company: CompanyPlanner, desired: Desired, live: Live, state: State, planned: Planned,
                  inputs: Inputs, targets: Sequence[str]) -> set[str]:
    """Add the changes and warnings of teams and rules over workspaces no
    manifest names; return the workspaces named by a manifest."""
    named = set(wanted_workspaces(desired, state))
    if not company.active:
        return named
    governed = company_governed(desired, live, state, named)
    without_list = company_groups_without_list(desired, live, state, named)
    planned.changes += company.unmanaged_changes(governed, without_list,
                                                 lambda address: not targets or inputs.scope(address))
    planned.warnings += company.unmatched_warnings()
    planned.warnings += company.review_warnings()  # refuses a review revoking what a manifest grants
    # One definition of "named by a manifest" for every count: also the
    # members of a named group found by their shared entries.
    return named | governed | {m for members in without_list.values() for m in members}


def _retried(change: Change, retried: Mapping[str, str]) -> Change:
    """A creation planned again after its intent found nothing says so."""
    if isinstance(change, CreateChange) and change.address in retried:
        return change.model_copy(update={"reason": retried[change.address]})
    return change


def _plan(desired: Desired, live: Live, state: State, planned: Planned, lists: facts.Lists,
          needs_person: Sequence[NeedsPerson], forgotten: tuple[str, ...], company: CompanyPlanner,
          named: set[str], effects_found: tuple[Effect, ...], moves: tuple[Moved, ...], *,
          targets: Sequence[str],
          limits: Mapping[str, int] | None, reassert: bool, show_unmanaged: bool) -> Plan:
    """The Plan of what the steps found, with its facts, cost and provenance."""
    changes = planned.changes
    managed_ids = named & live.workspaces.keys()
    unmanaged_count, unmanaged = facts.unmanaged(managed_ids, live, targets=targets, show=show_unmanaged)
    return Plan(
        changes=tuple(changes),
        unchanged=tuple(planned.unchanged),
        managed=(*(company.managed(address, wid, access) for address, wid, access in lists),
                 *company.unmanaged_managed),
        addresses=tuple(a for a in desired.addresses() if _targeted(a, targets)),
        forgotten=forgotten,
        moved=moves,
        reassert=reassert,
        live_workspaces=live.total,
        unmanaged_count=unmanaged_count,
        rules_only_count=company.rules_only(managed_ids) if unmanaged_count is not None else None,
        rules_checked=company.checked,
        unmanaged=unmanaged,
        summary=facts.summary(changes),
        cost=_cost(changes, live, limits),
        warnings=tuple(planned.warnings),
        left_alone=_still_there(facts.left_alone(lists, live, state, company.listed), effects_found),
        needs_person=tuple(needs_person),
        effects=effects_found,
        probably_same_person=probably_same_person(changes, live),
        targets=tuple(targets),
        manifest_digest=desired.digest,
        live_fingerprint=live.fingerprint([*(wid for _, wid, _ in lists),
                                           *(c.workspace_id for c in changes
                                             if isinstance(c, AccessChange) and c.governs == "rules")]),
        state_lineage=state.lineage,
        state_serial=state.serial,
    )


def _still_there(left_alone: tuple[LeftAlone, ...], effects_found: tuple[Effect, ...]) -> tuple[LeftAlone, ...]:
    """The entries left alone that the workspace still holds, role for role, once applied: one a change of
    another list the service shares with it removes (two workspaces connected by hand) is not left alone."""
    after = {e.workspace: e.after.snapshot() for e in effects_found if e.workspace is not None}
    return tuple(a for a in left_alone if a.workspace_id not in after or
                 (after[a.workspace_id].users if a.kind == "user" else after[a.workspace_id].domains).get(a.key)
                 == a.role)


def probably_same_person(changes: Sequence[Change], live: Live) -> tuple[ProbablySamePerson, ...]:
    """For each user the plan revokes, the addresses of the workspaces read
    that are probably the same person and that the plan does not revoke."""
    from reconciler.plan.lookalikes import LookalikeIndex

    revoked = sorted({e.key for c in changes if isinstance(c, AccessChange) for e in c.removals if e.kind == "user"})
    if not revoked:
        return ()
    where: dict[str, list[str]] = {}
    for ws in live.workspaces.values():
        for key in ws.users:
            where.setdefault(key, []).append(ws.id)
    gone = set(revoked)
    index = LookalikeIndex((key for key in where if key not in gone), only_like=revoked)
    return tuple(ProbablySamePerson(revoked=user, key=alike.key, why=alike.why, workspaces=tuple(sorted(where[alike.key])))
                 for user in revoked for alike in index.of(user))


def _cost(changes: Sequence[Change], live: Live, limits: Mapping[str, int] | None) -> Cost:
    # apply re-reads every list it writes: access changes, and the lists connects replace
    rereads = any(c.subject == "access" or isinstance(c, ConnectChange) for c in changes)
    return plan_cost(
        [call for change in changes for call in change.calls],
        # apply reads the lists it writes before (conflicts) and after (lost updates)
        refresh_reads=2 * live.pages_read if rereads else 0,
        limits=limits,
        workspace_credits=sum(c.credits for c in changes if isinstance(c, CreateChange)),
        conversion_polls=sum(1 for c in changes if isinstance(c, AssetChange) and c.converts),
    )


def needs_complete_listing(desired: Desired, state: State, targets: Sequence[str] = ()) -> bool:
    """True when the plan must see every workspace first: when it may create
    one (one an earlier apply created, the company's count), and when a
    group or a standalone workspace has an access list (a change of it
    reaches the workspaces connected by hand that no manifest names, found
    by their shared entries)."""
    return any(
        m.template is not None and not state.recorded_id(m.address) and _targeted(m.address, targets)
        for g in desired.groups
        for m in g.members
    ) or any(g.access is not None and _targeted(g.address, targets) for g in desired.groups) or any(
        w.access is not None and _targeted(w.address, targets) for w in desired.workspaces) or bool(
        desired.rules or desired.reviews)


def wanted_workspaces(desired: Desired, state: State) -> list[str]:
    """Every workspace id the plan reads: homepages, members, standalone
    workspaces, and the workspaces this tool created (known from the state)."""
    ids = [g.homepage for g in desired.groups]
    ids += [m.id for g in desired.groups for m in g.members if m.id is not None]
    ids += [recorded for g in desired.groups for m in g.members
            if m.id is None and (recorded := state.recorded_id(m.address)) is not None]
    ids += [w.id for w in desired.workspaces]
    return ids


def _named_groups(desired: Desired, state: State, changes: Sequence[Change]) -> list[tuple[str, list[str]]]:
    """Each group's homepage and the members the manifests name that are in
    the group already: recorded as connected to it (a connect re-sent with
    --reassert changes nothing), or not connected by this plan."""
    connecting = {c.address for c in changes if isinstance(c, ConnectChange)}

    def joined(group: DesiredGroup, member: DesiredMember) -> bool:
        recorded = state.resources.get(member.address)
        return member.address not in connecting or (recorded is not None and recorded.connected_to == group.homepage)

    return [(g.homepage, [i for i in (m.workspace_id(state.recorded_id) for m in g.members if joined(g, m))
                          if i is not None])
            for g in desired.groups]


def _targeted(address: str, targets: Sequence[str]) -> bool:
    return not targets or any(address == t or address.startswith(t + ".") for t in targets)
