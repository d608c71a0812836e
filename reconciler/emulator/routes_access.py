"""Single access entries: PATCH a user's or domain's role, list domains.

Entry ids are those of the (possibly shared) access list, so an entry of a
connected group is one entry, whichever member it is reached through.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import access, lookups, pagination, properties, render, validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request, not_found
from reconciler.emulator.routing import Route

DOMAIN_FILTERS = ("domain", "workspaceId")


def _patch(ctx: RequestContext, entry_id: str, *, domains: bool) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.WORKSPACE_DOMAIN if domains else properties.WORKSPACE_USER)
    found = access.find_entry(ctx.co, entry_id, domains=domains)
    if found is None:
        raise not_found(f"Workspace {'domain' if domains else 'user'} {entry_id} not found.")
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"role"})
    if "role" not in body:
        raise bad_request("The field 'role' is required.")
    role = validation.role(body["role"], "role")
    access_list, entry = found
    before = entry.updated_at
    access.change_role(access_list, entry, role, ctx.now_iso())
    if entry.updated_at != before:
        members = ctx.co.members(access_list)
        if members:
            lookups.touch_members(ctx, members[0])
        ctx.changed()
    if domains:
        doc = render.workspace_domain(ctx.base_url, entry)
        return 200, {"data": {"workspaceDomain": properties.select(doc, selected)}}
    doc = render.workspace_user(ctx.base_url, ctx.co, entry)
    return 200, {"data": {"workspaceUser": properties.select(doc, selected)}}


def patch_user(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    return _patch(ctx, id, domains=False)


def patch_domain(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    return _patch(ctx, id, domains=True)


def list_domains(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """Each domain entry of the company once (a group's list counts once),
    narrowed by ``filter[domain]`` and ``filter[workspaceId]``."""
    ctx.check_query(("page", "limit", *ctx.filter_keys(DOMAIN_FILTERS)))
    selected = ctx.properties(properties.WORKSPACE_DOMAIN)
    filters = ctx.filters(DOMAIN_FILTERS)
    lists = ctx.co.access_lists()
    if "workspaceId" in filters:
        ws = ctx.co.workspace(filters["workspaceId"])
        lists = [ws.access] if ws is not None else []
    entries = [e for lst in lists for e in lst.domains
               if "domain" not in filters or e.key == filters["domain"].strip().lower()]
    chunk, info = pagination.paginate(entries, ctx.page())
    docs = [properties.select(render.workspace_domain(ctx.base_url, e), selected) for e in chunk]
    return 200, {"data": {"workspaceDomains": docs, "pageInfo": info}}


ROUTES: list[Route] = [
    Route("PATCH", "/v1/workspace-users/{id}", patch_user),
    Route("PATCH", "/v1/workspace-domains/{id}", patch_domain),
    Route("GET", "/v1/workspace-domains", list_domains),
]
