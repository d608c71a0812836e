from __future__ import annotations


def test_completing_a_task_sets_status_and_completed_at(client, props, clock):
    response = client.patch("/workspace-plan-tasks/task_3", json={"completed": True},
                            params=props("status", "completedAt", "title"))
    assert response.status_code == 200
    task = response.json()["data"]["workspacePlanTask"]
    assert task["id"] == "task_3" and task["object"] == "workspace-plan-task"
    assert task["status"] == "completed" and task["title"] == "Sign MSA"
    assert task["completedAt"].startswith("2027-01-15T08:00:00")   # VirtualClock's start


def test_uncompleting_a_task_clears_completed_at(client, props):
    client.patch("/workspace-plan-tasks/task_3", json={"completed": True})
    task = client.patch("/workspace-plan-tasks/task_3", json={"completed": False},
                        params=props("status", "completedAt")).json()["data"]["workspacePlanTask"]
    assert task["status"] == "not_started" and task["completedAt"] is None


def test_completing_twice_keeps_the_first_completed_at(client, props, clock):
    first = client.patch("/workspace-plan-tasks/task_3", json={"completed": True}, params=props("completedAt"))
    clock.advance(3600)
    second = client.patch("/workspace-plan-tasks/task_3", json={"completed": True}, params=props("completedAt"))
    assert first.json() == second.json()


def test_task_body_must_be_a_boolean_completed(client):
    assert client.patch("/workspace-plan-tasks/task_3", json={"completed": "yes"}).status_code == 400
    assert client.patch("/workspace-plan-tasks/task_3", json={"done": True}).status_code == 400


def test_hiding_a_section(client, props):
    response = client.patch("/workspace-sections/sec_41", json={"isHidden": True}, params=props("isHidden", "name"))
    assert response.status_code == 200
    assert response.json()["data"]["workspaceSection"] == {
        "id": "sec_41", "object": "workspace-section", "isHidden": True, "name": "Pricing"}


def test_hiding_a_page(client, props):
    response = client.patch("/workspace-pages/pg_9", json={"isHidden": True}, params=props("isHidden"))
    assert response.json()["data"]["workspacePage"] == {"id": "pg_9", "object": "workspace-page", "isHidden": True}


def test_plan_item_properties_are_checked_per_endpoint(client, props):
    response = client.patch("/workspace-pages/pg_9", json={"isHidden": True}, params=props("isSynced"))
    assert response.status_code == 400 and "isSynced" in response.json()["error"]["message"]


def test_unknown_or_foreign_plan_item_is_404(client, make_client):
    assert client.patch("/workspace-sections/sec_nope", json={"isHidden": True}).status_code == 404
    assert make_client("token-globex").patch("/workspace-sections/sec_41", json={"isHidden": True}).status_code == 404
