from __future__ import annotations

import pytest


def test_missing_token_is_401_unauthorized(make_client):
    response = make_client(None).get("/workspaces")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_wrong_token_is_401_unauthorized(make_client):
    response = make_client("not-a-token").get("/workspaces")
    assert response.status_code == 401
    assert response.json() == {"error": {"code": "UNAUTHORIZED", "message": "Missing or invalid bearer token."}}


def test_non_bearer_scheme_is_401(make_client):
    client = make_client(None)
    response = client.get("/workspaces", headers={"Authorization": "Basic token-acme"})
    assert response.status_code == 401


def test_unknown_endpoint_is_404_not_found(client):
    response = client.get("/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_wrong_method_on_known_path_is_405(client):
    response = client.delete("/workspaces")
    assert response.status_code == 405


def test_unauthorized_on_every_kind_of_endpoint(make_client):
    client = make_client(None)
    for method, path in (("POST", "/workspaces/ws_home/access"), ("PATCH", "/workspace-users/wu_1"),
                         ("POST", "/files"), ("GET", "/files/file_1"), ("POST", "/workspaces/ws_home/connected-workspaces")):
        response = client.request(method, path, json={})
        assert response.status_code == 401, path
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_only_version_one_exists(client):
    response = client.get("http://emulator.test/v2/workspaces")
    assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get("http://emulator.test/workspaces").status_code == 404


def test_endpoints_outside_the_description_are_404(client):
    for path in ("/status", "/templates", "/forms", "/meetings", "/asset-share-links", "/webhooks"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_tags_and_users_have_only_their_referenced_endpoints(client):
    assert client.get("/tags").status_code == 405
    assert client.post("/users", json={}).status_code == 405
    assert client.get("/tags/tag_123").status_code == 404
    assert client.get("/users/usr_1").status_code == 404


def test_a_405_lists_the_allowed_methods_in_allow(client):
    response = client.delete("/workspaces")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert response.headers["Allow"] == "GET, POST"


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", "/workspaces/ws_home/access", "POST"),
    ("PUT", "/workspace-users/wu_1", "PATCH"),
    ("POST", "/workspace-domains", "GET"),
    ("DELETE", "/files/file_1", "GET"),
    ("GET", "/tags", "POST"),
    ("POST", "/users", "GET"),
])
def test_every_405_carries_allow(client, method, path, allowed):
    response = client.request(method, path)
    assert response.status_code == 405
    assert response.headers["Allow"] == allowed


def test_unknown_tokens_are_401_on_every_endpoint_family(make_client):
    client = make_client("token-of-nobody")
    for method, path in (("GET", "/workspaces"), ("POST", "/workspaces"), ("POST", "/workspaces/ws_home/access"),
                         ("POST", "/workspaces/ws_home/connected-workspaces"),
                         ("POST", "/workspaces/ws_home/authenticated-embed-url"),
                         ("PATCH", "/workspace-users/wu_1"), ("PATCH", "/workspace-domains/wd_1"),
                         ("GET", "/workspace-domains"), ("PATCH", "/workspace-plan-tasks/task_3"),
                         ("PATCH", "/workspace-sections/sec_41"), ("PATCH", "/workspace-pages/pg_9"),
                         ("POST", "/files"), ("GET", "/files/file_1"), ("POST", "/assets"),
                         ("PATCH", "/assets/asset_1"), ("POST", "/tags"), ("GET", "/users"), ("GET", "/accounts"),
                         ("GET", "/custom-fields"), ("GET", "/custom-fields/cf_1"), ("DELETE", "/workspaces"),
                         ("GET", "/no-such-endpoint")):
        response = client.request(method, path, json={})
        assert response.status_code == 401, (method, path)
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
        assert "Allow" not in response.headers
