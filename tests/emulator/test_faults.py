from __future__ import annotations

import httpx
import pytest

OWNER_ONLY = {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]}
EMAILS = {"properties[]": "workspaceUsers.user.email"}


def _home_emails(client):
    ws = client.get("/workspaces", params=EMAILS).json()["data"]["workspaces"][0]
    return [u["user"]["email"] for u in ws["workspaceUsers"]]


def test_status_fault_answers_without_doing_the_work(client, emulator):
    emulator.faults.inject("POST", r"/access$", "status", status=503)
    response = client.post("/workspaces/ws_home/access", json=OWNER_ONLY)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert _home_emails(client) == ["jane@acme.com", "raj@customer.com"]


def test_fault_fires_only_the_given_number_of_times(client, emulator):
    fault = emulator.faults.inject("GET", r"^/v1/workspaces$", "status", status=500, times=2)
    statuses = [client.get("/workspaces").status_code for _ in range(3)]
    assert statuses == [500, 500, 200] and fault.fired == 2


def test_drop_raises_remote_protocol_error_and_changes_nothing(client, emulator):
    emulator.faults.inject("POST", r"/access$", "drop")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/workspaces/ws_home/access", json=OWNER_ONLY)
    assert _home_emails(client) == ["jane@acme.com", "raj@customer.com"]


def test_after_commit_does_the_work_then_drops(client, emulator):
    emulator.faults.inject("POST", r"/access$", "after_commit")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/workspaces/ws_home/access", json=OWNER_ONLY)
    assert _home_emails(client) == ["jane@acme.com"]


def test_latency_waits_on_the_clock(client, emulator, clock):
    emulator.faults.inject("*", r"/workspaces", "latency", seconds=2.5)
    before = clock.now()
    assert client.get("/workspaces").status_code == 200
    assert clock.now() - before == 2.5


def test_random_rate_is_repeatable_with_a_seed(make_client, make_emulator):
    def run() -> list[int]:
        emulator = make_emulator(fault_seed=7)
        emulator.faults.inject("GET", r"/workspaces", "status", times=None, rate=0.5)
        client = make_client(target=emulator)
        return [client.get("/workspaces").status_code for _ in range(20)]

    first, second = run(), run()
    assert first == second and 500 in first and 200 in first


def test_requests_are_logged_and_counted(client, emulator):
    emulator.faults.inject("POST", r"/access$", "drop")
    client.get("/workspaces")
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/workspaces/ws_home/access", json=OWNER_ONLY)
    assert emulator.request_count() == 2
    assert emulator.request_count("GET") == 1
    assert emulator.request_count(path_prefix="/v1/workspaces/ws_home") == 1
    assert [(r.method, r.status, r.company, r.dropped) for r in emulator.requests] == [
        ("GET", 200, "acme", False), ("POST", 0, "acme", True)]


def test_an_injected_5xx_uses_up_rate_limit_quota(make_client, make_emulator):
    emulator = make_emulator(rate_limits={"default": 2})
    emulator.faults.inject("GET", r"/workspaces$", "status", status=500)
    client = make_client(target=emulator)
    first = client.get("/workspaces")
    assert first.status_code == 500 and first.headers["X-RateLimit-Remaining"] == "1"
    assert client.get("/workspaces").status_code == 200
    assert client.get("/workspaces").status_code == 429


@pytest.mark.parametrize(("status", "code"), [(502, "BAD_GATEWAY"), (504, "GATEWAY_TIMEOUT"),
                                              (500, "INTERNAL_SERVER_ERROR")])
def test_status_fault_uses_the_error_envelope(client, emulator, status, code):
    emulator.faults.inject("GET", r"/workspaces$", "status", status=status)
    response = client.get("/workspaces")
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_after_commit_on_a_creation_leaves_the_created_workspace(client, emulator):
    emulator.faults.inject("POST", r"/connected-workspaces$", "after_commit")
    before = len(emulator.store.companies["acme"].workspaces)
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
    assert len(emulator.store.companies["acme"].workspaces) == before + 1
    assert emulator.store.companies["acme"].credits == 4


def test_reseeding_repeats_the_random_draws(client, emulator):
    emulator.faults.inject("GET", r"/workspaces$", "status", times=None, rate=0.5)
    emulator.faults.seed(3)
    first = [client.get("/workspaces").status_code for _ in range(12)]
    emulator.faults.seed(3)
    second = [client.get("/workspaces").status_code for _ in range(12)]
    assert first == second and 500 in first and 200 in first


def test_latency_fault_on_one_path_leaves_others_alone(client, emulator, clock):
    emulator.faults.inject("GET", r"/users$", "latency", times=None, seconds=4)
    before = clock.now()
    client.get("/workspaces")
    assert clock.now() == before
    client.get("/users")
    assert clock.now() - before == 4
