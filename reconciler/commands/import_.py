"""``reconciler import``: bind a manifest address to what already exists.

``import`` binds an address to a workspace that already exists, after
checking that it exists and fits the manifest entry, so the next plan adopts
it instead of creating another; an ``asset.*`` address to an asset id (taken
as given: assets cannot be read back).  The service is not changed; the
state is read with its journal and written whole (the backend's ``write``).
"""

from __future__ import annotations

from pathlib import Path

from reconciler.commands.state import closest
from reconciler.errors import ConfigError
from reconciler.live import PLAN_PROPERTIES, LiveWorkspace, fetch_live
from reconciler.manifest import Desired, DesiredAsset, DesiredGroup, DesiredMember, DesiredWorkspace, load_desired
from reconciler.state import State
from reconciler.state.backend import StateBackend, backend_for
from reconciler.service import Service, open_client


def import_workspace(path: Path, address: str, workspace_id: str, *, service: Service,
                     state_path: Path | str | StateBackend | None) -> str:
    """Bind ``address`` to the existing workspace ``workspace_id`` (or, for
    an ``asset.*`` address, to the asset of that id).  The state is
    ``state_path``, else the default one beside the manifests in ``path``."""
    store = backend_for(state_path, path)
    try:
        return _import(path, address, workspace_id, service=service, store=store)
    finally:
        store.close()


def _import(path: Path, address: str, workspace_id: str, *, service: Service, store: StateBackend) -> str:
    desired = load_desired(path)
    asset = next((a for a in desired.assets if a.address == address), None)
    if asset is not None:
        return _import_asset(asset, workspace_id, store)
    node, group = _node(desired, address)
    with store.lock("reconciler import"):
        state = store.load()
        _refuse_rebinding(state, address, workspace_id)
        wanted = [workspace_id] + ([group.homepage] if group is not None else [])
        with open_client(service) as client:
            live = fetch_live(client, wanted, properties=PLAN_PROPERTIES)
        ws = live.workspaces.get(workspace_id)
        if ws is None:
            raise ConfigError(f"Cannot import {address}: workspace {workspace_id} does not exist, or the company "
                              "this token belongs to cannot see it. Nothing was changed.")
        _check_fit(node, group, ws, live.workspaces.get(group.homepage) if group is not None else None, address)
        template = node.template if isinstance(node, DesiredMember) else None
        store.write(state.with_resource(address, workspace_id, template=template))
    name = f' "{ws.name}"' if ws.name else ""
    joins = (" The next plan connects it to the group (if it is in it already, nothing changes)."
             if group is not None else "")
    return f"Imported workspace {workspace_id}{name} as {address} ({node.location}).{joins}\n"


def _import_asset(asset: DesiredAsset, asset_id: str, store: StateBackend) -> str:
    """Assets cannot be read back, so the id is taken as given; only the type
    is recorded, and the next plan PATCHes the fields the manifest sets."""
    with store.lock("reconciler import"):
        state = store.load()
        _refuse_rebinding(state, asset.address, asset_id)
        store.write(state.with_resource(asset.address, asset_id, asset={"type": asset.type}))
    return (f"Imported asset {asset_id} as {asset.address} ({asset.location}). The API cannot read assets back, "
            "so the id was not checked; the next plan sets its name, description, tags and internal flag "
            "as the manifest says.\n")


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
                      f"{closest(address, importable)}")


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
