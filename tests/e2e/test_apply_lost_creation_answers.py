"""A creation whose answer was lost (the connection dropped, before or after
the service made the workspace): apply lists the workspaces and looks, in the
homepage's account, for one of the template and name that the state does not
know.  One is the workspace just created and is recorded; none means nothing
was made (the intent goes); several, or only ones bound to other addresses,
stop the apply with the commands that settle it, word for word.

The examples/onboarding company on the in-process emulator; the fault is
injected right before the kickoff's creation (``on_change``), so the two
connects before it go through untouched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.emulator.faults import Fault
from reconciler.errors import ApplyError
from reconciler.plan import Plan
from reconciler.plan.model import Change
from reconciler.state import load_state, write_state
from tests.e2e.conftest import ROOT, TOKEN, EmulatorRig, onboarding_rig

KICKOFF = "group.customer-inc.workspace.kickoff"
KICKOFF_NAME = "Customer Inc – Kickoff"
CREATION = "/workspaces/ws_home/connected-workspaces"
LOST_AFTER = (f"No answer from the service to POST {CREATION}: RemoteProtocolError: connection dropped on POST "
              f"/v1{CREATION} (after the change). Check the address and the network. The change may or may not "
              "have been made: look for what the call may have created before trying it again, so that nothing "
              "is created twice.")
LOST_BEFORE = LOST_AFTER.replace("(after the change)", "(before the change)")


def apply_with(rig: EmulatorRig, plan: Plan, before_kickoff: Callable[[], object]) -> None:
    """Apply ``plan``, calling ``before_kickoff`` right before the kickoff's creation is sent."""
    def on_change(change: Change | None) -> None:
        if change is not None and change.address == KICKOFF and change.kind == "create":
            before_kickoff()

    apply_plan(plan, client=rig.client(), state=load_state(rig.state_path), state_path=rig.state_path,
               on_change=on_change)


def create_in_web_app(rig: EmulatorRig, name: str = KICKOFF_NAME) -> str:
    """Someone creates a standalone workspace of the kickoff's account, template and name by hand."""
    with make_http_client("http://emulator.invalid", TOKEN, transport=emulator_transport(rig.emulator)) as web:
        answer = web.post("/workspaces", json={
            "name": name, "accountId": "acc_1", "templateId": "tpl_kickoff",
            "workspaceUsers": [{"email": "jane@acme.com", "role": "owner"}]})
        answer.raise_for_status()
        workspace_id: str = answer.json()["data"]["workspace"]["id"]
        return workspace_id


def kickoffs(rig: EmulatorRig) -> list[str]:
    return [w.id for w in rig.company.workspaces if w.name == KICKOFF_NAME]


def test_a_lost_creation_answer_with_two_unknown_namesakes_stops_and_names_both_for_an_import(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()

    def someone_creates_one_too() -> None:
        create_in_web_app(rig)
        rig.emulator.faults.inject("POST", f"{CREATION}$", kind="after_commit")

    with pytest.raises(ApplyError) as stopped:
        apply_with(rig, plan, someone_creates_one_too)
    by_hand, ours = kickoffs(rig)
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31): {LOST_AFTER} Several workspaces named "
        f"\"{KICKOFF_NAME}\" from template tpl_kickoff that the state does not know exist ({by_hand}, {ours}); "
        f"adopt the right one with 'reconciler import {KICKOFF} ID'.")
    # Neither is taken: the intent stays, for the next plan to settle.
    recorded = load_state(rig.state_path).resources[KICKOFF]
    assert recorded.id == "" and recorded.intent is not None


def test_a_lost_creation_answer_names_every_namesake_bound_elsewhere_with_its_address(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    rig.apply()
    first = "group.customer-inc.workspace.old-kickoff"
    second = "workspace.kickoff-copy"
    state = load_state(rig.state_path)
    first_id, second_id = state.resources[KICKOFF].id, create_in_web_app(rig)
    write_state(rig.state_path, state.with_resource(first, first_id).with_resource(second, second_id)
                .without(KICKOFF))
    plan = rig.plan()
    assert [(c.kind, c.address) for c in plan.changes][:1] == [("create", KICKOFF)]
    rig.emulator.faults.inject("POST", f"{CREATION}$", kind="drop")  # hung up before creating

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31): {LOST_BEFORE} No new workspace named "
        f"\"{KICKOFF_NAME}\" from template tpl_kickoff exists, so none was created and no credit was used (of that "
        f"name there is only {first_id}, bound to {first}, {second_id}, bound to {second} in the state). If that "
        f"is the workspace meant for {KICKOFF}, bind it there: 'reconciler state rm {first}' and 'reconciler "
        f"import {KICKOFF} {first_id}'. Run 'reconciler apply' again.")
    assert kickoffs(rig) == [first_id, second_id]


def test_a_lost_creation_answer_is_looked_for_in_the_homepages_account_not_the_first_listed(
        tmp_path: Path, clock: VirtualClock) -> None:
    root = tmp_path / "onboarding"
    shutil.copytree(ROOT / "examples" / "onboarding", root)
    seed = root / "seed.yaml"
    # Another account, whose workspace was created before the group's: listed first.
    seed.write_text(seed.read_text(encoding="utf-8").replace(
        "    accounts:\n",
        "    accounts:\n"
        "      - {id: acc_2, name: Other Corp, crmOneCompanyId: null, crmTwoAccountId: null}\n").replace(
        "    workspaces:\n",
        "    workspaces:\n"
        "      - {id: ws_other, name: Other Corp – Home, account: acc_2, published: true,\n"
        "         users: [{email: jane@acme.com, role: owner}]}\n"), encoding="utf-8")
    rig = EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)
    assert [(w.id, w.account_id) for w in rig.company.workspaces][:2] == [("ws_other", "acc_2"), ("ws_home", "acc_1")]
    plan = rig.plan()

    lost: list[Fault] = []
    apply_with(rig, plan, lambda: lost.append(rig.emulator.faults.inject("POST", f"{CREATION}$", kind="after_commit")))
    assert [fault.fired for fault in lost] == [1]
    (made,) = kickoffs(rig)
    assert load_state(rig.state_path).resources[KICKOFF].id == made


def test_a_lost_creation_answer_with_the_homepage_gone_from_the_listing_creates_nothing_and_says_so(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()

    def the_homepage_is_deleted_as_the_connection_drops() -> None:
        rig.emulator.faults.inject("POST", f"{CREATION}$", kind="drop")
        rig.company.workspaces.remove(rig.company.workspace("ws_home"))  # in the web app: the API has no delete

    with pytest.raises(ApplyError) as stopped:
        apply_with(rig, plan, the_homepage_is_deleted_as_the_connection_drops)
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31): {LOST_BEFORE} No workspace named "
        f"\"{KICKOFF_NAME}\" from template tpl_kickoff exists, so none was created and no credit was used. Run "
        "'reconciler apply' again.")
    assert kickoffs(rig) == []
    assert KICKOFF not in load_state(rig.state_path).resources


def test_a_lost_creation_answer_whose_workspace_is_found_says_so_in_the_progress(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    lines: list[str] = []

    def on_change(change: Change | None) -> None:
        if change is not None and change.address == KICKOFF and change.kind == "create":
            rig.emulator.faults.inject("POST", f"{CREATION}$", kind="after_commit")

    apply_plan(plan, client=rig.client(), state=load_state(rig.state_path), state_path=rig.state_path,
               progress=lines.append, on_change=on_change)
    (made,) = kickoffs(rig)
    assert lines[lines.index(f"{KICKOFF}: POST {CREATION}") + 1] == (
        f"{KICKOFF}: the answer was lost, but workspace {made} was created; recorded")
