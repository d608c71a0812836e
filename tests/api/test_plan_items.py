from __future__ import annotations

import json

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
