from __future__ import annotations


def _entry_ids(client, workspace_id):
    params = [("properties[]", "workspaceUsers.user.email"), ("properties[]", "workspaceDomains.domain")]
    ws = next(w for w in client.get("/workspaces", params=params).json()["data"]["workspaces"] if w["id"] == workspace_id)
    return ({u["user"]["email"]: u["id"] for u in ws["workspaceUsers"]},
            {d["domain"]: d["id"] for d in ws["workspaceDomains"]})


def test_patch_workspace_user_role(client, props):
    users, _ = _entry_ids(client, "ws_home")
    response = client.patch(f"/workspace-users/{users['raj@customer.com']}", json={"role": "collaborator"},
                            params=props("role", "user.email"))
    assert response.status_code == 200
    assert response.json()["data"]["workspaceUser"] == {
        "id": users["raj@customer.com"], "object": "workspace-user", "role": "collaborator",
        "user": {"id": response.json()["data"]["workspaceUser"]["user"]["id"], "object": "user",
                 "email": "raj@customer.com"}}


def test_patch_shows_on_every_group_member(client):
    users, _ = _entry_ids(client, "ws_home")
    client.patch(f"/workspace-users/{users['raj@customer.com']}", json={"role": "editor"})
    params = [("properties[]", "workspaceUsers.role"), ("properties[]", "workspaceUsers.user.email")]
    ws = {w["id"]: w for w in client.get("/workspaces", params=params).json()["data"]["workspaces"]}
    roles = {u["user"]["email"]: u["role"] for u in ws["ws_kickoff"]["workspaceUsers"]}
    assert roles["raj@customer.com"] == "editor"


def test_patch_workspace_domain_role(client, props):
    _, domains = _entry_ids(client, "ws_home")
    response = client.patch(f"/workspace-domains/{domains['customer.com']}", json={"role": "commenter"},
                            params=props("role", "domain"))
    assert response.status_code == 200
    assert response.json()["data"]["workspaceDomain"] == {
        "id": domains["customer.com"], "object": "workspace-domain", "role": "commenter", "domain": "customer.com"}


def test_demoting_the_last_owner_is_400(client):
    users, _ = _entry_ids(client, "ws_home")
    response = client.patch(f"/workspace-users/{users['jane@acme.com']}", json={"role": "viewer"})
    assert response.status_code == 400
    params = [("properties[]", "workspaceUsers.role")]
    ws = client.get("/workspaces", params=params).json()["data"]["workspaces"][0]
    assert ws["workspaceUsers"][0]["role"] == "owner"


def test_patch_with_a_bad_role_or_extra_key_is_400(client):
    users, _ = _entry_ids(client, "ws_home")
    entry = users["raj@customer.com"]
    assert client.patch(f"/workspace-users/{entry}", json={"role": "boss"}).status_code == 400
    assert client.patch(f"/workspace-users/{entry}", json={"role": "viewer", "x": 1}).status_code == 400
    assert client.patch(f"/workspace-users/{entry}", json={}).status_code == 400


def test_patch_unknown_entry_is_404(client):
    assert client.patch("/workspace-users/wu_999", json={"role": "viewer"}).status_code == 404


def test_list_workspace_domains_counts_a_group_list_once(client, props):
    client.post("/workspaces/ws_portal/access", json={"workspaceDomains": [{"domain": "partner.io", "role": "viewer"}]})
    data = client.get("/workspace-domains", params=props("domain", "role")).json()["data"]
    assert [d["domain"] for d in data["workspaceDomains"]] == ["customer.com", "partner.io"]
    assert data["pageInfo"]["total"] == 2


def test_list_workspace_domains_filters(client):
    client.post("/workspaces/ws_portal/access", json={"workspaceDomains": [{"domain": "partner.io", "role": "viewer"}]})
    by_ws = client.get("/workspace-domains", params={"filter[workspaceId]": "ws_portal", "properties[]": "domain"})
    by_domain = client.get("/workspace-domains", params={"filter[domain]": "customer.com", "properties[]": "domain"})
    assert [d["domain"] for d in by_ws.json()["data"]["workspaceDomains"]] == ["partner.io"]
    assert [d["domain"] for d in by_domain.json()["data"]["workspaceDomains"]] == ["customer.com"]
    assert client.get("/workspace-domains", params={"filter[colour]": "red"}).status_code == 400
