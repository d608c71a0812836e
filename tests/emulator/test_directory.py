from __future__ import annotations

import pytest
import yaml

from reconciler.emulator import Emulator


@pytest.fixture
def emulator(seed_path, clock):
    doc = yaml.safe_load(seed_path.read_text(encoding="utf-8"))
    doc["companies"]["acme"]["customFields"] = [
        {"id": "cf_1", "name": "Region", "variableName": "region", "type": "richText", "objectType": "workspace"},
        {"id": "cf_2", "name": "Strategic", "variableName": "strategic", "type": "singleCheckbox",
         "objectType": "account", "options": [{"index": 0, "label": "Yes", "value": "true"}]},
    ]
    doc["companies"]["acme"]["accounts"][0]["customFields"] = {"cf_2": "true"}
    return Emulator.from_seed(doc, clock=clock)


def test_list_users_includes_people_given_access(client, props):
    emails = [u["email"] for u in client.get("/users", params=props("email")).json()["data"]["users"]]
    assert emails[0] == "jane@acme.com"
    assert "raj@customer.com" in emails and "temp@acme.com" in emails


def test_list_users_filter_by_email(client, props):
    users = client.get("/users", params=[*props("name"), ("filter[email]", "jane@acme.com")]).json()["data"]["users"]
    assert users == [{"id": "usr_1", "object": "user", "name": "Jane Doe"}]


def test_list_accounts_with_custom_field_values(client, props):
    data = client.get("/accounts", params=props("name", "customFields.name", "customFields.value")).json()["data"]
    assert data["pageInfo"]["total"] == 2
    first = data["accounts"][0]
    assert first["name"] == "Customer Inc"
    assert first["customFields"] == [{"id": "cf_2", "object": "custom-field", "name": "Strategic", "value": "true"}]


def test_list_accounts_filter(client, props):
    data = client.get("/accounts", params=[*props("name"), ("filter[crmOneCompanyId]", "hs-2")]).json()["data"]
    assert [a["name"] for a in data["accounts"]] == ["Other Inc"]


def test_get_custom_field_with_options(client, props):
    response = client.get("/custom-fields/cf_2", params=props("name", "options.label"))
    assert response.json()["data"]["customField"] == {
        "id": "cf_2", "object": "custom-field", "name": "Strategic", "options": [{"label": "Yes"}]}


def test_custom_fields_filter_by_object_type(client, props):
    data = client.get("/custom-fields", params=[*props("name"), ("objectType", "workspace")]).json()["data"]
    assert [f["name"] for f in data["customFields"]] == ["Region"]
    assert client.get("/custom-fields", params={"objectType": "planet"}).status_code == 400


def test_unknown_custom_field_is_404(client):
    assert client.get("/custom-fields/cf_nope").status_code == 404


def test_workspace_custom_fields_show_on_workspaces(client, props):
    ws = client.get("/workspaces", params=props("customFields.variableName", "customFields.value")).json()
    assert ws["data"]["workspaces"][0]["customFields"] == [
        {"id": "cf_1", "object": "custom-field", "variableName": "region", "value": None}]


def test_users_made_from_access_lists_have_a_string_name(client, props):
    users = client.get("/users", params=props("email", "name")).json()["data"]["users"]
    names = {u["email"]: u["name"] for u in users}
    assert names["jane@acme.com"] == "Jane Doe"
    # No name is known for a person first seen on an access list: an empty string, never null.
    assert names["raj@customer.com"] == "" and names["temp@acme.com"] == ""


def test_users_on_workspaces_have_a_string_name(client, props):
    ws = client.get("/workspaces", params=props("workspaceUsers.user.name", "workspaceUsers.user.email")).json()
    people = [u["user"] for w in ws["data"]["workspaces"] for u in w["workspaceUsers"]]
    assert people and all(isinstance(p["name"], str) for p in people)


def test_a_user_added_by_an_access_change_has_a_string_name(client, props):
    client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}, {"email": "new.person@customer.com", "role": "viewer"}]})
    users = client.get("/users", params=[*props("name"), ("filter[email]", "new.person@customer.com")]).json()
    assert users["data"]["users"][0]["name"] == ""


@pytest.mark.parametrize("token", ["token-acme", "token-globex"])
def test_seeded_accounts_have_an_owner_id_string_naming_a_user(make_client, props, token):
    client = make_client(token)
    accounts = client.get("/accounts", params=props("ownerId")).json()["data"]["accounts"]
    user_ids = {u["id"] for u in client.get("/users").json()["data"]["users"]}
    assert accounts and all(isinstance(a["ownerId"], str) for a in accounts)
    assert {a["ownerId"] for a in accounts} <= user_ids


def test_a_seeded_owner_id_is_kept():
    from reconciler.emulator import Emulator

    doc = {"companies": {"acme": {"token": "t", "users": [{"id": "usr_9", "email": "a@acme.com"}],
                                  "accounts": [{"id": "acc_1", "name": "A", "ownerId": "usr_9"},
                                               {"id": "acc_2", "name": "B"}]}}}
    store = Emulator.from_seed(doc).store
    assert [a.owner_id for a in store.companies["acme"].accounts] == ["usr_9", "usr_9"]


def test_the_owner_id_on_a_workspace_account_is_a_string(client, props):
    ws = client.get("/workspaces", params=props("account.ownerId")).json()["data"]["workspaces"]
    assert all(isinstance(w["account"]["ownerId"], str) for w in ws)
