"""Workspaces: list, access replace (and, in ``routes_connect``, creation
and connection).

``POST /workspaces/{id}/access`` replaces each list it is given and leaves
the other alone; on a connected workspace it changes the group's one list.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import access, lookups, pagination, properties, render, validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request
from reconciler.emulator.records import Notification
from reconciler.emulator.routing import Route

WORKSPACE_FILTERS = ("accountId", "name")


def list_workspaces(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """Every workspace of the company (published or not, archived or not),
    in creation order; ``filter[accountId]`` and ``filter[name]`` narrow it."""
    ctx.check_query(("page", "limit", *ctx.filter_keys(WORKSPACE_FILTERS)))
    selected = ctx.properties(properties.WORKSPACE)
    filters = ctx.filters(WORKSPACE_FILTERS)
    if filters:
        items = [w for w in ctx.co.workspaces
                 if filters.get("accountId", w.account_id) == w.account_id and filters.get("name", w.name) == w.name]
    else:
        # Unfiltered, the page is a slice of the company's list: O(page), not
        # a copy of every workspace for each page.
        items = ctx.co.workspaces
    chunk, info = pagination.paginate(items, ctx.page())
    docs = [properties.select(render.workspace(ctx.base_url, ctx.co, w, ctx.now()), selected) for w in chunk]
    return 200, {"data": {"workspaces": docs, "pageInfo": info}}


def set_access(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.WORKSPACE)
    ws = lookups.workspace(ctx, id)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"workspaceUsers", "workspaceDomains", "notifyPeople", "message"})
    users = access.parse_entries(body, access.USERS)
    domains = access.parse_entries(body, access.DOMAINS)
    if users is None and domains is None:
        raise bad_request("Give workspaceUsers, workspaceDomains or both.")
    notify = validation.bool_field(body, "notifyPeople")
    message = validation.string_field(body, "message")
    now = ctx.now_iso()
    added = access.replace_attached(ctx.co, ws.access, users, domains, new_id=ctx.new_id, now=now)
    access.ensure_users(ctx.co, [e.key for e in ws.access.users], now, ctx.new_id)
    lookups.touch_members(ctx, ws)
    ctx.changed()
    if notify:
        for email in added:
            ctx.shared.notifications.append(Notification(ws.id, email, message, ctx.now()))
    return lookups.workspace_reply(ctx, ws, selected)


ROUTES: list[Route] = [
    Route("GET", "/v1/workspaces", list_workspaces),
    Route("POST", "/v1/workspaces/{id}/access", set_access),
]
