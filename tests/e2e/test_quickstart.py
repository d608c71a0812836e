"""The quickstart end to end: plan, apply, plan again, on the emulator in-process."""

from __future__ import annotations

from pathlib import Path

from reconciler.apply import apply_plan
from reconciler.live import fetch_live
from reconciler.manifest import load_desired
from reconciler.plan import Action, make_plan
from reconciler.state import State, load_state
from tests.e2e.conftest import QUICKSTART


def _plan(client, state: State):
    desired = load_desired(QUICKSTART)
    live = fetch_live(client, [wid for _, wid, _ in desired.access_lists()], complete=True)
    return make_plan(desired, live, state)


def test_quickstart_plan_has_an_addition_a_role_change_and_a_removal(quickstart_client) -> None:
    plan = _plan(quickstart_client, State())
    actions = {(c.address, e.key): e.action for c in plan.changes for e in c.entries}
    assert actions[("group.acme-onboarding", "priya@customer.com")] is Action.CREATE
    assert actions[("group.acme-onboarding", "raj@customer.com")] is Action.UPDATE
    assert actions[("group.acme-onboarding", "old.contractor@agency.io")] is Action.DELETE
    assert actions[("workspace.partner-portal", "lee@partner.io")] is Action.CREATE
    assert ("workspace.partner-portal", "temp@acme.com") not in actions  # non-authoritative


def test_apply_then_plan_shows_no_changes(quickstart_client, tmp_path: Path) -> None:
    state_path = tmp_path / "state.json"
    plan = _plan(quickstart_client, State())
    result = apply_plan(plan, client=quickstart_client, state=State(), state_path=state_path)
    assert result.changed == 2
    again = _plan(quickstart_client, load_state(state_path))
    assert not again.has_changes


def test_apply_makes_exactly_the_planned_calls_plus_one_refresh(quickstart_client, quickstart_emulator, tmp_path: Path) -> None:
    plan = _plan(quickstart_client, State())
    before = quickstart_emulator.request_count()
    apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    assert quickstart_emulator.request_count() - before == plan.cost.total_calls


def test_group_members_see_the_applied_list(quickstart_client, tmp_path: Path) -> None:
    plan = _plan(quickstart_client, State())
    apply_plan(plan, client=quickstart_client, state=State(), state_path=tmp_path / "s.json")
    live = fetch_live(quickstart_client, ["ws_home", "ws_kickoff"])
    assert live.workspaces["ws_kickoff"].access_fingerprint() == live.workspaces["ws_home"].access_fingerprint()
    assert "old.contractor@agency.io" not in live.workspaces["ws_kickoff"].users


def test_state_records_the_managed_entries(quickstart_client, tmp_path: Path) -> None:
    state_path = tmp_path / "s.json"
    apply_plan(_plan(quickstart_client, State()), client=quickstart_client, state=State(), state_path=state_path)
    state = load_state(state_path)
    assert state.access_record("workspace.partner-portal").users == {"ops@acme.com": "owner", "lee@partner.io": "commenter"}
    assert state.serial == 1  # the file is written once, at the end; each change went to the journal
    assert not (tmp_path / "s.json.journal").exists()
