from __future__ import annotations

import pytest



def test_every_response_carries_rate_limit_headers(client, clock):
    response = client.get("/workspaces")
    assert response.headers["X-RateLimit-Limit"] == "120"
    assert response.headers["X-RateLimit-Remaining"] == "119"
    assert int(response.headers["X-RateLimit-Reset"]) == int(clock.now()) // 60 * 60 + 60


def test_error_responses_carry_them_too(client):
    response = client.post("/workspaces/ws_home/access", json={})
    assert response.status_code == 400
    assert response.headers["X-RateLimit-Remaining"] == "119"


def test_over_the_limit_is_429_with_retry_after(make_client, make_emulator, clock):
    client = make_client(target=make_emulator(rate_limits={"default": 3}))
    clock.advance(15)  # 45 s left in the window
    for _ in range(3):
        assert client.get("/workspaces").status_code == 200
    response = client.get("/workspaces")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "RATE_LIMIT_EXCEEDED"
    assert response.headers["Retry-After"] == "45"
    assert response.headers["X-RateLimit-Remaining"] == "0"


def test_window_resets_after_the_clock_advances(make_client, make_emulator, clock):
    client = make_client(target=make_emulator(rate_limits={"default": 2}))
    client.get("/workspaces")
    client.get("/workspaces")
    assert client.get("/workspaces").status_code == 429
    clock.advance(60)
    response = client.get("/workspaces")
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Remaining"] == "1"


def test_limits_are_per_company(make_client, make_emulator):
    emulator = make_emulator(rate_limits={"default": 1})
    acme, globex = make_client(target=emulator), make_client("token-globex", target=emulator)
    assert acme.get("/workspaces").status_code == 200
    assert acme.get("/workspaces").status_code == 429
    assert globex.get("/workspaces").status_code == 200


def test_default_class_limit_is_120_per_minute(client):
    statuses = [client.get("/workspaces").status_code for _ in range(121)]
    assert statuses[:120] == [200] * 120 and statuses[120] == 429


def test_unauthenticated_answers_carry_no_rate_limit_headers(make_client):
    response = make_client("not-a-token").get("/workspaces")
    assert response.status_code == 401
    assert not any(h.lower().startswith("x-ratelimit") for h in response.headers)


def test_retry_after_only_on_429(client):
    assert "Retry-After" not in client.get("/workspaces").headers


def test_a_429_does_not_use_up_the_next_window(make_client, make_emulator, clock):
    client = make_client(target=make_emulator(rate_limits={"default": 1}))
    client.get("/workspaces")
    for _ in range(5):
        assert client.get("/workspaces").status_code == 429
    clock.advance(60)
    assert client.get("/workspaces").headers["X-RateLimit-Remaining"] == "0"


def test_classes_have_separate_windows(make_client, make_emulator):
    client = make_client(target=make_emulator(rate_limits={"default": 1, "file_retrieval": 1,
                                                           "workspace_creation": 1}))
    created = client.post("/files", json={"fileName": "a.pdf", "mimeType": "application/pdf"})
    assert created.status_code == 201 and created.headers["X-RateLimit-Limit"] == "1"
    file_id = created.json()["data"]["file"]["id"]
    assert client.get(f"/files/{file_id}").status_code == 200
    assert client.post("/workspaces/ws_home/connected-workspaces", json={"workspaceId": "ws_kickoff"}).status_code == 200
    assert client.get("/workspaces").status_code == 429
    assert client.get(f"/files/{file_id}").status_code == 429
    assert client.post("/workspaces/ws_home/connected-workspaces",
                       json={"workspaceId": "ws_kickoff"}).status_code == 429


# --- a scaled clock (`emulator serve --time-scale`): the headers speak real time ---

WINDOW_START = 1_800_000_000.0  # a whole minute: 1_800_000_000 / 60 = 30_000_000


def _scaled_client(make_client, scale: float, limit: int):
    from reconciler.clock import ScaledClock
    from reconciler.emulator import Emulator
    from tests.emulator.conftest import SEED

    # 10 emulator seconds into a window: 50 emulator seconds are left.
    clock = ScaledClock(scale, start=WINDOW_START + 10)
    emulator = Emulator.from_seed_file(SEED, clock=clock, rate_limits={"default": limit})
    return make_client(target=emulator)


@pytest.fixture
def still_time(monkeypatch):
    """The scaled clock's real time stands still: what a test asserts about
    a few emulator seconds cannot depend on how busy the machine is."""
    import time
    import types

    import reconciler.clock

    frozen = types.SimpleNamespace(monotonic=lambda: 1000.0, time=time.time, sleep=time.sleep)
    monkeypatch.setattr(reconciler.clock, "time", frozen)


def test_scaled_clock_retry_after_is_in_real_seconds(make_client, still_time):
    client = _scaled_client(make_client, 10.0, 1)
    assert client.get("/workspaces").status_code == 200
    refused = client.get("/workspaces")
    assert refused.status_code == 429
    # 50 emulator seconds at 10x are 5 real seconds (rounded up), not 50.
    assert refused.headers["Retry-After"] == "5"
    assert "retry after 5 s" in refused.json()["error"]["message"]


def test_scaled_clock_retry_after_is_at_least_one_second(make_client, still_time):
    client = _scaled_client(make_client, 6000.0, 1)
    client.get("/workspaces")
    assert client.get("/workspaces").headers["Retry-After"] == "1"


def test_scaled_clock_rate_limit_reset_is_the_real_epoch_second(make_client):
    import time

    client = _scaled_client(make_client, 10.0, 5)
    before = time.time()
    reset = int(client.get("/workspaces").headers["X-RateLimit-Reset"])
    after = time.time()
    # The window ends 50 emulator seconds from now: 5 real seconds from now on the wall clock,
    # not the emulator's own epoch second (WINDOW_START + 60).
    assert before + 5 - 1 <= reset <= after + 5 + 1
