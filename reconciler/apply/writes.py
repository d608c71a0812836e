"""The calls that change a workspace in place: an access list (role PATCHes or one POST of the whole
list), a connect, a section, page or task value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.api.bodies import ConnectExisting
from reconciler.api.errors import (
    ApiError,
    ConnectionFailed,
    ServerError,
)
from reconciler.apply.assets import PartlyMade as _PartlyMade
from reconciler.api.models import AccessDomainInput, AccessUserInput
from reconciler.live import ACCESS_PROPERTIES, LiveWorkspace, read_workspace
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    ConnectChange,
    SettingChange,
)
from reconciler.apply.proof import check_lists, snapshot_of
from reconciler.state import StateBuilder

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient


# Answers that leave open whether the service made the change.
AMBIGUOUS = (ServerError, ConnectionFailed)


def apply_access(client: WorkspaceClient, change: AccessChange, ws: LiveWorkspace) -> None:
    if change.strategy == "patch":
        made: list[str] = []
        for entry in change.entries:  # in the order the plan sends them (promotions to owner first)
            entries = ws.users if entry.kind == "user" else ws.domains
            entry_id = entries[entry.key].id
            assert entry.after is not None  # patch strategy holds updates only
            try:
                if entry.kind == "user":
                    client.update_workspace_user(entry_id, role=entry.after)
                else:
                    client.update_workspace_domain(entry_id, role=entry.after)
            except ApiError as exc:
                if made:
                    raise _PartlyMade(exc, f"the role changes of {', '.join(made)} were made") from exc
                raise
            made.append(f"{entry.kind} {entry.key} ({entry.before} -> {entry.after})")
        return
    kinds = change.sides  # with the entries of the changes it carries (plan/merge.py)
    users, domains = access_inputs(change.after)
    answer = client.set_access(
        change.workspace_id,
        users=users if "user" in kinds else None,
        domains=domains if "domain" in kinds else None,
        notify_people=change.notify,
        message=change.message if change.notify else None,
        properties=ACCESS_PROPERTIES,
    )
    got = snapshot_of(read_workspace(answer))
    # Only the sides sent are checked: the other is the list's own, which an earlier change of this
    # plan may have changed (one list shared with another workspace the plan writes); the proof after
    # the last write compares the whole list with the prediction.
    sent = AccessSnapshot(users=change.after.users if "user" in kinds else got.users,
                          domains=change.after.domains if "domain" in kinds else got.domains)
    check_lists(change.address, f"POST /workspaces/{change.workspace_id}/access", sent, got)


def access_inputs(snapshot: AccessSnapshot) -> tuple[list[AccessUserInput], list[AccessDomainInput]]:
    return ([AccessUserInput(email=k, role=r) for k, r in snapshot.users.items()],
            [AccessDomainInput(domain=k, role=r) for k, r in snapshot.domains.items()])


def connect_to_group(client: WorkspaceClient, change: ConnectChange) -> None:
    """Connect an existing workspace.  Connecting one already in the group
    answers 200 and changes nothing, so after an answer that leaves the
    outcome open the call is simply sent once more."""
    body = ConnectExisting(workspaceId=change.workspace_id)
    try:
        client.connect_workspace(change.homepage_id, body)
    except AMBIGUOUS:
        client.connect_workspace(change.homepage_id, body)


def set_value(client: WorkspaceClient, change: SettingChange, state: StateBuilder) -> None:
    if change.kind == "task":
        client.update_workspace_plan_task(change.item_id, completed=change.after)
    elif change.kind == "section":
        client.update_workspace_section(change.item_id, is_hidden=change.after)
    else:
        client.update_workspace_page(change.item_id, is_hidden=change.after)
    state.record_setting(change.workspace_address, change.workspace_id, change.kind, change.item_id, change.after)
