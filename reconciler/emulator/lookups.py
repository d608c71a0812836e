"""Finding a company's resources by id, with the service's 404.

A company only ever sees its own resources: another company's id is
indistinguishable from one that does not exist.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import properties, render
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import not_found
from reconciler.emulator.entities import Workspace


def workspace(ctx: RequestContext, wid: str) -> Workspace:
    ws = ctx.co.workspace(wid)
    if ws is None:
        raise not_found(f"Workspace {wid} not found.")
    return ws


def workspace_reply(ctx: RequestContext, ws: Workspace, selected: list[str], status: int = 200) -> tuple[int, dict[str, Any]]:
    """``{data: {workspace}}`` with ``selected`` properties applied."""
    doc = render.workspace(ctx.base_url, ctx.co, ws, ctx.now())
    return status, {"data": {"workspace": properties.select(doc, selected)}}


def touch_members(ctx: RequestContext, ws: Workspace) -> None:
    """Mark every workspace sharing ``ws``'s access list as updated."""
    now = ctx.now_iso()
    for member in ctx.co.members(ws.access):
        member.updated_at = now
