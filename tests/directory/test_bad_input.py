"""Bad input to `directory serve`: each request is answered with a SCIM error (RFC 7644 §3.12: the Error
``schemas``, ``status`` as a string, ``scimType`` where the RFC defines one) or with a whole success, and
nothing of a refused request is stored: the directory a reader of the state sees is the one before it.

Every test starts from the same directory, made by Okta's own requests (tests/directory/recorded/okta/):
Ana and Bo, both members of Engineering.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.directory.model import Directory, DirectoryGroup, DirectoryPerson
from reconciler.directory.store import open_directory_store
from tests.directory.test_conformance import DAY, ServedDirectory, replay, served_directory

ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SCIM_JSON = {"Content-Type": "application/scim+json"}
ANA = "ana.lima@acme.com"
BO = "bo.chen@acme.com"
SEEDED = Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)),
                   groups=(DirectoryGroup("Engineering", (ANA, BO)),))
# The body limit of the tests that set one: small, so that an oversize body costs nothing to send.
LIMIT = 8 * 1024


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServedDirectory]:
    # Not conftest's `served`: the 10,000-member PATCH needs the default body limit.
    with served_directory(tmp_path) as directory:
        yield directory


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[ServedDirectory]:
    with served_directory(tmp_path, max_body_bytes=LIMIT) as directory:
        yield directory


@pytest.fixture
def http(served: ServedDirectory) -> Iterator[httpx.Client]:
    with served.client() as client:
        yield client


@pytest.fixture
def ids(served: ServedDirectory, http: httpx.Client) -> dict[str, str]:
    """The seeded directory's ids (``ana``, ``bo``, ``engineering``)."""
    seeded = replay(http, "okta", ["create-user-ana", "create-user-bo", "create-group-engineering",
                                   "add-members-ana-bo-to-engineering"])
    assert served.snapshot() == SEEDED
    return seeded.ids


def scim_error(answer: httpx.Response) -> tuple[int, Any, Any, Any]:
    """(HTTP status, ``schemas``, ``status``, ``scimType``) of an answer that must be a SCIM error."""
    body = answer.json()
    return answer.status_code, body.get("schemas"), body.get("status"), body.get("scimType")


def user_body(email: str, **more: Any) -> dict[str, Any]:
    return {"schemas": [USER], "userName": email, "emails": [{"value": email, "primary": True}], "active": True,
            **more}


def patch(*operations: dict[str, Any]) -> str:
    return json.dumps({"schemas": [PATCH_OP], "Operations": list(operations)})


# -- malformed JSON ---------------------------------------------------------------------------------

def test_a_create_of_malformed_json_is_refused_as_invalid_syntax(served: ServedDirectory, ids: dict[str, str],
                                                                 http: httpx.Client) -> None:
    answer = http.post("/Users", content=json.dumps(user_body("cy@acme.com"))[:-1], headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


def test_a_patch_of_malformed_json_is_refused_as_invalid_syntax(served: ServedDirectory, ids: dict[str, str],
                                                                http: httpx.Client) -> None:
    body = patch({"op": "remove", "path": f'members[value eq "{ids["bo"]}"]'})
    answer = http.patch(f"/Groups/{ids['engineering']}", content=body.replace("}]", "]"), headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


def test_a_create_whose_json_is_a_list_not_an_object_is_refused_as_invalid_syntax(
        served: ServedDirectory, ids: dict[str, str], http: httpx.Client) -> None:
    answer = http.post("/Users", content=json.dumps([user_body("cy@acme.com")]), headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


# -- unknown schemas --------------------------------------------------------------------------------

def test_a_create_whose_schemas_lack_the_core_user_schema_is_refused(served: ServedDirectory, ids: dict[str, str],
                                                                     http: httpx.Client) -> None:
    body = user_body("cy@acme.com", schemas=["urn:example:params:scim:schemas:core:2.0:Person"])
    answer = http.post("/Users", content=json.dumps(body), headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


def test_a_create_with_attributes_of_an_unknown_schema_urn_is_refused(served: ServedDirectory,
                                                                      ids: dict[str, str], http: httpx.Client) -> None:
    unknown = "urn:example:params:scim:schemas:extension:acme:2.0:User"
    body = user_body("cy@acme.com", schemas=[USER, unknown], **{unknown: {"clearance": "top"}})
    answer = http.post("/Users", content=json.dumps(body), headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


def test_a_patch_with_an_unknown_message_schema_is_refused(served: ServedDirectory, ids: dict[str, str],
                                                           http: httpx.Client) -> None:
    body = json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:Frobnicate"],
                       "Operations": [{"op": "replace", "value": {"active": False}}]})
    answer = http.patch(f"/Users/{ids['ana']}", content=body, headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidSyntax")
    assert served.snapshot() == SEEDED


# -- a PATCH is applied whole or not at all -----------------------------------------------------------

def test_a_patch_whose_last_operation_fails_applies_none_of_the_others(served: ServedDirectory,
                                                                       ids: dict[str, str],
                                                                       http: httpx.Client) -> None:
    body = patch({"op": "replace", "path": "active", "value": False},
                 {"op": "replace", "path": "clearanceLevel", "value": "top"})
    answer = http.patch(f"/Users/{ids['ana']}", content=body, headers=SCIM_JSON)
    assert scim_error(answer) == (400, [ERROR], "400", "invalidPath")
    assert served.snapshot() == SEEDED


# -- oversize bodies --------------------------------------------------------------------------------

def _padded_user(email: str, size: int) -> bytes:
    """A valid create of exactly ``size`` bytes (its displayName pads it)."""
    bare = json.dumps(user_body(email, displayName="")).encode()
    return json.dumps(user_body(email, displayName="x" * (size - len(bare)))).encode()


def test_a_create_of_exactly_the_body_limit_is_accepted(limited: ServedDirectory) -> None:
    with limited.client() as http:
        answer = http.post("/Users", content=_padded_user("cy@acme.com", LIMIT), headers=SCIM_JSON)
    assert answer.status_code == 201, answer.text
    assert limited.snapshot() == Directory(people=(DirectoryPerson("cy@acme.com"),))


def test_a_create_one_byte_over_the_body_limit_is_refused_with_413(limited: ServedDirectory) -> None:
    with limited.client() as http:
        answer = http.post("/Users", content=_padded_user("cy@acme.com", LIMIT + 1), headers=SCIM_JSON)
    assert scim_error(answer) == (413, [ERROR], "413", None)
    assert limited.snapshot() == Directory()


def test_an_oversize_body_sent_without_a_content_length_is_refused_with_413(limited: ServedDirectory) -> None:
    # Chunked: the server must count what it reads, not trust a length it was told.
    body = _padded_user("cy@acme.com", 4 * LIMIT)
    with limited.client() as http:
        answer = http.post("/Users", content=iter([body[:LIMIT], body[LIMIT:]]), headers=SCIM_JSON)
    assert "content-length" not in answer.request.headers
    assert scim_error(answer) == (413, [ERROR], "413", None)
    assert limited.snapshot() == Directory()


# -- filter injection -------------------------------------------------------------------------------

def _search(http: httpx.Client, path: str, scim_filter: str) -> httpx.Response:
    return http.get(path, params={"filter": scim_filter})


def test_a_quote_escaped_inside_a_filter_value_stays_inside_the_value(ids: dict[str, str],
                                                                      http: httpx.Client) -> None:
    # The value is the string `nobody" or userName pr or userName eq "`: it names no user.
    answer = _search(http, "/Users", r'userName eq "nobody\" or userName pr or userName eq \""')
    assert (answer.status_code, answer.json()["totalResults"]) == (200, 0)


def test_a_filter_whose_quote_is_never_closed_is_refused_as_invalid_filter(ids: dict[str, str],
                                                                           http: httpx.Client) -> None:
    answer = _search(http, "/Users", f'userName eq "{ANA}" or userName eq "{BO}')
    assert scim_error(answer) == (400, [ERROR], "400", "invalidFilter")


def test_a_filter_or_with_a_bare_true_is_refused_as_invalid_filter(ids: dict[str, str], http: httpx.Client) -> None:
    answer = _search(http, "/Users", 'userName eq "nobody@acme.com" or true')
    assert scim_error(answer) == (400, [ERROR], "400", "invalidFilter")


def test_a_value_path_nested_in_a_value_path_is_refused_as_invalid_filter(ids: dict[str, str],
                                                                          http: httpx.Client) -> None:
    answer = _search(http, "/Groups", f'members[value eq "{ids["ana"]}"[value eq "{ids["bo"]}"]]')
    assert scim_error(answer) == (400, [ERROR], "400", "invalidFilter")


def test_a_filter_nested_in_2000_parentheses_is_evaluated_not_crashed(ids: dict[str, str],
                                                                     http: httpx.Client) -> None:
    # Valid SCIM, and deep enough to exhaust a recursive evaluator's stack: an answer, never a 500.
    answer = _search(http, "/Users", "(" * 2000 + f'userName eq "{ANA}"' + ")" * 2000)
    assert (answer.status_code, [r["id"] for r in answer.json()["Resources"]]) == (200, [ids["ana"]])


def test_a_long_filter_of_200_or_clauses_finds_exactly_the_users_it_names(ids: dict[str, str],
                                                                         http: httpx.Client) -> None:
    names = [f"nobody{n}@acme.com" for n in range(199)] + [BO]
    answer = _search(http, "/Users", " or ".join(f'userName eq "{name}"' for name in names))
    assert [r["id"] for r in answer.json()["Resources"]] == [ids["bo"]]


def test_a_filter_value_of_a_megabyte_in_a_search_body_is_refused_with_413(ids: dict[str, str],
                                                                           http: httpx.Client) -> None:
    body = json.dumps({"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
                       "filter": f'userName eq "{"a" * 1024 * 1024}"'})
    answer = http.post("/Users/.search", content=body, headers=SCIM_JSON)
    assert scim_error(answer) == (413, [ERROR], "413", None)


# -- 10,000 members in one PATCH ----------------------------------------------------------------------

EVERYONE = "00g00000000000000001"
PEOPLE = [f"person{n:05d}@acme.com" for n in range(10_000)]


def _store_ten_thousand_people(served: ServedDirectory) -> str:
    """10,000 users and an empty group stored in one write (10,000 creates over HTTP would take minutes);
    the PATCH that adds them all to the group in one request, each member as Okta spells one."""
    users = [{"schemas": [USER], "id": f"00u{n:017d}", "userName": email, "active": True}
             for n, email in enumerate(PEOPLE)]
    group = {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "id": EVERYONE, "displayName": "Everyone",
             "members": []}
    with open_directory_store(served.state) as store:
        store.mirror(users, [group], today=DAY)
    return patch({"op": "add", "path": "members", "value": [{"value": u["id"], "display": u["userName"]}
                                                            for u in users]})


def test_a_patch_adding_10000_members_to_one_group_is_accepted_whole_under_the_default_limit(
        served: ServedDirectory) -> None:
    body = _store_ten_thousand_people(served)
    with served.client() as http:
        answer = http.patch(f"/Groups/{EVERYONE}", content=body, headers=SCIM_JSON)
    assert answer.status_code in (200, 204), answer.text[:500]
    assert served.snapshot() == Directory(people=tuple(DirectoryPerson(email) for email in PEOPLE),
                                          groups=(DirectoryGroup("Everyone", tuple(PEOPLE)),))


def test_a_patch_adding_10000_members_over_the_body_limit_is_refused_whole(tmp_path: Path) -> None:
    with served_directory(tmp_path, max_body_bytes=512 * 1024) as served:
        body = _store_ten_thousand_people(served)
        assert len(body.encode()) > 512 * 1024
        with served.client() as http:
            answer = http.patch(f"/Groups/{EVERYONE}", content=body, headers=SCIM_JSON)
        assert scim_error(answer) == (413, [ERROR], "413", None)
        assert served.snapshot() == Directory(people=tuple(DirectoryPerson(email) for email in PEOPLE),
                                              groups=(DirectoryGroup("Everyone", ()),))
