"""The lists apply reads around its writes: re-read before the first write (refused if one moved since
the plan), each answer checked against what was sent, and every list read back after the last write
and compared with the plan's prediction (``effects``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reconciler.errors import ApplyError
from reconciler.live import Live, LiveWorkspace, fetch_live
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    ConnectChange,
    Plan,
)
from reconciler.state import State

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient


def refresh(client: WorkspaceClient, plan: Plan) -> Live:
    """Re-read the lists the plan writes and refuse, before any write, when
    one moved since the plan (a list riding on a creation is written too)."""
    live, moved = _compare_lists(client, plan, expect=lambda c: c.before)
    if moved:
        lines = "\n".join(f"  {c}" for c in moved)
        raise ApplyError(
            "Nothing was changed: access in the service changed since the plan was made, and "
            f"applying it would undo someone else's change:\n{lines}\n"
            "Run 'reconciler plan' again and review the new plan."
        )
    return live


def prove(client: WorkspaceClient, plan: Plan, state: State,
           on_mismatch: Callable[[list[str]], None] | None, *, had: Live) -> None:
    """Read every list the apply touched once more (one listing) and compare
    each with the list the plan predicted for that workspace (``effects``;
    a list it wrote and predicted unchanged, with the list it had: ``had``,
    the lists read before the first write).

    When the lists were read whole before the first write (``had.complete``:
    a plan that writes access lists the whole company), they are read whole
    again, and a workspace whose list changed though the plan predicted no
    change there (one no manifest names, connected by hand to a list the
    apply wrote, say) is a difference too.

    Any difference is an error: the plan a reviewer approved said what each
    workspace's access would be, and the service shows something else (a
    rule of the service the effects model does not know, or someone writing
    the same list at the same time: the API has no compare-and-swap).
    """
    expected = _predicted(plan, state, had)
    if not expected and not had.complete:
        return
    live = fetch_live(client, list(expected), complete=had.complete)
    differ = []
    for workspace_id, want in expected.items():
        ws = live.workspaces.get(workspace_id)
        if ws is None:
            differ.append(f"{workspace_id}: predicted a list, the service no longer has the workspace")
        elif _as_stored(snapshot_of(ws)) != _as_stored(want):
            differ.append(f"{workspace_id}: {_describe_difference(_as_stored(want), _as_stored(snapshot_of(ws)))}")
    differ += _unpredicted(live, had, expected)
    if not differ:
        return
    if on_mismatch is not None:
        on_mismatch(differ)
    lines = "\n".join(f"  {line}" for line in differ)
    raise ApplyError(
        "Apply made every change, but reading the lists back shows access other than the plan predicted "
        f"(someone changed them at the same time, or the service did more than its description says):\n{lines}\n"
        "Run 'reconciler plan' to see the lists as they are now, and run applies one at a time "
        "(a CI concurrency group)."
    )


def _unpredicted(live: Live, had: Live, expected: dict[str, AccessSnapshot]) -> list[str]:
    """Each workspace read whole before and after the writes whose list changed, where no change was
    predicted."""
    if not (live.complete and had.complete):
        return []
    differ = []
    for workspace_id, ws in live.workspaces.items():
        before = had.workspaces.get(workspace_id)
        if workspace_id in expected or before is None:
            continue
        was, now = _as_stored(snapshot_of(before)), _as_stored(snapshot_of(ws))
        if was != now:
            differ.append(f"{workspace_id}: the plan predicted no change here; {_describe_difference(was, now)}")
    return differ


def _predicted(plan: Plan, state: State, had: Live) -> dict[str, AccessSnapshot]:
    """Workspace id -> the list the plan predicts there, for every workspace it touches."""
    expected: dict[str, AccessSnapshot] = {}
    for joining in _joining(plan):
        ws = had.workspaces.get(joining)
        if ws is not None:  # the connect replaces its list with the group's: predicted to end as it was
            expected[joining] = snapshot_of(ws)
    for change in _written(plan):
        expected[change.workspace_id] = change.before  # written, and predicted to end as it was
    for effect in plan.effects:
        workspace_id = effect.workspace
        if workspace_id is None and effect.creates is not None:
            created = state.resources.get(effect.creates)
            workspace_id = created.id if created is not None else None
        if workspace_id:
            expected[workspace_id] = effect.after.snapshot()
    return expected


def _describe_difference(predicted: AccessSnapshot, shown: AccessSnapshot) -> str:
    """``predicted cfo@acme.com owner absent, service shows it``: per entry, what differs."""
    parts = []
    for want, got in ((predicted.users, shown.users), (predicted.domains, shown.domains)):
        for key in sorted(want.keys() | got.keys()):
            if key not in got:
                parts.append(f"predicted {key} {want[key]}, service shows it absent")
            elif key not in want:
                parts.append(f"predicted {key} {got[key]} absent, service shows it")
            elif want[key] != got[key]:
                parts.append(f"predicted {key} {want[key]}, service shows {got[key]}")
    return "; ".join(parts)


def _compare_lists(client: WorkspaceClient, plan: Plan,
                   expect: Callable[[AccessChange], AccessSnapshot]) -> tuple[Live, list[str]]:
    """One listing (stopping once every written list is seen); each written
    list that does not hold ``expect(change)``, described."""
    written = _written(plan)
    joining = _joining(plan)
    if not written and not joining:
        return Live(workspaces={}), []
    # A plan that writes access lists the whole company (ceil(N/100) pages, the plan's own listing): the
    # lists are then read whole around the writes, so the proof also sees a list no change names.
    live = fetch_live(client, [*(c.workspace_id for c in written), *joining], complete=bool(written))
    differ = []
    for change in written:
        ws = live.workspaces.get(change.workspace_id)
        if ws is None:
            differ.append(f"{change.address} ({change.location}): workspace {change.workspace_id} no longer exists.")
        elif _as_stored(snapshot_of(ws)) != _as_stored(expect(change)):
            differ.append(f"{change.address} ({change.location}): {_describe_drift(expect(change), snapshot_of(ws))}")
    return live, differ


def _written(plan: Plan) -> list[AccessChange]:
    """The access changes of workspaces that exist: a creation's list is proven by its effect, under the
    id the creation got."""
    return [c for c in plan.access_changes if c.governs != "create"]


def _joining(plan: Plan) -> list[str]:
    """The workspaces the plan's connects join to a group: each connect writes its list (rule 1), so
    it is read before the first write and proven after the last even when predicted to end as it was."""
    return [c.workspace_id for c in plan.changes if isinstance(c, ConnectChange)]


def _as_stored(snapshot: AccessSnapshot) -> AccessSnapshot:
    """``snapshot`` as the service stores what it is sent: an address reported
    with spaces around it (" ana@acme.com", made in the web app) is kept when a
    list is written, and the service trims it. Compared as written, that
    difference stopped an apply half-way, after the lists before it."""
    return AccessSnapshot(users={k.strip(): r for k, r in snapshot.users.items()},
                          domains={k.strip(): r for k, r in snapshot.domains.items()})


def snapshot_of(ws: LiveWorkspace) -> AccessSnapshot:
    fp = ws.access_fingerprint()
    return AccessSnapshot(users=fp["users"], domains=fp["domains"])


def _describe_drift(expected: AccessSnapshot, actual: AccessSnapshot) -> str:
    parts = []
    for kind, want, got in (("user", expected.users, actual.users), ("domain", expected.domains, actual.domains)):
        for key in sorted(want.keys() | got.keys()):
            if want.get(key) != got.get(key):
                parts.append(f"{kind} {key} was {want.get(key) or 'absent'}, now {got.get(key) or 'absent'}")
    return "; ".join(parts) + "."


def check_lists(address: str, call: str, expected: AccessSnapshot, got: AccessSnapshot) -> None:
    if _as_stored(got) != _as_stored(expected):
        raise ApplyError(
            f"{address}: the service accepted {call} but reports a different list than was sent: "
            f"{_describe_drift(expected, got)} This is a bug in the service or in reconciler; "
            "run 'reconciler plan' to see the result."
        )
