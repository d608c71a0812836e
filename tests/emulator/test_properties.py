from __future__ import annotations


def _home(response):
    return next(w for w in response.json()["data"]["workspaces"] if w["id"] == "ws_home")


def test_without_properties_only_id_object_url(client):
    home = _home(client.get("/workspaces"))
    assert home == {"id": "ws_home", "object": "workspace", "url": "http://emulator.test/v1/workspaces/ws_home"}


def test_dotted_paths_select_nested_fields_with_their_ids(client, props):
    home = _home(client.get("/workspaces", params=props("workspaceUsers.role", "workspaceUsers.user.email")))
    assert set(home) == {"id", "object", "workspaceUsers"}
    jane = home["workspaceUsers"][0]
    assert jane["object"] == "workspace-user" and jane["id"].startswith("wu_")
    assert jane["role"] == "owner"
    assert jane["user"] == {"id": "usr_1", "object": "user", "email": "jane@acme.com"}


def test_plain_properties_key_is_accepted_too(client):
    home = _home(client.get("/workspaces", params=[("properties", "name"), ("properties", "account.name")]))
    assert home["name"] == "Home"
    assert home["account"] == {"id": "acc_1", "object": "account", "name": "Customer Inc"}


def test_unknown_property_is_400_naming_it(client, props):
    response = client.get("/workspaces", params=props("name", "secretSauce"))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BAD_REQUEST"
    assert "secretSauce" in response.json()["error"]["message"]


def test_property_of_another_endpoint_is_400(client, props):
    # ``domain`` is a workspace-domain property, not a workspace one.
    assert client.get("/workspaces", params=props("domain")).status_code == 400


def test_unknown_query_parameter_is_400(client):
    response = client.get("/workspaces", params={"sort": "name"})
    assert response.status_code == 400
    assert "sort" in response.json()["error"]["message"]


def test_comma_separated_properties_value_selects_each(client):
    home = _home(client.get("/workspaces", params={"properties": "name,accountId"}))
    assert home == {"id": "ws_home", "object": "workspace", "name": "Home", "accountId": "acc_1"}
