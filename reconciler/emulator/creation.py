"""Creating and publishing workspaces: the company-level rules.

Publishing needs a verified company (403 ``FORBIDDEN``).  Creating a
workspace uses one workspace credit, and a company on the free plan has at
most ``FREE_PLAN_WORKSPACES`` workspaces in total, active and archived;
both refusals are 403 ``FORBIDDEN`` (the description names no status).
"""

from __future__ import annotations

from typing import Any, TypedDict

from reconciler.emulator import validation
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request, forbidden
from reconciler.emulator.entities import Account, Deal, PlanItem, Template, Workspace
from reconciler.vocabulary import FREE_PLAN_WORKSPACES


def require_verified(ctx: RequestContext) -> None:
    if not ctx.co.verified:
        raise forbidden("The company must be verified to publish workspaces.")


def require_room_for_one_more(ctx: RequestContext) -> None:
    """Verified, under the free-plan cap, and a credit left."""
    require_verified(ctx)
    if ctx.co.plan == "free" and len(ctx.co.workspaces) >= FREE_PLAN_WORKSPACES:
        raise forbidden(f"The free plan allows {FREE_PLAN_WORKSPACES} workspaces in total (active and archived).")
    if ctx.co.credits < 1:
        raise forbidden("No workspace credits left.")


def template(ctx: RequestContext, template_id: Any) -> Template:
    if not isinstance(template_id, str):
        raise bad_request("templateId must be a string.")
    found = ctx.co.template(template_id)
    if found is None:
        raise bad_request(f"Template {template_id} not found.")
    return found


class Dates(TypedDict):
    """A new workspace's dates, by ``Workspace`` attribute name."""

    start_date: str | None
    target_end_date: str | None
    actual_end_date: str | None


def dates(body: dict[str, Any]) -> Dates:
    """The validated date fields of ``body``, by attribute name."""
    def one(key: str) -> str | None:
        return validation.date(body[key], key) if body.get(key) is not None else None

    return Dates(start_date=one("startDate"), target_end_date=one("targetEndDate"),
                 actual_end_date=one("actualEndDate"))


def deal(ctx: RequestContext, body: dict[str, Any], account: Account | None, tpl: Template | None) -> Deal | None:
    """The deal named by ``crmOneDealId`` / ``crmTwoOpportunityId``, which
    must belong to ``account``'s CRM company / account; 400 otherwise, and
    when a template that requires a deal gets none."""
    one, two = body.get("crmOneDealId"), body.get("crmTwoOpportunityId")
    if one is not None and two is not None:
        raise bad_request("Give crmOneDealId or crmTwoOpportunityId, not both.")
    if one is None and two is None:
        if tpl is not None and tpl.requires_deal:
            raise bad_request(f"Template {tpl.id} requires a deal: give crmOneDealId or crmTwoOpportunityId.")
        return None
    if not isinstance(one if one is not None else two, str):
        raise bad_request("Deal ids must be strings.")
    if one is not None:
        found = next((d for d in ctx.co.deals if d.crm_one_deal_id == one), None)
        owner = account.crm_one_company_id if account else None
        if found is None or owner is None or found.crm_one_company_id != owner:
            raise bad_request(f"Deal {one} does not belong to the account's first-CRM company.")
        return found
    found = next((d for d in ctx.co.deals if d.crm_two_opportunity_id == two), None)
    owner = account.crm_two_account_id if account else None
    if found is None or owner is None or found.crm_two_account_id != owner:
        raise bad_request(f"Opportunity {two} does not belong to the account's second-CRM account.")
    return found


def instantiate(ctx: RequestContext, ws: Workspace, tpl: Template) -> None:
    """Give ``ws`` fresh copies of the template's sections, pages and tasks,
    each pointing back at the template item it came from."""
    now = ctx.now_iso()
    for attr, prefix, back_ref in (("sections", "sec", "templateSectionId"), ("pages", "pg", "templatePageId"),
                                   ("tasks", "task", "templatePlanTaskId")):
        for entry in getattr(tpl, attr):
            fields = {k: (list(v) if isinstance(v, list) else v) for k, v in entry["fields"].items()}
            fields[back_ref] = entry["id"]
            getattr(ws, attr).append(PlanItem(ctx.new_id(prefix), fields, now, now))
