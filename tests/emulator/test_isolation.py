from __future__ import annotations

USERS = {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]}


def test_list_shows_only_the_companys_own_workspaces(client, make_client):
    acme = [w["id"] for w in client.get("/workspaces").json()["data"]["workspaces"]]
    globex = [w["id"] for w in make_client("token-globex").get("/workspaces").json()["data"]["workspaces"]]
    assert acme == ["ws_home", "ws_kickoff", "ws_portal"]
    assert globex == ["ws_globex"]


def test_another_companys_workspace_is_404(client):
    response = client.post("/workspaces/ws_globex/access", json=USERS)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_another_companys_access_entry_is_404(client, make_client):
    globex_entry = make_client("token-globex").get(
        "/workspaces", params=[("properties[]", "workspaceUsers.role")]).json()["data"]["workspaces"][0]
    entry_id = globex_entry["workspaceUsers"][0]["id"]
    assert client.patch(f"/workspace-users/{entry_id}", json={"role": "viewer"}).status_code == 404
