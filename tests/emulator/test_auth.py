from __future__ import annotations


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
