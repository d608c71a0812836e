from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import respx

from reconciler.api.client import WorkspaceClient
from tests.api.conftest import data


def test_plan_task_completion_is_patched(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-plan-tasks/t_1").respond(
        200, json=data("workspacePlanTask", {"id": "t_1", "status": "done", "completedAt": "2026-01-01T00:00:00Z"}))
    task = client.update_workspace_plan_task("t_1", completed=True, properties=["status", "completedAt"])
    assert json.loads(route.calls.last.request.content) == {"completed": True}
    assert route.calls.last.request.url.params.get_list("properties[]") == ["status", "completedAt"]
    assert task.status == "done"


def test_section_visibility_is_patched(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-sections/s_1").respond(
        200, json=data("workspaceSection", {"id": "s_1", "isHidden": True}))
    assert client.update_workspace_section("s_1", is_hidden=True, properties=["isHidden"]).isHidden is True
    assert json.loads(route.calls.last.request.content) == {"isHidden": True}


def test_page_visibility_is_patched(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-pages/p_1").respond(
        200, json=data("workspacePage", {"id": "p_1", "isHidden": False}))
    assert client.update_workspace_page("p_1", is_hidden=False).isHidden is False
    assert json.loads(route.calls.last.request.content) == {"isHidden": False}


def test_property_of_another_endpoint_is_refused(router: respx.Router, client: WorkspaceClient) -> None:
    with pytest.raises(ValueError, match="isSynced"):
        client.update_workspace_page("p_1", is_hidden=True, properties=["isSynced"])
    assert router.calls.call_count == 0


def test_a_lone_string_as_properties_is_refused(client: WorkspaceClient) -> None:
    with pytest.raises(ValueError, match="sequence of names"):
        client.update_workspace_page("p_1", is_hidden=True, properties="name")


@pytest.mark.parametrize(
    ("path", "name", "call", "chosen"),
    [
        ("/workspace-plan-tasks/t_1", "workspacePlanTask",
         lambda c, p: c.update_workspace_plan_task("t_1", completed=False, properties=p), ["title", "assignees"]),
        ("/workspace-sections/s_1", "workspaceSection",
         lambda c, p: c.update_workspace_section("s_1", is_hidden=True, properties=p), ["isHidden", "isSynced"]),
        ("/workspace-pages/p_1", "workspacePage",
         lambda c, p: c.update_workspace_page("p_1", is_hidden=True, properties=p), ["isHidden", "templatePageId"]),
    ],
    ids=["task", "section", "page"],
)
def test_plan_item_properties_are_sent_as_repeated_bracket_keys(
    router: respx.Router, client: WorkspaceClient, path: str, name: str,
    call: Callable[[WorkspaceClient, list[str]], object], chosen: list[str],
) -> None:
    route = router.patch(path).respond(200, json=data(name, {"id": path.rsplit("/", 1)[1]}))
    call(client, chosen)
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == chosen
    assert "properties" not in params


def test_plan_task_fields_are_parsed(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-plan-tasks/t_1").respond(200, json=data("workspacePlanTask", {
        "id": "t_1", "object": "workspace-plan-task", "status": "not_started", "completedAt": None,
        "title": "Sign MSA", "assignees": [{"type": "user", "userId": "u_1", "email": "jane@acme.com"}]}))
    task = client.update_workspace_plan_task("t_1", completed=False, properties=["status", "title", "assignees"])
    assert (task.status, task.completedAt, task.title) == ("not_started", None, "Sign MSA")
    assert task.assignees is not None
    assert [(a.type, a.userId, a.email) for a in task.assignees] == [("user", "u_1", "jane@acme.com")]


def test_section_and_page_fields_are_parsed(router: respx.Router, client: WorkspaceClient) -> None:
    router.patch("/workspace-sections/s_1").respond(200, json=data("workspaceSection", {
        "id": "s_1", "name": "Pricing", "navigationName": "Prices", "isHidden": True, "index": 2}))
    router.patch("/workspace-pages/p_1").respond(200, json=data("workspacePage", {
        "id": "p_1", "name": "Overview", "isHidden": False, "templatePageId": "tp_1"}))
    section = client.update_workspace_section("s_1", is_hidden=True)
    page = client.update_workspace_page("p_1", is_hidden=False)
    assert (section.name, section.navigationName, section.isHidden, section.index) == ("Pricing", "Prices", True, 2)
    assert (page.name, page.isHidden, page.templatePageId) == ("Overview", False, "tp_1")
