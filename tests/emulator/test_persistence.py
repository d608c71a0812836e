from __future__ import annotations

import httpx
import pytest
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
    with pytest.raises(SeedError, match=r"seed.yaml: companies.acme: unknown key tokn"):
        Emulator.from_seed_file(bad)


def test_a_seeded_access_entry_with_a_role_the_service_does_not_have_is_refused_with_its_place(tmp_path):
    from reconciler.emulator import SeedError

    bad = tmp_path / "seed.yaml"
    bad.write_text("companies:\n  acme:\n    token: t\n    workspaces:\n      - id: ws_1\n        name: One\n"
                   "        users: [{email: a@b.co, role: admin}]\n", encoding="utf-8")
    with pytest.raises(SeedError, match=r"companies\.acme\.workspaces\[0\]\.users\[0\]\.role: 'admin' is not one of owner,"):
        Emulator.from_seed_file(bad)


# --- a data file that cannot be written: the envelope, and memory kept in step with the file ---

def _disk_full(monkeypatch):
    """Simulate a full disk under the emulator's data-file writer."""
    import errno

    from reconciler.emulator import core

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(core, "write_data_file", full)


USERS_PARAMS = {"properties[]": "workspaceUsers.user.email"}
NEW_LIST = {"workspaceUsers": [{"email": "jane@acme.com", "role": "owner"},
                               {"email": "priya@customer.com", "role": "viewer"}], "notifyPeople": True}


def test_a_failed_data_file_write_answers_the_error_envelope(tmp_path, clock, seed_path, monkeypatch):
    emulator = Emulator.from_file(tmp_path / "emulator.yaml", seed_path=seed_path, clock=clock)
    _disk_full(monkeypatch)
    with _client(emulator) as client:
        response = client.post("/workspaces/ws_home/access", json=NEW_LIST)
    assert response.status_code == 500
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "INTERNAL_SERVER_ERROR"
    assert "No space left on device" in error["message"] and "nothing was changed" in error["message"]
    assert response.headers["X-RateLimit-Limit"] == "120"


def test_a_failed_data_file_write_keeps_memory_as_the_file_says(tmp_path, clock, seed_path, monkeypatch):
    data = tmp_path / "emulator.yaml"
    emulator = Emulator.from_file(data, seed_path=seed_path, clock=clock)
    on_disk = data.read_text(encoding="utf-8")
    with _client(emulator) as client:
        before = client.get("/workspaces", params=USERS_PARAMS).json()
        _disk_full(monkeypatch)
        assert client.post("/workspaces/ws_home/access", json=NEW_LIST).status_code == 500
        assert client.get("/workspaces", params=USERS_PARAMS).json() == before
    assert data.read_text(encoding="utf-8") == on_disk
    assert emulator.notifications == []  # nobody is told about a change that did not happen


def test_a_retry_after_the_disk_recovers_applies_the_change_once(tmp_path, clock, seed_path, monkeypatch):
    data = tmp_path / "emulator.yaml"
    emulator = Emulator.from_file(data, seed_path=seed_path, clock=clock)
    with _client(emulator) as client:
        _disk_full(monkeypatch)
        assert client.post("/workspaces/ws_home/access", json=NEW_LIST).status_code == 500
        monkeypatch.undo()
        assert client.post("/workspaces/ws_home/access", json=NEW_LIST).status_code == 200
        live = client.get("/workspaces", params=USERS_PARAMS).json()
    emails = [u["user"]["email"] for u in live["data"]["workspaces"][0]["workspaceUsers"]]
    assert emails == ["jane@acme.com", "priya@customer.com"]
    assert [n.email for n in emulator.notifications] == ["priya@customer.com"]
    with _client(Emulator.from_file(data, clock=clock)) as client:
        assert client.get("/workspaces", params=USERS_PARAMS).json() == live


def test_a_creation_whose_write_failed_leaves_no_workspace_and_spends_no_credit(tmp_path, clock, seed_path,
                                                                                 monkeypatch):
    data = tmp_path / "emulator.yaml"
    emulator = Emulator.from_file(data, seed_path=seed_path, clock=clock)
    with _client(emulator) as client:
        _disk_full(monkeypatch)
        failed = client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
        assert failed.status_code == 500
        assert [w["id"] for w in client.get("/workspaces").json()["data"]["workspaces"]] == \
            ["ws_home", "ws_kickoff", "ws_portal"]
        assert emulator.store.companies["acme"].credits == 5
        monkeypatch.undo()
        created = client.post("/workspaces/ws_home/connected-workspaces", json={"templateId": "tpl_kickoff"})
        assert created.status_code == 201
        assert len(client.get("/workspaces").json()["data"]["workspaces"]) == 4
    assert emulator.store.companies["acme"].credits == 4
    assert Emulator.from_file(data, clock=clock).store.companies["acme"].credits == 4


def test_an_after_commit_fault_does_not_hang_up_when_nothing_was_committed(tmp_path, clock, seed_path,
                                                                           monkeypatch):
    emulator = Emulator.from_file(tmp_path / "emulator.yaml", seed_path=seed_path, clock=clock)
    emulator.faults.inject("POST", r"/access$", "after_commit")
    _disk_full(monkeypatch)
    with _client(emulator) as client:
        assert client.post("/workspaces/ws_home/access", json=NEW_LIST).status_code == 500


def test_a_data_file_that_cannot_be_created_is_a_config_error(tmp_path, seed_path):
    import pytest

    from reconciler.errors import ConfigError

    blocker = tmp_path / "plain-file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="Cannot write the emulator data file"):
        Emulator.from_file(blocker / "emulator.yaml", seed_path=seed_path)


# --- a malformed seed is a ReconcilerError (the CLI's exit 1), naming the place ---

def test_a_seed_error_is_a_reconciler_config_error(tmp_path):
    import pytest

    from reconciler.errors import ConfigError

    bad = tmp_path / "seed.yaml"
    bad.write_text("companies:\n  acme: {tokn: x}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"seed.yaml: companies.acme: unknown key tokn"):
        Emulator.from_seed_file(bad)


@pytest.mark.parametrize(("text", "place"), [
    ("companies:\n  acme: {token: t, credits: many}\n", "companies.acme.credits"),
    ("companies:\n  acme: {token: t}\nnextIds: {ws: x}\n", "nextIds.ws"),
    ("companies:\n  acme: {token: t, templates: [{id: t1, sections: [5]}]}\n", "companies.acme.templates[0].sections[0]"),
    ("companies:\n  acme: {token: t, customFields: [{name: a, options: 5}]}\n", "companies.acme.customFields[0].options"),
    ("companies:\n  acme: {token: t, accounts: [{name: a, customFields: [1]}]}\n",
     "companies.acme.accounts[0].customFields"),
    ("companies:\n  acme: {token: t, assets: [{type: link, name: a, views: x}]}\n", "companies.acme.assets[0].views"),
    ("companies:\n  acme: {token: t, files: [{fileName: a, mimeType: a/b, uploadToken: x, expiresAt: x}]}\n",
     "companies.acme.files[0].expiresAt"),
])
def test_a_seed_value_of_the_wrong_type_names_its_place(tmp_path, text, place):
    from reconciler.errors import ConfigError

    bad = tmp_path / "seed.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        Emulator.from_seed_file(bad)
    assert f"seed.yaml: {place}" in str(caught.value)


def test_a_seed_that_is_not_utf8_is_a_config_error(tmp_path):
    from reconciler.errors import ConfigError

    bad = tmp_path / "seed.yaml"
    bad.write_bytes(b"companies:\n  acme: {token: \xff}\n")
    with pytest.raises(ConfigError, match=r"seed.yaml: not UTF-8 text"):
        Emulator.from_seed_file(bad)


@pytest.mark.parametrize(("text", "complaint"), [
    ("companies: [\n", "not valid YAML"),
    ("companies: " + "[" * 2000 + "]" * 2000 + "\n", "not valid YAML"),
    ("companies:\n  acme: {token: t, credits: " + "9" * 5000 + "}\n", "not valid YAML"),
    ("- just\n- a list\n", "seed: expected a mapping"),
])
def test_a_seed_that_is_not_a_seed_document_is_a_config_error(tmp_path, text, complaint):
    from reconciler.errors import ConfigError

    bad = tmp_path / "seed.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=f"seed.yaml: {complaint}"):
        Emulator.from_seed_file(bad)


def test_a_data_file_that_is_a_directory_is_a_config_error(tmp_path):
    from reconciler.errors import ConfigError

    (tmp_path / "emulator.yaml").mkdir()
    with pytest.raises(ConfigError, match="emulator.yaml: cannot be read"):
        Emulator.from_file(tmp_path / "emulator.yaml")
