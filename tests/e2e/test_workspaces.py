"""Groups, template workspaces, sections, pages and tasks, planned and
applied against the emulator (in-process, sharing a virtual clock).

The onboarding example is the fixture: a group whose homepage and one
member exist and are connected, an existing workspace to adopt, two template
members (one needing a deal), hidden sections/pages and a completed task,
and a standalone workspace.
"""

from __future__ import annotations

import json

from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.errors import ApplyError, PlanError
from reconciler.plan import Plan
from reconciler.plan.model import AccessChange, ConnectChange, CreateChange, SettingChange
from reconciler.state import journal_path, load_state, write_state
from tests.e2e.conftest import EmulatorRig, onboarding_rig

CONNECT_PATH = "/v1/workspaces/ws_home/connected-workspaces"


class Rig(EmulatorRig):
    """The onboarding example copied to a temp dir, its emulator and state."""

    def workspace(self, workspace_id: str) -> Any:
        return self.company.workspace(workspace_id)

    def item(self, workspace_id: str, kind: str, item_id: str) -> dict[str, Any]:
        items = getattr(self.workspace(workspace_id), kind)
        return next(i.fields for i in items if i.id == item_id)

    def named(self, name: str) -> list[Any]:
        return [w for w in self.company.workspaces if w.name == name]

    def edit(self, file: str, old: str, new: str) -> None:
        path = self.root / file
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new), encoding="utf-8")

    def requests(self, method: str, path: str) -> list[Any]:
        return [r for r in self.emulator.requests if r.method == method and r.path == path]


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock) -> Rig:
    return onboarding_rig(tmp_path, clock, Rig)


def by_address(plan: Plan) -> dict[str, Any]:
    """Each change by its address; a creation's, not the list it gives (governs "create", same address)."""
    return {c.address: c for c in plan.changes if not (isinstance(c, AccessChange) and c.governs == "create")}


KICKOFF = "group.customer-inc.workspace.kickoff"
RENEWAL = "group.customer-inc.workspace.renewal"
WELCOME = "group.customer-inc.workspace.welcome"
QBR = "group.customer-inc.workspace.quarterly-review"


def test_the_example_applies_and_then_plans_no_changes(rig: Rig) -> None:
    rig.apply()
    again = rig.plan()
    assert not again.has_changes
    assert again.warnings == ()


def test_an_existing_workspace_is_connected_into_the_group(rig: Rig) -> None:
    assert rig.workspace("ws_qbr").group is None
    rig.apply()
    assert rig.workspace("ws_qbr").group == rig.workspace("ws_home").group
    assert load_state(rig.state_path).resources[QBR].connected_to == "ws_home"


def test_a_member_already_in_the_group_answers_200_and_counts_as_connected(rig: Rig) -> None:
    rig.apply()
    welcome_connects = [r for r in rig.requests("POST", CONNECT_PATH) if r.status == 200]
    assert len(welcome_connects) == 1
    assert load_state(rig.state_path).resources[WELCOME].connected_to == "ws_home"


def test_a_recorded_membership_is_not_connected_again(rig: Rig) -> None:
    rig.apply()
    before = len(rig.requests("POST", CONNECT_PATH))
    rig.apply()
    assert len(rig.requests("POST", CONNECT_PATH)) == before


def test_a_template_member_is_created_once_and_its_id_recorded(rig: Rig) -> None:
    rig.apply()
    (kickoff,) = rig.named("Customer Inc – Kickoff")
    assert kickoff.template_id == "tpl_kickoff"
    assert (kickoff.start_date, kickoff.target_end_date) == ("2026-12-01", "2027-01-31")
    assert kickoff.group == rig.workspace("ws_home").group
    recorded = load_state(rig.state_path).resources[KICKOFF]
    assert (recorded.id, recorded.template, recorded.connected_to) == (kickoff.id, "tpl_kickoff", "ws_home")


def test_a_template_that_needs_a_deal_gets_it(rig: Rig) -> None:
    rig.apply()
    (renewal,) = rig.named("Customer Inc – Renewal 2027")
    deal = rig.company.deal(renewal.deal_id)
    assert deal.crm_one_deal_id == "9811"


def test_credits_spent_equal_the_creations_the_plan_states(rig: Rig) -> None:
    plan = rig.plan()
    assert plan.cost.workspace_credits == 2
    assert plan.summary.workspaces_created == 2
    before = rig.company.credits
    rig.apply(plan)
    rig.apply()
    assert rig.company.credits == before - 2


def test_sections_pages_and_tasks_are_patched(rig: Rig) -> None:
    rig.apply()
    assert rig.item("ws_qbr", "sections", "sec_qbr_internal")["isHidden"] is True
    assert rig.item("ws_qbr", "sections", "sec_qbr_agenda")["isHidden"] is False  # not in the manifest
    assert rig.item("ws_qbr", "pages", "pg_qbr_draft")["isHidden"] is True
    assert rig.item("ws_welcome", "tasks", "task_welcome_intro")["completedAt"]
    assert rig.item("ws_partner", "sections", "sec_partner_roadmap")["isHidden"] is True
    recorded = load_state(rig.state_path).resources
    assert recorded[QBR].sections == {"sec_qbr_internal": True}
    assert recorded[WELCOME].tasks == {"task_welcome_intro": True}
    assert recorded["workspace.partner-portal"].sections == {"sec_partner_roadmap": True}


def test_a_changed_setting_is_sent_again_with_what_the_state_recorded(rig: Rig) -> None:
    rig.apply()
    rig.edit("groups.yaml", "sec_qbr_internal: {hidden: true}", "sec_qbr_internal: {hidden: false}")
    (change,) = rig.plan().changes
    assert isinstance(change, SettingChange)
    assert (change.before, change.after) == (True, False)
    rig.apply()
    assert rig.item("ws_qbr", "sections", "sec_qbr_internal")["isHidden"] is False


def test_reassert_repairs_a_value_changed_in_the_web_app(rig: Rig) -> None:
    rig.apply()
    rig.item("ws_qbr", "sections", "sec_qbr_internal")["isHidden"] = False  # someone clicked it visible
    assert not rig.plan().has_changes  # cannot be read back
    plan = rig.plan(reassert=True)
    kinds = sorted(c.kind for c in plan.changes)
    assert kinds == ["asset"] * 4 + ["connect"] * 4 + ["page"] * 2 + ["section"] * 2 + ["task"]
    assert plan.cost.workspace_credits == 0
    rig.apply(plan)
    assert rig.item("ws_qbr", "sections", "sec_qbr_internal")["isHidden"] is True


def test_changes_come_in_dependency_order(rig: Rig) -> None:
    plan = rig.plan()
    order = [(c.kind, c.address) for c in plan.changes]
    # Right after QBR's connect: what the join does to its own list (no call of its own).
    # Right after each creation: the list it gives the new workspace (no call of its own either).
    assert order[:8] == [
        ("connect", WELCOME), ("connect", QBR), ("access", QBR), ("create", KICKOFF), ("access", KICKOFF),
        ("create", RENEWAL), ("access", RENEWAL), ("access", "group.customer-inc"),
    ]
    assert [k for k, _ in order[8:12]] == ["page", "task", "section", "page"]
    assert order[12:14] == [("access", "workspace.partner-portal"),
                            ("section", "workspace.partner-portal.section.sec_partner_roadmap")]
    assert [k for k, _ in order[14:]] == ["asset"] * 4  # assets last: nothing depends on them
    changes = by_address(plan)
    assert changes[f"{QBR}.section.sec_qbr_internal"].depends_on == (QBR,)
    assert changes["group.customer-inc"].depends_on == (KICKOFF,)


def test_the_group_access_list_rides_on_the_first_creation(rig: Rig) -> None:
    plan = rig.plan()
    access = by_address(plan)["group.customer-inc"]
    assert isinstance(access, AccessChange) and access.calls == () and access.rides_on == KICKOFF
    creation = by_address(plan)[KICKOFF]
    assert isinstance(creation, CreateChange) and creation.access == access.after
    rig.apply(plan)
    assert rig.requests("POST", "/v1/workspaces/ws_home/access") == []
    home = rig.workspace("ws_home").access
    assert {u.key: u.role for u in home.users} == {
        "jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "commenter"}
    (kickoff,) = rig.named("Customer Inc – Kickoff")
    assert kickoff.access is home  # one list for the whole group


def test_a_list_that_notifies_is_written_on_its_own_after_the_creations(rig: Rig) -> None:
    rig.edit("groups.yaml", "    access:                            # shared", "    access:\n      notify: true  #")
    plan = rig.plan()
    access = by_address(plan)["group.customer-inc"]
    assert access.rides_on is None and [c.path for c in access.calls] == ["/workspaces/ws_home/access"]
    assert access.depends_on == (WELCOME, QBR, KICKOFF, RENEWAL)
    assert by_address(plan)[KICKOFF].access is None
    rig.apply(plan)
    assert [n.email for n in rig.emulator.notifications] == ["priya@customer.com"]


def test_a_creation_whose_workspace_exists_unknown_to_the_state_needs_a_person(rig: Rig) -> None:
    rig.apply()
    kickoff_id = load_state(rig.state_path).resources[KICKOFF].id
    write_state(rig.state_path, load_state(rig.state_path).without(KICKOFF))  # as if the state was lost
    plan = rig.plan()
    (doubt,) = plan.needs_person
    assert (doubt.address, doubt.workspace_ids, doubt.location) == (KICKOFF, (kickoff_id,),
                                                                   f"{rig.root / 'groups.yaml'}:31")
    assert f"reconciler import {KICKOFF} {kickoff_id}" in doubt.resolutions[0].command
    assert not any(c.address == KICKOFF for c in plan.changes)


def test_a_creation_known_under_another_address_is_not_taken_for_a_duplicate(rig: Rig) -> None:
    rig.apply()
    state = load_state(rig.state_path)
    moved = state.with_resource("group.customer-inc.workspace.old-kickoff", state.resources[KICKOFF].id)
    write_state(rig.state_path, moved.without(KICKOFF))
    plan = rig.plan()
    assert [c.kind for c in plan.changes] == ["create", "access"]


def connect_members_first(rig: Rig) -> None:
    """Apply the two existing members alone, so the next connect call is a creation."""
    rig.apply(targets=(WELCOME, QBR))


def test_a_lost_connect_answer_is_sent_again_and_answered_200(rig: Rig) -> None:
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="after_commit", times=1)
    rig.apply(targets=(QBR,))
    answers = [(r.status, r.dropped) for r in rig.requests("POST", CONNECT_PATH)]
    assert answers == [(201, True), (200, False)]  # connected, answer lost; sent again: already in
    assert load_state(rig.state_path).resources[QBR].connected_to == "ws_home"


def test_a_lost_creation_answer_is_resolved_by_looking_not_by_creating_again(rig: Rig) -> None:
    connect_members_first(rig)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="after_commit", times=1)
    rig.apply()
    assert len(rig.named("Customer Inc – Kickoff")) == 1
    assert len(rig.named("Customer Inc – Renewal 2027")) == 1
    recorded = load_state(rig.state_path).resources
    assert recorded[KICKOFF].id == rig.named("Customer Inc – Kickoff")[0].id
    assert not rig.plan().has_changes


def test_a_creation_refused_by_a_5xx_stops_and_the_next_apply_creates_it_once(rig: Rig) -> None:
    connect_members_first(rig)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="status", status=500, times=1)
    credits = rig.company.credits
    with pytest.raises(ApplyError, match="none was created and no credit was used"):
        rig.apply()
    rig.apply()
    assert rig.company.credits == credits - 2
    assert not rig.plan().has_changes


def test_an_apply_that_fails_half_way_is_finished_by_the_next_without_a_second_creation(rig: Rig) -> None:
    rig.emulator.faults.inject("PATCH", "/workspace-sections/", kind="status", status=500, times=None)
    credits = rig.company.credits
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped at {QBR}.section.sec_qbr_internal" in message
    assert "groups.yaml:28" in message and "PATCH /workspace-sections/sec_qbr_internal" in message
    recorded = load_state(rig.state_path).resources
    assert {KICKOFF, RENEWAL, WELCOME, QBR} <= recorded.keys()
    assert rig.item("ws_partner", "sections", "sec_partner_roadmap")["isHidden"] is False  # after: not attempted
    rig.emulator.faults.clear()
    remaining = rig.plan()
    assert [c.kind for c in remaining.changes] == ["section", "page", "access", "section"] + ["asset"] * 4
    rig.apply(remaining)
    assert rig.company.credits == credits - 2
    assert len(rig.named("Customer Inc – Kickoff")) == 1
    assert not rig.plan().has_changes


def test_a_member_in_another_group_stops_with_409_naming_the_address(rig: Rig) -> None:
    other = rig.workspace("ws_partner")
    rig.edit("groups.yaml", "id: ws_qbr", "id: ws_qbr\n        # adopted")
    rig.workspace("ws_qbr").group = "g_elsewhere"
    rig.company.groups["g_elsewhere"] = rig.company.groups[rig.workspace("ws_home").group].__class__(
        "g_elsewhere", other.id, other.access)
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped at {QBR} " in message and "groups.yaml:25" in message
    assert "409" in message and "another group" in message and "web app" in message
    assert "1 of the plan's 18 changes was made before this" in message
    assert rig.named("Customer Inc – Kickoff") == []  # after the failure: not attempted


def test_a_template_the_company_lacks_is_a_clear_error_naming_the_member(rig: Rig) -> None:
    rig.edit("groups.yaml", "template: tpl_kickoff", "template: tpl_nope")
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31)" in message
    assert "400" in message and "tpl_nope" in message


def test_a_missing_deal_is_a_clear_error_naming_the_member(rig: Rig) -> None:
    rig.edit("groups.yaml", '        deal: {crmOneDealId: "9811"}\n', "")
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped at {RENEWAL}" in message and "requires a deal" in message
    assert len(rig.named("Customer Inc – Kickoff")) == 1  # made before, kept and recorded
    assert KICKOFF in load_state(rig.state_path).resources


def test_an_unknown_section_is_a_clear_error_naming_its_line(rig: Rig) -> None:
    rig.edit("groups.yaml", "sec_qbr_internal: {hidden: true}", "sec_nope: {hidden: true}")
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped at {QBR}.section.sec_nope ({rig.root / 'groups.yaml'}:28)" in message
    assert "404" in message and "no section sec_nope" in message


def test_a_homepage_that_does_not_exist_is_refused_before_any_call(rig: Rig) -> None:
    rig.edit("groups.yaml", "homepage: ws_home", "homepage: ws_nope")
    with pytest.raises(PlanError, match=r"groups.yaml:10: group.customer-inc: workspace ws_nope does not exist"):
        rig.plan()


def test_a_forbidden_creation_names_both_documented_causes_and_the_count(rig: Rig) -> None:
    rig.company.verified = False
    rig.company.plan = "free"
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert "403" in message and "free plan" in message and "verified" in message
    assert "it had 4 workspaces when the plan was made" in message


def test_the_plan_warns_when_creations_pass_the_free_plan_limit(rig: Rig) -> None:
    for i in range(5):
        rig.company.workspaces.append(rig.workspace("ws_partner").__class__(
            f"ws_extra_{i}", f"Extra {i}", "acc_1", True, False, rig.workspace("ws_partner").access))
    plan = rig.plan()  # 9 workspaces, 2 creations
    assert any("has 9 workspaces" in w and "would make 11" in w and "free plan" in w for w in plan.warnings)


def test_fields_fixed_at_creation_show_as_drift_never_as_an_action(rig: Rig) -> None:
    rig.apply()
    rig.edit("groups.yaml", "name: Customer Inc – Kickoff", "name: Customer Inc – Kick-off")
    plan = rig.plan()
    assert not plan.has_changes
    (warning,) = plan.warnings
    assert warning.startswith(f"{rig.root / 'groups.yaml'}:31: {KICKOFF}: name is 'Customer Inc – Kickoff'")
    assert "cannot change it after creation" in warning


def test_a_member_removed_from_the_manifest_is_forgotten_and_its_workspace_kept(rig: Rig) -> None:
    rig.apply()
    text = (rig.root / "groups.yaml").read_text()
    start = text.index("      renewal:")
    (rig.root / "groups.yaml").write_text(text[:start])
    plan = rig.plan()
    assert plan.forgotten == (RENEWAL,)
    assert any(w.startswith(f"{RENEWAL}: no manifest names it any more") for w in plan.warnings)
    rig.apply(plan)
    assert RENEWAL not in load_state(rig.state_path).resources
    assert len(rig.named("Customer Inc – Renewal 2027")) == 1


def test_connect_and_settings_counts_are_in_the_plan_cost(rig: Rig) -> None:
    plan = rig.plan()
    assert plan.cost.calls_by_class == {"default": 16, "storage": 2, "workspace_creation": 4}
    assert plan.summary.workspaces_connected == 2 and plan.summary.settings == 5
    changes = by_address(plan)
    assert isinstance(changes[WELCOME], ConnectChange)


def test_a_group_list_changed_since_the_plan_is_not_overwritten_by_a_creation(rig: Rig) -> None:
    plan = rig.plan()
    rig.workspace("ws_home").access.users[0].role = "editor"  # someone edits the list in the web app
    rig.workspace("ws_home").access.users[1].role = "owner"
    with pytest.raises(ApplyError, match="Nothing was changed: access in the service changed"):
        rig.apply(plan)
    assert rig.named("Customer Inc – Kickoff") == []
    assert rig.requests("POST", CONNECT_PATH) == []


def test_a_full_disk_mid_apply_names_what_was_changed_and_not_recorded(rig: Rig, monkeypatch) -> None:
    import errno

    import reconciler.state.atomic as state_module

    real_write_all = state_module.write_all
    writes = {"n": 0}

    def disk_fills_up_after_three_writes(fd: int, data: bytes) -> None:  # simulates the disk, not our code
        writes["n"] += 1
        if writes["n"] > 3:  # two connects, then the intent to create the kickoff
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(state_module, "write_all", disk_fills_up_after_three_writes)
    before = rig.state_path.read_bytes() if rig.state_path.exists() else None
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    message = str(stopped.value)
    assert f"Apply stopped: {KICKOFF} ({rig.root / 'groups.yaml'}:31) was made in the service, but the state file " \
           "could not record it." in message
    # The three changes before it: the two connects and what QBR's join did to its list.
    assert "No space left on device" in message and "The state records the 3 changes before it" in message
    assert "reconciler plan" in message
    recorded = load_state(rig.state_path).resources
    assert before is None and set(recorded) == {WELCOME, QBR, KICKOFF} and recorded[KICKOFF].intent is not None
    monkeypatch.undo()
    (kickoff,) = rig.named("Customer Inc – Kickoff")
    plan = rig.plan()  # the unrecorded workspace is found again by its intent, never created twice
    assert [(a.address, a.workspace_id) for a in plan.adopted] == [(KICKOFF, kickoff.id)]


def test_the_intent_to_create_is_journaled_before_the_creation_is_sent(rig: Rig) -> None:
    connect_members_first(rig)
    journaled: list[dict[str, Any]] = []
    handle = rig.emulator.handle

    def journal_as_the_creation_arrives(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if method == "POST" and path == CONNECT_PATH and not journaled:
            lines = journal_path(rig.state_path).read_text(encoding="utf-8").splitlines()
            journaled.append(json.loads(lines[-1])["set"][KICKOFF])
        return handle(method, path, *args, **kwargs)

    rig.emulator.handle = journal_as_the_creation_arrives  # type: ignore[method-assign]  # sees each request
    rig.apply()
    (intent,) = journaled
    assert intent["id"] == "" and intent["intent"]["name"] == "Customer Inc – Kickoff"
    assert (intent["intent"]["template"], intent["intent"]["account"]) == ("tpl_kickoff", "acc_1")
    recorded = load_state(rig.state_path).resources[KICKOFF]
    assert recorded.intent is None and recorded.id == rig.named("Customer Inc – Kickoff")[0].id


def test_a_creation_refused_outright_closes_its_intent(rig: Rig) -> None:
    connect_members_first(rig)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="status", status=403, times=1)
    with pytest.raises(ApplyError):
        rig.apply()
    assert KICKOFF not in load_state(rig.state_path).resources, "nothing was made: no intent stays open"
    assert by_address(rig.plan())[KICKOFF].reason == "not in the state: created from the template (uses 1 " \
                                                     "workspace credit)"


def test_a_lost_creation_the_listing_does_not_show_closes_its_intent(rig: Rig) -> None:
    connect_members_first(rig)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="drop", times=1)
    with pytest.raises(ApplyError, match="none was created and no credit was used"):
        rig.apply()
    assert KICKOFF not in load_state(rig.state_path).resources


def test_a_template_the_company_lacks_says_to_check_the_template_and_its_deal(rig: Rig) -> None:
    rig.edit("groups.yaml", "template: tpl_kickoff", "template: tpl_nope")
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    assert (f"{stopped.value.__cause__} Check that template tpl_nope exists for this company and whether it needs "
            "a deal (crmOneDealId or crmTwoOpportunityId of the group account's CRM company). ") in str(stopped.value)


def test_a_creation_refused_with_403_gives_the_services_two_reasons_and_the_count_of_workspaces(rig: Rig) -> None:
    connect_members_first(rig)
    plan = rig.plan()
    assert plan.live_workspaces == len(rig.company.workspaces)
    rig.emulator.faults.inject("POST", "/connected-workspaces$", kind="status", status=403, times=None)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert (f"{stopped.value.__cause__} The service refuses new workspaces for two documented reasons: the company "
            "is on the free plan, which allows 10 workspaces in total, active and archived (it had "
            f"{len(rig.company.workspaces)} workspaces when the plan was made), or the company is not verified, and "
            "only verified companies may publish workspaces. A company without workspace credits left is refused "
            "too. ") in str(stopped.value)


def test_a_section_the_service_does_not_have_says_to_check_its_id(rig: Rig) -> None:
    rig.emulator.faults.inject("PATCH", "/workspace-sections/", kind="status", status=404, times=None)
    with pytest.raises(ApplyError) as stopped:
        rig.apply()
    assert (f"{stopped.value.__cause__} The service has no section sec_qbr_internal: check the id in the manifest "
            f"(it belongs to workspace ") in str(stopped.value)
