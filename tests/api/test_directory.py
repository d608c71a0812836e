from __future__ import annotations

import json

import pytest
import respx

from reconciler.api.client import WorkspaceClient
from tests.api.conftest import MakeClient, data, page


def test_users_are_listed_to_the_end(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/users").mock(side_effect=[
        respx.MockResponse(200, json=page("users", [{"id": "u_1", "email": "a@x.com"}], 1, 2)),
        respx.MockResponse(200, json=page("users", [{"id": "u_2", "email": "b@x.com"}], 2, 2)),
    ])
    assert [u.email for u in client.list_users(properties=["email"])] == ["a@x.com", "b@x.com"]
    assert route.call_count == 2


def test_custom_field_is_read_with_its_options(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/custom-fields/cf_1").respond(200, json=data("customField", {
        "id": "cf_1", "type": "singleCheckbox", "options": [{"index": 0, "label": "Yes", "value": "yes"}]}))
    field = client.get_custom_field("cf_1", properties=["type", "options.label"])
    assert field.options is not None and field.options[0].label == "Yes"


def test_custom_fields_are_filtered_by_object_type(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/custom-fields").respond(200, json=page("customFields", [{"id": "cf_1"}], 1, 1))
    assert [f.id for f in client.list_custom_fields(object_type="deal")] == ["cf_1"]
    assert route.calls.last.request.url.params["objectType"] == "deal"


def test_unknown_object_type_is_refused(client: WorkspaceClient) -> None:
    with pytest.raises(ValueError, match="object_type"):
        client.list_custom_fields(object_type="invoice")  # type: ignore[arg-type]


def test_accounts_are_listed_with_filter_and_properties(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/accounts").respond(200, json=page("accounts", [
        {"id": "acc_1", "name": "Client", "customFields": [{"id": "cf_1", "value": "<p>x</p>"}]}], 1, 1))
    (account,) = client.list_accounts(properties=["name", "customFields.value"], filter={"name": "Client"})
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == ["name", "customFields.value"]
    assert params["filter[name]"] == "Client" and params["page"] == "1" and params["limit"] == "100"
    assert account.customFields is not None and account.customFields[0].value == "<p>x</p>"


def test_tag_is_created_with_its_title(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.post("/tags").respond(201, json=data("tag", {"id": "tag_1", "title": "Legal"}))
    assert client.create_tag("Legal").title == "Legal"
    assert json.loads(route.calls.last.request.content) == {"title": "Legal"}


def test_users_properties_page_and_limit_are_sent(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/users").respond(200, json=page("users", [
        {"id": "u_1", "object": "user", "firstName": "Jane", "lastName": "Doe", "name": "Jane Doe",
         "avatar": "https://img.example/j.png", "email": "jane@acme.com"}], 1, 1))
    (user,) = client.list_users(properties=["firstName", "lastName", "name", "avatar", "email"])
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == ["firstName", "lastName", "name", "avatar", "email"]
    assert (params["page"], params["limit"]) == ("1", "100")
    assert (user.firstName, user.lastName, user.name, user.avatar) == ("Jane", "Doe", "Jane Doe",
                                                                       "https://img.example/j.png")


def test_custom_field_properties_are_sent_as_bracket_keys(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/custom-fields/cf_1").respond(200, json=data("customField", {"id": "cf_1"}))
    client.get_custom_field("cf_1", properties=["name", "variableName", "options.value"])
    assert route.calls.last.request.url.params.get_list("properties[]") == ["name", "variableName", "options.value"]


def test_custom_field_list_sends_properties_and_parses_each_field(router: respx.Router,
                                                                  client: WorkspaceClient) -> None:
    route = router.get("/custom-fields").respond(200, json=page("customFields", [
        {"id": "cf_1", "object": "custom-field", "name": "Region", "variableName": "region", "type": "richText"},
        {"id": "cf_2", "object": "custom-field", "name": "Strategic", "type": "singleCheckbox",
         "options": [{"index": 0, "label": "Yes", "value": "true"}]},
    ], 1, 1))
    fields = list(client.list_custom_fields(properties=["name", "type", "options.label"]))
    params = route.calls.last.request.url.params
    assert params.get_list("properties[]") == ["name", "type", "options.label"]
    assert (params["page"], params["limit"]) == ("1", "100")
    assert [(f.id, f.name, f.type) for f in fields] == [("cf_1", "Region", "richText"),
                                                        ("cf_2", "Strategic", "singleCheckbox")]
    assert fields[1].options is not None and fields[1].options[0].value == "true"


def test_custom_fields_without_object_type_send_no_filter(router: respx.Router, client: WorkspaceClient) -> None:
    route = router.get("/custom-fields").respond(200, json=page("customFields", [], 1, 1))
    list(client.list_custom_fields())
    assert "objectType" not in route.calls.last.request.url.params


def test_accounts_are_followed_across_pages(router: respx.Router, make_client: MakeClient) -> None:
    client = make_client(page_size=1)
    route = router.get("/accounts").mock(side_effect=[
        respx.MockResponse(200, json=page("accounts", [{"id": "acc_1"}], 1, 2)),
        respx.MockResponse(200, json=page("accounts", [{"id": "acc_2"}], 2, 2)),
    ])
    assert [a.id for a in client.list_accounts(filter={"crmOneCompanyId": "hs-1"})] == ["acc_1", "acc_2"]
    sent = [(c.request.url.params["page"], c.request.url.params["limit"], c.request.url.params["filter[crmOneCompanyId]"])
            for c in route.calls]
    assert sent == [("1", "1", "hs-1"), ("2", "1", "hs-1")]


def test_account_crm_ids_are_parsed(router: respx.Router, client: WorkspaceClient) -> None:
    router.get("/accounts").respond(200, json=page("accounts", [
        {"id": "acc_1", "crmOneCompanyId": "hs-1", "crmTwoAccountId": None, "website": "https://c.example",
         "ownerId": "u_1", "logo": None}], 1, 1))
    (account,) = client.list_accounts(properties=["crmOneCompanyId", "crmTwoAccountId", "website", "ownerId"])
    assert (account.crmOneCompanyId, account.crmTwoAccountId, account.website, account.ownerId) == (
        "hs-1", None, "https://c.example", "u_1")
