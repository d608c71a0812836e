"""The planner: a pure function (Desired, Live, State) → Plan.

No I/O happens here and nothing from ``reconciler.api`` is imported: a test
can build all three inputs by hand.  Everything that is unsafe (an unknown
workspace, an access list left without an owner) is refused here, before
any call, with the manifest location that caused it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reconciler.errors import PlanError
from reconciler.gcpause import gc_paused
from reconciler.live import Live, LiveEntry
from reconciler.manifest import AccessList, Desired
from reconciler.plan.access import diff_entries, target_roles
from reconciler.plan.cost import plan_cost
from reconciler.plan.unmanaged import unmanaged_warnings
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    Action,
    ApiCall,
    EntryChange,
    ManagedAccess,
    Plan,
    PlanSummary,
)
from reconciler.state import State


@gc_paused()
def make_plan(
    desired: Desired,
    live: Live,
    state: State,
    *,
    targets: Sequence[str] = (),
    limits: Mapping[str, int] | None = None,
) -> Plan:
    """Compute every change that makes the service match ``desired``."""
    lists = [item for item in desired.access_lists() if _targeted(item[0], targets)]
    problems = [
        f"{access.location}: {address}: workspace {wid} does not exist, or the company "
        f"this token belongs to cannot see it."
        for address, wid, access in lists
        if wid not in live.workspaces
    ]
    if problems:
        raise PlanError(_join("The plan cannot be made:", problems))

    changes: list[AccessChange] = []
    unchanged: list[str] = []
    for address, wid, access in lists:
        change = plan_access(address, wid, access, live, state)
        if change is None:
            unchanged.append(address)
        else:
            changes.append(change)

    orphaned = _no_owner_problems(changes)
    if orphaned:
        raise PlanError(_join("The plan is refused: it would leave access lists without an owner.", orphaned))

    all_calls = [call for change in changes for call in change.calls]
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
        summary=_summary(changes),
        cost=plan_cost(all_calls, refresh_reads=live.pages_read, limits=limits),
        warnings=unmanaged_warnings(desired, lambda address: _targeted(address, targets)),
        targets=tuple(targets),
        manifest_digest=desired.digest,
        live_fingerprint=live.fingerprint(wid for _, wid, _ in lists),
        state_lineage=state.lineage,
        state_serial=state.serial,
    )


def plan_access(address: str, workspace_id: str, access: AccessList, live: Live, state: State) -> AccessChange | None:
    """The change for one access list, or None when it already matches."""
    ws = live.workspaces[workspace_id]
    record = state.access_record(address)
    owned_users = record.users if record else {}
    owned_domains = record.domains if record else {}
    want_users = {u.email: u.role for u in access.users}
    want_domains = {d.domain: d.role for d in access.domains}
    users = target_roles(_roles(ws.users), want_users, owned_users, authoritative=access.authoritative)
    domains = target_roles(_roles(ws.domains), want_domains, owned_domains, authoritative=access.authoritative)

    entries = diff_entries("user", ws.users, users, {u.email: str(u.location) for u in access.users})
    entries += diff_entries("domain", ws.domains, domains, {d.domain: str(d.location) for d in access.domains})
    if not entries:
        return None
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
        calls=tuple(_calls(strategy, workspace_id, entries)),
    )


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


def _summary(changes: Iterable[AccessChange]) -> PlanSummary:
    counts = {action: 0 for action in Action}
    for change in changes:
        for entry in change.entries:
            counts[entry.action] += 1
    return PlanSummary(create=counts[Action.CREATE], update=counts[Action.UPDATE], delete=counts[Action.DELETE])


def _targeted(address: str, targets: Sequence[str]) -> bool:
    return not targets or any(address == t or address.startswith(t + ".") for t in targets)


def _join(head: str, problems: list[str]) -> str:
    return "\n".join([head, *(f"  {p}" for p in problems)])
