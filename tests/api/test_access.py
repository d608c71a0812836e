from __future__ import annotations

import json

import pytest
import respx

from reconciler.api.client import WorkspaceClient
from reconciler.api.models import AccessDomainInput, AccessUserInput
from tests.api.conftest import MakeClient, data, page

WORKSPACE = {
    "id": "ws_1", "object": "workspace", "name": "Acme",
    "workspaceUsers": [{"id": "wu_1", "object": "workspace-user", "role": "owner",
                        "user": {"id": "u_1", "object": "user", "email": "jane@acme.com"}}],
    "workspaceDomains": [{"id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "acme.com"}],
}


def test_properties_are_sent_as_repeated_bracket_keys(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/workspaces").respond(200, json=page("workspaces", [], 1, 1))
    list(client.list_workspaces(properties=["name", "workspaceUsers.user.email", "name"]))
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == ["name", "workspaceUsers.user.email"]
    assert "properties" not in params


def test_unknown_property_is_refused_before_any_request(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError, match="'nmae'"):
        client.update_workspace_user("wu_1", role="viewer", properties=["nmae"])
    assert router.calls.call_count == 0


def test_pagination_is_followed_to_the_last_page(router: respx.Router, make_client: MakeClient) -> None:
    client = make_client(page_size=2)
    answers = [page("workspaces", [{"id": f"ws_{i}"}, {"id": f"ws_{i + 1}"}], n, 3)
               for n, i in ((1, 1), (2, 3), (3, 5))]
    route = router.get("/workspaces").mock(side_effect=[respx.MockResponse(200, json=a) for a in answers])
    got = [ws.id for ws in client.list_workspaces()]
    assert got == ["ws_1", "ws_2", "ws_3", "ws_4", "ws_5", "ws_6"]
    assert route.call_count == 3
    sent = [(c.request.url.params["page"], c.request.url.params["limit"]) for c in route.calls]
    assert sent == [("1", "2"), ("2", "2"), ("3", "2")]


def test_pagination_stops_on_an_empty_page(router: respx.Router, client: WorkspaceClient) -> None:
    body = {"data": {"workspaces": [], "pageInfo": {"page": 1, "hasNextPage": True}}}
    route = router.get("/workspaces").respond(200, json=body)
    assert list(client.list_workspaces()) == []
    assert route.call_count == 1


def test_stopping_early_sends_no_further_pages(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/workspaces").respond(200, json=page("workspaces", [{"id": "a"}, {"id": "b"}], 1, 5))
    workspaces = client.list_workspaces()
    assert next(workspaces).id == "a"
    assert route.call_count == 1


def test_workspace_access_lists_are_parsed(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/workspaces").respond(200, json=page("workspaces", [WORKSPACE], 1, 1))
    (ws,) = list(client.list_workspaces(properties=["workspaceUsers.role"]))
    assert ws.workspaceUsers is not None and ws.workspaceUsers[0].user is not None
    assert ws.workspaceUsers[0].user.email == "jane@acme.com"
    assert ws.workspaceDomains is not None and ws.workspaceDomains[0].domain == "acme.com"


def test_unknown_response_fields_are_kept(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-domains/wd_1").respond(
        200, json=data("workspaceDomain", {"id": "wd_1", "role": "editor", "brandNew": 1}))
    wd = client.update_workspace_domain("wd_1", role="editor")
    assert wd.role == "editor" and wd.model_extra == {"brandNew": 1}


def test_set_access_sends_only_the_keys_given(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/workspaces/ws_1/access").respond(200, json=data("workspace", WORKSPACE))
    client.set_access("ws_1", users=[AccessUserInput(email="jane@acme.com", role="owner")])
    assert json.loads(route.calls.last.request.content) == {
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]
    }


def test_set_access_sends_every_key_given(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/workspaces/ws_1/access").respond(200, json=data("workspace", WORKSPACE))
    ws = client.set_access("ws_1", users=[], domains=[AccessDomainInput(domain="acme.com", role="viewer")],
                           notify_people=False, message="hi", properties=["name"])
    assert ws.id == "ws_1"
    assert json.loads(route.calls.last.request.content) == {
        "workspaceUsers": [], "workspaceDomains": [{"domain": "acme.com", "role": "viewer"}],
        "notifyPeople": False, "message": "hi",
    }


def test_set_access_without_any_list_is_refused(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError):
        client.set_access("ws_1", notify_people=True)
    assert router.calls.call_count == 0


def test_path_ids_are_quoted_as_one_segment(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch(url__regex=r".*/workspace-users/.*").respond(200, json=data("workspaceUser", {"id": "x"}))
    client.update_workspace_user("a/../b c", role="viewer")
    assert route.calls.last.request.url.raw_path == b"/v1/workspace-users/a%2F..%2Fb%20c"


def test_workspace_domains_filter_is_sent_as_bracket_keys(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/workspace-domains").respond(200, json=page("workspaceDomains", [{"id": "wd_1"}], 1, 1))
    assert [d.id for d in client.list_workspace_domains(filter={"domain": "acme.com"})] == ["wd_1"]
    assert route.calls.last.request.url.params["filter[domain]"] == "acme.com"


def test_set_access_sends_properties_as_bracket_keys_and_parses_the_lists(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.post("/workspaces/ws_1/access").respond(200, json=data("workspace", WORKSPACE))
    ws = client.set_access("ws_1", users=[AccessUserInput(email="jane@acme.com", role="owner")],
                           properties=["workspaceUsers.role", "workspaceDomains.domain"])
    assert route.calls.last.request.url.params.get_list("properties[]") == [
        "workspaceUsers.role", "workspaceDomains.domain"]
    assert ws.workspaceUsers is not None and ws.workspaceUsers[0].id == "wu_1"
    assert ws.workspaceUsers[0].role == "owner"
    assert ws.workspaceDomains is not None and ws.workspaceDomains[0].domain == "acme.com"


def test_update_workspace_user_sends_only_the_role(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-users/wu_1").respond(200, json=data("workspaceUser", {"id": "wu_1"}))
    client.update_workspace_user("wu_1", role="collaborator")
    assert json.loads(route.calls.last.request.content) == {"role": "collaborator"}


def test_update_workspace_user_sends_properties_and_parses_the_user(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.patch("/workspace-users/wu_1").respond(200, json=data("workspaceUser", {
        "id": "wu_1", "object": "workspace-user", "role": "editor",
        "user": {"id": "u_1", "object": "user", "email": "jane@acme.com", "firstName": "Jane"}}))
    entry = client.update_workspace_user("wu_1", role="editor", properties=["role", "user.email", "user.firstName"])
    assert route.calls.last.request.url.params.get_list("properties[]") == ["role", "user.email", "user.firstName"]
    assert (entry.id, entry.object, entry.role) == ("wu_1", "workspace-user", "editor")
    assert entry.user is not None and (entry.user.email, entry.user.firstName) == ("jane@acme.com", "Jane")


def test_update_workspace_domain_sends_only_the_role(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-domains/wd_1").respond(200, json=data("workspaceDomain", {"id": "wd_1"}))
    client.update_workspace_domain("wd_1", role="commenter")
    assert json.loads(route.calls.last.request.content) == {"role": "commenter"}


def test_update_workspace_domain_sends_properties_and_parses_the_domain(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.patch("/workspace-domains/wd_1").respond(200, json=data("workspaceDomain", {
        "id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "acme.com"}))
    entry = client.update_workspace_domain("wd_1", role="viewer", properties=["role", "domain"])
    assert route.calls.last.request.url.params.get_list("properties[]") == ["role", "domain"]
    assert (entry.id, entry.role, entry.domain) == ("wd_1", "viewer", "acme.com")


def test_list_workspace_domains_sends_properties_page_and_limit_and_parses_entries(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.get("/workspace-domains").respond(200, json=page("workspaceDomains", [
        {"id": "wd_1", "object": "workspace-domain", "role": "viewer", "domain": "acme.com"}], 1, 1))
    (entry,) = client.list_workspace_domains(properties=["domain", "role"])
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == ["domain", "role"]
    assert (params["page"], params["limit"]) == ("1", "100")
    assert (entry.id, entry.domain, entry.role) == ("wd_1", "acme.com", "viewer")


def test_unknown_workspace_domain_property_is_refused_before_any_request(
    router: respx.Router, client: WorkspaceClient
) -> None:
    with pytest.raises(ValueError, match="'email'"):
        list(client.list_workspace_domains(properties=["email"]))
    assert router.calls.call_count == 0
