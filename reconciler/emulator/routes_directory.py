"""Read-only lists: users, accounts, custom fields."""

from __future__ import annotations

from typing import Any

from reconciler.emulator import pagination, properties, render
from reconciler.emulator.context import RequestContext
from reconciler.emulator.errors import bad_request, not_found
from reconciler.emulator.routing import Route

OBJECT_TYPES = ("workspace", "account", "deal")
ACCOUNT_FILTERS = ("name", "crmOneCompanyId", "crmTwoAccountId")
USER_FILTERS = ("email",)


def list_users(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """Every user the company knows, including people added through access
    lists; ``filter[email]`` narrows it."""
    ctx.check_query(("page", "limit", *ctx.filter_keys(USER_FILTERS)))
    selected = ctx.properties(properties.USER)
    filters = ctx.filters(USER_FILTERS)
    items = ([u for u in ctx.co.users if u.email == filters["email"].strip().lower()] if "email" in filters
             else ctx.co.users)  # unfiltered, a page is a slice: O(page)
    chunk, info = pagination.paginate(items, ctx.page())
    return 200, {"data": {"users": [properties.select(render.user(ctx.base_url, u), selected) for u in chunk],
                          "pageInfo": info}}


def list_accounts(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """The company's accounts; ``filter[name]``, ``filter[crmOneCompanyId]``
    and ``filter[crmTwoAccountId]`` match exactly."""
    ctx.check_query(("page", "limit", *ctx.filter_keys(ACCOUNT_FILTERS)))
    selected = ctx.properties(properties.ACCOUNT)
    filters = ctx.filters(ACCOUNT_FILTERS)
    items = [a for a in ctx.co.accounts
             if filters.get("name", a.name) == a.name
             and filters.get("crmOneCompanyId", a.crm_one_company_id) == a.crm_one_company_id
             and filters.get("crmTwoAccountId", a.crm_two_account_id) == a.crm_two_account_id] if filters else ctx.co.accounts
    chunk, info = pagination.paginate(items, ctx.page())
    docs = [properties.select(render.account(ctx.base_url, ctx.co, a), selected) for a in chunk]
    return 200, {"data": {"accounts": docs, "pageInfo": info}}


def get_custom_field(ctx: RequestContext, id: str) -> tuple[int, dict[str, Any]]:
    ctx.check_query()
    selected = ctx.properties(properties.CUSTOM_FIELD)
    found = ctx.co.custom_field(id)
    if found is None:
        raise not_found(f"Custom field {id} not found.")
    return 200, {"data": {"customField": properties.select(render.custom_field(ctx.base_url, found), selected)}}


def list_custom_fields(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
    """The company's custom fields; ``objectType`` (workspace, account, deal)
    narrows them to one kind of object."""
    ctx.check_query(("page", "limit", "objectType"))
    selected = ctx.properties(properties.CUSTOM_FIELD)
    object_type = next((v for k, v in ctx.query if k == "objectType"), None)
    if object_type is not None and object_type not in OBJECT_TYPES:
        raise bad_request(f"objectType must be one of {', '.join(OBJECT_TYPES)}, not {object_type!r}.")
    items = ctx.co.custom_fields if object_type is None else [f for f in ctx.co.custom_fields
                                                              if f.object_type == object_type]
    chunk, info = pagination.paginate(items, ctx.page())
    docs = [properties.select(render.custom_field(ctx.base_url, f), selected) for f in chunk]
    return 200, {"data": {"customFields": docs, "pageInfo": info}}


ROUTES: list[Route] = [
    Route("GET", "/v1/users", list_users),
    Route("GET", "/v1/accounts", list_accounts),
    Route("GET", "/v1/custom-fields/{id}", get_custom_field),
    Route("GET", "/v1/custom-fields", list_custom_fields),
]
