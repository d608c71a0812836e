"""directory pull from a real SCIM service over HTTP on 127.0.0.1: ``directory serve``'s own application,
on either state backend, pulled into the directory of another state."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.clock import VirtualClock
from reconciler.commands.directory import directory_pull
from reconciler.directory.client import DirectoryPullError
from reconciler.directory.store import open_directory_store
from tests.directory.conftest import TOKEN, FixedClock, Served, scim_group, scim_user


def pull(url: str, target: Path, clock: FixedClock, token: str = TOKEN) -> str:
    return directory_pull(url=url, state_path=target, token_file=None,
                          environ={"RECONCILER_DIRECTORY_PULL_TOKEN": token}, clock=VirtualClock(), now=clock)


def test_a_pull_from_directory_serve_gives_the_same_directory(served: Served, clock: FixedClock,
                                                              tmp_path: Path) -> None:
    served.store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com", manager="u3"),
                         scim_user("u3", "jane@acme.com"), scim_user("u4", "cy@acme.com", active=False)],
                        [scim_group("g1", "Engineering", "u1", "u2", "u4"), scim_group("g2", "Sales Team")],
                        today=served.store.today())
    target = tmp_path / "target.state.json"
    pull(served.base_url, target, clock)
    with open_directory_store(str(target)) as store:
        assert store.snapshot() == served.store.snapshot()


def test_a_pull_reads_every_page_of_a_directory_larger_than_one(served: Served, clock: FixedClock,
                                                                tmp_path: Path) -> None:
    people = [scim_user(f"u{i:03}", f"p{i:03}@acme.com") for i in range(250)]
    served.store.mirror(people, [], today=served.store.today())
    target = tmp_path / "target.state.json"
    pull(served.base_url, target, clock)
    with open_directory_store(str(target)) as store:
        assert [p.email for p in store.snapshot().people] == [f"p{i:03}@acme.com" for i in range(250)]


def test_a_wrong_token_is_refused_naming_the_service_and_the_call_and_nothing_is_written(
        served: Served, clock: FixedClock, tmp_path: Path) -> None:
    target = tmp_path / "target.state.json"
    with pytest.raises(DirectoryPullError) as caught:
        pull(served.base_url, target, clock, token="not-the-token-0000")
    assert str(caught.value).startswith(f"The SCIM service at {served.base_url} answered 401 to "
                                        "GET /Users?startIndex=1&count=100:")
    assert not Path(f"{target}.directory.json").exists()


def test_an_address_without_the_scim_path_is_a_404_that_says_so(served: Served, clock: FixedClock,
                                                               tmp_path: Path) -> None:
    root = served.base_url.removesuffix("/scim/v2")
    with pytest.raises(DirectoryPullError, match=r"answered 404 to GET /Users\?startIndex=1&count=100: .* The "
                                                 r"address may not be the SCIM base URL"):
        pull(root, tmp_path / "target.state.json", clock)
