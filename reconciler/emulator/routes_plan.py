"""Plan items: tasks (completed), sections and pages (isHidden).

A task set to completed gets ``status`` ``completed`` and ``completedAt``
now (kept if it was already completed); set back, ``not_started`` and no
``completedAt``.
"""

from __future__ import annotations

from typing import Any

from reconciler.emulator import plan_items, properties, render, validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import not_found
from reconciler.emulator.routing import Route
from reconciler.emulator.entities import PlanItem

_KINDS = {  # kind -> (workspace attribute, response name, properties, label)
    "task": ("tasks", "workspacePlanTask", properties.TASK, "Workspace plan task"),
    "section": ("sections", "workspaceSection", properties.SECTION, "Workspace section"),
    "page": ("pages", "workspacePage", properties.PAGE, "Workspace page"),
}


def _find(ctx: RequestContext, kind: str, item_id: str) -> PlanItem:
    attr, _, _, label = _KINDS[kind]
    item = ctx.co.plan_item(attr, item_id)
    if item is None:
        raise not_found(f"{label} {item_id} not found.")
    return item


def _reply(ctx: RequestContext, kind: str, item: PlanItem, selected: list[str]) -> tuple[int, dict[str, Any]]:
    name = _KINDS[kind][1]
    return 200, {"data": {name: properties.select(render.plan_item(ctx.base_url, kind, item), selected)}}


def patch_task(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.TASK)
    item = _find(ctx, "task", id)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"completed"})
    completed = validation.bool_field(body, "completed", required=True)
    is_done = item.fields["status"] == plan_items.COMPLETED
    if completed != is_done:
        item.fields["status"] = plan_items.COMPLETED if completed else plan_items.NOT_STARTED
        item.fields["completedAt"] = ctx.now_iso() if completed else None
        item.updated_at = ctx.now_iso()
        ctx.changed()
    return _reply(ctx, "task", item, selected)


def _patch_hidden(ctx: RequestContext, kind: str, item_id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(_KINDS[kind][2])
    item = _find(ctx, kind, item_id)
    body = ctx.json_body()
    validation.reject_unknown_keys(body, {"isHidden"})
    hidden = validation.bool_field(body, "isHidden", required=True)
    if item.fields["isHidden"] != hidden:
        item.fields["isHidden"] = hidden
        item.updated_at = ctx.now_iso()
        ctx.changed()
    return _reply(ctx, kind, item, selected)


def patch_section(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    return _patch_hidden(ctx, "section", id)


def patch_page(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    return _patch_hidden(ctx, "page", id)


ROUTES: list[Route] = [
    Route("PATCH", "/v1/workspace-plan-tasks/{id}", patch_task),
    Route("PATCH", "/v1/workspace-sections/{id}", patch_section),
    Route("PATCH", "/v1/workspace-pages/{id}", patch_page),
]
