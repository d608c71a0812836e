"""The client's caps on what a service can make it do, at the request level.

The same attacks over real HTTP, through the CLI, are in
tests/e2e/test_hostile_service.py; here respx answers and a VirtualClock
keeps every wait virtual, so that "nothing was waited" is exact.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator

import httpx
import pytest
import respx

from reconciler.api import errors
from reconciler.api.client import WorkspaceClient
from reconciler.api.limits import MAX_WAIT_SECONDS
from reconciler.api.retry import rate_limit_wait
from reconciler.clock import VirtualClock
from reconciler.errors import ReconcilerError
from tests.api.conftest import data, error

LIMITED = error("RATE_LIMIT_EXCEEDED", "Rate limit exceeded")
OK_USER = data("workspaceUser", {"id": "wu_1", "role": "viewer"})
OK_SECTION = data("workspaceSection", {"id": "s_1", "isHidden": True})


# --- ids in paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("dots", [".", ".."])
def test_a_dot_segment_id_is_refused_before_anything_is_sent(router: respx.Router, client: WorkspaceClient,
                                                             dots: str) -> None:
    router.route().respond(200, json=OK_SECTION)
    with pytest.raises(errors.UnsafeId, match="cannot be put into a request path"):
        client.update_workspace_section(dots, is_hidden=True)
    assert router.calls.call_count == 0


def test_a_path_the_url_rules_would_rewrite_is_refused_by_the_requester(router: respx.Router,
                                                                       client: WorkspaceClient) -> None:
    router.route().respond(200, json=OK_SECTION)
    with pytest.raises(errors.UnsafeId, match=r"PATCH /workspace-sections/\.\. would be sent to /v1 instead"):
        client.requester.request("PATCH", "/workspace-sections/..", body={"isHidden": True})
    assert router.calls.call_count == 0


def test_an_id_of_slashes_and_dots_is_sent_as_one_encoded_segment(router: respx.Router,
                                                                  client: WorkspaceClient) -> None:
    route = router.route().respond(200, json=OK_SECTION)
    client.update_workspace_section("../../workspaces?x#y", is_hidden=True)
    sent = route.calls.last.request
    assert sent.method == "PATCH"
    assert sent.url.raw_path == b"/v1/workspace-sections/..%2F..%2Fworkspaces%3Fx%23y"


def test_an_unsafe_id_ends_as_exit_1_and_stays_a_value_error() -> None:
    assert issubclass(errors.UnsafeId, ReconcilerError) and issubclass(errors.UnsafeId, ValueError)


# --- waits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "-5", "soon", "Wed, 21 Oct 2015 07:28:30", "Fri, 31 Dec 10000 23:59:59 GMT"])
def test_an_unreadable_retry_after_is_ignored_for_the_default_minute(value: str) -> None:
    assert rate_limit_wait({"Retry-After": value}, now=1_800_000_000.0).seconds == 60


@pytest.mark.parametrize("value", ["1e999", "inf", "1000000000", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_an_absurdly_long_retry_after_is_read_as_beyond_the_cap(value: str) -> None:
    assert rate_limit_wait({"Retry-After": value}, now=1_800_000_000.0).seconds > MAX_WAIT_SECONDS


def test_a_429_with_an_unreadable_retry_after_waits_a_minute_and_tries_again(
        router: respx.Router, client: WorkspaceClient, clock: VirtualClock) -> None:
    route = router.patch("/workspace-users/wu_1").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "nan"}),
        respx.MockResponse(200, json=OK_USER),
    ])
    assert client.update_workspace_user("wu_1", role="viewer").id == "wu_1"
    assert route.call_count == 2 and clock.slept == 60


def test_a_retry_after_beyond_the_cap_is_an_error_and_nothing_is_waited(
        router: respx.Router, client: WorkspaceClient, clock: VirtualClock) -> None:
    route = router.patch("/workspace-users/wu_1").respond(429, json=LIMITED, headers={"Retry-After": "901"})
    with pytest.raises(errors.WaitTooLong) as refused:
        client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 1 and clock.slept == 0
    assert refused.value.status == 429 and refused.value.call == "PATCH /workspace-users/wu_1"
    assert "Retry-After: 901" in str(refused.value) and "900 s (15 minutes)" in str(refused.value)


def test_a_retry_after_at_the_cap_is_waited(router: respx.Router, client: WorkspaceClient,
                                           clock: VirtualClock) -> None:
    route = router.patch("/workspace-users/wu_1").mock(side_effect=[
        respx.MockResponse(429, json=LIMITED, headers={"Retry-After": "900"}),
        respx.MockResponse(200, json=OK_USER),
    ])
    client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 2 and clock.slept == 900


def test_a_rate_limit_reset_an_hour_ahead_refuses_the_next_call_without_waiting(
        router: respx.Router, client: WorkspaceClient, clock: VirtualClock) -> None:
    reset = int(clock.now()) + 3600
    route = router.patch("/workspace-users/wu_1").respond(
        200, json=OK_USER, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
    assert client.update_workspace_user("wu_1", role="viewer").id == "wu_1"  # the answer itself is kept
    with pytest.raises(errors.WaitTooLong) as refused:
        client.update_workspace_user("wu_1", role="viewer")
    assert route.call_count == 1 and clock.slept == 0
    message = str(refused.value)
    assert "the answer to PATCH /workspace-users/wu_1 said X-RateLimit-Remaining: 0" in message
    assert f"X-RateLimit-Reset: {reset}" in message and "3600 s (1 hour)" in message


# --- bodies --------------------------------------------------------------------------------------


def test_an_unannounced_answer_is_read_no_further_than_the_cap(router: respx.Router,
                                                              client: WorkspaceClient) -> None:
    client.requester.max_body = 1000
    pieces: list[int] = []

    def endless() -> Iterator[bytes]:
        while True:  # a body with no end, sent chunked (no Content-Length)
            pieces.append(1)
            yield b"[" * 100

    router.patch("/workspace-users/wu_1").mock(return_value=httpx.Response(200, content=endless()))
    with pytest.raises(errors.ResponseTooLarge, match="larger than the 1000 bytes reconciler reads"):
        client.update_workspace_user("wu_1", role="viewer")
    assert len(pieces) == 11  # 10 pieces fit in 1000 bytes; the 11th is over


def test_a_small_compressed_answer_cannot_unpack_past_the_cap(router: respx.Router, client: WorkspaceClient) -> None:
    client.requester.max_body = 64 * 1024
    packed = gzip.compress(b" " * (8 * 1024 * 1024) + json.dumps(OK_USER).encode())
    assert len(packed) < 64 * 1024
    router.patch("/workspace-users/wu_1").respond(
        200, content=packed, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    with pytest.raises(errors.ResponseTooLarge, match="larger than the 64 KiB"):
        client.update_workspace_user("wu_1", role="viewer")


def test_an_announced_length_beyond_the_cap_is_refused_unread(router: respx.Router, client: WorkspaceClient) -> None:
    client.requester.max_body = 1000
    router.patch("/workspace-users/wu_1").mock(return_value=httpx.Response(
        200, headers={"Content-Length": "5000"}, stream=_Unreadable()))
    with pytest.raises(errors.ResponseTooLarge, match=r"Content-Length: 5000\), more than the 1000 bytes"):
        client.update_workspace_user("wu_1", role="viewer")


class _Unreadable(httpx.SyncByteStream):
    """A body that fails the test if anyone reads it."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the body was read")
        yield b""  # pragma: no cover


# --- listings ------------------------------------------------------------------------------------


def test_a_listing_without_totals_stops_at_the_item_cap(router: respx.Router, client: WorkspaceClient) -> None:
    client.max_listed_items = 5
    route = router.get("/workspaces").mock(side_effect=lambda request: httpx.Response(200, json={"data": {
        "workspaces": [{"id": f"ws_{request.url.params['page']}"}], "pageInfo": {"hasNextPage": True}}}))
    with pytest.raises(errors.InconsistentListing, match="more than 5 items") as stopped:
        list(client.list_workspaces())
    assert route.call_count == 6 and stopped.value.call == "GET /workspaces"


def test_a_consistent_listing_is_followed_to_its_end(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/workspaces").mock(side_effect=lambda request: httpx.Response(200, json={"data": {
        "workspaces": [{"id": f"ws_{request.url.params['page']}"}],
        "pageInfo": {"page": int(request.url.params["page"]), "pages": 3, "total": 3,
                     "hasNextPage": request.url.params["page"] != "3"}}}))
    assert [ws.id for ws in client.list_workspaces()] == ["ws_1", "ws_2", "ws_3"]
    assert route.call_count == 3
