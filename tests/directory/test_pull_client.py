"""The SCIM reader's exact requests and its refusals, against a respx router (nothing patched, no sleeping).

The reader against a real SCIM service over HTTP is in test_pull_http.py.
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
import respx

from reconciler.clock import VirtualClock
from reconciler.directory.client import (
    LIST_RESPONSE, DirectoryPullError, ScimReader, scim_base_url, scim_http_client,
)
from reconciler.errors import ConfigError

BASE = "https://idp.example.test/scim/v2"
TOKEN = "scim-SECRET-7d41a09b3c"


def users(*ids: str) -> list[dict[str, Any]]:
    return [{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": i, "userName": f"{i}@acme.com"}
            for i in ids]


def listing(total: int, resources: list[dict[str, Any]], start: int = 1) -> dict[str, Any]:
    return {"schemas": [LIST_RESPONSE], "totalResults": total, "startIndex": start,
            "itemsPerPage": len(resources), "Resources": resources}


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


def reader(router: respx.Router, clock: VirtualClock, **kwargs: Any) -> ScimReader:
    http = scim_http_client(BASE, TOKEN, transport=httpx.MockTransport(router.handler))
    return ScimReader(http, clock=clock, rng=random.Random(7), **kwargs)


def pages_asked(route: respx.Route) -> list[tuple[str | None, str | None]]:
    return [(c.request.url.params.get("startIndex"), c.request.url.params.get("count")) for c in route.calls]


def test_pages_are_asked_from_start_index_1_by_count_until_total_results(router: respx.Router,
                                                                         clock: VirtualClock) -> None:
    route = router.get("/Users").mock(side_effect=[
        httpx.Response(200, json=listing(5, users("u1", "u2"))),
        httpx.Response(200, json=listing(5, users("u3", "u4"), 3)),
        httpx.Response(200, json=listing(5, users("u5"), 5)),
    ])
    found = reader(router, clock, page_size=2).list_resources("/Users")
    assert [u["id"] for u in found] == ["u1", "u2", "u3", "u4", "u5"]
    assert pages_asked(route) == [("1", "2"), ("3", "2"), ("5", "2")]


def test_a_page_shorter_than_count_moves_start_index_by_what_was_received(router: respx.Router,
                                                                          clock: VirtualClock) -> None:
    # RFC 7644 §3.4.2.4: a service may return fewer results than count asked for.
    route = router.get("/Users").mock(side_effect=[
        httpx.Response(200, json=listing(3, users("u1"))),
        httpx.Response(200, json=listing(3, users("u2", "u3"), 2)),
    ])
    found = reader(router, clock, page_size=100).list_resources("/Users")
    assert [u["id"] for u in found] == ["u1", "u2", "u3"]
    assert pages_asked(route) == [("1", "100"), ("2", "100")]


def test_an_empty_directory_is_one_request(router: respx.Router, clock: VirtualClock) -> None:
    route = router.get("/Groups").respond(200, json={"schemas": [LIST_RESPONSE], "totalResults": 0})
    assert reader(router, clock).list_resources("/Groups") == ()
    assert route.call_count == 1


def test_every_request_carries_the_bearer_token_and_asks_for_scim_json(router: respx.Router,
                                                                       clock: VirtualClock) -> None:
    route = router.get("/Users").respond(200, json=listing(1, users("u1")))
    reader(router, clock).list_resources("/Users")
    request = route.calls.last.request
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Accept"].split(",")[0] == "application/scim+json"


def test_read_all_lists_users_then_groups(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json=listing(1, users("u1")))
    router.get("/Groups").respond(200, json=listing(1, [{"id": "g1", "displayName": "Eng", "members": []}]))
    read = reader(router, clock).read_all()
    assert ([u["id"] for u in read.users], [g["id"] for g in read.groups]) == (["u1"], ["g1"])
    assert [c.request.url.path for c in router.calls] == ["/scim/v2/Users", "/scim/v2/Groups"]


def test_a_429_waits_for_retry_after_then_asks_the_same_page_again(router: respx.Router,
                                                                   clock: VirtualClock) -> None:
    route = router.get("/Users").mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "17"}),
        httpx.Response(200, json=listing(1, users("u1"))),
    ])
    found = reader(router, clock).list_resources("/Users")
    assert [u["id"] for u in found] == ["u1"]
    assert clock.slept == 17
    assert pages_asked(route) == [("1", "100"), ("1", "100")]


def test_a_retry_after_beyond_the_longest_wait_is_refused_without_waiting(router: respx.Router,
                                                                           clock: VirtualClock) -> None:
    router.get("/Users").respond(429, headers={"Retry-After": "86400"})
    with pytest.raises(DirectoryPullError, match=r"asked reconciler to wait before GET /Users\?startIndex=1"):
        reader(router, clock).list_resources("/Users")
    assert clock.slept == 0


def test_a_5xx_is_asked_again_after_a_backoff(router: respx.Router, clock: VirtualClock) -> None:
    route = router.get("/Users").mock(side_effect=[
        httpx.Response(503), httpx.Response(200, json=listing(1, users("u1"))),
    ])
    assert [u["id"] for u in reader(router, clock).list_resources("/Users")] == ["u1"]
    assert route.call_count == 2
    assert clock.slept > 0


def test_a_5xx_that_persists_names_the_service_the_call_and_the_attempts(router: respx.Router,
                                                                         clock: VirtualClock) -> None:
    router.get("/Users").respond(500, json={"detail": "database down"})
    with pytest.raises(DirectoryPullError) as caught:
        reader(router, clock, max_attempts=3).list_resources("/Users")
    assert str(caught.value).startswith(f"The SCIM service at {BASE} answered 500 to "
                                        "GET /Users?startIndex=1&count=100: its body begins: ")
    assert "database down" in str(caught.value)
    assert "after 3 attempts" in str(caught.value)
    assert router.calls.call_count == 3


def test_a_401_names_the_service_the_call_and_where_the_token_comes_from(router: respx.Router,
                                                                         clock: VirtualClock) -> None:
    router.get("/Users").respond(401, json={"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
                                            "status": "401", "detail": f"bad token {TOKEN}"})
    with pytest.raises(DirectoryPullError) as caught:
        reader(router, clock).list_resources("/Users")
    message = str(caught.value)
    assert message.startswith(f"The SCIM service at {BASE} answered 401 to GET /Users?startIndex=1&count=100:")
    assert "RECONCILER_DIRECTORY_PULL_TOKEN or the file given with --token-file" in message


def test_no_error_message_contains_the_token_even_when_the_service_echoes_it(router: respx.Router,
                                                                           clock: VirtualClock) -> None:
    router.get("/Users").respond(401, json={"detail": f"bad token {TOKEN}"})
    with pytest.raises(DirectoryPullError) as caught:
        reader(router, clock).list_resources("/Users")
    assert TOKEN not in str(caught.value)


def test_an_unreachable_service_names_the_service_and_the_call(clock: VirtualClock) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    http = scim_http_client(BASE, TOKEN, transport=httpx.MockTransport(refuse))
    with pytest.raises(DirectoryPullError) as caught:
        ScimReader(http, clock=clock, max_attempts=2).list_resources("/Groups")
    assert str(caught.value).startswith(f"No answer from the SCIM service at {BASE} to "
                                        "GET /Groups?startIndex=1&count=100 (2 attempts): ")


def test_an_answer_that_is_not_json_is_not_scim(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").respond(200, text="<html>Sign in</html>")
    with pytest.raises(DirectoryPullError, match=rf"^The answer of the SCIM service at {BASE} to "
                                                 r"GET /Users\?startIndex=1&count=100 is not SCIM: "
                                                 r"the body is not JSON"):
        reader(router, clock).list_resources("/Users")


def test_a_json_object_without_total_results_is_no_list_response(router: respx.Router,
                                                                 clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json={"data": {"users": []}})
    with pytest.raises(DirectoryPullError, match=r"is a JSON object that is no SCIM ListResponse \(its keys: 'data'\)"):
        reader(router, clock).list_resources("/Users")


def test_a_resource_without_an_id_is_refused(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json=listing(2, [*users("u1"), {"userName": "x@acme.com"}]))
    with pytest.raises(DirectoryPullError, match="resource number 2 of the page is not a SCIM resource with an id"):
        reader(router, clock).list_resources("/Users")


def test_a_page_empty_before_total_results_stops_the_pull(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").mock(side_effect=[
        httpx.Response(200, json=listing(4, users("u1", "u2"))),
        httpx.Response(200, json=listing(4, [], 3)),
    ])
    with pytest.raises(DirectoryPullError, match=r"stopped at GET /Users\?startIndex=3&count=2: it announces "
                                                 r"totalResults 4 but sends no resource from startIndex 3 on"):
        reader(router, clock, page_size=2).list_resources("/Users")


def test_a_service_that_ignores_start_index_is_refused_at_the_repeated_id(router: respx.Router,
                                                                          clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json=listing(4, users("u1", "u2")))
    with pytest.raises(DirectoryPullError, match="sends user id 'u1' again"):
        reader(router, clock, page_size=2).list_resources("/Users")


def test_a_service_that_keeps_raising_total_results_is_stopped_after_max_pages(router: respx.Router,
                                                                               clock: VirtualClock) -> None:
    asked = 0

    def endless(request: httpx.Request) -> httpx.Response:
        nonlocal asked
        asked += 1
        return httpx.Response(200, json=listing(asked * 10 + 10, users(f"u{asked}")))

    router.get("/Users").mock(side_effect=endless)
    with pytest.raises(DirectoryPullError, match="after 5 pages"):
        reader(router, clock, max_pages=5).list_resources("/Users")
    assert asked == 5


def test_total_results_beyond_the_cap_is_refused_at_the_first_page(router: respx.Router,
                                                                   clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json=listing(1001, users("u1")))
    with pytest.raises(DirectoryPullError, match="totalResults 1,001, more than the 1,000 resources"):
        reader(router, clock, max_resources=1000).list_resources("/Users")
    assert router.calls.call_count == 1


def test_an_answer_beyond_the_size_cap_is_refused(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").respond(200, json=listing(3, users("u1", "u2", "u3")))
    bounded = reader(router, clock)
    bounded.requester.max_body = 100
    with pytest.raises(DirectoryPullError, match=r"to GET /Users\?startIndex=1&count=100 is too large"):
        bounded.list_resources("/Users")


def test_a_redirect_is_not_followed(router: respx.Router, clock: VirtualClock) -> None:
    router.get("/Users").respond(302, headers={"Location": "https://elsewhere.example.test/Users"})
    with pytest.raises(DirectoryPullError, match="answered 302"):
        reader(router, clock).list_resources("/Users")
    assert router.calls.call_count == 1


@pytest.mark.parametrize("url", ["http://idp.example.com/scim/v2", "ftp://idp.example.com", "https:///scim"])
def test_an_address_that_is_not_https_or_loopback_http_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="SCIM address"):
        scim_base_url(url)


def test_a_password_in_the_address_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        scim_base_url("https://admin:hunter2secret@idp.example.com/scim/v2")
    assert "hunter2secret" not in str(caught.value)


def test_the_base_address_loses_its_trailing_slash() -> None:
    assert scim_base_url("http://127.0.0.1:8080/scim/v2/") == "http://127.0.0.1:8080/scim/v2"


def test_a_token_with_a_line_break_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        scim_http_client(BASE, "abc-SECRET\nmore")
    assert "SECRET" not in str(caught.value)
