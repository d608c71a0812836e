"""``list_workspace_access``: a listing read as plain dicts, each page parsed and checked from its bytes in one
pydantic call (issue 40), with the listing's page checks and messages unchanged."""

from __future__ import annotations

import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.models import Workspace
from reconciler.live import read_listed, read_workspace
from tests.api.conftest import MakeClient, page

WORKSPACE = {
    "id": "ws_1", "object": "workspace", "name": "Acme", "accountId": "acc_1", "templateId": "tpl_1",
    "startDate": "2026-01-01", "createdAt": "2026-01-01T00:00:00Z", "totalViews": 12, "brandNew": {"x": 1},
    "deal": {"id": "deal_1", "crmOneDealId": "D-1", "crmTwoOpportunityId": None},
    "account": {"id": "acc_1", "name": "Acme Inc"},
    "workspaceUsers": [{"id": "wu_1", "object": "workspace-user", "role": "owner",
                        "user": {"id": "u_1", "object": "user", "email": "Jane@Acme.com", "firstName": "Jane"}}],
    "workspaceDomains": [{"id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "Acme.com."}],
}


def _answer(*workspaces: dict[str, object]) -> dict[str, object]:
    return {"data": {"workspaces": list(workspaces),
                     "pageInfo": {"page": 1, "pages": 1, "total": len(workspaces), "hasNextPage": False}}}


def test_a_listed_workspace_holds_the_fields_read_and_nothing_else(router: respx.Router,
                                                                   client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json=_answer(WORKSPACE))

    (listed,) = client.list_workspace_access()

    assert listed == {
        "id": "ws_1", "name": "Acme", "accountId": "acc_1", "templateId": "tpl_1", "startDate": "2026-01-01",
        "createdAt": "2026-01-01T00:00:00Z", "deal": {"crmOneDealId": "D-1", "crmTwoOpportunityId": None},
        "account": {"id": "acc_1", "name": "Acme Inc"},
        "workspaceUsers": [{"id": "wu_1", "role": "owner", "user": {"email": "Jane@Acme.com"}}],
        "workspaceDomains": [{"id": "wd_1", "role": "viewer", "domain": "Acme.com."}]}


def test_a_listed_workspace_reads_as_the_same_workspace_answered_by_a_write(router: respx.Router,
                                                                            client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json=_answer(WORKSPACE))

    (listed,) = client.list_workspace_access()

    assert read_listed(listed) == read_workspace(Workspace.model_validate(WORKSPACE))


def test_a_listed_workspace_is_read_field_by_field(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json=_answer(WORKSPACE))

    (listed,) = client.list_workspace_access()
    read = read_listed(listed)

    assert (read.id, read.name, read.account_id, read.account_name, read.template_id, read.start_date,
            read.created_at, read.crm_one_deal_id, read.crm_two_opportunity_id) == (
        "ws_1", "Acme", "acc_1", "Acme Inc", "tpl_1", "2026-01-01", "2026-01-01T00:00:00Z", "D-1", None)
    assert read.users["jane@acme.com"] == ("wu_1", "jane@acme.com", "owner")
    assert read.domains["acme.com"] == ("wd_1", "acme.com", "viewer")


def test_the_account_id_is_read_from_the_account_when_the_workspace_does_not_say_it(
        router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json=_answer({**WORKSPACE, "accountId": None}))

    (listed,) = client.list_workspace_access()

    assert read_listed(listed).account_id == "acc_1"


def test_a_field_that_is_read_and_has_the_wrong_shape_is_invalid_response_naming_the_field_and_the_call(
        router: respx.Router, client: WorkspaceClient) -> None:
    bad = {**WORKSPACE, "id": "ws_2", "workspaceUsers": [{"id": "wu_2", "role": "king", "user": None}]}
    router.get("/workspaces").respond(200, json=_answer(WORKSPACE, bad))

    with pytest.raises(errors.InvalidResponse) as info:
        list(client.list_workspace_access())

    message = str(info.value)
    assert "GET /workspaces" in message
    assert "a Workspace did not have the documented shape (workspaceUsers.0.role: Input should be 'owner'" in message


def test_a_field_that_is_not_read_is_not_checked(router: respx.Router, client: WorkspaceClient) -> None:
    odd = {**WORKSPACE, "totalViews": "many"}
    router.get("/workspaces").respond(200, json=_answer(odd))

    assert [w["id"] for w in client.list_workspace_access()] == ["ws_1"]


@pytest.mark.parametrize(("body", "said"), [
    (b"<html>busy</html>", "the body is not JSON; it begins: '<html>busy</html>'"),
    (b'{"data": {"workspaces": {"id": "ws_1"}}}', "'data.workspaces' is not a list"),
    (b'{"data": {"spaces": []}}', "'data' has no 'workspaces' (it has 'spaces')"),
    (b'{"data": {"workspaces": [{"name": "no id"}]}}', "a Workspace did not have the documented shape (id: Field "
                                                      "required)"),
])
def test_a_body_that_is_not_a_page_is_refused_as_every_listing_refuses_it(
        router: respx.Router, client: WorkspaceClient, body: bytes, said: str) -> None:
    router.get("/workspaces").respond(200, content=body)

    with pytest.raises(errors.InvalidResponse) as info:
        list(client.list_workspace_access())

    assert said in str(info.value)


def test_an_id_listed_twice_stops_the_listing(router: respx.Router, make_client: MakeClient) -> None:
    client = make_client(page_size=1)
    router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(200, json=page("workspaces", [{"id": "ws_1"}], 1, 2)),
        respx.MockResponse(200, json=page("workspaces", [{"id": "ws_1"}], 2, 2))])

    with pytest.raises(errors.InconsistentListing, match="page 2 repeats the id 'ws_1'"):
        list(client.list_workspace_access())


def test_pages_are_followed_with_the_listing_properties(router: respx.Router, make_client: MakeClient) -> None:
    client = make_client(page_size=1)
    route = router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(200, json=page("workspaces", [{"id": "ws_1"}], 1, 2)),
        respx.MockResponse(200, json=page("workspaces", [{"id": "ws_2"}], 2, 2))])

    got = [w["id"] for w in client.list_workspace_access(properties=["name", "workspaceUsers.role"])]

    assert got == ["ws_1", "ws_2"]
    assert [c.request.url.params["page"] for c in route.calls] == ["1", "2"]
    assert route.calls.last.request.url.params.get_list("properties[]") == ["name", "workspaceUsers.role"]
