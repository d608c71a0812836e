"""Authenticated embed addresses: a URL carrying its own 2-minute token.

The token is held in memory only (it outlives no restart, as it would
outlive no 2 minutes anyway).  ``GET`` of the address answers a small HTML
page while the token is valid and 403 afterwards.
"""

from __future__ import annotations

import html
import secrets
from typing import Any

from reconciler.emulator import lookups, validation
from reconciler.emulator.context import EmulatorResponse, RequestContext
from reconciler.emulator.errors import ServiceError, forbidden
from reconciler.emulator.records import EmbedGrant
from reconciler.emulator.routing import Route
from reconciler.emulator.entities import Workspace

EMBED_SECONDS = 120


def _has_access(ws: Workspace, email: str) -> bool:
    domain = email.rpartition("@")[2]
    return any(e.key == email for e in ws.access.users) or any(e.key == domain for e in ws.access.domains)


def create_embed_url(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    ctx.properties(())  # the response is just a url: any properties value is refused
    ws = lookups.workspace(ctx, id)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"email"})
    email = validation.email(validation.string_field(body, "email", required=True), "email")
    if not _has_access(ws, email):
        raise forbidden(f"{email} has no access to workspace {ws.id}.")
    token = secrets.token_urlsafe(24)
    ctx.shared.embed_grants[token] = EmbedGrant(ctx.co.name, ws.id, email, ctx.now() + EMBED_SECONDS)
    return 200, {"data": {"url": f"{ctx.base_url}/embed/{ws.id}?token={token}"}}


def open_embed(ctx: RequestContext, id: str) -> EmulatorResponse:
    token = next((v for k, v in ctx.query if k == "token"), "")
    grant = ctx.shared.embed_grants.get(token)
    if grant is None or grant.workspace_id != id:
        raise ServiceError(403, "Invalid embed token.")
    if ctx.now() >= grant.expires_at:
        raise ServiceError(403, "The embed address has expired.")
    company = ctx.shared.store.companies[grant.company]
    ws = company.workspace(id)
    name = html.escape(ws.name if ws else id)
    page = f"<!doctype html><title>{name}</title><p>{name} for {html.escape(grant.email)}</p>"
    return EmulatorResponse(200, {"Content-Type": "text/html; charset=utf-8"}, page.encode())


ROUTES: list[Route] = [
    Route("POST", "/v1/workspaces/{id}/authenticated-embed-url", create_embed_url),
    Route("GET", "/embed/{id}", open_embed, authenticated=False),
]
