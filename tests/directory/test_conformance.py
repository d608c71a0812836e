"""`directory serve` against scim2-tester, the python-scim family's conformance suite (RFC 7643/7644).

The app is served over real HTTP on 127.0.0.1 (uvicorn in a thread, a free port) on a file state in
tmp_path, and scim2-tester's ``check_server`` runs every check it has against it through scim2-client.
A check scim2-tester skips by itself (a feature the ServiceProviderConfig says the server does not
support: bulk, sort, changePassword, ...) is no failure; every other check must pass.

This module also holds what the recorded-IdP and bad-input tests share (``replay`` of the recorded
requests, ``served_directory`` with a body limit of the test's choosing): tests/directory/conftest.py is
the SERVER helper's, and these four files are one suite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from scim2_client import BaseSyncSCIMClient, RequestNetworkException
from scim2_tester import CheckResult, Status, check_server

from reconciler.directory.model import Directory
from reconciler.directory.server import directory_app
from reconciler.directory.server import background_server
from reconciler.directory.store import open_directory_store
from tests.directory.conftest import FixedClock

TOKEN = "conformance-suite-token-4b1d"
# The day the store's clock shows unless a test moves it (FixedClock's): every leaver's day is exact.
DAY = date(2026, 12, 1)
PASSED = {Status.SUCCESS, Status.COMPLIANT, Status.ACCEPTABLE}


@dataclass(frozen=True)
class ServedDirectory:
    """``directory_app`` listening on 127.0.0.1: its SCIM base URL, the state its store keeps, its clock."""

    base_url: str
    state: str
    clock: FixedClock

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)

    def snapshot(self) -> Directory:
        return snapshot_of(self.state)


def snapshot_of(state: str) -> Directory:
    """The directory as a reader of the state sees it: a store opened anew, not the server's."""
    with open_directory_store(state) as store:
        return store.snapshot()


@contextmanager
def served_directory(tmp_path: Path, **app_options: Any) -> Iterator[ServedDirectory]:
    """``directory_app`` on a file state in ``tmp_path``, served as ``directory serve`` serves it;
    ``app_options`` (``max_body_bytes``) as the caller wants them, unlike conftest's ``served``."""
    state = str(tmp_path / "reconciler.state.json")
    clock = FixedClock()
    with open_directory_store(state, now=clock) as store:
        url, stop = background_server(directory_app(store, TOKEN, **app_options))
        try:
            yield ServedDirectory(base_url=f"{url}/scim/v2", state=state, clock=clock)
        finally:
            stop()


RECORDED = Path(__file__).parent / "recorded"
# What a vendor's client takes for success, by method (RFC 7644 §3.3, §3.4.1, §3.5.1, §3.5.2, §3.6).
SUCCESS = {"GET": {200}, "POST": {201}, "PUT": {200}, "PATCH": {200, 204}, "DELETE": {204}}
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


@dataclass(frozen=True)
class RecordedRequest:
    """One request of an identity provider, as tests/directory/recorded/VENDOR/NAME.json holds it.

    ``{name}`` in the path or in a string of the body is the id the server gave the resource a request
    with ``"saveIdAs": "name"`` created earlier in the same sequence.
    """

    name: str
    method: str
    path: str
    body: Any = None
    save_id_as: str | None = None

    @classmethod
    def load(cls, vendor: str, name: str) -> RecordedRequest:
        data = json.loads((RECORDED / vendor / f"{name}.json").read_text(encoding="utf-8"))
        return cls(name=name, method=data["method"], path=data["path"], body=data.get("body"),
                   save_id_as=data.get("saveIdAs"))


def _with_ids(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: ids[m.group(1)], value)
    if isinstance(value, list):
        return [_with_ids(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _with_ids(v, ids) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Replayed:
    answers: list[httpx.Response]  # one per request, in order
    ids: dict[str, str]  # the ids the server gave, by the requests' saveIdAs


def replay(http: httpx.Client, vendor: str, names: list[str], *, ids: dict[str, str] | None = None) -> Replayed:
    """Send the recorded requests in order through ``http`` (the base URL and the token), as the vendor does
    (``application/scim+json``); every answer must be the success the vendor expects, or the sequence stops
    there naming the request. ``ids``: those of an earlier replay, to go on with its resources."""
    ids = dict(ids or {})
    answers = []
    for name in names:
        request = RecordedRequest.load(vendor, name)
        content = None if request.body is None else json.dumps(_with_ids(request.body, ids))
        headers = {"Content-Type": "application/scim+json; charset=utf-8"} if content is not None else {}
        answer = http.request(request.method, _with_ids(request.path, ids), content=content, headers=headers)
        assert answer.status_code in SUCCESS[request.method], (
            f"{vendor}/{name}.json: {answer.status_code} {answer.text}")
        if request.save_id_as:
            ids[request.save_id_as] = answer.json()["id"]
        answers.append(answer)
    return Replayed(answers=answers, ids=ids)


class HttpxSCIMClient(BaseSyncSCIMClient):
    """scim2-client's synchronous client sending through an ``httpx.Client``.

    scim2-client ships this engine for httpx2 (a fork of httpx) only; the project speaks httpx, whose
    ``Client`` has the same interface, so this is that engine's three methods over httpx.
    """

    def __init__(self, client: httpx.Client, **options: Any) -> None:
        super().__init__(**options)
        self.client = client

    def _stays_under_base_url(self, endpoint: str) -> bool:
        # As the httpx2 engine: the URL as it will be sent keeps the base URL's origin and path prefix.
        base = self.client.base_url
        try:
            url = self.client.build_request("GET", endpoint).url
        except httpx.InvalidURL:
            return False
        return (url.scheme, url.netloc) == (base.scheme, base.netloc) and url.raw_path.startswith(base.raw_path)

    def _parse_json(self, response: Any) -> Any:
        return response.json()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.client.request(method, url, **kwargs)
        except httpx.RequestError as exc:
            raise RequestNetworkException() from exc


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServedDirectory]:
    with served_directory(tmp_path) as directory:
        yield directory


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[CheckResult]:
    # One run for the tests that read it: the suite sends some hundreds of writes (tens of seconds here).
    with served_directory(tmp_path_factory.mktemp("conformance")) as served, served.client() as http:
        return check_server(HttpxSCIMClient(http))


def _line(result: CheckResult) -> str:
    where = f" [{result.resource_type}]" if result.resource_type else ""
    return f"{result.title}{where}: {result.status.name}: {result.reason}"


def test_every_scim2_tester_check_that_applies_passes(results: list[CheckResult]) -> None:
    failed = [_line(r) for r in results if r.status not in PASSED | {Status.SKIPPED}]
    assert not failed, f"{len(failed)} of {len(results)} checks failed:\n" + "\n".join(failed)


def test_scim2_tester_skips_no_check_of_a_feature_the_issue_requires(results: list[CheckResult]) -> None:
    # scim2-tester skips a check when the schema leaves it nothing to test, or for a feature the server says it
    # lacks. PATCH is one the issue requires (IdPs deactivate and change members with it): a skip of it would
    # hide what the recorded sequences rely on. A search of several resource types at once (POST /.search at
    # the root) is a MAY of RFC 7644 §3.4.3 no identity provider sends: its skip is allowed.
    allowed = ("No suitable attributes to test", "No addable attributes", "No removable attributes",
               "No replaceable attributes", "POST /.search: searching several resource types at once")
    skipped = [_line(r) for r in results if r.status is Status.SKIPPED and not str(r.reason).startswith(allowed)]
    assert skipped == []


def test_the_checks_reach_users_and_groups_with_every_crud_and_patch_check(results: list[CheckResult]) -> None:
    # A server that published no resource type would pass every check it was never given.
    ran = {(r.resource_type, r.title) for r in results if r.status in PASSED}
    expected = {(kind, title) for kind in ("User", "Group")
                for title in ("object_creation", "object_query", "object_query_without_id", "object_replacement",
                              "object_deletion", "check_add_attribute", "check_remove_attribute",
                              "check_replace_attribute")}
    assert expected - ran == set()


def test_the_service_provider_config_says_patch_filter_and_etag_are_supported(served: ServedDirectory) -> None:
    # What scim2-tester relies on to decide what applies: PATCH and filters are what IdPs send (issue 42 item 1).
    with served.client() as http:
        config = http.get("/ServiceProviderConfig").json()
    assert (config["patch"]["supported"], config["filter"]["supported"], config["etag"]["supported"]) == (
        True, True, True)
