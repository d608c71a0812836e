"""``directory_app`` over real HTTP on 127.0.0.1, on both state backends: what an identity provider does,
and what the store keeps of it."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx

from reconciler.directory.model import DirectoryGroup, DirectoryPerson
from tests.directory.conftest import ENTERPRISE, TOKEN, FixedClock, Served

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"


def create_user(served: Served, email: str, **fields: Any) -> dict[str, Any]:
    answer = served.http.post("/Users", json={"schemas": [USER_SCHEMA], "userName": email, **fields})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def create_group(served: Served, name: str, *member_ids: str) -> dict[str, Any]:
    answer = served.http.post("/Groups", json={"schemas": [GROUP_SCHEMA], "displayName": name,
                                               "members": [{"value": m} for m in member_ids]})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def patch(served: Served, path: str, *operations: dict[str, Any], **headers: str) -> httpx.Response:
    return served.http.patch(path, json={"schemas": [PATCH_SCHEMA], "Operations": list(operations)},
                             headers=headers)


def found(served: Served, endpoint: str, **params: str | int) -> list[str]:
    answer = served.http.get(endpoint, params=params)
    assert answer.status_code == 200, answer.text
    return [r["id"] for r in answer.json().get("Resources", [])]


# -- create, get, list, filter ---------------------------------------------------------------------------


def test_a_created_user_is_got_back_by_its_location(served: Served) -> None:
    created = create_user(served, "ana@acme.com", externalId="00u1")
    answer = served.http.get(created["meta"]["location"])
    assert (answer.json()["userName"], answer.json()["externalId"]) == ("ana@acme.com", "00u1")
    assert answer.headers["ETag"] == created["meta"]["version"]


def test_locations_are_under_the_scim_base_url(served: Served) -> None:
    created = create_user(served, "ana@acme.com")
    assert created["meta"]["location"] == f"{served.base_url}/Users/{created['id']}"


def test_a_user_name_taken_is_a_409(served: Served) -> None:
    create_user(served, "ana@acme.com")
    answer = served.http.post("/Users", json={"schemas": [USER_SCHEMA], "userName": "ana@acme.com"})
    assert (answer.status_code, answer.json()["scimType"]) == (409, "uniqueness")


def test_users_are_filtered_by_user_name(served: Served) -> None:
    ana = create_user(served, "ana@acme.com")
    create_user(served, "bo@acme.com")
    assert found(served, "/Users", filter='userName eq "ANA@acme.com"') == [ana["id"]]


def test_users_are_filtered_by_external_id(served: Served) -> None:
    create_user(served, "ana@acme.com", externalId="00u1")
    bo = create_user(served, "bo@acme.com", externalId="00u2")
    assert found(served, "/Users", filter='externalId eq "00u2"') == [bo["id"]]


def test_groups_are_filtered_by_display_name(served: Served) -> None:
    create_group(served, "Sales")
    engineering = create_group(served, "Engineering")
    assert found(served, "/Groups", filter='displayName eq "Engineering"') == [engineering["id"]]


def test_groups_are_filtered_by_a_member(served: Served) -> None:
    ana = create_user(served, "ana@acme.com")
    bo = create_user(served, "bo@acme.com")
    sales = create_group(served, "Sales", ana["id"])
    create_group(served, "Engineering", bo["id"])
    assert found(served, "/Groups", filter=f'members[value eq "{ana["id"]}"]') == [sales["id"]]


def test_a_list_is_paged_by_start_index_and_count(served: Served) -> None:
    for n in range(5):
        create_user(served, f"u{n}@acme.com")
    answer = served.http.get("/Users", params={"startIndex": 2, "count": 2, "sortBy": "userName"}).json()
    assert (answer["totalResults"], answer["startIndex"], answer["itemsPerPage"]) == (5, 2, 2)
    assert [r["userName"] for r in answer["Resources"]] == ["u1@acme.com", "u2@acme.com"]


def test_an_unknown_resource_is_a_scim_404(served: Served) -> None:
    answer = served.http.get("/Users/nobody")
    assert (answer.status_code, answer.json()["schemas"]) == (404, [ERROR_SCHEMA])


# -- PATCH, PUT, DELETE ----------------------------------------------------------------------------------


def test_a_patch_adds_and_removes_group_members(served: Served) -> None:
    ana, bo = create_user(served, "ana@acme.com"), create_user(served, "bo@acme.com")
    group = create_group(served, "Engineering", ana["id"])
    assert patch(served, f"/Groups/{group['id']}", {"op": "add", "path": "members", "value": [{"value": bo["id"]}]},
                 {"op": "remove", "path": f'members[value eq "{ana["id"]}"]'}).status_code == 204
    assert served.store.snapshot().groups == (DirectoryGroup("Engineering", ("bo@acme.com",)),)


def test_a_put_replaces_a_user(served: Served) -> None:
    ana = create_user(served, "ana@acme.com", title="Engineer")
    answer = served.http.put(f"/Users/{ana['id']}", json={"schemas": [USER_SCHEMA], "userName": "ana@acme.com",
                                                          "displayName": "Ana"})
    assert (answer.status_code, answer.json().get("title"), answer.json()["displayName"]) == (200, None, "Ana")


def test_a_stale_if_match_of_the_client_is_a_412(served: Served) -> None:
    ana = create_user(served, "ana@acme.com")
    patch(served, f"/Users/{ana['id']}", {"op": "replace", "path": "title", "value": "CTO"})
    answer = patch(served, f"/Users/{ana['id']}", {"op": "replace", "path": "title", "value": "CEO"},
                   **{"If-Match": ana["meta"]["version"]})
    assert answer.status_code == 412
    assert served.http.get(f"/Users/{ana['id']}").json()["title"] == "CTO"


def test_a_deleted_user_is_gone(served: Served) -> None:
    ana = create_user(served, "ana@acme.com")
    assert served.http.delete(f"/Users/{ana['id']}").status_code == 204
    assert served.http.get(f"/Users/{ana['id']}").status_code == 404


def test_a_deleted_user_leaves_every_group(served: Served) -> None:
    ana, bo = create_user(served, "ana@acme.com"), create_user(served, "bo@acme.com")
    group = create_group(served, "Engineering", ana["id"], bo["id"])
    served.http.delete(f"/Users/{ana['id']}")
    members = served.http.get(f"/Groups/{group['id']}").json()["members"]
    assert [m["value"] for m in members] == [bo["id"]]


def test_the_enterprise_manager_is_kept(served: Served) -> None:
    boss = create_user(served, "boss@acme.com")
    create_user(served, "ana@acme.com", schemas=[USER_SCHEMA, ENTERPRISE],
                **{ENTERPRISE: {"manager": {"value": boss["id"]}}})
    assert served.store.snapshot().people[0] == DirectoryPerson("ana@acme.com", manager="boss@acme.com")


def test_a_password_sent_is_never_stored(served: Served) -> None:
    create_user(served, "ana@acme.com", password="hunter2-secret")
    assert "hunter2-secret" not in str(served.store.read())


# -- the days leavers are kept with ----------------------------------------------------------------------


def test_a_patch_to_inactive_makes_a_leaver_since_that_day(served: Served, clock: FixedClock) -> None:
    ana = create_user(served, "ana@acme.com")
    clock.set_day("2026-12-03")
    patch(served, f"/Users/{ana['id']}", {"op": "replace", "value": {"active": False}})
    assert served.store.snapshot().people == (DirectoryPerson("ana@acme.com", active=False, since=date(2026, 12, 3)),)


def test_a_user_created_inactive_is_a_leaver_since_that_day(served: Served) -> None:
    create_user(served, "ana@acme.com", active=False)
    assert served.store.snapshot().leavers()[0].since == date(2026, 12, 1)


def test_a_leaver_patched_inactive_again_keeps_its_first_day(served: Served, clock: FixedClock) -> None:
    ana = create_user(served, "ana@acme.com", active=False)
    clock.set_day("2026-12-09")
    patch(served, f"/Users/{ana['id']}", {"op": "replace", "path": "active", "value": False},
          {"op": "replace", "path": "title", "value": "Former"})
    assert served.store.snapshot().leavers()[0].since == date(2026, 12, 1)


def test_a_user_active_again_is_no_leaver(served: Served) -> None:
    ana = create_user(served, "ana@acme.com", active=False)
    patch(served, f"/Users/{ana['id']}", {"op": "replace", "path": "active", "value": True})
    assert served.store.snapshot().leavers() == ()


def test_a_deleted_user_is_a_leaver_since_the_day_of_the_delete(served: Served, clock: FixedClock) -> None:
    ana = create_user(served, "ana@acme.com")
    clock.set_day("2026-12-07")
    served.http.delete(f"/Users/{ana['id']}")
    assert served.store.snapshot().people == (
        DirectoryPerson("ana@acme.com", active=False, since=date(2026, 12, 7), deleted=True),)


def test_a_user_created_again_after_its_delete_is_no_leaver(served: Served) -> None:
    ana = create_user(served, "ana@acme.com")
    served.http.delete(f"/Users/{ana['id']}")
    create_user(served, "ana@acme.com")
    assert served.store.snapshot().leavers() == ()


# -- authentication and bounds ---------------------------------------------------------------------------


def test_a_request_without_a_token_is_a_scim_401(served: Served) -> None:
    answer = httpx.get(f"{served.base_url}/Users")
    assert (answer.status_code, answer.json()["schemas"], answer.headers["WWW-Authenticate"]) == (
        401, [ERROR_SCHEMA], 'Bearer realm="SCIM"')


def test_a_request_with_another_token_is_a_401(served: Served) -> None:
    answer = httpx.get(f"{served.base_url}/Users", headers={"Authorization": f"Bearer {TOKEN}x"})
    assert answer.status_code == 401


def test_a_write_without_the_token_stores_nothing(served: Served) -> None:
    answer = httpx.post(f"{served.base_url}/Users", json={"schemas": [USER_SCHEMA], "userName": "x@acme.com"},
                        headers={"Authorization": "Basic " + TOKEN})
    assert answer.status_code == 401
    assert served.store.read().users == {}


def test_even_the_service_provider_config_needs_the_token(served: Served) -> None:
    assert httpx.get(f"{served.base_url}/ServiceProviderConfig").status_code == 401


def test_a_body_over_the_bound_is_a_scim_413_and_stores_nothing(served: Served) -> None:
    answer = served.http.post("/Users", json={"schemas": [USER_SCHEMA], "userName": "x@acme.com",
                                              "title": "x" * 70_000})
    assert (answer.status_code, answer.json()["schemas"]) == (413, [ERROR_SCHEMA])
    assert served.store.read().users == {}


def test_a_path_outside_the_scim_base_is_a_404(served: Served) -> None:
    assert served.http.get(served.base_url.removesuffix("/scim/v2") + "/Users").status_code == 404


# -- discovery -------------------------------------------------------------------------------------------


def test_the_service_provider_config_announces_patch_filter_sort_etag_and_no_bulk(served: Served) -> None:
    config = served.http.get("/ServiceProviderConfig").json()
    supported = {name: config[name]["supported"] for name in ("patch", "bulk", "filter", "sort", "etag",
                                                               "changePassword")}
    assert supported == {"patch": True, "bulk": False, "filter": True, "sort": True, "etag": True,
                         "changePassword": False}
    assert [s["type"] for s in config["authenticationSchemes"]] == ["oauthbearertoken"]


def test_the_user_resource_type_has_the_enterprise_extension(served: Served) -> None:
    user_type = served.http.get("/ResourceTypes/User").json()
    assert [e["schema"] for e in user_type["schemaExtensions"]] == [ENTERPRISE]


def test_the_schemas_are_served(served: Served) -> None:
    ids = {s["id"] for s in served.http.get("/Schemas").json()["Resources"]}
    assert ids == {USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE}
