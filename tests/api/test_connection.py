from __future__ import annotations

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from reconciler import __version__
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client, normalise_base_url
from reconciler.errors import ConfigError
from tests.api.conftest import BASE, TOKEN, data


@pytest.mark.parametrize(
    "given",
    ["https://api.example.com", "https://api.example.com/", "https://api.example.com/v1",
     "https://api.example.com/v1/", "  https://api.example.com/v1//  "],
)
def test_base_url_is_accepted_with_or_without_v1_segment(given: str) -> None:
    assert normalise_base_url(given) == "https://api.example.com/v1"


def test_base_url_keeps_a_path_prefix_and_port() -> None:
    assert normalise_base_url("https://gw.example.com:8443/wcs/") == "https://gw.example.com:8443/wcs/v1"


@pytest.mark.parametrize(
    "given",
    ["http://localhost:8080", "http://127.0.0.1:5000/v1", "http://127.3.4.5", "http://[::1]:9000/"],
)
def test_plain_http_is_accepted_for_loopback_written_literally(given: str) -> None:
    assert normalise_base_url(given).startswith("http://")


def test_plain_http_to_an_invalid_host_is_only_for_the_in_process_emulator() -> None:
    assert normalise_base_url("http://emulator.invalid", in_process=True) == "http://emulator.invalid/v1"
    with pytest.raises(ConfigError, match="plain http"):
        normalise_base_url("http://emulator.invalid")
    with pytest.raises(ConfigError, match="plain http"):
        make_http_client("http://evil.invalid", TOKEN)


def test_tls_verification_cannot_be_turned_off() -> None:
    with pytest.raises(ConfigError, match="cannot be turned off"):
        make_http_client(BASE, TOKEN, verify=False)


@pytest.mark.parametrize(
    "given", ["http://api.example.com", "http://10.0.0.1/v1", "http://localhost.example.com", "http://invalid.com",
              "http://localhost./v1", "http://x.invalid"]
)
def test_plain_http_to_other_hosts_is_refused(given: str) -> None:
    with pytest.raises(ConfigError, match="plain http"):
        normalise_base_url(given)


@pytest.mark.parametrize("given", ["ftp://api.example.com", "api.example.com", "https://", "https:///v1", ""])
def test_other_schemes_and_missing_host_are_refused(given: str) -> None:
    with pytest.raises(ConfigError):
        normalise_base_url(given)


def test_credentials_in_the_address_are_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigError) as info:
        normalise_base_url("https://me:hunter22@api.example.com")
    assert "hunter22" not in str(info.value)


def test_requests_carry_bearer_token_accept_and_user_agent(router: respx.Router) -> None:
    route = router.patch("/workspace-users/wu_1").respond(200, json=data("workspaceUser", {"id": "wu_1"}))
    http = make_http_client(BASE, TOKEN, transport=httpx.MockTransport(router.handler))
    WorkspaceClient(http).update_workspace_user("wu_1", role="viewer")
    request = route.calls.last.request
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["User-Agent"] == f"reconciler/{__version__}"
    assert request.url.path == "/v1/workspace-users/wu_1"


def test_base_url_without_v1_still_sends_to_v1(router: respx.Router) -> None:
    route = router.get("/workspaces").respond(200, json={"data": {"workspaces": [], "pageInfo": {}}})
    http = make_http_client("https://api.example.test/", TOKEN, transport=httpx.MockTransport(router.handler))
    assert list(WorkspaceClient(http).list_workspaces()) == []
    assert route.call_count == 1


def test_token_does_not_appear_in_the_client_repr() -> None:
    http = make_http_client(BASE, TOKEN)
    assert TOKEN not in repr(http.headers)
    assert TOKEN not in repr(http)


@pytest.mark.parametrize("bad", ["", "two words", "line\nbreak", "caf\u00e9"])
def test_token_that_cannot_be_a_header_is_refused_without_echoing_it(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_http_client(BASE, bad)
    if bad:
        assert bad not in str(info.value)


@pytest.mark.parametrize("given", ["https://api.example.com/v1?debug=1", "https://api.example.com/#top"])
def test_query_strings_and_fragments_are_refused(given: str) -> None:
    with pytest.raises(ConfigError, match="query string or fragment"):
        normalise_base_url(given)


@given(
    host=st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){1,3}", fullmatch=True),
    prefix=st.sampled_from(["", "/api", "/a/b"]),
    version=st.sampled_from(["", "/v1"]),
    slashes=st.sampled_from(["", "/", "//"]),
)
def test_normalising_is_idempotent_and_ends_in_v1(host: str, prefix: str, version: str, slashes: str) -> None:
    once = normalise_base_url(f"https://{host}{prefix}{version}{slashes}")
    assert once == f"https://{host}{prefix}/v1"
    assert normalise_base_url(once) == once
