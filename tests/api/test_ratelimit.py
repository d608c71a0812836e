from __future__ import annotations

import math
from collections import Counter

import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.api.bodies import ConnectExisting
from reconciler.api.client import WorkspaceClient
from reconciler.api.ratelimit import RateLimiter, RateLimits, classify
from reconciler.clock import VirtualClock
from reconciler.errors import ConfigError
from tests.api.conftest import MakeClient, data


def test_121_requests_wait_one_window_once(router: respx.Router, client: WorkspaceClient,
                                           clock: VirtualClock) -> None:
    route = router.patch("/workspace-users/wu_1").respond(200, json=data("workspaceUser", {"id": "wu_1"}))
    for _ in range(120):
        client.update_workspace_user("wu_1", role="viewer")
    assert clock.slept == 0
    client.update_workspace_user("wu_1", role="viewer")
    assert clock.slept == 60
    assert route.call_count == 121
    assert client.stats.by_class == {"default": 121}
    assert client.stats.waited_seconds == 60


def test_window_slides_rather_than_resetting(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(default=2), clock)
    limiter.acquire("default")
    clock.advance(30)
    limiter.acquire("default")
    assert limiter.acquire("default") == 30  # the first left the window at t=60
    assert limiter.acquire("default") == 30  # the second at t=90


def test_classes_are_limited_separately(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(workspace_creation=1, file_retrieval=1), clock)
    assert limiter.acquire("workspace_creation") == 0
    assert limiter.acquire("file_retrieval") == 0
    assert limiter.acquire("default") == 0
    assert limiter.acquire("workspace_creation") == 60


def test_remaining_zero_waits_until_reset(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(), clock)
    reset = clock.now() + 25
    limiter.observe("default", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset),
                                "X-RateLimit-Limit": "5000"})
    assert limiter.acquire("default") == 25
    assert clock.now() == reset
    assert limiter.acquire("default") == 0


def test_remaining_caps_requests_until_reset(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(), clock)
    limiter.observe("default", {"x-ratelimit-remaining": "2", "x-ratelimit-reset": str(clock.now() + 10)})
    assert limiter.acquire("default") == 0
    assert limiter.acquire("default") == 0
    assert limiter.acquire("default") == 10


def test_headers_past_or_unreadable_change_nothing(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(), clock)
    limiter.observe("default", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(clock.now() - 1)})
    limiter.observe("file_retrieval", {"X-RateLimit-Remaining": "zero", "X-RateLimit-Reset": "soon"})
    assert limiter.acquire("default") == 0
    assert limiter.acquire("file_retrieval") == 0


def test_limit_header_does_not_size_the_window(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(default=1), clock)
    limiter.observe("default", {"X-RateLimit-Limit": "7200"})
    limiter.acquire("default")
    assert limiter.acquire("default") == 60


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/workspaces", "workspace_creation"),
        ("POST", "/workspaces/ws_1/connected-workspaces", "workspace_creation"),
        ("GET", "/files/f_1", "file_retrieval"),
        ("GET", "/v1/files/f_1?properties[]=uploadStatus", "file_retrieval"),
        ("POST", "/files", "default"),
        ("GET", "/workspaces", "default"),
        ("POST", "/workspaces/ws_1/access", "default"),
    ],
)
def test_calls_are_classified_by_the_limits_table(method: str, path: str, expected: str) -> None:
    assert classify(method, path) == expected


def test_rate_limits_are_reported_per_minute() -> None:
    assert RateLimits(default=60).per_minute() == {"default": 60, "workspace_creation": 30, "file_retrieval": 60}


def test_rate_limits_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="workspace_creation"):
        RateLimits(workspace_creation=0)


def test_service_headers_on_answers_pace_the_client(router: respx.Router, client: WorkspaceClient,
                                                    clock: VirtualClock) -> None:
    reset = clock.now() + 12
    route = router.patch("/workspace-users/wu_1").respond(
        200, json=data("workspaceUser", {"id": "wu_1"}),
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
    client.update_workspace_user("wu_1", role="viewer")
    client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 2 and clock.slept == 12
    assert client.stats.rate_limited == 0


def test_reset_more_than_an_hour_ahead_is_ignored(clock: VirtualClock) -> None:
    limiter = RateLimiter(RateLimits(), clock)
    limiter.observe("default", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(clock.now() * 1000)})
    assert limiter.acquire("default") == 0


def test_rate_limits_from_configuration_name_unknown_classes() -> None:
    assert RateLimits.from_mapping({"default": 60}) == RateLimits(default=60)
    with pytest.raises(ConfigError, match="'uploads'"):
        RateLimits.from_mapping({"uploads": 5})


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(min_value=1, max_value=5),
    gaps=st.lists(st.floats(min_value=0, max_value=45, allow_nan=False), min_size=1, max_size=40),
    start=st.floats(min_value=1_700_000_000, max_value=1_900_000_000, allow_nan=False),
)
def test_no_minute_ever_holds_more_than_the_limit(limit: int, gaps: list[float], start: float) -> None:
    clock = VirtualClock(start=start)
    limiter = RateLimiter(RateLimits(default=limit), clock)
    sent: list[float] = []
    for gap in gaps:
        clock.advance(gap)
        limiter.acquire("default")
        sent.append(clock.now())
    for t in sent:  # any 60-second interval starting at a send ...
        assert sum(1 for s in sent if t <= s < t + 60) <= limit
    minutes = Counter(math.floor(s / 60) for s in sent)  # ... and any minute of the clock
    assert max(minutes.values()) <= limit


def test_31_connect_calls_wait_one_window_once(router: respx.Router, client: WorkspaceClient,
                                               clock: VirtualClock) -> None:
    route = router.post("/workspaces/ws_1/connected-workspaces").respond(200, json=data("workspace", {"id": "ws_2"}))
    for _ in range(30):
        client.connect_workspace("ws_1", ConnectExisting(workspaceId="ws_2"))
    assert clock.slept == 0
    client.connect_workspace("ws_1", ConnectExisting(workspaceId="ws_2"))
    assert clock.slept == 60
    assert route.call_count == 31
    assert client.stats.by_class == {"workspace_creation": 31}


def test_61_file_reads_wait_one_window_once(router: respx.Router, client: WorkspaceClient,
                                            clock: VirtualClock) -> None:
    route = router.get("/files/f_1").respond(200, json=data("file", {"id": "f_1", "uploadStatus": "ready"}))
    for _ in range(60):
        client.get_file("f_1")
    assert clock.slept == 0
    client.get_file("f_1")
    assert clock.slept == 60
    assert route.call_count == 61
    assert client.stats.by_class == {"file_retrieval": 61}


def test_creation_and_file_reads_do_not_use_the_default_budget(router: respx.Router, make_client: MakeClient,
                                                               clock: VirtualClock) -> None:
    client = make_client(rate_limits=RateLimits(default=1))
    router.post("/workspaces/ws_1/connected-workspaces").respond(201, json=data("workspace", {"id": "ws_2"}))
    router.get("/files/f_1").respond(200, json=data("file", {"id": "f_1"}))
    router.get("/workspaces").respond(200, json={"data": {"workspaces": [], "pageInfo": {}}})
    list(client.list_workspaces())
    client.connect_workspace("ws_1", ConnectExisting(workspaceId="ws_2"))
    client.get_file("f_1")
    assert clock.slept == 0
