from __future__ import annotations

import datetime
import json

import pytest
import respx
from pydantic import ValidationError

from reconciler.api import errors
from reconciler.api.bodies import ConnectExisting, CreateFromTemplate
from reconciler.api.client import WorkspaceClient
from reconciler.api.models import AccessDomainInput, AccessUserInput
from tests.api.conftest import data, error

CONNECT = "/workspaces/ws_home/connected-workspaces"


def test_connect_existing_sends_only_the_workspace_id(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post(CONNECT).respond(201, json=data("workspace", {"id": "ws_2", "name": "Two"}))
    result = client.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_2"), properties=["name"])
    assert json.loads(route.calls.last.request.content) == {"workspaceId": "ws_2"}
    assert route.calls.last.request.url.params.get_list("properties[]") == ["name"]
    assert result.workspace.id == "ws_2" and result.already_connected is False


def test_connect_answered_200_means_already_connected(router: respx.Router, client: WorkspaceClient) -> None:
    router.post(CONNECT).respond(200, json=data("workspace", {"id": "ws_2"}))
    assert client.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_2")).already_connected is True


def test_create_from_template_sends_dates_and_access(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post(CONNECT).respond(201, json=data("workspace", {"id": "ws_new"}))
    body = CreateFromTemplate(
        templateId="tpl_1", name="Onboarding", crmOneDealId="d_1", startDate=datetime.date(2026, 1, 5),
        workspaceUsers=(AccessUserInput(email="jane@acme.com", role="owner"),),
        workspaceDomains=(AccessDomainInput(domain="client.com", role="viewer"),),
    )
    client.connect_workspace("ws_home", body)
    assert json.loads(route.calls.last.request.content) == {
        "templateId": "tpl_1", "name": "Onboarding", "crmOneDealId": "d_1", "startDate": "2026-01-05",
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}],
        "workspaceDomains": [{"domain": "client.com", "role": "viewer"}],
    }


def test_create_from_template_with_access_but_no_owner_is_refused() -> None:
    with pytest.raises(ValidationError, match="at least one user or domain must have the role owner"):
        CreateFromTemplate(templateId="tpl_1", workspaceDomains=(AccessDomainInput(domain="c.com", role="viewer"),))


def test_template_fields_are_refused_with_an_existing_workspace() -> None:
    with pytest.raises(ValidationError):
        ConnectExisting(workspaceId="ws_2", name="x")  # type: ignore[call-arg]


def test_read_only_fields_are_refused_in_bodies() -> None:
    with pytest.raises(ValidationError):
        CreateFromTemplate(templateId="tpl_1", id="ws_9")  # type: ignore[call-arg]


def test_connect_is_not_retried_after_500(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post(CONNECT).respond(500, json=error("INTERNAL_SERVER_ERROR", "Boom"))
    with pytest.raises(errors.ServerError, match="nothing is created twice"):
        client.connect_workspace("ws_home", CreateFromTemplate(templateId="tpl_1"))
    assert route.call_count == 1


def test_connect_to_another_group_is_a_conflict(router: respx.Router, client: WorkspaceClient) -> None:
    router.post(CONNECT).respond(409, json=error("CONFLICT", "Already connected to other workspaces"))
    with pytest.raises(errors.Conflict) as info:
        client.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_3"))
    assert info.value.path == CONNECT


def test_connect_counts_as_workspace_creation(router: respx.Router, client: WorkspaceClient) -> None:
    router.post(CONNECT).respond(201, json=data("workspace", {"id": "ws_2"}))
    client.connect_workspace("ws_home", ConnectExisting(workspaceId="ws_2"))
    assert client.stats.by_class == {"workspace_creation": 1}


def test_authenticated_embed_url_returns_the_address(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/workspaces/ws_1/authenticated-embed-url").respond(
        200, json=data("url", "https://embed.example/abc?t=1"))
    assert client.authenticated_embed_url("ws_1", email="raj@client.com") == "https://embed.example/abc?t=1"
    assert json.loads(route.calls.last.request.content) == {"email": "raj@client.com"}


def test_authenticated_embed_url_without_url_is_invalid(router: respx.Router, client: WorkspaceClient) -> None:
    router.post("/workspaces/ws_1/authenticated-embed-url").respond(200, json=data("url", None))
    with pytest.raises(errors.InvalidResponse):
        client.authenticated_embed_url("ws_1", email="raj@client.com")
