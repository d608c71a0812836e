from __future__ import annotations


def _embed(client, email="raj@customer.com"):
    return client.post("/workspaces/ws_home/authenticated-embed-url", json={"email": email})


def test_embed_url_carries_its_own_token(client):
    response = _embed(client)
    assert response.status_code == 200
    url = response.json()["data"]["url"]
    assert url.startswith("http://emulator.test/embed/ws_home?token=")
    assert client.get(url, headers={"Authorization": ""}).status_code == 200


def test_embed_url_expires_after_two_minutes(client, clock):
    url = _embed(client).json()["data"]["url"]
    clock.advance(119)
    assert client.get(url).status_code == 200
    clock.advance(1)
    assert client.get(url).status_code == 403


def test_embed_url_for_someone_without_access_is_403(client):
    assert _embed(client, "stranger@elsewhere.org").status_code == 403


def test_domain_access_counts_for_the_embed_url(client):
    assert _embed(client, "anyone@customer.com").status_code == 200


def test_embed_url_needs_a_valid_email(client):
    assert _embed(client, "nope").status_code == 400
    assert client.post("/workspaces/ws_home/authenticated-embed-url", json={}).status_code == 400
