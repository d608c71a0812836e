"""directory pull as a command: the token's sources, the state it fills, and nothing written on an error.

The SCIM service is a respx router here (for exact answers); test_pull_http.py pulls from a real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from reconciler.clock import VirtualClock
from reconciler.commands.directory import directory_pull
from reconciler.directory.client import LIST_RESPONSE, DirectoryPullError
from reconciler.directory.store import open_directory_store
from reconciler.errors import ConfigError
from tests.directory.conftest import FixedClock, scim_group, scim_user

BASE = "https://idp.example.test/scim/v2"
TOKEN = "pull-SECRET-0c9e33d1a8"


def listing(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schemas": [LIST_RESPONSE], "totalResults": len(resources), "Resources": resources}


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


def pull(router: respx.Router, state: str | Path | None, *, token_file: Path | None = None,
         environ: dict[str, str] | None = None, clock: FixedClock | None = None) -> str:
    return directory_pull(url=BASE, state_path=state, token_file=token_file,
                          environ={"RECONCILER_DIRECTORY_PULL_TOKEN": TOKEN} if environ is None else environ,
                          transport=httpx.MockTransport(router.handler), clock=VirtualClock(),
                          now=clock or FixedClock())


def test_a_pull_mirrors_every_user_and_group_into_the_states_directory(router: respx.Router,
                                                                      state_address: str) -> None:
    router.get("/Users").respond(200, json=listing([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com")]))
    router.get("/Groups").respond(200, json=listing([scim_group("g1", "Engineering", "u1", "u2")]))
    pull(router, state_address)
    with open_directory_store(state_address) as store:
        directory = store.snapshot()
    assert [(g.name, g.members) for g in directory.groups] == [("Engineering", ("ana@acme.com", "bo@acme.com"))]


def test_a_pull_says_what_it_read_and_where_it_went(router: respx.Router, tmp_path: Path) -> None:
    router.get("/Users").respond(200, json=listing([scim_user("u1", "ana@acme.com", active=False)]))
    router.get("/Groups").respond(200, json=listing([]))
    state = tmp_path / "reconciler.state.json"
    assert pull(router, state) == (f"Pulled 1 user and 0 groups from the SCIM service at {BASE} into the directory of "
                                   f"the state {state} (1 newly deactivated).\n")


def test_a_user_gone_from_the_service_is_a_leaver_since_the_day_of_the_pull(router: respx.Router,
                                                                           tmp_path: Path) -> None:
    state = tmp_path / "reconciler.state.json"
    users = router.get("/Users")
    router.get("/Groups").respond(200, json=listing([]))
    users.respond(200, json=listing([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com")]))
    pull(router, state)
    users.respond(200, json=listing([scim_user("u1", "ana@acme.com")]))
    later = FixedClock()
    later.set_day("2026-12-05")
    pull(router, state, clock=later)
    with open_directory_store(str(state)) as store:
        leavers = store.snapshot().leavers()
    assert [(p.email, p.since.isoformat() if p.since else None) for p in leavers] == [("bo@acme.com", "2026-12-05")]


def test_a_failure_on_the_groups_writes_nothing_into_the_directory(router: respx.Router, tmp_path: Path) -> None:
    state = tmp_path / "reconciler.state.json"
    router.get("/Users").respond(200, json=listing([scim_user("u1", "ana@acme.com")]))
    router.get("/Groups").respond(200, json=listing([scim_group("g1", "Engineering", "u1")]))
    pull(router, state)
    directory_file = Path(f"{state}.directory.json")
    before = directory_file.read_bytes()
    router.get("/Users").respond(200, json=listing([]))
    router.get("/Groups").respond(401, json={"detail": "expired"})
    with pytest.raises(DirectoryPullError, match=rf"answered 401 to GET /Groups\?startIndex=1&count=100: .* Nothing "
                                                 rf"was written to the directory of the state {state}\.$"):
        pull(router, state)
    assert directory_file.read_bytes() == before


def test_the_token_comes_from_the_token_file_before_the_environment(router: respx.Router, tmp_path: Path) -> None:
    route = router.get("/Users").respond(200, json=listing([]))
    router.get("/Groups").respond(200, json=listing([]))
    token_file = tmp_path / "token"
    token_file.write_text("file-SECRET-41b7\n")
    pull(router, tmp_path / "s.json", token_file=token_file)
    assert route.calls.last.request.headers["Authorization"] == "Bearer file-SECRET-41b7"


def test_the_token_comes_from_the_environment_without_a_token_file(router: respx.Router, tmp_path: Path) -> None:
    route = router.get("/Users").respond(200, json=listing([]))
    router.get("/Groups").respond(200, json=listing([]))
    pull(router, tmp_path / "s.json")
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_without_a_token_nothing_is_sent(router: respx.Router, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="set RECONCILER_DIRECTORY_PULL_TOKEN or give --token-file"):
        pull(router, tmp_path / "s.json", environ={})
    assert router.calls.call_count == 0


def test_an_empty_token_file_is_refused(router: respx.Router, tmp_path: Path) -> None:
    (tmp_path / "token").write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        pull(router, tmp_path / "s.json", token_file=tmp_path / "token")


def test_without_a_state_nothing_is_sent(router: respx.Router) -> None:
    with pytest.raises(ConfigError, match="give --state"):
        pull(router, None)
    assert router.calls.call_count == 0

