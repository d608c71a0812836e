from __future__ import annotations

import copy

import pytest
import yaml

from reconciler.emulator import Emulator

ACCESS = [("properties[]", p) for p in ("workspaceUsers.role", "workspaceUsers.user.email",
                                         "workspaceDomains.domain", "workspaceDomains.role")]
MORE_WORKSPACES = [
    {"id": "ws_draft", "name": "Draft", "account": "acc_1", "published": False,
     "users": [{"email": "drafter@acme.com", "role": "owner"}]},
    {"id": "ws_elsewhere", "name": "Elsewhere", "account": "acc_2", "published": True,
     "users": [{"email": "jane@acme.com", "role": "owner"}]},
    {"id": "ws_g2", "name": "Other group home", "account": "acc_1", "published": True, "group": "g2",
     "users": [{"email": "jane@acme.com", "role": "owner"}]},
    {"id": "ws_loose", "name": "Loose", "account": "acc_1", "published": True,
     "users": [{"email": "loose@acme.com", "role": "owner"}]},
]


@pytest.fixture
def seed_doc(seed_path):
    doc = yaml.safe_load(seed_path.read_text(encoding="utf-8"))
    doc["companies"]["acme"]["workspaces"].extend(copy.deepcopy(MORE_WORKSPACES))
    return doc


@pytest.fixture
def emulator(seed_doc, clock):
    return Emulator.from_seed(seed_doc, clock=clock)


def _access(client, workspace_id):
    for ws in client.get("/workspaces", params=ACCESS).json()["data"]["workspaces"]:
        if ws["id"] == workspace_id:
            return ({u["user"]["email"]: u["role"] for u in ws["workspaceUsers"]},
                    {d["domain"]: d["role"] for d in ws["workspaceDomains"]})
    raise AssertionError(workspace_id)


def _connect(client, target, body, params=None):
    return client.post(f"/workspaces/{target}/connected-workspaces", json=body, params=params)


# -- connecting an existing workspace ---------------------------------------

def test_connecting_a_workspace_returns_201_and_it_shares_the_group_list(client):
    response = _connect(client, "ws_home", {"workspaceId": "ws_loose"}, [("properties[]", "name")])
    assert response.status_code == 201
    assert response.json()["data"]["workspace"] == {"id": "ws_loose", "object": "workspace", "name": "Loose"}
    assert _access(client, "ws_loose") == _access(client, "ws_home")
    client.post("/workspaces/ws_loose/access", json={"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]})
    assert _access(client, "ws_home")[0] == {"jane@acme.com": "owner"}


def test_already_connected_workspace_is_200_and_nothing_changes(client, emulator):
    before = _access(client, "ws_kickoff")
    response = _connect(client, "ws_home", {"workspaceId": "ws_kickoff"})
    assert response.status_code == 200
    assert response.json()["data"]["workspace"]["id"] == "ws_kickoff"
    assert _access(client, "ws_kickoff") == before


def test_workspace_in_another_group_is_409_conflict(client):
    response = _connect(client, "ws_home", {"workspaceId": "ws_g2"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "CONFLICT"


def test_workspace_of_another_account_is_409(client):
    assert _connect(client, "ws_home", {"workspaceId": "ws_elsewhere"}).status_code == 409


def test_unpublished_workspace_is_published_with_the_homepage_access(client, emulator):
    response = _connect(client, "ws_home", {"workspaceId": "ws_draft"})
    assert response.status_code == 201
    assert emulator.store.companies["acme"].workspace("ws_draft").published is True
    assert _access(client, "ws_draft") == _access(client, "ws_home")
    assert "drafter@acme.com" not in _access(client, "ws_draft")[0]


def test_ungrouped_target_becomes_the_homepage_of_a_new_group(client, emulator):
    assert _connect(client, "ws_portal", {"workspaceId": "ws_loose"}).status_code == 201
    company = emulator.store.companies["acme"]
    group = company.groups[company.workspace("ws_portal").group]
    assert group.homepage == "ws_portal"
    assert company.workspace("ws_loose").group == group.id
    assert _access(client, "ws_loose") == _access(client, "ws_portal")


def test_body_needs_exactly_one_of_workspace_id_and_template_id(client):
    assert _connect(client, "ws_home", {}).status_code == 400
    assert _connect(client, "ws_home", {"workspaceId": "ws_loose", "templateId": "tpl_kickoff"}).status_code == 400


def test_template_fields_with_workspace_id_are_400(client):
    assert _connect(client, "ws_home", {"workspaceId": "ws_loose", "name": "x"}).status_code == 400


def test_unknown_workspace_id_in_the_body_is_400(client):
    assert _connect(client, "ws_home", {"workspaceId": "ws_globex"}).status_code == 400


def test_unknown_target_is_404(client):
    assert _connect(client, "ws_globex", {"workspaceId": "ws_loose"}).status_code == 404


# -- creating from a template -----------------------------------------------

def test_template_creates_a_published_workspace_in_the_group_with_its_access(client, emulator):
    params = [("properties[]", p) for p in ("name", "templateId", "accountId", "startDate")]
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff", "startDate": "2026-12-01"}, params)
    assert response.status_code == 201
    ws = response.json()["data"]["workspace"]
    assert ws["name"] == "Kickoff" and ws["templateId"] == "tpl_kickoff"
    assert ws["accountId"] == "acc_1" and ws["startDate"] == "2026-12-01"
    assert _access(client, ws["id"]) == _access(client, "ws_home")
    company = emulator.store.companies["acme"]
    created = company.workspace(ws["id"])
    assert created.published and created.group == "g1"
    assert [s.fields["name"] for s in created.sections] == ["Pricing"]
    assert created.tasks[0].fields["templatePlanTaskId"] == company.template("tpl_kickoff").tasks[0]["id"]
    assert company.credits == 4


def test_template_with_users_replaces_the_group_users(client):
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff", "name": "Kick 2", "workspaceUsers": [
        {"email": "jane@acme.com", "role": "owner"}, {"email": "new@customer.com", "role": "viewer"}]})
    assert response.status_code == 201
    expected = {"jane@acme.com": "owner", "new@customer.com": "viewer"}
    assert _access(client, "ws_home")[0] == expected
    assert _access(client, "ws_kickoff")[0] == expected
    assert _access(client, "ws_home")[1] == {"customer.com": "viewer"}


def test_template_access_without_owner_is_400_and_creates_nothing(client, emulator):
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff", "workspaceUsers": [
        {"email": "raj@customer.com", "role": "viewer"}], "workspaceDomains": []})
    assert response.status_code == 400
    assert len(emulator.store.companies["acme"].workspaces) == 7
    assert emulator.store.companies["acme"].credits == 5


def test_template_name_defaults_to_the_workspace_title(client):
    response = _connect(client, "ws_home", {"templateId": "tpl_deal", "crmOneDealId": "9811"},
                        [("properties[]", "name"), ("properties[]", "deal.name")])
    assert response.status_code == 201
    ws = response.json()["data"]["workspace"]
    assert ws["name"] == "Deal Room"
    assert ws["deal"]["name"] == "Renewal"


def test_template_requiring_a_deal_without_one_is_400(client):
    assert _connect(client, "ws_home", {"templateId": "tpl_deal"}).status_code == 400


def test_deal_of_another_crm_company_is_400(client):
    assert _connect(client, "ws_home", {"templateId": "tpl_deal", "crmOneDealId": "7777"}).status_code == 400
    assert _connect(client, "ws_home", {"templateId": "tpl_deal", "crmTwoOpportunityId": "opp-1"}).status_code == 400


def test_both_deal_ids_is_400(client):
    body = {"templateId": "tpl_deal", "crmOneDealId": "9811", "crmTwoOpportunityId": "opp-1"}
    assert _connect(client, "ws_home", body).status_code == 400


def test_unknown_template_is_400(client):
    assert _connect(client, "ws_home", {"templateId": "tpl_nope"}).status_code == 400


def test_bad_date_is_400(client):
    assert _connect(client, "ws_home", {"templateId": "tpl_kickoff", "startDate": "12/01/2026"}).status_code == 400


def test_no_credits_left_is_403(make_client, seed_doc, clock):
    seed_doc["companies"]["acme"]["credits"] = 0
    client = make_client(target=Emulator.from_seed(seed_doc, clock=clock))
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff"})
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"


def test_free_plan_is_capped_at_ten_workspaces_archived_included(make_client, seed_doc, clock):
    acme = seed_doc["companies"]["acme"]
    acme["plan"] = "free"
    acme["workspaces"].extend({"id": f"ws_old{i}", "name": f"Old {i}", "account": "acc_1", "archived": True,
                               "users": [{"email": "jane@acme.com", "role": "owner"}]} for i in range(2))
    client = make_client(target=Emulator.from_seed(seed_doc, clock=clock))
    assert _connect(client, "ws_home", {"templateId": "tpl_kickoff"}).status_code == 201   # the 10th
    assert _connect(client, "ws_home", {"templateId": "tpl_kickoff"}).status_code == 403   # an 11th


def test_unverified_company_is_403_forbidden(make_client, seed_doc, clock):
    seed_doc["companies"]["acme"]["verified"] = False
    client = make_client(target=Emulator.from_seed(seed_doc, clock=clock))
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff"})
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"
    assert _connect(client, "ws_home", {"workspaceId": "ws_draft"}).status_code == 403


def test_connect_uses_the_workspace_creation_rate_class(client):
    statuses = []
    for _ in range(31):
        response = _connect(client, "ws_home", {"workspaceId": "ws_kickoff"})
        statuses.append(response.status_code)
    assert response.headers["X-RateLimit-Limit"] == "30"
    assert statuses[:30] == [200] * 30 and statuses[30] == 429
    assert client.get("/workspaces").status_code == 200   # the default class is untouched


# -- POST /workspaces ----------------------------------------------------------

def test_create_workspace_makes_a_standalone_published_workspace(client, emulator):
    response = client.post("/workspaces", params=[("properties[]", "name"), ("properties[]", "workspaceUsers.role")],
                           json={"name": "Fresh", "accountId": "acc_1",
                                 "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]})
    assert response.status_code == 201
    ws = response.json()["data"]["workspace"]
    assert ws["name"] == "Fresh" and ws["workspaceUsers"][0]["role"] == "owner"
    created = emulator.store.companies["acme"].workspace(ws["id"])
    assert created.published and created.group is None
    assert emulator.store.companies["acme"].credits == 4


def test_create_workspace_needs_an_owner(client):
    response = client.post("/workspaces", json={"name": "Fresh", "accountId": "acc_1",
                                                 "workspaceUsers": [{"email": "a@acme.com", "role": "viewer"}]})
    assert response.status_code == 400


def test_template_with_domains_replaces_the_group_domains_and_keeps_its_users(client):
    users_before = _access(client, "ws_home")[0]
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff", "workspaceDomains": [
        {"domain": "partner.io", "role": "commenter"}]}, [("properties[]", "name")])
    assert response.status_code == 201
    new_id = response.json()["data"]["workspace"]["id"]
    for member in ("ws_home", "ws_kickoff", new_id):
        assert _access(client, member) == (users_before, {"partner.io": "commenter"})


def test_template_workspace_belongs_to_the_group_account_and_takes_its_opportunity(client):
    # ws_elsewhere's account acc_2 is second-CRM account sf-2, which owns opportunity opp-1.
    params = [("properties[]", p) for p in ("accountId", "deal.crmTwoOpportunityId")]
    response = _connect(client, "ws_elsewhere", {"templateId": "tpl_deal", "crmTwoOpportunityId": "opp-1"}, params)
    assert response.status_code == 201
    ws = response.json()["data"]["workspace"]
    assert ws["accountId"] == "acc_2"
    assert ws["deal"]["crmTwoOpportunityId"] == "opp-1"


def test_deal_of_the_group_accounts_first_crm_company_is_accepted(client):
    params = [("properties[]", "deal.crmOneDealId")]
    response = _connect(client, "ws_home", {"templateId": "tpl_kickoff", "crmOneDealId": "9811"}, params)
    assert response.status_code == 201
    assert response.json()["data"]["workspace"]["deal"]["crmOneDealId"] == "9811"


def test_each_workspace_from_a_template_uses_one_credit(client, emulator):
    for _ in range(5):
        assert _connect(client, "ws_home", {"templateId": "tpl_kickoff"}).status_code == 201
    assert emulator.store.companies["acme"].credits == 0
    assert _connect(client, "ws_home", {"templateId": "tpl_kickoff"}).status_code == 403
    assert emulator.store.companies["acme"].credits == 0


def test_connecting_an_existing_workspace_uses_no_credit(client, emulator):
    assert _connect(client, "ws_home", {"workspaceId": "ws_loose"}).status_code == 201
    assert emulator.store.companies["acme"].credits == 5


def test_unverified_company_may_connect_a_published_workspace(make_client, seed_doc, clock):
    seed_doc["companies"]["acme"]["verified"] = False
    client = make_client(target=Emulator.from_seed(seed_doc, clock=clock))
    assert _connect(client, "ws_home", {"workspaceId": "ws_loose"}).status_code == 201


def test_create_workspace_uses_the_workspace_creation_rate_class(client):
    body = {"name": "Fresh", "accountId": "acc_1", "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]}
    response = client.post("/workspaces", json=body)
    assert response.status_code == 201
    assert response.headers["X-RateLimit-Limit"] == "30"
    assert response.headers["X-RateLimit-Remaining"] == "29"
    assert client.get("/workspaces").headers["X-RateLimit-Remaining"] == "119"


def test_there_is_no_disconnect_endpoint(client):
    assert client.delete("/workspaces/ws_home/connected-workspaces").status_code == 405
    assert client.delete("/workspaces/ws_home/connected-workspaces/ws_kickoff").status_code == 404
    assert _connect(client, "ws_home", {"workspaceId": "ws_kickoff"}).status_code == 200  # still connected
