"""``state list|show|rm``, ``import`` and ``force-unlock``: read and edit
what the state knows.

None of these changes the service.  ``rm`` forgets an address (the next plan
treats it as new: a template member would be created again); ``import``
binds an address to a workspace that already exists, after checking that it
exists and fits the manifest entry, so the next plan adopts it instead of
creating another; ``force-unlock`` removes a lock left by a command that is
gone, given the lock's ID (Terraform's ``force-unlock LOCK_ID``).

The state is read with the journal a stopped apply may have left beside it
(``load_state`` replays it): ``list`` and ``show`` only read, while ``rm``
and ``import`` fold it into the file as they write it (``write_state``).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from reconciler.errors import ConfigError, StateError
from reconciler.live import PLAN_PROPERTIES, LiveWorkspace, fetch_live
from reconciler.manifest import Desired, DesiredAsset, DesiredGroup, DesiredMember, DesiredWorkspace, load_desired
from reconciler.state import (
    LockHolder,
    ResourceState,
    State,
    StateLock,
    journal_path,
    load_state,
    lock_path,
    remove_lock,
    write_state,
)
from reconciler.target import Target, open_client


def state_list(state_path: Path) -> str:
    """One line per address: the address and its workspace id, sorted."""
    state = load_state(state_path)
    if not state.resources and not os.path.lexists(state_path) and not os.path.lexists(journal_path(state_path)):
        return (f"There is no state file at {state_path}: nothing was applied with it yet, or the state is kept "
                "elsewhere (name it with --state FILE).\n")
    if not state.resources:
        return f"The state {state_path} records nothing yet.\n"
    width = max(len(a) for a in state.resources)
    return "".join(f"{a:<{width}}  {r.id}\n" for a, r in sorted(state.resources.items()))


def state_show(state_path: Path, address: str) -> str:
    """Everything the state records for ``address``, as JSON."""
    resource = _resource(load_state(state_path), address, state_path)
    return json.dumps({"address": address, **resource.model_dump(exclude_none=True)}, indent=2) + "\n"


def state_rm(state_path: Path, address: str) -> str:
    """Forget ``address`` in the state; the service is not touched."""
    with StateLock(state_path, command="reconciler state rm"):
        state = load_state(state_path)
        resource = _resource(state, address, state_path)
        write_state(state_path, state.without(address))
    if resource.asset is not None:
        return _asset_removed(address, resource, state_path)
    return (
        f"Removed {address} (workspace {resource.id}) from the state {state_path}. The service was not "
        f"changed. The next plan treats {address} as unknown: a workspace made from a template would be "
        "created again, and write-only values would be sent again.\n"
    )


def _asset_removed(address: str, resource: ResourceState, state_path: Path) -> str:
    """What forgetting an asset means: the next apply creates it afresh."""
    assert resource.asset is not None
    if resource.id:
        what, kept = f"asset {resource.id}", f" Asset {resource.id} stays in the service (the API cannot delete it)."
    elif resource.asset.orphan:
        what, kept = "an asset the service made, whose id was never known", ""
    else:
        what, kept = "an asset whose creation got no answer", ""
    return (f"Removed {address} ({what}) from the state {state_path}. The service was not changed.{kept} "
            f"The next apply creates {address} as the manifest says.\n")


def force_unlock(state_path: Path, lock_id: str) -> str:
    """Remove the lock of ``state_path`` when its ID is ``lock_id``.

    Refused when there is no lock, when its ID is another (so a lock taken
    since the ID was read is never broken by mistake), when the lock has no
    ID, and when its holder still runs on this host.
    """
    lock = lock_path(state_path)
    holder = LockHolder.read(lock)
    if holder is None:
        raise StateError(f"The state {state_path} is not locked (there is no {lock}); nothing was removed.")
    if holder.id is None:
        raise StateError(f"The lock {lock} has no lock ID: it is empty or unreadable (written by an older "
                         "reconciler, or by hand), so force-unlock cannot check it. If no reconciler command is "
                         f"running against {state_path}, delete {lock}.")
    if holder.id != lock_id:
        raise StateError(f"The lock {lock} has ID {holder.id}, not {lock_id}; it was not removed. It is held by "
                         f"{holder.describe()}.")
    running = holder.running()
    if running:
        raise StateError(f"The lock {lock_id} was not removed: pid {holder.pid} on this host is still running "
                         f'"{holder.command}". Stop it first'
                         f" (it releases the lock as it ends); if pid "
                         f"{holder.pid} is some other program by now, delete {lock} by hand.")
    if not remove_lock(state_path, lock_id):
        raise StateError(f"The lock {lock_id} of {state_path} was released meanwhile; nothing was removed.")
    gone = ", which is no longer running" if running is False else ""
    return (f"Removed the lock {lock_id} of {state_path}, held by {holder.describe()}{gone}. That command may "
            "have changed the service without recording it: run 'reconciler plan' to see where things stand.\n")


def import_workspace(path: Path, address: str, workspace_id: str, *, target: Target, state_path: Path) -> str:
    """Bind ``address`` to the existing workspace ``workspace_id`` (or, for
    an ``asset.*`` address, to the asset of that id)."""
    desired = load_desired(path)
    asset = next((a for a in desired.assets if a.address == address), None)
    if asset is not None:
        return _import_asset(asset, workspace_id, state_path)
    node, group = _node(desired, address)
    with StateLock(state_path, command="reconciler import"):
        state = load_state(state_path)
        _refuse_rebinding(state, address, workspace_id)
        wanted = [workspace_id] + ([group.homepage] if group is not None else [])
        with open_client(target) as client:
            live = fetch_live(client, wanted, properties=PLAN_PROPERTIES)
        ws = live.workspaces.get(workspace_id)
        if ws is None:
            raise ConfigError(f"Cannot import {address}: workspace {workspace_id} does not exist, or the company "
                              "this token belongs to cannot see it. Nothing was changed.")
        _check_fit(node, group, ws, live.workspaces.get(group.homepage) if group is not None else None, address)
        template = node.template if isinstance(node, DesiredMember) else None
        write_state(state_path, state.with_resource(address, workspace_id, template=template))
    name = f' "{ws.name}"' if ws.name else ""
    joins = (" The next plan connects it to the group (harmless when it is in it already)."
             if group is not None else "")
    return f"Imported workspace {workspace_id}{name} as {address} ({node.location}).{joins}\n"


def _import_asset(asset: DesiredAsset, asset_id: str, state_path: Path) -> str:
    """Assets cannot be read back, so the id is taken as given; only the type
    is recorded, and the next plan PATCHes the fields the manifest sets."""
    with StateLock(state_path, command="reconciler import"):
        state = load_state(state_path)
        _refuse_rebinding(state, asset.address, asset_id)
        write_state(state_path, state.with_resource(asset.address, asset_id, asset={"type": asset.type}))
    return (f"Imported asset {asset_id} as {asset.address} ({asset.location}). The API cannot read assets back, "
            "so the id was not checked; the next plan sets its name, description, tags and internal flag "
            "as the manifest says.\n")


def _resource(state: State, address: str, state_path: Path) -> ResourceState:
    resource = state.resources.get(address)
    if resource is None:
        raise ConfigError(f"The state {state_path} records nothing for {address}.{_closest(address, state.resources)}")
    return resource


def _node(desired: Desired, address: str) -> tuple[DesiredMember | DesiredWorkspace, DesiredGroup | None]:
    for group in desired.groups:
        for member in group.members:
            if member.address == address:
                return member, group
    for workspace in desired.workspaces:
        if workspace.address == address:
            return workspace, None
    if any(g.address == address for g in desired.groups):
        raise ConfigError(f"Cannot import {address}: a group is named by its homepage in the manifest; import "
                          f"its members ({address}.workspace.KEY) instead.")
    importable = [m.address for g in desired.groups for m in g.members] + [w.address for w in desired.workspaces]
    importable += [a.address for a in desired.assets]
    raise ConfigError(f"Cannot import {address}: no manifest in {desired.root} declares it."
                      f"{_closest(address, importable)}")


def _refuse_rebinding(state: State, address: str, workspace_id: str) -> None:
    current = state.resources.get(address)
    if current is not None and current.id:  # an asset whose creation is in doubt (no id) may be adopted
        same = " already" if current.id == workspace_id else ""
        raise ConfigError(f"Cannot import {address}: the state{same} binds it to workspace {current.id}. "
                          f"Run 'reconciler state rm {address}' first to bind it anew.")
    other = next((a for a, r in state.resources.items() if r.id == workspace_id), None)
    if other is not None:
        raise ConfigError(f"Cannot import {address}: workspace {workspace_id} is already bound to {other}; "
                          "one workspace is managed in one place only.")


def _check_fit(node: DesiredMember | DesiredWorkspace, group: DesiredGroup | None, ws: LiveWorkspace,
               homepage: LiveWorkspace | None, address: str) -> None:
    problems = []
    declared_id = node.id
    if declared_id is not None and declared_id != ws.id:
        problems.append(f"the manifest names workspace {declared_id} for it at {node.location}")
    if isinstance(node, DesiredMember) and node.template is not None and ws.template_id != node.template:
        made = f"was made from template {ws.template_id}" if ws.template_id else "was not made from a template"
        problems.append(f"it {made}, the manifest asks for {node.template}")
    if group is not None and homepage is not None and ws.account_id != homepage.account_id:
        problems.append(f"it belongs to account {ws.account_id}, the group's homepage to {homepage.account_id}")
    if problems:
        raise ConfigError(f"Cannot import {address} as workspace {ws.id}: {'; '.join(problems)}. "
                          "Nothing was changed.")


def _closest(address: str, known: Iterable[str]) -> str:
    matches = difflib.get_close_matches(address, list(known), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(matches)}?" if matches else ""
