from __future__ import annotations

import httpx
import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server



@pytest.fixture
def served(seed_path):
    emulator = Emulator.from_seed_file(seed_path)
    base_url, stop = start_background_server(emulator)
    yield emulator, base_url
    stop()


def test_real_http_server_answers_on_loopback(served):
    _, base_url = served
    assert base_url.startswith("http://127.0.0.1:")
    response = httpx.get(f"{base_url}/v1/workspaces", headers={"Authorization": "Bearer token-acme"},
                         params=[("properties[]", "name")])
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Limit"] == "120"
    assert [w["name"] for w in response.json()["data"]["workspaces"]] == ["Home", "Kickoff", "Portal"]
    assert response.json()["data"]["workspaces"][0]["id"] == "ws_home"


def test_real_http_server_requires_the_token(served):
    _, base_url = served
    assert httpx.get(f"{base_url}/v1/workspaces").status_code == 401


def test_a_drop_over_http_cuts_the_connection(served):
    emulator, base_url = served
    emulator.faults.inject("GET", r"/workspaces", "drop")
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{base_url}/v1/workspaces", headers={"Authorization": "Bearer token-acme"})
