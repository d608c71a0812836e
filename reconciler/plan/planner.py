"""The planner: a pure function (Desired, Live, State) → Plan.

No I/O happens here and nothing from ``reconciler.api`` is imported: a test
can build all three inputs by hand.  Everything that is unsafe (an unknown
workspace, an access list left without an owner) is refused here, before
any call, with the manifest location that caused it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, timedelta

from reconciler.errors import PlanError
from reconciler.gcpause import gc_paused
from reconciler.live import Live, LiveEntry, shared_entries
from reconciler.manifest import AccessList, Desired, DesiredGroup, DesiredMember
from reconciler.plan.access import diff_entries, target_roles
from reconciler.plan.cost import plan_cost
from reconciler.plan.assets import CommandPaths, plan_assets
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    Action,
    ApiCall,
    AssetChange,
    Change,
    ConnectChange,
    CreateChange,
    EntryChange,
    LeftAlone,
    ManagedAccess,
    Plan,
    PlanSummary,
    Reach,
    SettingChange,
)
from reconciler.plan.workspaces import duplicate_problems, plan_members, plan_settings
from reconciler.state.model import State
from reconciler.text import plural


FREE_PLAN_WORKSPACES = 10


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
    list and then its settings.  Otherwise manifest order, so two plans of
    the same manifests list their changes alike.
    """
    def scope(address: str) -> bool:
        return _targeted(address, targets)

    lists = [item for item in desired.access_lists() if scope(item[0])]
    problems = _unknown_workspaces(desired, live, state, scope)
    problems += duplicate_problems(desired.groups, live, state, scope=scope) if live.complete else []
    if problems:
        raise PlanError(_join("The plan cannot be made:", problems))

    changes: list[Change] = []
    unchanged: list[str] = []
    warnings: list[str] = []
    access = {address: access for address, _, access in lists}
    probable = _ProbableMembers(live, set(wanted_workspaces(desired, state)))
    for group in desired.groups:
        members = plan_members(group, live, state, scope=scope, reassert=reassert)
        warnings += members.warnings
        group_access = None
        if group.address in access:
            group_access = plan_access(group.address, group.homepage, access[group.address], live, state, today)
            if group_access is None:
                unchanged.append(group.address)
            else:
                hand_made = probable.of(group.homepage)
                group_access = group_access.model_copy(update={
                    "reaches": _reaches(group, live, state, hand_made),
                    "reach": _reach(group, live, state, hand_made),
                })
                warnings += [_probable_warning(group, group_access, live, wid) for wid in hand_made]
        joins, group_access = _ride(members.joins, group_access)
        changes += joins
        changes += [group_access] if group_access is not None else []
        changes += members.settings
    for ws in desired.workspaces:
        if not scope(ws.address):
            continue
        if ws.address in access:
            change = plan_access(ws.address, ws.id, access[ws.address], live, state, today)
            changes += [change] if change is not None else []
            unchanged += [ws.address] if change is None else []
        changes += plan_settings(ws, ws.id, state, reassert=reassert)
    asset_changes, needs_person = plan_assets(desired.assets, state, scope=scope, reassert=reassert,
                                              paths=paths or CommandPaths(manifest=str(desired.root)))
    changes += asset_changes

    orphaned = _no_owner_problems(c for c in changes if isinstance(c, AccessChange))
    if orphaned:
        raise PlanError(_join("The plan is refused: it would leave access lists without an owner.", orphaned))

    named = desired.addresses()
    addresses = tuple(a for a in named if scope(a))
    # One set for the whole state: building it per resource made a plan with a
    # state of N addresses quadratic (51 s at 10,000 workspaces; bench/README.md).
    named_set = set(named)
    forgotten = () if targets else tuple(a for a in state.resources if a not in named_set)
    warnings += _free_plan_warning(changes, live)
    warnings += [_forgotten_warning(a, state) for a in forgotten]
    warnings += _no_state_warning(desired, state)
    warnings += list(desired.notes)
    if today is not None:
        warnings += expiry_warnings(desired, today, expiry_warning_days)
    managed_ids = set(wanted_workspaces(desired, state)) & live.workspaces.keys()
    unmanaged_count = (None if targets or live.reported_total is None
                       else max(0, live.reported_total - len(managed_ids)))
    unmanaged = (tuple(f'{w.id} "{w.name}"' if w.name else w.id for w in live.workspaces.values()
                       if w.id not in managed_ids) if show_unmanaged and live.complete and not targets else ())
    rereads = any(isinstance(c, AccessChange) for c in changes)  # apply re-reads every list it writes
    return Plan(
        changes=tuple(changes),
        unchanged=tuple(unchanged),
        managed=tuple(
            ManagedAccess(
                address=address,
                workspace_id=wid,
                users={u.email: u.role for u in access.users},
                domains={d.domain: d.role for d in access.domains},
            )
            for address, wid, access in lists
        ),
        addresses=addresses,
        forgotten=forgotten,
        reassert=reassert,
        live_workspaces=live.total,
        unmanaged_count=unmanaged_count,
        unmanaged=unmanaged,
        summary=_summary(changes),
        cost=plan_cost(
            [call for change in changes for call in change.calls],
            # apply reads the lists it writes before (conflicts) and after (lost updates)
            refresh_reads=2 * live.pages_read if rereads else 0,
            limits=limits,
            workspace_credits=sum(c.credits for c in changes if isinstance(c, CreateChange)),
            conversion_polls=sum(1 for c in changes if isinstance(c, AssetChange) and c.converts),
        ),
        warnings=tuple(warnings),
        left_alone=_left_alone(lists, live, state),
        needs_person=tuple(needs_person),
        targets=tuple(targets),
        manifest_digest=desired.digest,
        live_fingerprint=live.fingerprint(wid for _, wid, _ in lists),
        state_lineage=state.lineage,
        state_serial=state.serial,
    )


def needs_complete_listing(desired: Desired, state: State, targets: Sequence[str] = ()) -> bool:
    """True when the plan must see every workspace first: when it may create
    one (one an earlier apply created, the company's count), and when a
    group has an access list (a change of it reaches the members connected
    by hand that no manifest names, found by their shared entries)."""
    return any(
        m.template is not None and m.address not in state.resources and _targeted(m.address, targets)
        for g in desired.groups
        for m in g.members
    ) or any(g.access is not None and _targeted(g.address, targets) for g in desired.groups)


def wanted_workspaces(desired: Desired, state: State) -> list[str]:
    """Every workspace id the plan reads: homepages, members, standalone
    workspaces, and the workspaces this tool created (known from the state)."""
    ids = [g.homepage for g in desired.groups]
    ids += [m.id for g in desired.groups for m in g.members if m.id is not None]
    ids += [state.resources[m.address].id for g in desired.groups for m in g.members
            if m.id is None and m.address in state.resources]
    ids += [w.id for w in desired.workspaces]
    return ids


def _ride(
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


def _unknown_workspaces(desired: Desired, live: Live, state: State, scope: Callable[[str], bool]) -> list[str]:
    missing = (
        "does not exist, or the company this token belongs to cannot see it."
    )
    problems = []
    for group in desired.groups:
        in_scope = scope(group.address) or any(scope(m.address) for m in group.members)
        if not in_scope:
            continue
        where = group.access.location if group.access is not None else group.location
        homepage = live.workspaces.get(group.homepage)
        if homepage is None:
            problems.append(f"{where}: {group.address}: workspace {group.homepage} {missing}")
        for member in group.members:
            if member.id is None or not scope(member.address):
                continue
            ws = live.workspaces.get(member.id)
            if ws is None:
                problems.append(f"{member.location}: {member.address}: workspace {member.id} {missing}")
            elif homepage is not None and ws.account_id != homepage.account_id:
                problems.append(
                    f"{member.location}: {member.address}: workspace {member.id} belongs to account "
                    f"{ws.account_id}, the homepage {group.homepage} to {homepage.account_id}; the service "
                    "connects only workspaces of the same account."
                )
    for ws in desired.workspaces:
        if scope(ws.address) and ws.id not in live.workspaces:
            where = ws.access.location if ws.access is not None else ws.location
            problems.append(f"{where}: {ws.address}: workspace {ws.id} {missing}")
    return problems


def _no_state_warning(desired: Desired, state: State) -> list[str]:
    """Without a state file, what the plan cannot know, said once (a fresh CI
    checkout without the state would otherwise silently skip a removal)."""
    if state.lineage or state.resources:
        return []
    blind = []
    if any(not a.authoritative for _, _, a in desired.access_lists()):
        blind.append("which entries of non-authoritative lists it manages, so it removes none")
    if any(g.members for g in desired.groups) or any(w.sections or w.pages or w.tasks for w in desired.workspaces):
        blind.append("which memberships and section, page and task values it applied, so it sends them all")
    if desired.assets:
        blind.append("which assets it created, so it creates them all")
    if not blind:
        return []
    return [f"There is no state file: reconciler cannot know {'; '.join(blind)}. If a state file exists "
            "elsewhere (another machine, a CI artifact), plan with it (--state FILE)."]


def _forgotten_warning(address: str, state: State) -> str:
    resource = state.resources[address]
    kept = (f"Asset {resource.id or '(not created)'} stays in the service (the API cannot delete assets)."
            if resource.asset is not None else
            f"Workspace {resource.id} stays in the service as it is (the API can neither delete nor "
            "disconnect it).")
    return f"{address}: no manifest names it any more; reconciler forgets it after the next apply. {kept}"


def _free_plan_warning(changes: Sequence[Change], live: Live) -> list[str]:
    creations = sum(1 for c in changes if isinstance(c, CreateChange))
    if not creations or live.total is None or live.total + creations <= FREE_PLAN_WORKSPACES:
        return []
    return [
        f"The company has {plural(live.total, 'workspace')}; the {plural(creations, 'creation')} in this plan "
        f"would make "
        f"{live.total + creations}. If it is on the free plan ({FREE_PLAN_WORKSPACES} workspaces in total, "
        "active and archived), the service will refuse the creations past that with 403."
    ]


def plan_access(address: str, workspace_id: str, access: AccessList, live: Live, state: State,
                today: date | None = None) -> AccessChange | None:
    """The change for one access list, or None when it already matches.

    Entries whose ``expires`` date has come (``today``, UTC) count as not
    listed, and as managed (an expired grant is removed even from a
    non-authoritative list that never recorded it).
    """
    ws = live.workspaces[workspace_id]
    record = state.access_record(address)
    expired = _expired(access, today)
    owned_users = {**(record.users if record else {}), **{k: "" for kind, k in expired if kind == "user"}}
    owned_domains = {**(record.domains if record else {}), **{k: "" for kind, k in expired if kind == "domain"}}
    want_users = {u.email: u.role for u in access.users if ("user", u.email) not in expired}
    want_domains = {d.domain: d.role for d in access.domains if ("domain", d.domain) not in expired}
    live_users, live_domains = _roles(ws.users), _roles(ws.domains)
    users = target_roles(live_users, want_users, owned_users, authoritative=access.authoritative)
    domains = target_roles(live_domains, want_domains, owned_domains, authoritative=access.authoritative)
    if users == live_users and domains == live_domains:
        return None  # most lists match: skip building the per-entry diff and its locations

    since = record.since if record is not None and not access.authoritative else None
    entries = diff_entries("user", ws.users, users, {u.email: str(u.location) for u in access.users}, since)
    entries += diff_entries("domain", ws.domains, domains, {d.domain: str(d.location) for d in access.domains},
                            since)
    if not entries:
        return None
    if record is not None:
        entries = [_mark_drift(e, record.users if e.kind == "user" else record.domains) for e in entries]
    if expired:
        entries = [_mark_expired(e, expired) for e in entries]
    strategy = "patch" if all(e.action is Action.UPDATE for e in entries) else "replace"
    return AccessChange(
        address=address,
        workspace_id=workspace_id,
        workspace_name=ws.name,
        location=str(access.location),
        authoritative=access.authoritative,
        strategy=strategy,
        entries=tuple(entries),
        before=AccessSnapshot(users=_roles(ws.users), domains=_roles(ws.domains)),
        after=AccessSnapshot(users=users, domains=domains),
        notify=access.notify,
        message=access.message,
        notified=tuple(e.key for e in entries if access.notify and e.kind == "user" and e.action is Action.CREATE),
        calls=tuple(_calls(strategy, workspace_id, entries)),
    )


def _expired(access: AccessList, today: date | None) -> dict[tuple[str, str], date]:
    if today is None:
        return {}
    found: dict[tuple[str, str], date] = {}
    for u in access.users:
        if u.expires is not None and u.expires <= today:
            found[("user", u.email)] = u.expires
    for d in access.domains:
        if d.expires is not None and d.expires <= today:
            found[("domain", d.domain)] = d.expires
    return found


def _mark_expired(entry: EntryChange, expired: Mapping[tuple[str, str], date]) -> EntryChange:
    when = expired.get((entry.kind, entry.key))
    if when is None or entry.action is not Action.DELETE:
        return entry
    return entry.model_copy(update={"flags": (*entry.flags, "expired"),
                                    "reason": f"expired on {when.isoformat()}"})


def expiry_warnings(desired: Desired, today: date, within_days: int) -> list[str]:
    """Grants that expire within ``within_days`` of ``today``, soonest first."""
    soon = []
    for address, _, access in desired.access_lists():
        for kind, key, expires, location in (
            *(("user", u.email, u.expires, u.location) for u in access.users),
            *(("domain", d.domain, d.expires, d.location) for d in access.domains),
        ):
            if expires is not None and today < expires <= today + timedelta(days=within_days):
                days = (expires - today).days
                soon.append((expires, f"{location}: {address}: the grant to {kind} {key} expires on "
                                      f"{expires.isoformat()} (in {plural(days, 'day')}); from then "
                                      "on the plan removes it."))
    return [text for _, text in sorted(soon, key=lambda item: item[0])]


def _mark_drift(entry: EntryChange, last_applied: Mapping[str, str]) -> EntryChange:
    """Flag a change that undoes what someone did outside the tool since its
    last apply: the service no longer holds what was applied."""
    if last_applied.get(entry.key) == entry.before:
        return entry
    return entry.model_copy(update={"flags": (*entry.flags, "drift"),
                                    "reason": f"{entry.reason}; changed outside reconciler since its last apply"})


def _reaches(group: DesiredGroup, live: Live, state: State, probable: Sequence[str] = ()) -> tuple[str, ...]:
    """Every workspace of the group: the homepage, then the members in manifest
    order, then those probably connected by hand that no manifest names."""
    found = [_label(group.homepage, live)]
    for member in group.members:
        workspace_id = _member_id(member, state)
        found.append(_label(workspace_id, live) if workspace_id else f'new "{member.name}"')
    return (*found, *(_probable_label(wid, live) for wid in probable))


def _reach(group: DesiredGroup, live: Live, state: State, probable: Sequence[str]) -> tuple[Reach, ...]:
    """The workspaces that hold the group's list once applied, each with the
    list it holds now: the homepage and the members already in the group
    hold the group's; a member joining holds its own until the join replaces
    it (the service's rule 1); one this plan creates holds none (its first
    list is the group's, carried by the creation or set right after it); a
    member the service no longer has holds nothing and is left out."""
    found = [_reach_of(group.homepage, live)]
    for member in group.members:
        workspace_id = _member_id(member, state)
        if workspace_id is None:
            found.append(Reach(workspace=f'new "{member.name}"'))
        elif workspace_id in live.workspaces:
            found.append(_reach_of(workspace_id, live))
    found += [_reach_of(wid, live, probable=True) for wid in probable]
    return tuple(found)


def _reach_of(workspace_id: str, live: Live, *, probable: bool = False) -> Reach:
    ws = live.workspaces[workspace_id]
    label = _probable_label(workspace_id, live) if probable else _label(workspace_id, live)
    return Reach(workspace=label, workspace_id=workspace_id, probable=probable,
                 before=AccessSnapshot(users=_roles(ws.users), domains=_roles(ws.domains)))


def _member_id(member: DesiredMember, state: State) -> str | None:
    """The member's workspace id: declared, or recorded when an earlier apply created it."""
    recorded = state.resources.get(member.address)
    return member.id if member.id is not None else (recorded.id if recorded is not None and recorded.id else None)


def _label(workspace_id: str, live: Live) -> str:
    ws = live.workspaces.get(workspace_id)
    return f'{workspace_id} "{ws.name}"' if ws is not None and ws.name else workspace_id


def _probable_label(workspace_id: str, live: Live) -> str:
    return f"{_label(workspace_id, live)} (probably a member: in no manifest, it shows the group's entries)"


class _ProbableMembers:
    """Workspaces no manifest names that show a homepage's access entries:
    connected to its group by hand, so the group's list is theirs too.

    Needs the complete listing (``needs_complete_listing`` asks for it when a
    group has a list); the shared entries are computed once, on first use.
    """

    def __init__(self, live: Live, named: set[str]) -> None:
        self._live = live
        self._named = named
        self._sharing: dict[str, set[str]] | None = None

    def of(self, homepage: str) -> tuple[str, ...]:
        if not self._live.complete:
            return ()
        if self._sharing is None:
            self._sharing = shared_entries({w.id: w.entry_ids() for w in self._live.workspaces.values()})
        return tuple(sorted(self._sharing.get(homepage, set()) - self._named))


def _probable_warning(group: DesiredGroup, change: AccessChange, live: Live, workspace_id: str) -> str:
    ws = live.workspaces[workspace_id]
    return (f"{change.location}: {group.address}: workspace {_label(workspace_id, live)} is in no manifest but "
            f"shows the same access entries as the homepage {group.homepage}: it is probably connected to the "
            f"group by hand, so this change of the group's list reaches it too. Declare it among the group's "
            f"workspaces (KEY: {{id: {ws.id}}}) to say so.")


def _left_alone(lists: Sequence[tuple[str, str, AccessList]], live: Live, state: State) -> tuple[LeftAlone, ...]:
    """Without a state file, every live entry of a non-authoritative list that
    the manifest does not list: the plan leaves it alone, though reconciler
    may have granted it (a removal from the manifest then never happens)."""
    if state.lineage or state.resources:
        return ()
    found = []
    for address, workspace_id, access in lists:
        ws = live.workspaces.get(workspace_id)
        if access.authoritative or ws is None:
            continue
        # Listed entries are managed (an expired one is removed), so only the others count.
        listed = {("user", u.email) for u in access.users} | {("domain", d.domain) for d in access.domains}
        for kind, entries in (("user", ws.users), ("domain", ws.domains)):
            for key, entry in sorted(entries.items()):
                if (kind, key) not in listed:
                    found.append(LeftAlone(address=address, workspace_id=workspace_id, kind=kind, key=key,
                                           role=entry.role, location=str(access.location)))
    return tuple(found)


def patch_order(entries: Iterable[EntryChange]) -> list[EntryChange]:
    """Promotions to owner go first, so a list never passes through a
    moment without an owner while an ownership moves from one entry to another."""
    return sorted(entries, key=lambda e: 0 if e.after == "owner" else 1)


def _calls(strategy: str, workspace_id: str, entries: list[EntryChange]) -> list[ApiCall]:
    if strategy == "replace":
        return [ApiCall(method="POST", path=f"/workspaces/{workspace_id}/access")]
    return [
        ApiCall(method="PATCH", path=f"/workspace-{e.kind}s/{e.entry_id}") for e in patch_order(entries)
    ]


def _roles(entries: Mapping[str, LiveEntry]) -> dict[str, str]:
    return {k: e.role for k, e in sorted(entries.items())}


def _no_owner_problems(changes: Iterable[AccessChange]) -> list[str]:
    return [
        f"{c.location}: {c.address} ({c.workspace_id}) would have no user or domain with role owner."
        for c in changes
        if not c.after.owners()
    ]


def _summary(changes: Sequence[Change]) -> PlanSummary:
    counts = {action: 0 for action in Action}
    for change in changes:
        if isinstance(change, AccessChange):
            for entry in change.entries:
                counts[entry.action] += 1
    return PlanSummary(
        create=counts[Action.CREATE],
        update=counts[Action.UPDATE],
        delete=counts[Action.DELETE],
        workspaces_created=sum(1 for c in changes if isinstance(c, CreateChange)),
        workspaces_connected=sum(1 for c in changes if isinstance(c, ConnectChange)),
        settings=sum(1 for c in changes if isinstance(c, SettingChange)),
        assets_created=sum(1 for c in changes if isinstance(c, AssetChange) and c.action == "create"),
        assets_replaced=sum(1 for c in changes if isinstance(c, AssetChange) and c.action == "replace"),
        assets_updated=sum(1 for c in changes if isinstance(c, AssetChange) and c.action == "update"),
    )


def _targeted(address: str, targets: Sequence[str]) -> bool:
    return not targets or any(address == t or address.startswith(t + ".") for t in targets)


def _join(head: str, problems: list[str]) -> str:
    return "\n".join([head, *(f"  {p}" for p in problems)])
