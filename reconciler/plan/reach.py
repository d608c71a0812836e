"""How a change names the workspaces a list reaches: ``ws_1 "Name"``, and each one's list now.

Read by a group's list (its members, those connected by hand), a standalone
workspace's (the workspaces connected to it by hand, whether a manifest names
them or not) and the rules' change of a list several unnamed workspaces
share: one wording everywhere.  Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from reconciler.live import Live
from reconciler.manifest import DesiredWorkspace
from reconciler.plan.access import roles
from reconciler.plan.model import AccessSnapshot, Reach


def label(workspace_id: str, live: Live) -> str:
    """``ws_1 "Name"``, or the id alone when the service gave no name."""
    ws = live.workspaces.get(workspace_id)
    return f'{workspace_id} "{ws.name}"' if ws is not None and ws.name else workspace_id


def reach_of(workspace_id: str, live: Live, *, probable: bool = False,
             note: str = "probably a member: in no manifest, it shows the group's entries") -> Reach:
    """The workspace a list reaches, with its list now; ``probable``: found by its shared entries, ``note`` says so."""
    ws = live.workspaces[workspace_id]
    shown = f"{label(workspace_id, live)} ({note})" if probable else label(workspace_id, live)
    return Reach(workspace=shown, workspace_id=workspace_id, probable=probable,
                 before=AccessSnapshot(users=roles(ws.users), domains=roles(ws.domains)))


def named_sharers(workspace_id: str, live: Live, named: Collection[str],
                  besides: Collection[str] = ()) -> tuple[str, ...]:
    """The workspaces a manifest names, other than ``workspace_id`` and ``besides``, that show its entry ids:
    connected to it by hand, they hold its list, so a write of that list reaches them too, whatever their own
    manifest says (issue 38: a standalone workspace holding another one's list was in the effects, in no view)."""
    shared = live.sharing.get(workspace_id) if workspace_id in live.workspaces else None
    if not shared:
        return ()
    return tuple(sorted(w for w in shared if w in named and w != workspace_id and w not in besides))


def named_sharer_note(address: str | None) -> str:
    """How a view names a workspace of the manifests that holds, by hand, the list a change writes."""
    whose = f"{address} in the manifests" if address else "in the manifests"
    return f"probably connected by hand: {whose}, it shows the same access entries; the service does not say"


def without_list(workspaces: Iterable[DesiredWorkspace]) -> set[str]:
    """The standalone workspaces of the manifests with no access list of their own: one that holds, by hand,
    another's list is governed by that list (its rules merge into that list's change)."""
    return {w.id for w in workspaces if w.access is None}
