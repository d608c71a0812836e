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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from reconciler.errors import ConfigError, StateError
from reconciler.live import PLAN_PROPERTIES, LiveWorkspace, fetch_live
from reconciler.manifest import Desired, DesiredAsset, DesiredGroup, DesiredMember, DesiredWorkspace, load_desired
from reconciler.state import ResourceState, State
from reconciler.state.backend import StateBackend, open_backend
from reconciler.target import Target, open_client

StateAddress = Path | str | StateBackend


@contextmanager
def _opened(address: StateAddress) -> Iterator[StateBackend]:
    """The backend ``address`` names (a file path, a ``postgresql://`` URL), closed afterwards."""
    store = open_backend(address)
    try:
        yield store
    finally:
        store.close()


def state_list(state_path: StateAddress) -> str:
    """One line per address: the address and its workspace id, sorted."""
    with _opened(state_path) as store:
        state = store.load()
        if not state.resources and not store.exists():
            if store.kind == "file":
                return (f"There is no state file at {store.address}: nothing was applied with it yet, or the state "
                        "is kept elsewhere (name it with --state FILE).\n")
            return (f"There is no state at {store.address} yet: nothing was applied with it, or the state is kept "
                    "under another key= (or in a file: name it with --state FILE).\n")
    if not state.resources:
        return f"The state {store.address} records nothing yet.\n"
    width = max(len(a) for a in state.resources)
    return "".join(f"{a:<{width}}  {r.id}\n" for a, r in sorted(state.resources.items()))


def state_show(state_path: StateAddress, address: str) -> str:
    """Everything the state records for ``address``, as JSON."""
    with _opened(state_path) as store:
        resource = _resource(store.load(), address, store.address)
    return json.dumps({"address": address, **resource.model_dump(exclude_none=True)}, indent=2) + "\n"


def state_rm(state_path: StateAddress, address: str) -> str:
    """Forget ``address`` in the state; the service is not touched."""
    with _opened(state_path) as store, store.lock("reconciler state rm"):
        state = store.load()
        resource = _resource(state, address, store.address)
        store.write(state.without(address))
    state_path = store.address
    if resource.asset is not None:
        return _asset_removed(address, resource, state_path)
    return (
        f"Removed {address} (workspace {resource.id}) from the state {state_path}. The service was not "
        f"changed. The next plan treats {address} as unknown: a workspace made from a template would be "
        "created again, and write-only values would be sent again.\n"
    )


def _asset_removed(address: str, resource: ResourceState, state_path: str) -> str:
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


def force_unlock(state_path: StateAddress, lock_id: str) -> str:
    """Remove the lock of the state when its ID is ``lock_id`` (each backend says when it refuses)."""
    with _opened(state_path) as store:
        return store.force_unlock(lock_id)


def import_workspace(path: Path, address: str, workspace_id: str, *, target: Target, state_path: StateAddress) -> str:
    """Bind ``address`` to the existing workspace ``workspace_id`` (or, for
    an ``asset.*`` address, to the asset of that id)."""
    desired = load_desired(path)
    asset = next((a for a in desired.assets if a.address == address), None)
    if asset is not None:
        return _import_asset(asset, workspace_id, state_path)
    node, group = _node(desired, address)
    with _opened(state_path) as store, store.lock("reconciler import"):
        state = store.load()
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
        store.write(state.with_resource(address, workspace_id, template=template))
    name = f' "{ws.name}"' if ws.name else ""
    joins = (" The next plan connects it to the group (harmless when it is in it already)."
             if group is not None else "")
    return f"Imported workspace {workspace_id}{name} as {address} ({node.location}).{joins}\n"


def _import_asset(asset: DesiredAsset, asset_id: str, state_path: StateAddress) -> str:
    """Assets cannot be read back, so the id is taken as given; only the type
    is recorded, and the next plan PATCHes the fields the manifest sets."""
    with _opened(state_path) as store, store.lock("reconciler import"):
        state = store.load()
        _refuse_rebinding(state, asset.address, asset_id)
        store.write(state.with_resource(asset.address, asset_id, asset={"type": asset.type}))
    return (f"Imported asset {asset_id} as {asset.address} ({asset.location}). The API cannot read assets back, "
            "so the id was not checked; the next plan sets its name, description, tags and internal flag "
            "as the manifest says.\n")


def _resource(state: State, address: str, state_path: str) -> ResourceState:
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


def _lineage_serial(state: State) -> str:
    return f"serial {state.serial} of lineage {state.lineage or '(none)'}"


def state_push(source: StateAddress, destination: StateAddress, *, force: bool = False) -> str:
    """Copy the state at ``source`` (a state file) to ``destination`` (``--state``), lineage and serial kept.

    Refused, unless ``force``, when the destination holds another lineage,
    a newer serial, or the same serial with other contents: a push never
    silently overwrites what another writer recorded."""
    with _opened(source) as origin:
        state = origin.load()
        if not state.lineage:
            raise StateError(f"There is no state at {origin.address} to push (no file, or one never written by an "
                             "apply). Nothing was changed.")
        where = origin.address
    with _opened(destination) as store, store.lock("reconciler state push"):
        there = store.exists()
        current = store.load() if there else None
        if current is not None and not force:
            refusal = _refuse_overwrite(current, state, destination=store.address, source=where)
            if refusal == "same":
                return (f"{store.address} already holds {_lineage_serial(state)}, exactly as {where}; nothing "
                        "was changed.\n")
            if refusal:
                raise StateError(refusal)
        store.replace(state)
    replaced = f" (it held {_lineage_serial(current)})" if current is not None else ""
    return f"Pushed {_lineage_serial(state)} from {where} to {store.address}{replaced}.\n"


def state_pull(source: StateAddress, out: Path | None = None, *, force: bool = False) -> str:
    """The state at ``source`` as the state file's JSON: returned (for stdout), or written to ``out``,
    refused, unless ``force``, when ``out`` holds another lineage or a newer serial."""
    with _opened(source) as store:
        if not store.exists():
            raise StateError(f"There is no state at {store.address} to pull. Nothing was written.")
        state = store.load()
        where = store.address
    if out is None:
        return state.model_dump_json(indent=2, exclude_none=True) + "\n"
    with _opened(out) as target, target.lock("reconciler state pull"):
        if target.exists() and not force:
            refusal = _refuse_overwrite(target.load(), state, destination=target.address, source=where)
            if refusal == "same":
                return f"{target.address} already holds {_lineage_serial(state)}; nothing was changed.\n"
            if refusal:
                raise StateError(refusal)
        target.replace(state)
    return f"Pulled {_lineage_serial(state)} from {where} into {target.address}.\n"


def _refuse_overwrite(current: State, new: State, *, destination: str, source: str) -> str:
    """Why ``current`` (at ``destination``) must not be replaced by ``new``; ``"same"`` when
    they are one state; ``""`` when the replacement continues it."""
    force = " Check which is right; --force replaces it anyway."
    if current.lineage and current.lineage != new.lineage:
        return (f"{destination} holds another state ({_lineage_serial(current)}) than {source} "
                f"({_lineage_serial(new)}): a different lineage, so not an older copy of it. Nothing was "
                f"changed.{force}")
    if current.serial > new.serial:
        return (f"{destination} holds a newer serial of this state ({current.serial}) than {source} "
                f"({new.serial}): it would go back in time, forgetting what was recorded since. Nothing was "
                f"changed.{force}")
    if current.serial == new.serial:
        if current == new:
            return "same"
        return (f"{destination} and {source} both hold {_lineage_serial(new)} with different contents: they "
                f"diverged. Nothing was changed.{force}")
    return ""
