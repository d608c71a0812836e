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


def test_a_failed_data_file_write_over_http_is_the_json_envelope(tmp_path, seed_path, monkeypatch):
    import errno

    from reconciler.emulator import core

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    emulator = Emulator.from_file(tmp_path / "emulator.yaml", seed_path=seed_path)
    monkeypatch.setattr(core, "write_data_file", full)
    base_url, stop = start_background_server(emulator)
    try:
        response = httpx.post(f"{base_url}/v1/workspaces/ws_home/access",
                              headers={"Authorization": "Bearer token-acme"},
                              json={"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]})
    finally:
        stop()
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "INTERNAL_SERVER_ERROR"


def test_a_taken_port_is_a_config_error_naming_address_and_port(seed_path):
    import socket

    from reconciler.emulator.server import serve
    from reconciler.errors import ConfigError

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ConfigError, match=f"Cannot listen on 127.0.0.1 port {port}: .*already in use"):
            serve(Emulator.from_seed_file(seed_path), host="127.0.0.1", port=port)


# --- exposure: a network address with a token everybody knows ---

@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_no_exposure_warning_on_loopback(host):
    from reconciler.emulator.server import exposure_warning

    assert exposure_warning(Emulator.from_seed_file(None), host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.20", "emulator.example.com"])
def test_exposure_warning_off_loopback_with_the_demo_token(host):
    from reconciler.emulator.server import exposure_warning

    warning = exposure_warning(Emulator.from_seed_file(None), host)
    assert warning is not None
    assert "reachable from the network" in warning and "publicly known" in warning and "acme" in warning


def test_no_exposure_warning_when_every_company_has_its_own_token(seed_path):
    from reconciler.emulator.server import exposure_warning

    assert exposure_warning(Emulator.from_seed_file(seed_path), "0.0.0.0") is None


def test_a_seed_reusing_the_demo_token_warns_too():
    from reconciler.emulator.server import exposure_warning

    doc = {"companies": {"mine": {"token": "my-own-secret"}, "demo": {"token": "dev-token-acme"}}}
    warning = exposure_warning(Emulator.from_seed(doc), "0.0.0.0")
    assert warning is not None and "company demo answers to the built-in demo token" in warning
    assert "mine" not in warning


def test_an_unexpected_failure_over_http_is_still_the_json_envelope():
    class BrokenEmulator:
        def handle(self, *args, **kwargs):
            raise RuntimeError("a bug")

    base_url, stop = start_background_server(BrokenEmulator())  # type: ignore[arg-type]
    try:
        response = httpx.get(f"{base_url}/v1/workspaces")
    finally:
        stop()
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "INTERNAL_SERVER_ERROR"
