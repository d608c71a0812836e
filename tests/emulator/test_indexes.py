"""Behaviour the emulator's look-up indexes (``reconciler/emulator/index.py``)
could break if they fell out of step with the store: listing order and
paging, entries found by id after their list changed, workspaces and plan
items found after the company grew or shrank, and a write undone after a
failed save. Each test first makes a look-up (so an index exists), then
changes the store, then checks the answers are the ones a scan would give.
"""

from __future__ import annotations

import errno

import httpx
import pytest
import yaml

from reconciler.emulator import Emulator, core, emulator_transport
from reconciler.emulator.entities import AccessList, Workspace

BASE = "http://emulator.test/v1"
ACCESS_PROPS = [("properties[]", p) for p in ("workspaceUsers.role", "workspaceUsers.user.email",
                                               "workspaceDomains.domain", "workspaceDomains.role")]
JANE_OWNER = {"email": "jane@acme.com", "role": "owner"}


def _listing(client: httpx.Client, **params: str) -> list[dict]:
    query = [*ACCESS_PROPS, ("limit", "1000"), *params.items()]
    return client.get("/workspaces", params=query).json()["data"]["workspaces"]


def _workspace(client: httpx.Client, workspace_id: str) -> dict:
    return next(ws for ws in _listing(client) if ws["id"] == workspace_id)


def _user_ids(client: httpx.Client, workspace_id: str) -> dict[str, str]:
    return {u["user"]["email"]: u["id"] for u in _workspace(client, workspace_id)["workspaceUsers"]}


def _domain_ids(client: httpx.Client, workspace_id: str) -> dict[str, str]:
    return {d["domain"]: d["id"] for d in _workspace(client, workspace_id)["workspaceDomains"]}


def _stamps(emulator: Emulator) -> dict[str, str]:
    """Each workspace's ``updatedAt`` (not a property of the listing)."""
    return {ws.id: ws.updated_at for ws in emulator.store.companies["acme"].workspaces}


def _patch_user(client: httpx.Client, entry_id: str, role: str) -> httpx.Response:
    return client.patch(f"/workspace-users/{entry_id}", json={"role": role},
                        params=[("properties[]", "role"), ("properties[]", "user.email")])


def _create(client: httpx.Client, name: str) -> str:
    created = client.post("/workspaces", json={"name": name, "accountId": "acc_1", "workspaceUsers": [JANE_OWNER]})
    assert created.status_code == 201
    return created.json()["data"]["workspace"]["id"]


def _disk_full(monkeypatch: pytest.MonkeyPatch, written: list[str]) -> None:
    """Every write of the data file fails; ``written`` gets the text it would have held."""
    def full(path, text):
        written.append(text)
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(core, "write_data_file", full)


def test_listing_order_and_paging_are_unchanged_by_creations_and_connects(client):
    _listing(client)
    fresh = _create(client, "Fresh")
    assert client.post("/workspaces/ws_home/connected-workspaces", json={"workspaceId": "ws_portal"}).status_code == 201
    from_template = client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
    assert from_template.status_code == 201
    expected = ["ws_home", "ws_kickoff", "ws_portal", fresh, from_template.json()["data"]["workspace"]["id"]]
    assert [ws["id"] for ws in _listing(client)] == expected
    pages = [client.get("/workspaces", params={"limit": "2", "page": str(p)}).json()["data"] for p in (1, 2, 3, 4)]
    assert [ws["id"] for page in pages for ws in page["workspaces"]] == expected
    assert pages[2]["pageInfo"] == {"page": 3, "pages": 3, "total": 5, "pageTotal": 1, "hasNextPage": False,
                                    "hasPrevPage": True}
    assert pages[3]["workspaces"] == [] and pages[3]["pageInfo"]["pageTotal"] == 0
    assert [ws["id"] for ws in _listing(client, **{"filter[accountId]": "acc_1"})] == expected
    assert [ws["id"] for ws in _listing(client, **{"filter[name]": "Fresh"})] == [fresh]


def test_a_workspace_deleted_from_the_store_leaves_the_listing_and_every_lookup(client, emulator):
    portal_owner = _user_ids(client, "ws_portal")["ops@acme.com"]
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}]}).status_code == 200
    company = emulator.store.companies["acme"]
    company.workspaces.remove(company.workspace("ws_portal"))
    listed = client.get("/workspaces").json()["data"]
    assert [ws["id"] for ws in listed["workspaces"]] == ["ws_home", "ws_kickoff"]
    assert listed["pageInfo"]["total"] == 2
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 404
    assert _patch_user(client, portal_owner, "owner").status_code == 404
    assert client.post("/workspaces/ws_kickoff/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 200


def test_a_workspace_deleted_and_another_appended_in_its_place_are_told_apart(client, emulator):
    portal_owner = _user_ids(client, "ws_portal")["ops@acme.com"]
    assert _patch_user(client, portal_owner, "owner").status_code == 200
    company = emulator.store.companies["acme"]
    company.workspaces.remove(company.workspace("ws_portal"))  # the list is as long as before
    company.workspaces.append(Workspace("ws_other", "Other", "acc_1", True, False, AccessList()))
    assert [ws["id"] for ws in _listing(client)] == ["ws_home", "ws_kickoff", "ws_other"]
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 404
    assert _patch_user(client, portal_owner, "owner").status_code == 404
    assert client.post("/workspaces/ws_other/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 200
    assert list(_user_ids(client, "ws_other")) == ["jane@acme.com"]


def test_patch_after_a_replace_finds_the_new_entry_and_404s_the_removed_one(client):
    before = _user_ids(client, "ws_portal")
    assert _patch_user(client, before["temp@acme.com"], "viewer").status_code == 200
    replaced = client.post("/workspaces/ws_portal/access", params=ACCESS_PROPS, json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}, {"email": "new@acme.com", "role": "commenter"}]})
    assert replaced.status_code == 200
    new_id = next(u["id"] for u in replaced.json()["data"]["workspace"]["workspaceUsers"]
                  if u["user"]["email"] == "new@acme.com")
    patched = _patch_user(client, new_id, "editor")
    assert patched.status_code == 200
    assert patched.json()["data"]["workspaceUser"] == {"id": new_id, "object": "workspace-user", "role": "editor",
                                                       "user": patched.json()["data"]["workspaceUser"]["user"]}
    assert patched.json()["data"]["workspaceUser"]["user"]["email"] == "new@acme.com"
    gone = _patch_user(client, before["temp@acme.com"], "viewer")
    assert gone.status_code == 404
    assert gone.json()["error"]["message"] == f"Workspace user {before['temp@acme.com']} not found."
    assert _patch_user(client, before["ops@acme.com"], "owner").status_code == 200


def test_an_entry_whose_role_a_replace_changed_is_patched_under_its_old_id(client):
    temp = _user_ids(client, "ws_portal")["temp@acme.com"]
    assert _patch_user(client, temp, "viewer").status_code == 200
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}, {"email": "temp@acme.com", "role": "commenter"}]}).status_code == 200
    assert _patch_user(client, temp, "editor").json()["data"]["workspaceUser"]["role"] == "editor"
    roles = {u["user"]["email"]: (u["id"], u["role"]) for u in _workspace(client, "ws_portal")["workspaceUsers"]}
    assert roles["temp@acme.com"] == (temp, "editor")


def test_domain_patch_after_a_replace_finds_the_new_entry_and_404s_the_removed_one(client):
    old = _domain_ids(client, "ws_home")["customer.com"]
    assert client.patch(f"/workspace-domains/{old}", json={"role": "commenter"}).status_code == 200
    assert client.post("/workspaces/ws_home/access", json={"workspaceDomains": [
        {"domain": "partner.com", "role": "viewer"}]}).status_code == 200
    new = _domain_ids(client, "ws_home")["partner.com"]
    patched = client.patch(f"/workspace-domains/{new}", json={"role": "editor"}, params={"properties[]": "domain"})
    assert patched.status_code == 200 and patched.json()["data"]["workspaceDomain"]["domain"] == "partner.com"
    gone = client.patch(f"/workspace-domains/{old}", json={"role": "viewer"})
    assert gone.status_code == 404
    assert gone.json()["error"]["message"] == f"Workspace domain {old} not found."


def test_after_a_connect_the_joiners_own_entries_are_gone_and_a_group_patch_touches_it(client, emulator, clock):
    portal_owner = _user_ids(client, "ws_portal")["ops@acme.com"]
    raj = _user_ids(client, "ws_home")["raj@customer.com"]
    assert _patch_user(client, portal_owner, "owner").status_code == 200
    assert client.post("/workspaces/ws_home/connected-workspaces", json={"workspaceId": "ws_portal"}).status_code == 201
    assert _patch_user(client, portal_owner, "owner").status_code == 404
    connected = _stamps(emulator)
    clock.advance(3600)
    assert _patch_user(client, raj, "commenter").status_code == 200
    stamps = _stamps(emulator)
    assert stamps["ws_home"] == stamps["ws_kickoff"] == stamps["ws_portal"] != connected["ws_portal"]


def test_a_workspace_appended_to_the_store_shares_its_lists_changes(client, emulator, clock):
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}]}).status_code == 200
    company = emulator.store.companies["acme"]
    portal = company.workspace("ws_portal")
    company.workspaces.append(Workspace("ws_twin", "Twin", "acc_1", True, False, portal.access))
    clock.advance(3600)
    assert client.post("/workspaces/ws_twin/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 200
    assert list(_user_ids(client, "ws_portal")) == ["jane@acme.com"]
    stamps = _stamps(emulator)
    assert stamps["ws_portal"] == stamps["ws_twin"] != stamps["ws_home"]


def test_a_plan_item_of_a_workspace_created_after_a_lookup_is_found(client, emulator):
    assert client.patch("/workspace-sections/sec_41", json={"isHidden": True}).status_code == 200
    created = client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
    ws = emulator.store.companies["acme"].workspace(created.json()["data"]["workspace"]["id"])
    section = client.patch(f"/workspace-sections/{ws.sections[0].id}", json={"isHidden": True},
                           params={"properties[]": "isHidden"})
    assert section.status_code == 200 and section.json()["data"]["workspaceSection"]["isHidden"] is True
    task = client.patch(f"/workspace-plan-tasks/{ws.tasks[0].id}", json={"completed": True})
    assert task.status_code == 200
    missing = client.patch("/workspace-sections/sec_nope", json={"isHidden": True})
    assert missing.status_code == 404 and missing.json()["error"]["message"] == "Workspace section sec_nope not found."


def test_a_workspace_created_after_a_lookup_is_found_by_id(client):
    assert client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [
        {"email": "ops@acme.com", "role": "owner"}]}).status_code == 200
    fresh = _create(client, "Fresh")
    assert client.post(f"/workspaces/{fresh}/access", json={"workspaceUsers": [
        JANE_OWNER, {"email": "new@acme.com", "role": "viewer"}]}).status_code == 200
    assert client.post("/workspaces/ws_nope/access", json={"workspaceUsers": [JANE_OWNER]}).status_code == 404


def test_repeated_entry_ids_in_a_seed_resolve_to_the_first_in_workspace_order(clock):
    def users(email: str) -> list[dict]:
        return [{"id": "wu_dup", "email": email, "role": "owner"}, {"email": f"second.{email}", "role": "owner"}]
    emulator = Emulator.from_seed({"companies": {"acme": {"token": "t", "workspaces": [
        {"id": "ws_a", "name": "A", "users": users("a@x.com")},
        {"id": "ws_b", "name": "B", "users": users("b@x.com")}]}}}, clock=clock)
    with httpx.Client(transport=emulator_transport(emulator), base_url=BASE,
                      headers={"Authorization": "Bearer t"}) as client:
        assert _patch_user(client, "wu_dup", "viewer").json()["data"]["workspaceUser"]["user"]["email"] == "a@x.com"
        assert client.post("/workspaces/ws_a/access", json={"workspaceUsers": [
            {"email": "second.a@x.com", "role": "owner"}]}).status_code == 200
        assert _patch_user(client, "wu_dup", "viewer").json()["data"]["workspaceUser"]["user"]["email"] == "b@x.com"


def test_a_replace_undone_by_a_failed_write_leaves_lookups_as_if_it_never_happened(tmp_path, clock, seed_path,
                                                                                      monkeypatch):
    emulator = Emulator.from_file(tmp_path / "emulator.yaml", seed_path=seed_path, clock=clock)
    with httpx.Client(transport=emulator_transport(emulator), base_url=BASE,
                      headers={"Authorization": "Bearer token-acme"}) as client:
        temp = _user_ids(client, "ws_portal")["temp@acme.com"]
        before = _listing(client)
        written: list[str] = []
        _disk_full(monkeypatch, written)
        body = {"workspaceUsers": [{"email": "ops@acme.com", "role": "owner"}, {"email": "new@acme.com", "role": "viewer"}]}
        assert client.post("/workspaces/ws_portal/access", json=body).status_code == 500
        portal = yaml.safe_load(written[0])["companies"]["acme"]["workspaces"][2]
        undone = next(u["id"] for u in portal["users"] if u["email"] == "new@acme.com")
        assert _listing(client) == before
        assert _patch_user(client, undone, "editor").status_code == 404
        monkeypatch.undo()
        assert _patch_user(client, temp, "viewer").status_code == 200
        assert client.post("/workspaces/ws_portal/access", json=body).status_code == 200
        new = _user_ids(client, "ws_portal")["new@acme.com"]
        assert _patch_user(client, new, "editor").status_code == 200
        assert _patch_user(client, temp, "viewer").status_code == 404


def test_a_connect_undone_by_a_failed_write_leaves_the_workspace_on_its_own_list(tmp_path, clock, seed_path,
                                                                                  monkeypatch):
    emulator = Emulator.from_file(tmp_path / "emulator.yaml", seed_path=seed_path, clock=clock)
    with httpx.Client(transport=emulator_transport(emulator), base_url=BASE,
                      headers={"Authorization": "Bearer token-acme"}) as client:
        portal_owner = _user_ids(client, "ws_portal")["ops@acme.com"]
        assert _patch_user(client, portal_owner, "owner").status_code == 200
        _disk_full(monkeypatch, [])
        connect = client.post("/workspaces/ws_home/connected-workspaces", json={"workspaceId": "ws_portal"})
        assert connect.status_code == 500
        monkeypatch.undo()
        before = _stamps(emulator)
        clock.advance(3600)
        temp = _user_ids(client, "ws_portal")["temp@acme.com"]
        patched = _patch_user(client, temp, "viewer")
        assert patched.status_code == 200 and patched.json()["data"]["workspaceUser"]["user"]["email"] == "temp@acme.com"
        after = _stamps(emulator)
        assert [wid for wid in after if after[wid] != before[wid]] == ["ws_portal"]
        assert _patch_user(client, portal_owner, "owner").status_code == 200
