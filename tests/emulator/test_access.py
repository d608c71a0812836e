from __future__ import annotations

ACCESS_PROPS = [("properties[]", p) for p in ("workspaceUsers.role", "workspaceUsers.user.email",
                                               "workspaceDomains.domain", "workspaceDomains.role")]


def _access(client, workspace_id):
    for ws in client.get("/workspaces", params=ACCESS_PROPS).json()["data"]["workspaces"]:
        if ws["id"] == workspace_id:
            return ({u["user"]["email"]: (u["id"], u["role"]) for u in ws["workspaceUsers"]},
                    {d["domain"]: (d["id"], d["role"]) for d in ws["workspaceDomains"]})
    raise AssertionError(workspace_id)


def test_supplied_user_list_replaces_and_omitted_domains_stay(client):
    users_before, domains_before = _access(client, "ws_home")
    response = client.post("/workspaces/ws_home/access", params=ACCESS_PROPS, json={
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "priya@customer.com", "role": "viewer"}],
    })
    assert response.status_code == 200
    assert response.json()["data"]["workspace"]["id"] == "ws_home"
    users, domains = _access(client, "ws_home")
    assert {e: r for e, (_, r) in users.items()} == {"jane@acme.com": "owner", "priya@customer.com": "viewer"}
    assert domains == domains_before


def test_kept_entries_keep_their_ids(client):
    users_before, _ = _access(client, "ws_home")
    client.post("/workspaces/ws_home/access", json={
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "raj@customer.com", "role": "editor"}]})
    users, _ = _access(client, "ws_home")
    assert users["jane@acme.com"][0] == users_before["jane@acme.com"][0]
    assert users["raj@customer.com"] == (users_before["raj@customer.com"][0], "editor")


def test_domain_list_replaces_and_users_stay(client):
    users_before, _ = _access(client, "ws_home")
    client.post("/workspaces/ws_home/access", json={"workspaceDomains": []})
    users, domains = _access(client, "ws_home")
    assert domains == {} and users == users_before


def test_no_owner_after_change_is_400_and_nothing_changes(client):
    before = _access(client, "ws_home")
    response = client.post("/workspaces/ws_home/access", json={
        "workspaceUsers": [{"email": "raj@customer.com", "role": "editor"}], "workspaceDomains": []})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "At least one workspace user or domain must have the role owner."
    assert _access(client, "ws_home") == before


def test_a_domain_owner_satisfies_the_owner_rule(client):
    response = client.post("/workspaces/ws_portal/access", json={
        "workspaceUsers": [], "workspaceDomains": [{"domain": "acme.com", "role": "owner"}]})
    assert response.status_code == 200


def test_group_members_share_one_access_list(client):
    client.post("/workspaces/ws_kickoff/access", json={
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "new@customer.com", "role": "viewer"}]})
    assert _access(client, "ws_home") == _access(client, "ws_kickoff")
    assert "new@customer.com" in _access(client, "ws_home")[0]
    assert "new@customer.com" not in _access(client, "ws_portal")[0]


def test_body_without_either_list_is_400(client):
    assert client.post("/workspaces/ws_home/access", json={"notifyPeople": True}).status_code == 400


def test_unknown_body_key_is_400(client):
    response = client.post("/workspaces/ws_home/access", json={"workspaceUsers": [], "extra": 1})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "Unknown body field 'extra'; allowed: message, notifyPeople, workspaceDomains, workspaceUsers.")


def test_invalid_email_role_or_domain_is_400(client):
    owner = {"email": "jane@acme.com", "role": "owner"}
    for body in ({"workspaceUsers": [owner, {"email": "not-an-email", "role": "viewer"}]},
                 {"workspaceUsers": [owner, {"email": "a@b.com", "role": "admin"}]},
                 {"workspaceUsers": [owner], "workspaceDomains": [{"domain": "bad domain", "role": "viewer"}]},
                 {"workspaceUsers": [owner, {"email": "a@b.com"}]}):
        assert client.post("/workspaces/ws_home/access", json=body).status_code == 400, body


def test_duplicate_email_in_one_list_is_400(client):
    response = client.post("/workspaces/ws_home/access", json={"workspaceUsers": [
        {"email": "jane@acme.com", "role": "owner"}, {"email": "JANE@acme.com", "role": "viewer"}]})
    assert response.status_code == 400


def test_invalid_json_body_is_400(client):
    response = client.post("/workspaces/ws_home/access", content=b"{nope",
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400


def test_notify_people_records_notifications_for_new_users(client, emulator):
    client.post("/workspaces/ws_home/access", json={
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "priya@customer.com", "role": "viewer"}],
        "notifyPeople": True, "message": "Welcome"})
    assert [(n.workspace_id, n.email, n.message) for n in emulator.notifications] == [
        ("ws_home", "priya@customer.com", "Welcome")]


def test_without_notify_people_nobody_is_notified(client, emulator):
    client.post("/workspaces/ws_home/access", json={
        "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}, {"email": "priya@customer.com", "role": "viewer"}]})
    assert emulator.notifications == []
