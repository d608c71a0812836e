from __future__ import annotations

import pytest
import yaml

from reconciler.emulator import Emulator
from reconciler.emulator.seed import dump_store


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
    assert response.json()["error"]["message"] == "Unknown query parameter 'sort'."


def test_comma_separated_properties_value_selects_each(client):
    home = _home(client.get("/workspaces", params={"properties": "name,accountId"}))
    assert home == {"id": "ws_home", "object": "workspace", "name": "Home", "accountId": "acc_1"}


# -- every endpoint that takes properties ----------------------------------------

OWNER = {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]}


@pytest.fixture
def emulator(seed_path, clock):
    """The two-company seed with a custom field, so GET /custom-fields/{id} has one to show."""
    doc = yaml.safe_load(seed_path.read_text(encoding="utf-8"))
    doc["companies"]["acme"]["customFields"] = [
        {"id": "cf_1", "name": "Region", "variableName": "region", "type": "richText", "objectType": "workspace"}]
    return Emulator.from_seed(doc, clock=clock)


def _file(client):
    return client.post("/files", json={"fileName": "a.pdf", "mimeType": "application/pdf"}).json()["data"]["file"]["id"]


def _link(client):
    body = {"type": "link", "name": "Site", "url": "https://acme.com"}
    return client.post("/assets", json=body).json()["data"]["asset"]["id"]


# (endpoint, the request given a client and a query, the answer's resource name, a property it accepts)
ENDPOINTS = [
    ("GET /workspaces", lambda c, q: c.get("/workspaces", params=q), "workspaces", "name"),
    ("POST /workspaces", lambda c, q: c.post("/workspaces", params=q, json={"name": "N", "accountId": "acc_1",
                                                                             **OWNER}), "workspace", "templateId"),
    ("POST /workspaces/{id}/access", lambda c, q: c.post("/workspaces/ws_home/access", params=q, json=OWNER),
     "workspace", "workspaceUrl"),
    ("POST /workspaces/{id}/connected-workspaces",
     lambda c, q: c.post("/workspaces/ws_home/connected-workspaces", params=q, json={"workspaceId": "ws_kickoff"}),
     "workspace", "deal.name"),
    ("PATCH /workspace-users/{id}", lambda c, q: c.patch("/workspace-users/wu_2", params=q, json={"role": "editor"}),
     "workspaceUser", "user.email"),
    ("PATCH /workspace-domains/{id}",
     lambda c, q: c.patch("/workspace-domains/wd_1", params=q, json={"role": "editor"}), "workspaceDomain", "domain"),
    ("GET /workspace-domains", lambda c, q: c.get("/workspace-domains", params=q), "workspaceDomains", "role"),
    ("PATCH /workspace-plan-tasks/{id}",
     lambda c, q: c.patch("/workspace-plan-tasks/task_3", params=q, json={"completed": True}),
     "workspacePlanTask", "status"),
    ("PATCH /workspace-sections/{id}",
     lambda c, q: c.patch("/workspace-sections/sec_41", params=q, json={"isHidden": True}),
     "workspaceSection", "isSynced"),
    ("PATCH /workspace-pages/{id}", lambda c, q: c.patch("/workspace-pages/pg_9", params=q, json={"isHidden": True}),
     "workspacePage", "navigationName"),
    ("POST /assets", lambda c, q: c.post("/assets", params=q, json={"type": "link", "name": "S",
                                                                    "url": "https://acme.com"}), "asset", "assetUrl"),
    ("PATCH /assets/{id}", lambda c, q: c.patch(f"/assets/{_link(c)}", params=q, json={"isInternal": True}),
     "asset", "isInternal"),
    ("GET /files/{id}", lambda c, q: c.get(f"/files/{_file(c)}", params=q), "file", "uploadStatus"),
    ("POST /tags", lambda c, q: c.post("/tags", params=q, json={"title": "fresh"}), "tag", "title"),
    ("GET /users", lambda c, q: c.get("/users", params=q), "users", "email"),
    ("GET /custom-fields/{id}", lambda c, q: c.get("/custom-fields/cf_1", params=q), "customField", "variableName"),
    ("GET /custom-fields", lambda c, q: c.get("/custom-fields", params=q), "customFields", "type"),
    ("GET /accounts", lambda c, q: c.get("/accounts", params=q), "accounts", "crmOneCompanyId"),
]
IDS = [e[0] for e in ENDPOINTS]


@pytest.mark.parametrize(("endpoint", "send", "name", "prop"), ENDPOINTS, ids=IDS)
def test_every_endpoint_refuses_an_unknown_property_naming_it(client, endpoint, send, name, prop):
    response = send(client, [("properties[]", prop), ("properties[]", "noSuchField")])
    assert response.status_code == 400, endpoint
    assert response.json()["error"]["code"] == "BAD_REQUEST"
    assert "noSuchField" in response.json()["error"]["message"]


@pytest.mark.parametrize(("endpoint", "send", "name", "prop"), ENDPOINTS, ids=IDS)
def test_every_endpoint_refuses_an_empty_properties_value_as_it_refuses_an_unknown_one(client, endpoint, send, name,
                                                                                      prop):
    response = send(client, [("properties", "")])
    assert response.status_code == 400, endpoint
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == "BAD_REQUEST"
    assert "Empty value in properties=''" in body["error"]["message"]


@pytest.mark.parametrize("query", [
    [("properties[]", "")],
    [("properties[]", "   ")],
    [("properties", "name,")],
    [("properties", "name,,accountId")],
], ids=["empty properties[]", "blank properties[]", "trailing comma", "empty between commas"])
def test_an_empty_name_anywhere_in_the_selection_is_400(client, query):
    response = client.get("/workspaces", params=query)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BAD_REQUEST"
    assert response.json()["error"]["message"].startswith("Empty value in properties")


def test_a_creation_with_an_empty_properties_value_creates_nothing(client, emulator):
    before = dump_store(emulator.store)
    response = client.post("/workspaces", params=[("properties", "")],
                           json={"name": "N", "accountId": "acc_1", **OWNER})
    assert response.status_code == 400
    assert dump_store(emulator.store) == before


def test_an_endpoint_without_properties_refuses_an_empty_value_too(client):
    response = client.post("/files", params=[("properties[]", "")],
                           json={"fileName": "a.pdf", "mimeType": "application/pdf"})
    assert response.status_code == 400
    assert "none on this endpoint" in response.json()["error"]["message"]


@pytest.mark.parametrize(("endpoint", "send", "name", "prop"), ENDPOINTS, ids=IDS)
def test_every_endpoint_answers_exactly_the_selected_property(client, endpoint, send, name, prop):
    response = send(client, [("properties[]", prop)])
    assert response.status_code in (200, 201), response.text
    found = response.json()["data"][name]
    resource = found[0] if isinstance(found, list) else found
    head = prop.split(".")[0]
    assert set(resource) == {"id", "object", head}, endpoint


@pytest.mark.parametrize(("path", "body"), [
    ("/files", {"fileName": "a.pdf", "mimeType": "application/pdf"}),
    ("/workspaces/ws_home/authenticated-embed-url", {"email": "jane@acme.com"}),
], ids=["POST /files", "POST /workspaces/{id}/authenticated-embed-url"])
def test_endpoints_with_a_fixed_answer_refuse_properties(client, path, body):
    response = client.post(path, params={"properties[]": "url"}, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("Unknown property 'url' for this endpoint")
