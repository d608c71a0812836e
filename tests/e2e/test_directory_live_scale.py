"""Issue 42's done-when: a user deactivated through SCIM (``directory serve``'s application over HTTP on
127.0.0.1, as an identity provider sends it) has no access anywhere in a company of 1,000 workspaces after
``plan --directory live`` + apply, in ceil(N/100) listing calls + one write per list, and that plan grants
nothing (a new member of the group waits for a reviewed ``directory sync``)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import directory_for, plan_with_client
from reconciler.directory.server import directory_app
from reconciler.directory.server import background_server
from reconciler.directory.store import open_directory_store
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.state import load_state
from tests.e2e.conftest import client_for

N = 1000

MANIFEST = """\
version: 1
teams:
  eng: {directoryGroup: Engineering}
rules:
  baseline:
    match: {all: true}
    ensure:
      teams: [{team: eng, role: viewer}]
"""
DIRECTORY = "directory:\n  groups:\n    Engineering: [bo@acme.com]\n"


def _seed() -> dict[str, Any]:
    workspaces = [{"id": f"ws_{i:04d}", "name": f"Customer {i}", "account": "acc_1", "published": True,
                   "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": "ana@acme.com", "role": "editor"},
                             {"email": "bo@acme.com", "role": "viewer"}]} for i in range(N)]
    return {"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 0,
        "accounts": [{"id": "acc_1", "name": "One", "crmOneCompanyId": None, "crmTwoAccountId": None}],
        "templates": [], "workspaces": workspaces}}}


def _provision_then_switch_ana_off_and_add_dee(state_path: Path) -> None:
    """What the identity provider sends over SCIM: four people and Engineering; then Ana is switched off
    (PATCH active: false) and Dee joins Engineering (PATCH members add)."""
    import httpx

    token = "scim-test-token"
    with open_directory_store(str(state_path), now=lambda: datetime(2026, 12, 1, 9, tzinfo=UTC)) as store:
        url, stop = background_server(directory_app(store, token))
        try:
            with httpx.Client(base_url=f"{url}/scim/v2", headers={"Authorization": f"Bearer {token}"}) as idp:
                ids = {email: idp.post("/Users", json={
                    "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": email,
                }).raise_for_status().json()["id"] for email in ("ana@acme.com", "bo@acme.com", "dee@acme.com",
                                                                  "jane@acme.com")}
                group = idp.post("/Groups", json={"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                                                  "displayName": "Engineering",
                                                  "members": [{"value": ids["bo@acme.com"]}]}).raise_for_status()
                patch = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
                idp.patch(f"/Users/{ids['ana@acme.com']}", json={"schemas": [patch], "Operations": [
                    {"op": "replace", "value": {"active": False}}]}).raise_for_status()
                idp.patch(f"/Groups/{group.json()['id']}", json={"schemas": [patch], "Operations": [
                    {"op": "add", "path": "members", "value": [{"value": ids["dee@acme.com"]}]}]}).raise_for_status()
        finally:
            stop()


def test_a_user_deactivated_through_scim_has_no_access_anywhere_after_a_live_plan_and_apply(tmp_path: Path) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed(_seed(), clock=clock)
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "directory.yaml").write_text(DIRECTORY, encoding="utf-8")
    state_path = tmp_path / "reconciler.state.json"
    _provision_then_switch_ana_off_and_add_dee(state_path)
    desired, read = directory_for(load_desired(tmp_path), "live", state_path, tmp_path)
    client = client_for(emulator, clock)
    plan = plan_with_client(client, desired, load_state(state_path)).model_copy(update={"directory": read})
    planned = Counter((r.method, r.path) for r in emulator.requests)
    assert planned == {("GET", "/v1/workspaces"): math.ceil(N / 100)}
    entries = [e for c in plan.access_changes for e in c.entries]
    assert {(e.key, e.action, e.why) for e in entries} == {
        ("ana@acme.com", "delete", "deactivated in the directory on 2026-12-01")}
    assert len(entries) == N
    assert read is not None and read.waiting == 1  # Dee waits for directory sync

    emulator.requests.clear()
    apply_plan(plan, client=client, state=load_state(state_path), state_path=state_path)
    writes = Counter((r.method, r.path.rsplit("/", 2)[-1]) for r in emulator.requests if r.method != "GET")
    assert writes == {("POST", "access"): N}  # one write of each list
    # Apply re-reads the listing before writing and again after, to prove the result (no per-list read).
    reads = Counter((r.method, r.path) for r in emulator.requests if r.method == "GET")
    assert reads == {("GET", "/v1/workspaces"): 2 * math.ceil(N / 100)}
    lists = {r.path for r in emulator.requests if r.method == "POST"}
    assert len(lists) == N
    company = emulator.store.companies["acme"]
    assert [ws.id for ws in company.workspaces if any(e.key == "ana@acme.com" for e in ws.access.users)] == []
    assert all({e.key for e in ws.access.users} == {"jane@acme.com", "bo@acme.com"} for ws in company.workspaces)
