"""Workspace creation and connection groups.

``POST /workspaces/{id}/connected-workspaces`` follows the description's
rules 1-7; ``POST /workspaces`` (shape not shown) is the emulator's
conventional reading: a standalone workspace with its own access list.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import access, creation, lookups, properties, validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request, conflict
from reconciler.emulator.routing import WORKSPACE_CREATION, Route
from reconciler.emulator.entities import AccessList, Group, Workspace

_TEMPLATE_ONLY = ("name", "crmOneDealId", "crmTwoOpportunityId", "startDate", "targetEndDate", "actualEndDate",
                  "workspaceUsers", "workspaceDomains")


def connect(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.WORKSPACE)
    addressed = lookups.workspace(ctx, id)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"workspaceId", "templateId", *_TEMPLATE_ONLY})
    if ("workspaceId" in body) == ("templateId" in body):
        raise bad_request("Give exactly one of workspaceId and templateId.")
    if "workspaceId" in body:
        extra = [k for k in _TEMPLATE_ONLY if k in body]
        if extra:
            raise bad_request(f"{', '.join(extra)} apply only with templateId.")
        return _connect_existing(ctx, addressed, body["workspaceId"], selected)
    return _create_from_template(ctx, addressed, body, selected)


def _group_of(ctx: RequestContext, addressed: Workspace) -> Group:
    """The addressed workspace's group, formed around it (as homepage) if it has none."""
    if addressed.group is not None:
        return ctx.co.groups[addressed.group]
    group = Group(ctx.new_id("grp"), addressed.id, addressed.access)
    ctx.co.groups[group.id] = group
    addressed.group = group.id
    return group


def _connect_existing(ctx: RequestContext, addressed: Workspace, other_id: Any, selected: list[str]) -> tuple[int, dict[str, Any]]:
    if not isinstance(other_id, str):
        raise bad_request("workspaceId must be a string.")
    other = ctx.co.workspace(other_id)
    if other is None:
        raise bad_request(f"Workspace {other_id} not found.")
    if other is addressed or (addressed.group is not None and other.group == addressed.group):
        if addressed.group is None:
            raise bad_request("A workspace cannot be connected to itself.")
        return lookups.workspace_reply(ctx, other, selected, 200)
    if other.group is not None:
        raise conflict(f"Workspace {other.id} is already connected to other workspaces.")
    if other.account_id != addressed.account_id:
        raise conflict(f"Workspace {other.id} belongs to another account than workspace {addressed.id}.")
    if not other.published:
        creation.require_verified(ctx)
    group = _group_of(ctx, addressed)
    # Published or not, the joining workspace ends up with the group's one
    # list; its own entries are dropped.
    other.group = group.id
    ctx.co.share_access(other, group.access)
    other.published = True
    other.updated_at = ctx.now_iso()
    ctx.changed()
    return lookups.workspace_reply(ctx, other, selected, 201)


def _create_from_template(ctx: RequestContext, addressed: Workspace, body: dict[str, Any],
                          selected: list[str]) -> tuple[int, dict[str, Any]]:
    tpl = creation.template(ctx, body["templateId"])
    name = validation.string_field(body, "name", min_length=1) or tpl.workspace_title or tpl.name
    dates = creation.dates(body)
    account = ctx.co.account(addressed.account_id)
    deal = creation.deal(ctx, body, account, tpl)
    users = access.parse_entries(body, access.USERS)
    domains = access.parse_entries(body, access.DOMAINS)
    current = addressed.access
    if users is not None or domains is not None:
        # Check the owner rule on the result before anything changes.
        trial = AccessList(list(current.users), list(current.domains))
        access.apply_replace(trial, users, domains, new_id=lambda p: f"{p}_trial", now="")
    creation.require_room_for_one_more(ctx)
    group = _group_of(ctx, addressed)
    now = ctx.now_iso()
    if users is not None or domains is not None:
        access.replace_attached(ctx.co, group.access, users, domains, new_id=ctx.new_id, now=now)
        access.ensure_users(ctx.co, [e.key for e in group.access.users], now, ctx.new_id)
        lookups.touch_members(ctx, addressed)
    ws = Workspace(ctx.new_id("ws"), name, addressed.account_id, True, False, group.access, group=group.id,
                   template_id=tpl.id, deal_id=deal.id if deal else None, created_at=now, updated_at=now, **dates)
    creation.instantiate(ctx, ws, tpl)
    ctx.co.workspaces.append(ws)
    ctx.co.credits -= 1
    ctx.changed()
    return lookups.workspace_reply(ctx, ws, selected, 201)


_CREATE_KEYS = ("name", "accountId", "templateId", "crmOneDealId", "crmTwoOpportunityId", "startDate",
                "targetEndDate", "actualEndDate", "workspaceUsers", "workspaceDomains")


def create(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """A new, published, standalone workspace: ``name``, ``accountId`` and
    an access list with an owner are required; ``templateId`` optional."""
    ctx.check_query()
    selected = ctx.properties(properties.WORKSPACE)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, _CREATE_KEYS)
    name = validation.string_field(body, "name", required=True, min_length=1)
    account_id = validation.string_field(body, "accountId", required=True)
    account = ctx.co.account(account_id)
    if account is None:
        raise bad_request(f"Account {account_id} not found.")
    tpl = creation.template(ctx, body["templateId"]) if body.get("templateId") is not None else None
    dates = creation.dates(body)
    deal = creation.deal(ctx, body, account, tpl)
    users = access.parse_entries(body, access.USERS) or []
    domains = access.parse_entries(body, access.DOMAINS) or []
    access.require_owner(users, domains)
    creation.require_room_for_one_more(ctx)
    now = ctx.now_iso()
    own = AccessList()
    access.apply_replace(own, users, domains, new_id=ctx.new_id, now=now)
    access.ensure_users(ctx.co, [e.key for e in own.users], now, ctx.new_id)
    assert name is not None and account_id is not None
    ws = Workspace(ctx.new_id("ws"), name, account_id, True, False, own, template_id=tpl.id if tpl else None,
                   deal_id=deal.id if deal else None, created_at=now, updated_at=now, **dates)
    if tpl is not None:
        creation.instantiate(ctx, ws, tpl)
    ctx.co.workspaces.append(ws)
    ctx.co.credits -= 1
    ctx.changed()
    return lookups.workspace_reply(ctx, ws, selected, 201)


ROUTES: list[Route] = [
    Route("POST", "/v1/workspaces/{id}/connected-workspaces", connect, WORKSPACE_CREATION),
    Route("POST", "/v1/workspaces", create, WORKSPACE_CREATION),
]
