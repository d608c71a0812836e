"""Apply: execute a Plan against the service and record State.

Order of work, and why:
1. Re-read the access lists the plan touches (one listing, stopping once all
   are seen) and refuse, before any write, if someone changed one since the
   plan: applying a whole-list POST over a list that moved would silently
   undo their change.
2. Execute each change: role-only changes as PATCHes (promotions to owner
   first), additions/removals as one POST of the whole list.
3. Check each answer against the plan (Terraform's "inconsistent result"
   check) and write the state after every successful change, so a crash
   loses at most the call in flight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.errors import ApiError
from reconciler.api.models import AccessDomainInput, AccessUserInput
from reconciler.errors import ApplyError
from reconciler.live import ACCESS_PROPERTIES, Live, LiveWorkspace, fetch_live, read_workspace
from reconciler.plan.model import AccessChange, AccessSnapshot, ManagedAccess, Plan
from reconciler.plan.planner import patch_order
from reconciler.state import AccessRecord, ResourceState, State, write_state

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ApplyResult:
    changed: int
    calls: int
    state: State


def apply_plan(
    plan: Plan,
    *,
    client: WorkspaceClient,
    state: State,
    state_path: Path,
    progress: Progress | None = None,
) -> ApplyResult:
    say = progress or (lambda _msg: None)
    calls_before = client.stats.calls
    live = _refresh(client, plan) if plan.changes else Live(workspaces={})
    managed = {m.address: m for m in plan.managed}
    done = 0
    for change in plan.changes:
        ws = live.workspaces[change.workspace_id]
        say(f"{change.address}: {', '.join(f'{c.method} {c.path}' for c in change.calls)}")
        try:
            _apply_access(client, change, ws)
        except ApiError as exc:
            raise ApplyError(
                f"Apply stopped at {change.address} ({change.location}): {exc} "
                f"{_done_before(done, len(plan.changes))} Nothing else was changed. "
                f"Run 'reconciler plan' to see what remains."
            ) from exc
        done += 1
        state = write_state(state_path, _record(state, managed[change.address]))
    state = _record_all(state, plan, state_path)
    return ApplyResult(changed=done, calls=client.stats.calls - calls_before, state=state)


def _done_before(done: int, total: int) -> str:
    if done == 0:
        return f"None of the {total} access lists was changed before this."
    return (f"{done} of {total} access lists were changed before this; the service keeps them "
            "and the state records them.")


def _refresh(client: WorkspaceClient, plan: Plan) -> Live:
    live = fetch_live(client, [c.workspace_id for c in plan.changes])
    conflicts = []
    for change in plan.changes:
        ws = live.workspaces.get(change.workspace_id)
        if ws is None:
            conflicts.append(f"{change.address}: workspace {change.workspace_id} no longer exists.")
        elif _snapshot(ws) != change.before:
            conflicts.append(f"{change.address}: {_describe_drift(change.before, _snapshot(ws))}")
    if conflicts:
        lines = "\n".join(f"  {c}" for c in conflicts)
        raise ApplyError(
            "Nothing was changed: access in the service changed since the plan was made, and "
            f"applying it would undo someone else's change:\n{lines}\n"
            "Run 'reconciler plan' again and review the new plan."
        )
    return live


def _apply_access(client: WorkspaceClient, change: AccessChange, ws: LiveWorkspace) -> None:
    if change.strategy == "patch":
        for entry in patch_order(change.entries):
            entries = ws.users if entry.kind == "user" else ws.domains
            entry_id = entries[entry.key].id
            assert entry.after is not None  # patch strategy holds updates only
            if entry.kind == "user":
                client.update_workspace_user(entry_id, role=entry.after)
            else:
                client.update_workspace_domain(entry_id, role=entry.after)
        return
    kinds = {e.kind for e in change.entries}
    users = [AccessUserInput(email=k, role=r) for k, r in change.after.users.items()]
    domains = [AccessDomainInput(domain=k, role=r) for k, r in change.after.domains.items()]
    answer = client.set_access(
        change.workspace_id,
        users=users if "user" in kinds else None,
        domains=domains if "domain" in kinds else None,
        notify_people=change.notify,
        message=change.message if change.notify else None,
        properties=ACCESS_PROPERTIES,
    )
    got = _snapshot(read_workspace(answer))
    if got != change.after:
        raise ApplyError(
            f"{change.address}: the service accepted POST /workspaces/{change.workspace_id}/access "
            f"but reports a different list than was sent: {_describe_drift(change.after, got)} "
            "This is a bug in the service or in reconciler; run 'reconciler plan' to see the result."
        )


def _snapshot(ws: LiveWorkspace) -> AccessSnapshot:
    fp = ws.access_fingerprint()
    return AccessSnapshot(users=fp["users"], domains=fp["domains"])


def _describe_drift(expected: AccessSnapshot, actual: AccessSnapshot) -> str:
    parts = []
    for kind, want, got in (("user", expected.users, actual.users), ("domain", expected.domains, actual.domains)):
        for key in sorted(want.keys() | got.keys()):
            if want.get(key) != got.get(key):
                parts.append(f"{kind} {key} was {want.get(key) or 'absent'}, now {got.get(key) or 'absent'}")
    return "; ".join(parts) + "."


def _record(state: State, managed: ManagedAccess) -> State:
    resources = dict(state.resources)
    resources[managed.address] = ResourceState(
        id=managed.workspace_id, access=AccessRecord(users=managed.users, domains=managed.domains)
    )
    return state.model_copy(update={"resources": resources})


def _record_all(state: State, plan: Plan, state_path: Path) -> State:
    """Remember every managed list, changed or not, so that an entry dropped
    from a non-authoritative list later is known to be ours to remove."""
    updated = state
    for managed in plan.managed:
        updated = _record(updated, managed)
    if not plan.targets:
        managed_addresses = {m.address for m in plan.managed}
        kept = {a: r for a, r in updated.resources.items() if a in managed_addresses}
        updated = updated.model_copy(update={"resources": kept})
    if updated.resources == state.resources:
        return state
    return write_state(state_path, updated)
