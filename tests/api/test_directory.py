from __future__ import annotations

import json

import pytest
import respx

from reconciler.api.client import WorkspaceClient
from tests.api.conftest import data, page


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
