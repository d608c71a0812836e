"""Full JSON representations of every resource, before ``properties``
selection cuts them down.

Each function returns every field the description lists for the resource
plus ``id``, ``object`` and ``url``; nested resources carry their own
``id`` and ``object``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from reconciler.emulator import plan_items
from reconciler.emulator.entities import (
    AccessEntry,
    Account,
    Asset,
    CustomField,
    Deal,
    File,
    PlanItem,
    Tag,
    User,
    Workspace,
)
from reconciler.emulator.store import Company

# docx/ppt/xlsx assets are converted to PDF and reported under these types.
CONVERTED_TYPES: dict[str, str] = {
    "docx": "microsoftWordEmbedPdf",
    "ppt": "microsoftPowerPointEmbedPdf",
    "xlsx": "microsoftExcelEmbedPdf",
}


def _url(base: str, collection: str, rid: str) -> str:
    return f"{base}/v1/{collection}/{rid}"


def user(base: str, u: User) -> dict[str, Any]:
    return {"id": u.id, "object": "user", "url": _url(base, "users", u.id), "firstName": u.first_name,
            "lastName": u.last_name, "avatar": u.avatar, "email": u.email, "name": u.name,
            "createdAt": u.created_at, "updatedAt": u.updated_at}


def workspace_user(base: str, company: Company, e: AccessEntry) -> dict[str, Any]:
    person = company.user_by_email(e.key)
    return {"id": e.id, "object": "workspace-user", "url": _url(base, "workspace-users", e.id), "role": e.role,
            "createdAt": e.created_at, "updatedAt": e.updated_at,
            "user": user(base, person) if person else {"object": "user", "email": e.key}}


def workspace_domain(base: str, e: AccessEntry) -> dict[str, Any]:
    return {"id": e.id, "object": "workspace-domain", "url": _url(base, "workspace-domains", e.id), "role": e.role,
            "domain": e.key, "createdAt": e.created_at, "updatedAt": e.updated_at}


def custom_field(base: str, f: CustomField, *, with_value: bool = False, value: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": f.id, "object": "custom-field", "url": _url(base, "custom-fields", f.id),
                           "name": f.name, "variableName": f.variable_name, "type": f.type,
                           "options": [dict(o) for o in f.options], "createdAt": f.created_at,
                           "updatedAt": f.updated_at}
    if with_value:
        doc["value"] = value
    return doc


def _field_values(base: str, company: Company, object_type: str, values: dict[str, str]) -> list[dict[str, Any]]:
    return [custom_field(base, f, with_value=True, value=values.get(f.id))
            for f in company.custom_fields if f.object_type == object_type]


def account(base: str, company: Company, a: Account) -> dict[str, Any]:
    return {"id": a.id, "object": "account", "url": _url(base, "accounts", a.id), "name": a.name,
            "website": a.website, "ownerId": a.owner_id, "logo": a.logo, "crmTwoAccountId": a.crm_two_account_id,
            "crmOneCompanyId": a.crm_one_company_id, "createdAt": a.created_at, "updatedAt": a.updated_at,
            "customFields": _field_values(base, company, "account", a.custom_fields)}


def deal(d: Deal) -> dict[str, Any]:
    return {"id": d.id, "object": "deal", "createdDate": d.created_date, "closeDate": d.close_date, "name": d.name,
            "amount": d.amount, "type": d.type, "stage": d.stage, "crmOneDealId": d.crm_one_deal_id,
            "crmTwoOpportunityId": d.crm_two_opportunity_id, "createdAt": d.created_at, "updatedAt": d.updated_at}


def _task_progress(ws: Workspace) -> str:
    # "progress of all tasks": the share completed, as a percentage string.
    if not ws.tasks:
        return "0%"
    done = sum(1 for t in ws.tasks if t.fields.get("status") == plan_items.COMPLETED)
    return f"{round(100 * done / len(ws.tasks))}%"


def _project_age(ws: Workspace, now: float) -> int:
    # Whole days since the start date, else since creation.
    start = ws.start_date or ws.created_at[:10]
    try:
        begun = dt.date.fromisoformat(start)
    except ValueError:
        return 0
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    return max(0, (today - begun).days)


def workspace(base: str, company: Company, ws: Workspace, now: float) -> dict[str, Any]:
    acc = company.account(ws.account_id)
    d = company.deal(ws.deal_id)
    return {
        "id": ws.id, "object": "workspace", "url": _url(base, "workspaces", ws.id),
        "accountId": ws.account_id, "name": ws.name, "workspaceUrl": f"{base}/w/{ws.id}",
        "templateId": ws.template_id, "startDate": ws.start_date, "targetEndDate": ws.target_end_date,
        "actualEndDate": ws.actual_end_date, "projectAge": _project_age(ws, now), "taskProgress": _task_progress(ws),
        "lastContactView": None, "totalViews": 0, "totalActions": 0, "totalTimeSpent": 0,
        "contactsCount": len(ws.access.users), "createdAt": ws.created_at, "updatedAt": ws.updated_at,
        "account": account(base, company, acc) if acc else None,
        "customFields": _field_values(base, company, "workspace", ws.custom_fields),
        "workspaceDomains": [workspace_domain(base, e) for e in ws.access.domains],
        "workspaceUsers": [workspace_user(base, company, e) for e in ws.access.users],
        "deal": deal(d) if d else None,
    }


_PLAN_ITEM = {"task": ("workspace-plan-task", "workspace-plan-tasks"),
              "section": ("workspace-section", "workspace-sections"),
              "page": ("workspace-page", "workspace-pages")}


def plan_item(base: str, kind: str, item: PlanItem) -> dict[str, Any]:
    obj, collection = _PLAN_ITEM[kind]
    return {"id": item.id, "object": obj, "url": _url(base, collection, item.id), **item.fields,
            "createdAt": item.created_at, "updatedAt": item.updated_at}


def tag(base: str, t: Tag) -> dict[str, Any]:
    return {"id": t.id, "object": "tag", "url": _url(base, "tags", t.id), "title": t.title,
            "createdAt": t.created_at, "updatedAt": t.updated_at}


def file(base: str, f: File) -> dict[str, Any]:
    return {"id": f.id, "object": "file", "url": f"{base}/downloads/{f.id}" if f.upload_status == "ready" else None,
            "uploadStatus": f.upload_status, "fileName": f.file_name, "mimeType": f.mime_type,
            "createdAt": f.created_at, "updatedAt": f.updated_at}


def asset(base: str, company: Company, a: Asset) -> dict[str, Any]:
    asset_url: str | None
    if a.file_id:
        asset_url = f"{base}/downloads/{a.file_id}"
    else:
        asset_url = a.url
    return {"id": a.id, "object": "asset", "url": _url(base, "assets", a.id), "name": a.name,
            "description": a.description, "transcript": a.transcript, "views": a.views, "shares": a.shares,
            "assetType": CONVERTED_TYPES.get(a.type, a.type), "assetUrl": asset_url, "isInternal": a.is_internal,
            "tags": [tag(base, t) for t in (company.tag(tid) for tid in a.tag_ids) if t is not None],
            "createdAt": a.created_at, "updatedAt": a.updated_at}
