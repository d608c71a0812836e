from __future__ import annotations

import httpx
import yaml

from reconciler.emulator import Emulator, emulator_transport

BASE = "http://emulator.test/v1"



def _client(emulator):
    return httpx.Client(transport=emulator_transport(emulator), base_url=BASE,
                        headers={"Authorization": "Bearer token-acme"})


def test_data_file_is_created_from_the_seed(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    Emulator.from_file(data, seed_path=seed_path, clock=clock)
    doc = yaml.safe_load(data.read_text(encoding="utf-8"))
    assert set(doc["companies"]) == {"acme", "globex"}
    assert doc["companies"]["acme"]["workspaces"][0]["id"] == "ws_home"


def test_changes_survive_a_reload(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    with _client(Emulator.from_file(data, seed_path=seed_path, clock=clock)) as client:
        client.post("/workspaces/ws_home/access", json={"workspaceUsers": [
            {"email": "jane@acme.com", "role": "owner"}, {"email": "priya@customer.com", "role": "viewer"}]})
        before = client.get("/workspaces", params={"properties[]": "workspaceUsers.user.email"}).json()
    with _client(Emulator.from_file(data, clock=clock)) as client:
        after = client.get("/workspaces", params={"properties[]": "workspaceUsers.user.email"}).json()
    assert after == before
    emails = [u["user"]["email"] for u in after["data"]["workspaces"][1]["workspaceUsers"]]
    assert emails == ["jane@acme.com", "priya@customer.com"]  # the group list, on the other member too


def test_dump_then_load_gives_the_same_document(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    Emulator.from_file(data, seed_path=seed_path, clock=clock)
    first = data.read_text(encoding="utf-8")
    Emulator.from_file(data, clock=clock).save()
    assert data.read_text(encoding="utf-8") == first


def test_ids_are_never_reused_after_a_reload(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    params = {"properties[]": "workspaceUsers.user.email"}
    with _client(Emulator.from_file(data, seed_path=seed_path, clock=clock)) as client:
        client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [{"email": "a@acme.com", "role": "owner"}]})
        first = client.get("/workspaces", params=params).json()["data"]["workspaces"][2]["workspaceUsers"][0]["id"]
        client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [{"email": "ops@acme.com", "role": "owner"}]})
    with _client(Emulator.from_file(data, clock=clock)) as client:
        client.post("/workspaces/ws_portal/access", json={"workspaceUsers": [{"email": "b@acme.com", "role": "owner"}]})
        second = client.get("/workspaces", params=params).json()["data"]["workspaces"][2]["workspaceUsers"][0]["id"]
    assert second != first


def test_reads_do_not_rewrite_the_file(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    emulator = Emulator.from_file(data, seed_path=seed_path, clock=clock)
    stamp = data.stat().st_mtime_ns
    data.write_text(data.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    marker = data.read_text(encoding="utf-8")
    with _client(emulator) as client:
        client.get("/workspaces")
    assert data.read_text(encoding="utf-8") == marker and stamp is not None


def test_seed_generates_entry_ids_deterministically(make_emulator):
    one, two = make_emulator(), make_emulator()
    ids = lambda e: [x.id for x in e.store.companies["acme"].workspaces[0].access.users]  # noqa: E731
    assert ids(one) == ids(two) == ["wu_1", "wu_2"]


def test_demo_seed_has_a_single_company():
    assert Emulator.from_seed_file(None).company_tokens() == {"acme": "dev-token-acme"}


def test_files_assets_and_new_workspaces_survive_a_reload(tmp_path, clock, seed_path):
    data = tmp_path / "emulator.yaml"
    with _client(Emulator.from_file(data, seed_path=seed_path, clock=clock)) as client:
        created = client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
        file = client.post("/files", json={"fileName": "a.pdf", "mimeType": "application/pdf"}).json()["data"]
        client.put(file["upload"]["url"], content=b"pdf", headers={"Content-Type": "application/pdf"})
        asset = client.post("/assets", json={"type": "pdf", "name": "A", "fileId": file["file"]["id"],
                                             "tagIds": ["tag_123"]})
        client.patch("/workspace-plan-tasks/task_3", json={"completed": True})
    first = data.read_text(encoding="utf-8")
    reloaded = Emulator.from_file(data, clock=clock)
    company = reloaded.store.companies["acme"]
    new_ws = company.workspace(created.json()["data"]["workspace"]["id"])
    assert new_ws is not None and new_ws.group == "g1" and new_ws.access is company.workspace("ws_home").access
    assert company.asset(asset.json()["data"]["asset"]["id"]).tag_ids == ["tag_123"]
    assert company.file(file["file"]["id"]).upload_status == "ready"
    assert company.credits == 4
    reloaded.save()
    assert data.read_text(encoding="utf-8") == first


def test_malformed_seed_names_the_file_and_the_key(tmp_path):
    import pytest

    from reconciler.emulator import SeedError

    bad = tmp_path / "seed.yaml"
    bad.write_text("companies:\n  acme: {tokn: x}\n", encoding="utf-8")
    with pytest.raises(SeedError, match=r"seed.yaml: companies.acme: unknown key\(s\) tokn"):
        Emulator.from_seed_file(bad)
