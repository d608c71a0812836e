"""Two writers, 100 PATCHes each adding one member to one group, at once over HTTP: no member is lost, on both
state backends (issue 42's Done-when). The writers race between reading the group and writing it back; the
server tries the loser again on the group as it is now."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from reconciler.directory.server import directory_app
from reconciler.directory.server import background_server
from reconciler.directory.store import open_directory_store
from tests.directory.conftest import TOKEN, scim_group, scim_user

PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
EACH = 100


@pytest.fixture
def two_servers(state_address: str) -> Iterator[list[str]]:
    """Two servers on one state, each with its own store: two processes of ``directory serve``, in effect."""
    stops, urls, stores = [], [], []
    try:
        for _ in range(2):
            store = open_directory_store(state_address)
            stores.append(store)
            url, stop = background_server(directory_app(store, TOKEN))
            urls.append(f"{url}/scim/v2")
            stops.append(stop)
        yield urls
    finally:
        for stop in stops:
            stop()
        for store in stores:
            store.close()


def _add_members(url: str, tag: str, statuses: list[int]) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
        for n in range(EACH):
            answer = http.patch("/Groups/g1", json={"schemas": [PATCH_SCHEMA], "Operations": [
                {"op": "add", "path": "members", "value": [{"value": f"{tag}{n}"}]}]})
            statuses.append(answer.status_code)


@pytest.mark.parametrize("writers_on", ["one server", "two servers"])
def test_two_writers_adding_100_members_each_to_one_group_lose_none(two_servers: list[str], state_address: str,
                                                                     writers_on: str) -> None:
    users = [scim_user(f"{tag}{n}", f"{tag}{n}@acme.com") for tag in "ab" for n in range(EACH)]
    with open_directory_store(state_address) as store:
        store.mirror(users, [scim_group("g1", "Engineering")], today=store.today())
    urls = two_servers if writers_on == "two servers" else [two_servers[0]] * 2
    statuses: list[int] = []
    writers = [threading.Thread(target=_add_members, args=(url, tag, statuses)) for url, tag in zip(urls, "ab", strict=True)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert set(statuses) == {204}
    with open_directory_store(state_address) as store:
        (group,) = store.snapshot().groups
    assert len(group.members) == 2 * EACH


def _write_user(url: str, method: str, statuses: list[int]) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
        for n in range(EACH):
            if method == "PUT":
                answer = http.put("/Users/u1", json={**scim_user("u1", "ana@acme.com"), "displayName": f"Ana {n}"})
            else:
                answer = http.patch("/Users/u1", json={"schemas": [PATCH_SCHEMA], "Operations": [
                    {"op": "replace", "path": "title", "value": f"Title {n}"}]})
            statuses.append(answer.status_code)


def test_a_put_racing_patches_on_one_user_is_tried_again_on_the_user_as_it_is_now(
        two_servers: list[str], state_address: str) -> None:
    # A PUT is applied to the resource read before it: after a lost race it must be read again, or every
    # later attempt loses too and the client gets the 412 it never asked for (it sent no If-Match).
    with open_directory_store(state_address) as store:
        store.mirror([scim_user("u1", "ana@acme.com")], [], today=store.today())
    statuses: list[int] = []
    writers = [threading.Thread(target=_write_user, args=(two_servers[0], method, statuses))
               for method in ("PUT", "PATCH")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert len(statuses) == 2 * EACH and set(statuses) <= {200, 204}, sorted(set(statuses))
