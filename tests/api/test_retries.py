from __future__ import annotations

import json

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.models import AccessUserInput
from reconciler.api.retry import is_retry_safe, rate_limit_wait
from reconciler.clock import VirtualClock
from tests.api.conftest import MakeClient, data, error, page

OK_USER = data("workspaceUser", {"id": "wu_1", "role": "viewer"})
LIMITED = error("RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
FAILED = error("INTERNAL_SERVER_ERROR", "Boom")


def test_429_is_retried_after_exactly_retry_after_seconds(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock
) -> None:
    route = router.patch("/workspace-users/wu_1").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "17"}),
        respx.MockResponse(200, json=OK_USER),
    ])
    assert client.update_workspace_user("wu_1", role="viewer").id == "wu_1"
    assert route.call_count == 2
    assert clock.slept == 17
    assert (client.stats.rate_limited, client.stats.retries, client.stats.waited_seconds) == (1, 1, 17)


def test_429_on_a_creation_is_retried_too(router: respx.Router, client: WorkspaceClient, clock: VirtualClock) -> None:
    route = router.post("/tags").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "3"}),
        respx.MockResponse(201, json=data("tag", {"id": "t_1"})),
    ])
    assert client.requester.request("POST", "/tags", body={"title": "x"}).status == 201
    assert route.call_count == 2 and clock.slept == 3


def test_429_without_retry_after_waits_until_reset(
    router: respx.Router, client: WorkspaceClient, clock: VirtualClock
) -> None:
    reset = int(clock.now()) + 42
    route = router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"X-RateLimit-Reset": str(reset)}),
        respx.MockResponse(200, json=page("workspaces", [], 1, 1)),
    ])
    list(client.list_workspaces())
    assert route.call_count == 2 and clock.now() == reset


def test_429_without_any_hint_waits_a_minute(router: respx.Router, client: WorkspaceClient,
                                             clock: VirtualClock) -> None:
    router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED), respx.MockResponse(200, json=page("workspaces", [], 1, 1)),
    ])
    list(client.list_workspaces())
    assert clock.slept == 60


def test_500_on_get_is_retried_then_succeeds(router: respx.Router, client: WorkspaceClient,
                                             clock: VirtualClock) -> None:
    route = router.get("/workspaces").mock(side_effect=[
        respx.MockResponse(500, json=FAILED), respx.MockResponse(503, text="unavailable"),
        respx.MockResponse(200, json=page("workspaces", [{"id": "ws_1"}], 1, 1)),
    ])
    assert [ws.id for ws in client.list_workspaces()] == ["ws_1"]
    assert route.call_count == 3
    assert client.stats.retries == 2
    assert 0 < clock.slept == client.stats.waited_seconds


def test_500_on_access_post_is_retried(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/workspaces/ws_1/access").mock(side_effect=[
        respx.MockResponse(500, json=FAILED), respx.MockResponse(200, json=data("workspace", {"id": "ws_1"})),
    ])
    client.set_access("ws_1", users=[AccessUserInput(email="a@b.com", role="owner")])
    assert route.call_count == 2


@pytest.mark.parametrize(
    "path",
    ["/files", "/assets", "/tags", "/workspaces", "/workspaces/ws_1/connected-workspaces",
     "/workspaces/ws_1/authenticated-embed-url"],
)
def test_500_on_a_creation_is_not_retried(router: respx.Router, client: WorkspaceClient,
                                          clock: VirtualClock, path: str) -> None:
    route = router.post(path).respond(500, json=FAILED)
    with pytest.raises(errors.ServerError) as info:
        client.requester.request("POST", path, body={})
    assert route.call_count == 1
    assert clock.slept == 0
    assert "may or may not have been made" in str(info.value)


def test_connection_error_on_patch_is_retried_then_succeeds(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.patch("/workspace-users/wu_1").mock(
        side_effect=[httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), respx.MockResponse(200, json=OK_USER)]
    )
    client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 3


def test_connection_error_on_patch_exhausts_attempts_into_connection_failed(
    router: respx.Router, client: WorkspaceClient
) -> None:
    route = router.patch("/workspace-users/wu_1").mock(side_effect=httpx.ConnectError)
    with pytest.raises(errors.ConnectionFailed) as info:
        client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 4
    assert info.value.status is None and info.value.attempts == 4
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    assert "PATCH /workspace-users/wu_1 (4 attempts)" in str(info.value)
    assert "repeating the call is safe" in str(info.value)


def test_max_attempts_bounds_every_retry(router: respx.Router, make_client: MakeClient) -> None:
    client = make_client(max_attempts=2)
    route = router.get("/workspaces").respond(502, text="bad gateway")
    with pytest.raises(errors.ServerError, match="after 2 attempts"):
        list(client.list_workspaces())
    assert route.call_count == 2


def test_backoff_grows_and_is_jittered(router: respx.Router, make_client: MakeClient, clock: VirtualClock) -> None:
    client = make_client()
    router.get("/workspaces").respond(500, json=FAILED)
    waits: list[float] = []
    original = clock.sleep

    def recording_sleep(seconds: float) -> None:
        waits.append(seconds)
        original(seconds)

    clock.sleep = recording_sleep  # type: ignore[method-assign]
    with pytest.raises(errors.ServerError):
        list(client.list_workspaces())
    assert len(waits) == 3
    for n, wait in enumerate(waits, start=1):
        ceiling = 0.5 * 2 ** (n - 1)
        assert ceiling / 2 <= wait <= ceiling


def test_retry_safety_follows_replace_semantics() -> None:
    assert is_retry_safe("GET", "/files/f_1")
    assert is_retry_safe("PATCH", "/assets/a_1")
    assert is_retry_safe("POST", "/workspaces/ws_1/access")
    assert not is_retry_safe("POST", "/workspaces/ws_1/connected-workspaces")
    assert not is_retry_safe("POST", "/assets")


def test_retry_after_as_http_date_is_honoured() -> None:
    assert rate_limit_wait({"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=1445412480.0).seconds == 30


def test_reset_far_ahead_falls_back_to_a_minute() -> None:
    assert rate_limit_wait({"X-RateLimit-Reset": "1800000000000"}, now=1_800_000_000.0).seconds == 60


def test_429s_after_a_lost_answer_say_the_change_may_have_been_made(
    router: respx.Router, make_client: MakeClient
) -> None:
    router.post("/workspaces/ws_1/access").mock(side_effect=[
        httpx.RemoteProtocolError("connection dropped"),
        *[respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "1"})] * 3,
    ])
    client = make_client(max_attempts=4)
    with pytest.raises(errors.RateLimited) as failed:
        client.set_access("ws_1", users=[AccessUserInput(email="a@b.co", role="owner")])
    assert "The change may or may not have been made" in str(failed.value)


def test_429s_alone_say_nothing_about_a_change(router: respx.Router, make_client: MakeClient) -> None:
    router.post("/workspaces/ws_1/access").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "1"})] * 2)
    with pytest.raises(errors.RateLimited) as failed:
        make_client(max_attempts=2).set_access("ws_1", users=[AccessUserInput(email="a@b.co", role="owner")])
    assert "may or may not" not in str(failed.value)


def test_a_replayed_access_list_does_not_notify_again(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/workspaces/ws_1/access").mock(side_effect=[
        httpx.RemoteProtocolError("connection dropped"),
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "1"}),
        respx.MockResponse(200, json=data("workspace", {"id": "ws_1"})),
    ])
    client.set_access("ws_1", users=[AccessUserInput(email="a@b.co", role="owner")], notify_people=True,
                      message="Welcome")
    bodies = [json.loads(call.request.read()) for call in route.calls]
    assert bodies[0] == {"workspaceUsers": [{"email": "a@b.co", "role": "owner"}], "notifyPeople": True,
                         "message": "Welcome"}
    assert bodies[1] == bodies[2] == {"workspaceUsers": [{"email": "a@b.co", "role": "owner"}],
                                      "notifyPeople": False}
