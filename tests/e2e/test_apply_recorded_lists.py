"""What apply records of each list it manages: the entries as applied, each
with the date (UTC, on the client's clock) it was first managed, kept across
later applies; for an address the manifest moves to another workspace,
the new workspace, managed from the day of the move; for a workspace no
manifest names (``unmanaged.<id>``), what the rules put there, and nothing once
they put nothing there; and what an access review revoked, by whom.

A two-workspace company on the in-process emulator; days pass on the shared
virtual clock.  The review tests run the small company of tests/review through
the real CLI.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.state import load_state
from tests.e2e.conftest import EmulatorRig, seed_company
from tests.review.conftest import Company, company_maker, start_q4

DAY = 86_400.0
CLIENT = """\
version: 1
workspaces:
  client:
    id: WORKSPACE
    access:
      users:
        - {email: jane@acme.com, role: owner}
        - {email: new@acme.com, role: viewer}
"""
LATE = "        - {email: late@acme.com, role: viewer}\n"
RULES = """\
version: 1
rules:
  baseline:
    match: MATCH
    ensure: {ENSURE}
"""


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock, write_seed: Any) -> EmulatorRig:
    seed = write_seed(seed_company([{"id": w, "name": w, "published": True,
                                     "users": [{"email": "jane@acme.com", "role": "owner"}]} for w in ("ws_a", "ws_b")]))
    root = tmp_path / "project"
    root.mkdir()
    return EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)


def manifest(rig: EmulatorRig, text: str) -> None:
    (rig.root / "manifest.yaml").write_text(text, encoding="utf-8")


def test_an_entry_keeps_the_day_it_was_first_managed_when_its_list_changes_later(
        rig: EmulatorRig, clock: VirtualClock) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rig.apply()
    clock.advance(3 * DAY)
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a") + LATE)

    rig.apply()
    access = load_state(rig.state_path).resources["workspace.client"].access
    assert access is not None
    assert access.since == {"user:jane@acme.com": "2027-01-15", "user:new@acme.com": "2027-01-15",
                            "user:late@acme.com": "2027-01-18"}


def test_an_address_moved_to_another_workspace_records_that_workspace_managed_since_the_move(
        rig: EmulatorRig, clock: VirtualClock) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rig.apply()
    clock.advance(3 * DAY)
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_b"))

    rig.apply()
    recorded = load_state(rig.state_path).resources["workspace.client"]
    assert recorded.id == "ws_b" and recorded.access is not None
    assert recorded.access.since == {"user:jane@acme.com": "2027-01-18", "user:new@acme.com": "2027-01-18"}


def rules(rig: EmulatorRig, match: str, ensure: str) -> None:
    (rig.root / "rules.yaml").write_text(RULES.replace("MATCH", match).replace("ENSURE", ensure), encoding="utf-8")


def test_a_workspace_in_no_manifest_is_forgotten_once_the_rules_put_nothing_on_it(rig: EmulatorRig) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rules(rig, "{all: true}", "users: [{email: security@acme.com, role: viewer}]")
    rig.apply()
    assert "unmanaged.ws_b" in load_state(rig.state_path).resources
    rules(rig, '{names: ["ws_a"]}', "users: [{email: security@acme.com, role: viewer}]")

    rig.apply()
    assert {u.key for u in rig.company.workspace("ws_b").access.users} == {"jane@acme.com"}
    assert "unmanaged.ws_b" not in load_state(rig.state_path).resources


def test_a_workspace_in_no_manifest_where_a_rule_puts_only_a_domain_records_that_domain(rig: EmulatorRig) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rules(rig, "{all: true}", "domains: [{domain: acme.com, role: viewer}]")

    rig.apply()
    recorded = load_state(rig.state_path).resources["unmanaged.ws_b"]
    assert recorded.id == "ws_b" and recorded.access is not None
    assert (recorded.access.users, recorded.access.domains) == ({}, {"acme.com": "viewer"})


@pytest.fixture
def make_company(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> Callable[..., Company]:
    return company_maker(tmp_path, capsys, monkeypatch)


def revoked_in_review(make_company: Callable[..., Company]) -> tuple[Company, set[str]]:
    """Campaign q4 started on the small company, jane's revoke of bob@ext.com on ws_a (workspace.alpha)
    applied; and the days (UTC) the apply ran on: the CLI's clock is the real one."""
    company = start_q4(make_company())
    company.decide("jane@acme.com", {0: ("revoke", "contractor left")})
    before = utc_today()
    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    return company, {before, utc_today()}


def utc_today() -> str:
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def test_an_applied_review_revocation_records_its_campaign_reviewer_day_and_state_serial(
        make_company: Callable[..., Company]) -> None:
    company, days = revoked_in_review(make_company)
    state = load_state(company.root / "reconciler.state.json")
    access = state.resources["workspace.alpha"].access
    assert access is not None and access.revoked is not None
    (applied,) = [v.applied for v in access.revoked.values()]
    assert applied in days
    assert {k: v.model_dump() for k, v in access.revoked.items()} == {
        "user:bob@ext.com": {"campaign": "q4", "reviewer": "jane@acme.com", "applied": applied, "serial": 1}}
    assert state.serial == 1


def test_a_list_moved_to_another_workspace_does_not_take_the_review_revocations_of_the_first_along(
        make_company: Callable[..., Company]) -> None:
    company, _ = revoked_in_review(make_company)
    manifest_file = company.root / "m.yaml"
    manifest_file.write_text(manifest_file.read_text(encoding="utf-8").replace("id: ws_a", "id: ws_b"),
                             encoding="utf-8")

    code, out, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, out + err
    recorded = load_state(company.root / "reconciler.state.json").resources["workspace.alpha"]
    assert recorded.id == "ws_b" and recorded.access is not None
    assert (recorded.access.users, recorded.access.revoked) == ({"jane@acme.com": "owner"}, None)
