"""Contract: the client gets the same answers from the description and from the emulator.

Each scenario is one client call, run twice:

- against respx, answered with fixtures written from the shapes of
  service-api.md (``{data: {<name>: ...}}``, ``pageInfo``, the error
  envelope) and the values of ``seed.yaml``;
- against the in-process emulator seeded with ``seed.yaml``.

Both runs must send the same request (method, path, query, JSON body) and
the client must parse both answers to the same values: every field the
fixture gives must come back from the emulator with the same value (fields
the fixture leaves out, such as timestamps and ``url``, are not compared),
and an error must raise the same exception class with the same status and
code.  So the emulator is held to the description, and the client's parsing
is exercised on both.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from pydantic import BaseModel

from reconciler.api.bodies import ConnectExisting, CreateFromTemplate, LinkAssetInput
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.api.errors import ApiError
from reconciler.api.models import AccessDomainInput, AccessUserInput, ConnectResult
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport

SEED = Path(__file__).with_name("seed.yaml")
TOKEN = "contract-token"
BASE = "https://api.example.test/v1"

Call = Callable[[WorkspaceClient], Any]
Answer = tuple[str, str, int, dict[str, Any]]   # method, path, status, body
Shape = tuple[str, str, tuple[tuple[str, str], ...], Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    call: Call
    answers: list[Answer] = field(default_factory=list)
    # Dotted paths whose values each side makes up (a signed address, a
    # time): compared as "present and non-empty", not by value.
    varying: tuple[str, ...] = ()


def page_info(page: int, pages: int, total: int, on_page: int) -> dict[str, Any]:
    return {"page": page, "pages": pages, "total": total, "pageTotal": on_page,
            "hasNextPage": page < pages, "hasPrevPage": page > 1}


def error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


JANE = {"id": "usr_1", "object": "user", "email": "jane@acme.com"}
RAJ = {"id": "usr_2", "object": "user", "email": "raj@customer.com"}
ACCESS = ("name", "workspaceUsers.role", "workspaceUsers.user.email", "workspaceDomains.domain",
          "workspaceDomains.role")

SCENARIOS = [
    Scenario(
        "list_workspaces_follows_pages_with_access_properties",
        lambda c: list(c.list_workspaces(properties=ACCESS)),
        [("GET", "/workspaces", 200, {"data": {"workspaces": [
            {"id": "ws_home", "object": "workspace", "name": "Onboarding Home",
             "workspaceUsers": [{"id": "wu_1", "object": "workspace-user", "role": "owner", "user": JANE},
                                {"id": "wu_2", "object": "workspace-user", "role": "viewer", "user": RAJ}],
             "workspaceDomains": [{"id": "wd_1", "object": "workspace-domain", "domain": "customer.com",
                                   "role": "viewer"}]},
            {"id": "ws_solo", "object": "workspace", "name": "Solo",
             "workspaceUsers": [{"id": "wu_3", "object": "workspace-user", "role": "owner", "user": JANE}],
             "workspaceDomains": [{"id": "wd_2", "object": "workspace-domain", "domain": "partner.io",
                                   "role": "commenter"}]}],
            "pageInfo": page_info(1, 2, 3, 2)}}),
         ("GET", "/workspaces", 200, {"data": {"workspaces": [
             {"id": "ws_elsewhere", "object": "workspace", "name": "Other group",
              "workspaceUsers": [{"id": "wu_4", "object": "workspace-user", "role": "owner", "user": JANE}],
              "workspaceDomains": []}],
             "pageInfo": page_info(2, 2, 3, 1)}})],
    ),
    Scenario(
        "set_access_replaces_the_user_list_and_returns_the_workspace",
        lambda c: c.set_access("ws_solo", users=[AccessUserInput(email="jane@acme.com", role="owner")],
                               properties=("workspaceUsers.role", "workspaceUsers.user.email")),
        [("POST", "/workspaces/ws_solo/access", 200, {"data": {"workspace": {
            "id": "ws_solo", "object": "workspace",
            "workspaceUsers": [{"id": "wu_3", "object": "workspace-user", "role": "owner", "user": JANE}]}}})],
    ),
    Scenario(
        "set_access_replaces_the_domain_list_alone",
        lambda c: c.set_access("ws_solo", domains=[AccessDomainInput(domain="partner.io", role="viewer")],
                               notify_people=False, properties=("workspaceDomains.domain", "workspaceDomains.role")),
        [("POST", "/workspaces/ws_solo/access", 200, {"data": {"workspace": {
            "id": "ws_solo", "object": "workspace",
            "workspaceDomains": [{"id": "wd_2", "object": "workspace-domain", "domain": "partner.io",
                                  "role": "viewer"}]}}})],
    ),
    Scenario(
        "update_workspace_user_sets_the_role",
        lambda c: c.update_workspace_user("wu_2", role="editor", properties=("role", "user.email")),
        [("PATCH", "/workspace-users/wu_2", 200, {"data": {"workspaceUser": {
            "id": "wu_2", "object": "workspace-user", "role": "editor", "user": RAJ}}})],
    ),
    Scenario(
        "update_workspace_domain_sets_the_role",
        lambda c: c.update_workspace_domain("wd_1", role="commenter", properties=("role", "domain")),
        [("PATCH", "/workspace-domains/wd_1", 200, {"data": {"workspaceDomain": {
            "id": "wd_1", "object": "workspace-domain", "role": "commenter", "domain": "customer.com"}}})],
    ),
    Scenario(
        "list_workspace_domains_lists_every_domain_entry",
        lambda c: list(c.list_workspace_domains(properties=("role", "domain"))),
        [("GET", "/workspace-domains", 200, {"data": {"workspaceDomains": [
            {"id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "customer.com"},
            {"id": "wd_2", "object": "workspace-domain", "role": "commenter", "domain": "partner.io"}],
            "pageInfo": page_info(1, 1, 2, 2)}})],
    ),
    Scenario(
        "connect_an_existing_workspace_is_201_and_takes_the_group_access",
        lambda c: c.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_solo"),
                                      properties=("name", "workspaceUsers.role", "workspaceUsers.user.email")),
        [("POST", "/workspaces/ws_home/connected-workspaces", 201, {"data": {"workspace": {
            "id": "ws_solo", "object": "workspace", "name": "Solo",
            "workspaceUsers": [{"id": "wu_1", "object": "workspace-user", "role": "owner", "user": JANE},
                               {"id": "wu_2", "object": "workspace-user", "role": "viewer", "user": RAJ}]}}})],
    ),
    Scenario(
        "connect_a_workspace_already_in_the_group_is_200",
        lambda c: c.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_home"), properties=("name",)),
        [("POST", "/workspaces/ws_home/connected-workspaces", 200, {"data": {"workspace": {
            "id": "ws_home", "object": "workspace", "name": "Onboarding Home"}}})],
    ),
    Scenario(
        "connect_from_a_template_is_201_with_a_new_workspace_in_the_group_account",
        lambda c: c.connect_workspace("ws_home", CreateFromTemplate(templateId="tpl_kickoff", name="Kickoff Beta"),
                                      properties=("name", "accountId", "templateId")),
        [("POST", "/workspaces/ws_home/connected-workspaces", 201, {"data": {"workspace": {
            "id": "ws_1", "object": "workspace", "name": "Kickoff Beta", "accountId": "acc_1",
            "templateId": "tpl_kickoff"}}})],
    ),
    Scenario(
        "connect_a_workspace_of_another_group_is_409",
        lambda c: c.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_elsewhere")),
        [("POST", "/workspaces/ws_home/connected-workspaces", 409,
          error("CONFLICT", "Workspace ws_elsewhere is already connected to other workspaces."))],
    ),
    Scenario(
        "connect_from_a_template_that_requires_a_deal_without_one_is_400",
        lambda c: c.connect_workspace("ws_home", CreateFromTemplate(templateId="tpl_renewal")),
        [("POST", "/workspaces/ws_home/connected-workspaces", 400,
          error("BAD_REQUEST", "Template tpl_renewal requires a deal."))],
    ),
    Scenario(
        "authenticated_embed_url_returns_an_address",
        lambda c: c.authenticated_embed_url("ws_home", email="jane@acme.com").startswith("http"),
        [("POST", "/workspaces/ws_home/authenticated-embed-url", 200,
          {"data": {"url": "https://app.example.test/embed/ws_home?token=abc"}})],
    ),
    Scenario(
        "update_plan_task_completes_it",
        lambda c: c.update_workspace_plan_task("task_1", completed=True, properties=("title",)),
        [("PATCH", "/workspace-plan-tasks/task_1", 200, {"data": {"workspacePlanTask": {
            "id": "task_1", "object": "workspace-plan-task", "title": "Kick-off call"}}})],
    ),
    Scenario(
        "update_section_hides_it",
        lambda c: c.update_workspace_section("sec_1", is_hidden=True, properties=("name", "isHidden")),
        [("PATCH", "/workspace-sections/sec_1", 200, {"data": {"workspaceSection": {
            "id": "sec_1", "object": "workspace-section", "name": "Welcome", "isHidden": True}}})],
    ),
    Scenario(
        "update_page_hides_it",
        lambda c: c.update_workspace_page("pg_1", is_hidden=True, properties=("name", "isHidden")),
        [("PATCH", "/workspace-pages/pg_1", 200, {"data": {"workspacePage": {
            "id": "pg_1", "object": "workspace-page", "name": "Overview", "isHidden": True}}})],
    ),
    Scenario(
        "update_of_an_unknown_page_is_404",
        lambda c: c.update_workspace_page("pg_404", is_hidden=True),
        [("PATCH", "/workspace-pages/pg_404", 404, error("NOT_FOUND", "No workspace page pg_404."))],
    ),
    Scenario(
        "create_file_returns_the_file_and_its_upload_target",
        lambda c: c.create_file("deck.pdf", "application/pdf"),
        [("POST", "/files", 201, {"data": {
            "file": {"id": "file_2", "uploadStatus": "in_progress", "url": None},
            "upload": {"url": "https://storage.example.test/file_2?signature=abc", "method": "PUT",
                       "headers": {"Content-Type": "application/pdf"}, "expiresAt": "2027-01-15T09:00:00.000Z"}}})],
        varying=("upload.url", "upload.expiresAt"),
    ),
    Scenario(
        "create_link_asset_returns_the_asset",
        lambda c: c.create_asset(LinkAssetInput(type="link", name="Docs", url="https://docs.acme.com",
                                                tagIds=("tag_2",)),
                                 properties=("name", "assetType", "tags.title")),
        [("POST", "/assets", 201, {"data": {"asset": {
            "id": "asset_2", "object": "asset", "name": "Docs", "assetType": "link",
            "tags": [{"id": "tag_2", "object": "tag", "title": "onboarding"}]}}})],
    ),
    Scenario(
        "update_asset_replaces_its_tags",
        lambda c: c.update_asset("asset_1", tag_ids=["tag_2"], is_internal=True,
                                 properties=("name", "isInternal", "tags.title")),
        [("PATCH", "/assets/asset_1", 200, {"data": {"asset": {
            "id": "asset_1", "object": "asset", "name": "Site", "isInternal": True,
            "tags": [{"id": "tag_2", "object": "tag", "title": "onboarding"}]}}})],
    ),
    Scenario(
        "get_file_reports_its_upload_status",
        lambda c: c.get_file("file_1", properties=("uploadStatus",)),
        [("GET", "/files/file_1", 200, {"data": {"file": {"id": "file_1", "uploadStatus": "ready"}}})],
    ),
    Scenario(
        "create_tag_returns_the_tag",
        lambda c: c.create_tag("renewals"),
        [("POST", "/tags", 201, {"data": {"tag": {"id": "tag_3", "object": "tag"}}})],
    ),
    Scenario(
        "create_tag_with_a_title_in_use_is_409",
        lambda c: c.create_tag("Pricing"),
        [("POST", "/tags", 409, error("CONFLICT", "A tag titled 'pricing' exists: tag_1."))],
    ),
    Scenario(
        "list_users_lists_the_company_users",
        lambda c: list(c.list_users(properties=("email", "firstName"))),
        [("GET", "/users", 200, {"data": {"users": [
            {"id": "usr_1", "object": "user", "email": "jane@acme.com", "firstName": "Jane"},
            {"id": "usr_2", "object": "user", "email": "raj@customer.com", "firstName": "Raj"}],
            "pageInfo": page_info(1, 1, 2, 2)}})],
    ),
    Scenario(
        "get_custom_field_returns_its_options",
        lambda c: c.get_custom_field("cf_2", properties=("name", "type", "options.index", "options.label",
                                                         "options.value")),
        [("GET", "/custom-fields/cf_2", 200, {"data": {"customField": {
            "id": "cf_2", "object": "custom-field", "name": "Strategic", "type": "singleCheckbox",
            "options": [{"index": 0, "label": "Yes", "value": "true"},
                        {"index": 1, "label": "No", "value": "false"}]}}})],
    ),
    Scenario(
        "list_custom_fields_filters_by_object_type",
        lambda c: list(c.list_custom_fields(object_type="workspace", properties=("name", "variableName"))),
        [("GET", "/custom-fields", 200, {"data": {"customFields": [
            {"id": "cf_1", "object": "custom-field", "name": "Region", "variableName": "region"}],
            "pageInfo": page_info(1, 1, 1, 1)}})],
    ),
    Scenario(
        "list_accounts_returns_crm_ids",
        lambda c: list(c.list_accounts(properties=("name", "crmOneCompanyId", "crmTwoAccountId"))),
        [("GET", "/accounts", 200, {"data": {"accounts": [
            {"id": "acc_1", "object": "account", "name": "Customer Inc", "crmOneCompanyId": "hs-1",
             "crmTwoAccountId": None},
            {"id": "acc_2", "object": "account", "name": "Partner Co", "crmOneCompanyId": None,
             "crmTwoAccountId": "sf-2"}],
            "pageInfo": page_info(1, 1, 2, 2)}})],
    ),
]

# The listing scenario pages by 2 so both sides answer two pages.
PAGE_SIZES = {"list_workspaces_follows_pages_with_access_properties": 2}


class Recording(httpx.BaseTransport):
    """Forwards to another transport and keeps every request it sent."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return self.inner.handle_request(request)


def shape(request: httpx.Request) -> Shape:
    """What the client asked for, wherever it was sent."""
    path = request.url.path.split("/v1", 1)[1]
    body = json.loads(request.content) if request.content else None
    return request.method, path, tuple(sorted(request.url.params.multi_items())), body


def parsed(value: Any, *, set_only: bool) -> Any:
    """A client result as plain data: models dumped (only the fields the
    answer gave, for the fixture side), generators and lists element-wise."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=set_only)
    if isinstance(value, ConnectResult):
        return {"already_connected": value.already_connected,
                "workspace": parsed(value.workspace, set_only=set_only)}
    if isinstance(value, (list, tuple, Iterator)):
        return [parsed(v, set_only=set_only) for v in value]
    return value


def project(value: Any, onto: Any) -> Any:
    """``value`` cut down to the keys present in ``onto``, recursively."""
    if isinstance(onto, dict) and isinstance(value, dict):
        return {k: project(value.get(k), v) for k, v in onto.items()}
    if isinstance(onto, list) and isinstance(value, list) and len(onto) == len(value):
        return [project(v, o) for v, o in zip(value, onto, strict=True)]
    return value


def mask(value: Any, path: str) -> Any:
    """``value`` with the item at dotted ``path`` replaced by whether it is set."""
    head, _, rest = path.partition(".")
    if not isinstance(value, dict) or head not in value:
        return value
    inner = mask(value[head], rest) if rest else bool(value[head])
    return {**value, head: inner}


def outcome(call: Call, client: WorkspaceClient, *, set_only: bool) -> Any:
    try:
        return parsed(call(client), set_only=set_only)
    except ApiError as exc:
        return {"raised": type(exc).__name__, "status": exc.status, "code": exc.code}


def run_on_fixtures(scenario: Scenario) -> tuple[Any, list[Shape]]:
    router = respx.Router(base_url=BASE, assert_all_called=True)
    routes: dict[tuple[str, str], list[httpx.Response]] = {}
    for method, path, status, body in scenario.answers:
        routes.setdefault((method, path), []).append(httpx.Response(status, json=body))
    for (method, path), responses in routes.items():
        router.route(method=method, path=path).mock(side_effect=responses)
    recording = Recording(httpx.MockTransport(router.handler))
    client = WorkspaceClient(make_http_client(BASE, TOKEN, transport=recording), clock=VirtualClock(),
                             page_size=PAGE_SIZES.get(scenario.name, 100), rng=random.Random(1))
    result = outcome(scenario.call, client, set_only=True)
    router.assert_all_called()
    return result, [shape(r) for r in recording.requests]


def run_on_emulator(scenario: Scenario) -> tuple[Any, list[Shape]]:
    clock = VirtualClock()
    recording = Recording(emulator_transport(Emulator.from_seed_file(SEED, clock=clock)))
    client = WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN, transport=recording), clock=clock,
                             page_size=PAGE_SIZES.get(scenario.name, 100), rng=random.Random(1))
    return outcome(scenario.call, client, set_only=False), [shape(r) for r in recording.requests]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_fixture_and_emulator_give_the_client_the_same_result(scenario: Scenario) -> None:
    expected, _ = run_on_fixtures(scenario)
    got, _ = run_on_emulator(scenario)
    for path in scenario.varying:
        expected, got = mask(expected, path), mask(got, path)
    assert project(got, expected) == expected


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_the_client_sends_the_same_requests_to_both(scenario: Scenario) -> None:
    _, to_fixture = run_on_fixtures(scenario)
    _, to_emulator = run_on_emulator(scenario)
    assert to_fixture == to_emulator
    assert len(to_fixture) == len(scenario.answers)


def test_every_client_endpoint_has_a_contract_scenario() -> None:
    called = {(m, p.split("/")[1]) for s in SCENARIOS for m, p, _, _ in s.answers}
    documented = {("GET", "workspaces"), ("POST", "workspaces"), ("PATCH", "workspace-users"),
                  ("PATCH", "workspace-domains"), ("GET", "workspace-domains"), ("PATCH", "workspace-plan-tasks"),
                  ("PATCH", "workspace-sections"), ("PATCH", "workspace-pages"), ("POST", "files"),
                  ("POST", "assets"), ("PATCH", "assets"), ("GET", "files"), ("POST", "tags"), ("GET", "users"),
                  ("GET", "custom-fields"), ("GET", "accounts")}
    assert documented <= called
