"""A company sees only its own resources: another company's id behaves
exactly like an id that does not exist, on every endpoint family.

Globex (in two_companies.yaml) owns one resource of every kind; each test
asks as acme with globex's id and with an unknown id of the same shape, and
requires the same status and the same body (the id aside).
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.emulator.seed import dump_store

USERS = {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]}

# (globex's id or value, an unknown one of the same shape)
WS, WU, WD = ("ws_globex", "ws_nope"), ("wu_globex", "wu_nope"), ("wd_globex", "wd_nope")
TASK, SEC, PG = ("task_globex", "task_nope"), ("sec_globex", "sec_nope"), ("pg_globex", "pg_nope")
FILE, ASSET, TAG = ("file_globex", "file_nope"), ("asset_globex", "asset_nope"), ("tag_globex", "tag_nope")
CF, TPL, ACC = ("cf_globex", "cf_nope"), ("tpl_globex", "tpl_nope"), ("acc_g", "acc_nope")
DEAL = ("g-9811", "g-0000")  # globex's first-CRM deal, of the same CRM company (hs-1) as acme's acc_1

Case = tuple[str, str, Any, Any]  # method, path, json body, query; "{}" is replaced by the id

CASES: dict[str, tuple[tuple[str, str], Case]] = {
    "set access": (WS, ("POST", "/workspaces/{}/access", USERS, None)),
    "connect to": (WS, ("POST", "/workspaces/{}/connected-workspaces", {"workspaceId": "ws_portal"}, None)),
    "connect it": (WS, ("POST", "/workspaces/ws_portal/connected-workspaces", {"workspaceId": "{}"}, None)),
    "embed address": (WS, ("POST", "/workspaces/{}/authenticated-embed-url", {"email": "hank@globex.com"}, None)),
    "open embed": (WS, ("GET", "http://emulator.test/embed/{}", None, {"token": "x"})),
    "patch user entry": (WU, ("PATCH", "/workspace-users/{}", {"role": "viewer"}, None)),
    "patch domain entry": (WD, ("PATCH", "/workspace-domains/{}", {"role": "editor"}, None)),
    "domains of a workspace": (WS, ("GET", "/workspace-domains", None, {"filter[workspaceId]": "{}"})),
    "patch task": (TASK, ("PATCH", "/workspace-plan-tasks/{}", {"completed": True}, None)),
    "patch section": (SEC, ("PATCH", "/workspace-sections/{}", {"isHidden": True}, None)),
    "patch page": (PG, ("PATCH", "/workspace-pages/{}", {"isHidden": True}, None)),
    "get file": (FILE, ("GET", "/files/{}", None, None)),
    "asset from file": (FILE, ("POST", "/assets", {"type": "pdf", "fileId": "{}"}, None)),
    "patch asset": (ASSET, ("PATCH", "/assets/{}", {"name": "Mine now"}, None)),
    "asset with tag": (TAG, ("POST", "/assets", {"type": "link", "name": "L", "url": "https://x.com",
                                                  "tagIds": ["{}"]}, None)),
    "get custom field": (CF, ("GET", "/custom-fields/{}", None, None)),
    "create from template": (TPL, ("POST", "/workspaces/ws_home/connected-workspaces", {"templateId": "{}"}, None)),
    "create with template": (TPL, ("POST", "/workspaces", {"name": "N", "accountId": "acc_1", "templateId": "{}",
                                                           **USERS}, None)),
    "create in account": (ACC, ("POST", "/workspaces", {"name": "N", "accountId": "{}", **USERS}, None)),
    "workspaces of account": (ACC, ("GET", "/workspaces", None, {"filter[accountId]": "{}"})),
    "create with deal": (DEAL, ("POST", "/workspaces/ws_home/connected-workspaces",
                                {"templateId": "tpl_kickoff", "crmOneDealId": "{}"}, None)),
    "accounts by name": (("Globex Customer", "Nobody Customer"), ("GET", "/accounts", None, {"filter[name]": "{}"})),
    "users by email": (("hank@globex.com", "nobody@globex.com"), ("GET", "/users", None, {"filter[email]": "{}"})),
    "domains by name": (("globex.com", "nobody.com"), ("GET", "/workspace-domains", None, {"filter[domain]": "{}"})),
}


def _fill(value: Any, ident: str) -> Any:
    if isinstance(value, str):
        return value.replace("{}", ident)
    if isinstance(value, list):
        return [_fill(v, ident) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ident) for k, v in value.items()}
    return value


def _send(client, case: Case, ident: str):
    method, path, body, query = case
    return client.request(method, _fill(path, ident), json=_fill(body, ident), params=_fill(query, ident))


@pytest.mark.parametrize("name", sorted(CASES))
def test_another_companys_id_answers_as_an_unknown_one(client, emulator, name):
    (theirs, unknown), case = CASES[name]
    before = dump_store(emulator.store)
    with_theirs, with_unknown = _send(client, case, theirs), _send(client, case, unknown)
    assert with_theirs.status_code == with_unknown.status_code, with_theirs.text
    assert with_theirs.text.replace(theirs, unknown) == with_unknown.text
    assert dump_store(emulator.store) == before, "a refused or read-only request changed something"


def test_every_case_is_refused_or_empty(client):
    """The comparison above is only worth something if globex's id is really refused."""
    for name, ((theirs, _), case) in CASES.items():
        response = _send(client, case, theirs)
        if response.status_code == 200:
            data = response.json()["data"]
            assert all(v == [] for k, v in data.items() if k != "pageInfo"), name
        else:
            assert response.status_code in (400, 403, 404), name


def test_lists_never_show_another_companys_resources(client):
    seen = "".join(client.get(path).text for path in ("/workspaces", "/workspace-domains", "/users", "/accounts",
                                                      "/custom-fields"))
    for ident in ("ws_globex", "wd_globex", "globex.com", "hank@globex.com", "acc_g", "cf_globex"):
        assert ident not in seen


def test_list_shows_only_the_companys_own_workspaces(client, make_client):
    acme = [w["id"] for w in client.get("/workspaces").json()["data"]["workspaces"]]
    globex = [w["id"] for w in make_client("token-globex").get("/workspaces").json()["data"]["workspaces"]]
    assert acme == ["ws_home", "ws_kickoff", "ws_portal"]
    assert globex == ["ws_globex"]


def test_another_companys_workspace_is_404(client):
    response = client.post("/workspaces/ws_globex/access", json=USERS)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_another_companys_access_entry_is_404(client, make_client):
    globex_entry = make_client("token-globex").get(
        "/workspaces", params=[("properties[]", "workspaceUsers.role")]).json()["data"]["workspaces"][0]
    entry_id = globex_entry["workspaceUsers"][0]["id"]
    assert client.patch(f"/workspace-users/{entry_id}", json={"role": "viewer"}).status_code == 404


def test_a_tag_title_another_company_uses_is_free(client):
    response = client.post("/tags", json={"title": "globex-only"})
    assert response.status_code == 201


def test_another_companys_embed_address_does_not_open_for_the_wrong_workspace(client, make_client):
    url = make_client("token-globex").post("/workspaces/ws_globex/authenticated-embed-url",
                                           json={"email": "hank@globex.com"}).json()["data"]["url"]
    assert client.get(url).status_code == 200  # the address is its own credential, whoever opens it
    assert client.get(url.replace("/embed/ws_globex", "/embed/ws_home")).status_code == 403
