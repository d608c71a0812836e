"""The workspace side of the planner: joins, creations, settings, and how
they are ordered, checked and drawn.  (Desired, Live, State) → Plan, built
by hand; no I/O besides the manifest written to a temp file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from reconciler.errors import PlanError
from reconciler.live import LiveWorkspace
from reconciler.manifest import load_desired
from reconciler.plan import Plan, make_plan, render_markdown, render_text
from reconciler.plan.model import AccessChange, ConnectChange, CreateChange, SettingChange
from reconciler.state import ResourceState, State
from tests.conftest import live_of, live_workspace

Write = Callable[..., Path]

CONNECT_PATH = "/workspaces/ws_home/connected-workspaces"

# The homepage already has the access the manifests below ask for.
HOME = live_workspace("ws_home", users={"jane@acme.com": "owner"}, name="Home", account_id="acc_1")

ONE_MEMBER = """
    version: 1
    groups:
      onboarding:
        homepage: ws_home
        workspaces:
          welcome:
            id: ws_welcome
"""

# Its own list holds what the group's does, so joining changes nobody's access
# (tests/plan/test_effects.py covers a join that does).
WELCOME = live_workspace("ws_welcome", users={"jane@acme.com": "owner"}, name="Welcome", account_id="acc_1")

KICKOFF = """
    version: 1
    groups:
      onboarding:
        homepage: ws_home
        access:
          users: [{email: jane@acme.com, role: owner}]
        workspaces:
          kickoff:
            template: tpl_kickoff
            name: Kickoff
            startDate: 2026-12-01
            targetEndDate: 2027-01-31
            deal: {crmOneDealId: "9811"}
"""

KICKOFF_ADDRESS = "group.onboarding.workspace.kickoff"

# A group whose access changes (priya is new), a member to connect with a
# setting, a member to create, and a standalone workspace with both.
EVERYTHING = """
    version: 1
    groups:
      onboarding:
        homepage: ws_home
        access:
          users:
            - {email: jane@acme.com, role: owner}
            - {email: priya@customer.com, role: viewer}
          notify: NOTIFY
        workspaces:
          welcome:
            id: ws_welcome
            sections:
              sec_1: {hidden: true}
            pages:
              pg_1: {hidden: false}
            tasks:
              task_1: {completed: true}
          kickoff:
            template: tpl_kickoff
            name: Kickoff
    workspaces:
      portal:
        id: ws_portal
        access:
          users: [{email: ops@acme.com, role: owner}]
        sections:
          sec_p: {hidden: true}
"""

PORTAL = live_workspace("ws_portal", users={"ops@acme.com": "owner", "temp@acme.com": "editor"}, name="Portal")


def everything(write_manifest: Write, *, notify: bool = False) -> Path:
    return write_manifest(EVERYTHING.replace("NOTIFY", str(notify).lower()))


def plan_for(
    path: Path,
    *workspaces: LiveWorkspace,
    state: State | None = None,
    complete: bool = False,
    **kwargs: object,
) -> Plan:
    live = live_of(*workspaces, complete=complete)
    return make_plan(load_desired(path), live, state or State(), **kwargs)  # type: ignore[arg-type]


def kinds(plan: Plan) -> list[tuple[str, str]]:
    return [(c.kind, c.address) for c in plan.changes]


# --- joining a group: connect ----------------------------------------------------------


def test_a_member_the_state_does_not_record_is_connected(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME)
    (change,) = plan.changes
    assert isinstance(change, ConnectChange)
    assert (change.address, change.group, change.homepage_id, change.workspace_id) == (
        "group.onboarding.workspace.welcome", "group.onboarding", "ws_home", "ws_welcome",
    )
    assert [(c.method, c.path, c.limit_class) for c in change.calls] == [
        ("POST", CONNECT_PATH, "workspace_creation"),
    ]
    assert plan.summary.workspaces_connected == 1
    # The connect replaces ws_welcome's list: apply reads it before the first write and after the last.
    assert plan.cost.calls_by_class == {"default": 2, "workspace_creation": 1}


def test_a_member_recorded_as_connected_to_this_homepage_plans_nothing(write_manifest: Write) -> None:
    state = State(resources={"group.onboarding.workspace.welcome": ResourceState(id="ws_welcome", connected_to="ws_home")})
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME, state=state)
    assert plan.changes == ()


def test_a_member_recorded_as_connected_to_another_homepage_is_connected_again(write_manifest: Write) -> None:
    state = State(resources={"group.onboarding.workspace.welcome": ResourceState(id="ws_welcome", connected_to="ws_old_home")})
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME, state=state)
    (change,) = plan.changes
    assert isinstance(change, ConnectChange)
    assert change.homepage_id == "ws_home"


def test_a_member_recorded_with_another_workspace_id_is_connected(write_manifest: Write) -> None:
    state = State(resources={"group.onboarding.workspace.welcome": ResourceState(id="ws_other", connected_to="ws_home")})
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME, state=state)
    assert kinds(plan) == [("connect", "group.onboarding.workspace.welcome")]


# --- joining a group: create ---------------------------------------------------------


def test_a_template_member_not_in_the_state_is_created(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), HOME)
    change, _ = plan.changes
    assert isinstance(change, CreateChange)
    assert change.address == KICKOFF_ADDRESS
    assert (change.group, change.homepage_id, change.template_id, change.name) == (
        "group.onboarding", "ws_home", "tpl_kickoff", "Kickoff",
    )
    assert (change.start_date, change.target_end_date, change.actual_end_date) == (
        date(2026, 12, 1), date(2027, 1, 31), None)
    assert (change.crm_one_deal_id, change.crm_two_opportunity_id) == ("9811", None)
    assert [(c.method, c.path, c.limit_class) for c in change.calls] == [
        ("POST", CONNECT_PATH, "workspace_creation"),
    ]


def test_a_creations_dates_are_iso_dates_in_the_json_plan(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), HOME)
    change, _ = plan.model_dump(mode="json")["changes"]
    assert (change["start_date"], change["target_end_date"], change["actual_end_date"]) == (
        "2026-12-01", "2027-01-31", None)


def test_a_creation_in_a_group_is_followed_by_the_grants_it_makes_judged_like_any_grant(
        write_manifest: Write) -> None:
    """Issue 38 item 5: the new workspace's access is the group's whole list; each entry is a grant of the
    creation (governs "create"), with no call of its own, counted and reviewed like a grant elsewhere."""
    plan = plan_for(write_manifest(KICKOFF), HOME)
    creation, given = plan.changes
    assert isinstance(given, AccessChange) and isinstance(creation, CreateChange)
    assert (given.address, given.governs, given.rides_on, given.calls, given.workspace_id, given.workspace_name) == (
        KICKOFF_ADDRESS, "create", KICKOFF_ADDRESS, (), "", "Kickoff")
    assert [(e.kind, e.key, e.before, e.after, e.privilege) for e in given.entries] == [
        ("user", "jane@acme.com", None, "owner", "grant")]
    assert given.reason == "the creation gives it group.onboarding's list"
    assert plan.summary.create == 1


def test_creations_are_counted_in_credits_and_the_summary(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF + """
          renewal:
            template: tpl_renewal
            name: Renewal
    """)
    plan = plan_for(path, HOME)
    assert plan.cost.workspace_credits == 2
    assert plan.summary.workspaces_created == 2
    assert plan.summary.workspaces_connected == 0


# --- order and dependencies ------------------------------------------------------------


def test_a_group_plans_its_joins_then_its_access_then_its_settings(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest, notify=True), HOME, WELCOME, PORTAL)
    group_kinds = [c.kind for c in plan.changes if c.address.startswith("group.")]
    # The access change right after the connect is what the join does to ws_welcome's list.
    assert group_kinds == ["connect", "access", "create", "access", "access", "section", "page", "task"]


def test_the_group_access_change_depends_on_the_joins(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest, notify=True), HOME, WELCOME, PORTAL)
    access = next(c for c in plan.changes if c.address == "group.onboarding")
    assert access.depends_on == ("group.onboarding.workspace.welcome", KICKOFF_ADDRESS)


def test_a_members_settings_depend_on_its_connect(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL)
    settings = [c for c in plan.changes if c.address.startswith("group.onboarding.workspace.welcome.")]
    assert [c.kind for c in settings] == ["section", "page", "task"]
    assert {c.depends_on for c in settings} == {("group.onboarding.workspace.welcome",)}


def test_settings_of_a_member_already_connected_depend_on_nothing(write_manifest: Write) -> None:
    state = State(resources={"group.onboarding.workspace.welcome": ResourceState(id="ws_welcome", connected_to="ws_home")})
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL, state=state)
    settings = [c for c in plan.changes if isinstance(c, SettingChange) and c.workspace_id == "ws_welcome"]
    assert len(settings) == 3
    assert {c.depends_on for c in settings} == {()}


def test_standalone_workspaces_come_after_groups_access_before_settings(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL)
    standalone = [(i, c.kind) for i, c in enumerate(plan.changes) if c.address.startswith("workspace.")]
    last_group = max(i for i, c in enumerate(plan.changes) if c.address.startswith("group."))
    assert [k for _, k in standalone] == ["access", "section"]
    assert standalone[0][0] > last_group


def test_members_are_planned_in_manifest_order(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        groups:
          onboarding:
            homepage: ws_home
            workspaces:
              zeta:
                id: ws_z
              alpha:
                id: ws_a
    """)
    plan = plan_for(path, HOME, live_workspace("ws_z", users={"jane@acme.com": "owner"}, account_id="acc_1"),
                    live_workspace("ws_a", users={"jane@acme.com": "owner"}, account_id="acc_1"))
    assert [c.address for c in plan.changes] == ["group.onboarding.workspace.zeta", "group.onboarding.workspace.alpha"]


# --- the group's access riding on a creation -------------------------------------------


def test_the_group_access_rides_on_the_first_creation(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL)
    access = next(c for c in plan.changes if isinstance(c, AccessChange) and c.address == "group.onboarding")
    creation = next(c for c in plan.changes if isinstance(c, CreateChange))
    assert access.calls == ()
    assert access.rides_on == KICKOFF_ADDRESS
    assert access.depends_on == (KICKOFF_ADDRESS,)
    assert creation.access == access.after
    assert creation.access_address == "group.onboarding"
    assert creation.access.users == {"jane@acme.com": "owner", "priya@customer.com": "viewer"}


def test_access_that_notifies_does_not_ride_on_a_creation(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest, notify=True), HOME, WELCOME, PORTAL)
    access = next(c for c in plan.changes if isinstance(c, AccessChange) and c.address == "group.onboarding")
    creation = next(c for c in plan.changes if isinstance(c, CreateChange))
    assert access.rides_on is None
    assert [(c.method, c.path) for c in access.calls] == [("POST", "/workspaces/ws_home/access")]
    assert KICKOFF_ADDRESS in access.depends_on
    assert creation.access is None and creation.access_address is None


def test_unchanged_group_access_rides_on_nothing(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), HOME)
    creation, _ = plan.changes
    assert isinstance(creation, CreateChange)
    assert creation.access is None
    assert plan.unchanged == ("group.onboarding",)


# --- sections, pages and tasks -----------------------------------------------------------


PORTAL_SETTINGS = """
    version: 1
    workspaces:
      portal:
        id: ws_portal
        sections:
          sec_1: {hidden: true}
"""

PORTAL_ONLY = live_workspace("ws_portal", name="Portal")


def test_a_setting_the_state_does_not_know_is_patched_with_before_unknown(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(PORTAL_SETTINGS), PORTAL_ONLY)
    (change,) = plan.changes
    assert isinstance(change, SettingChange)
    assert (change.kind, change.address, change.item_id, change.workspace_id) == (
        "section", "workspace.portal.section.sec_1", "sec_1", "ws_portal",
    )
    assert (change.before, change.after) == (None, True)
    assert [(c.method, c.path) for c in change.calls] == [("PATCH", "/workspace-sections/sec_1")]
    assert plan.summary.settings == 1


def test_a_setting_the_state_records_with_the_same_value_plans_nothing(write_manifest: Write) -> None:
    state = State(resources={"workspace.portal": ResourceState(id="ws_portal", sections={"sec_1": True})})
    plan = plan_for(write_manifest(PORTAL_SETTINGS), PORTAL_ONLY, state=state)
    assert plan.changes == ()


def test_a_setting_the_state_records_with_another_value_is_changed_from_it(write_manifest: Write) -> None:
    state = State(resources={"workspace.portal": ResourceState(id="ws_portal", sections={"sec_1": False})})
    (change,) = plan_for(write_manifest(PORTAL_SETTINGS), PORTAL_ONLY, state=state).changes
    assert isinstance(change, SettingChange)
    assert (change.before, change.after) == (False, True)


def test_settings_recorded_for_another_workspace_at_the_address_are_unknown(write_manifest: Write) -> None:
    state = State(resources={"workspace.portal": ResourceState(id="ws_previous", sections={"sec_1": True})})
    (change,) = plan_for(write_manifest(PORTAL_SETTINGS), PORTAL_ONLY, state=state).changes
    assert isinstance(change, SettingChange)
    assert (change.before, change.after) == (None, True)


def test_pages_and_tasks_are_patched_at_their_own_paths(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_portal
            pages:
              pg_1: {hidden: false}
            tasks:
              task_1: {completed: true}
    """)
    plan = plan_for(path, PORTAL_ONLY)
    assert [(c.kind, c.calls[0].path, c.after) for c in plan.changes] == [
        ("page", "/workspace-pages/pg_1", False),
        ("task", "/workspace-plan-tasks/task_1", True),
    ]


def test_reassert_resends_every_setting_and_every_connect(write_manifest: Write) -> None:
    state = State(resources={
        "group.onboarding.workspace.welcome": ResourceState(
            id="ws_welcome", connected_to="ws_home", sections={"sec_1": True}, pages={"pg_1": False},
            tasks={"task_1": True}),
        KICKOFF_ADDRESS: ResourceState(id="ws_new", connected_to="ws_home", template="tpl_kickoff"),
        "workspace.portal": ResourceState(id="ws_portal", sections={"sec_p": True}),
    })
    home = live_workspace("ws_home", users={"jane@acme.com": "owner", "priya@customer.com": "viewer"},
                          account_id="acc_1")
    portal = live_workspace("ws_portal", users={"ops@acme.com": "owner"})
    kickoff = live_workspace("ws_new", name="Kickoff", account_id="acc_1", template_id="tpl_kickoff")
    path = everything(write_manifest)
    assert plan_for(path, home, WELCOME, portal, kickoff, state=state).changes == ()

    plan = plan_for(path, home, WELCOME, portal, kickoff, state=state, reassert=True)
    assert kinds(plan) == [
        ("connect", "group.onboarding.workspace.welcome"),
        ("connect", KICKOFF_ADDRESS),
        ("section", "group.onboarding.workspace.welcome.section.sec_1"),
        ("page", "group.onboarding.workspace.welcome.page.pg_1"),
        ("task", "group.onboarding.workspace.welcome.task.task_1"),
        ("section", "workspace.portal.section.sec_p"),
    ]
    settings = [c for c in plan.changes if isinstance(c, SettingChange)]
    assert [(c.before, c.after) for c in settings] == [(True, True), (False, False), (True, True), (True, True)]
    assert plan.reassert is True


# --- creations the planner refuses or warns about --------------------------------------


def test_creating_a_workspace_that_exists_unknown_to_the_state_needs_a_person(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    lost = live_workspace("ws_lost", name="Kickoff", account_id="acc_1", template_id="tpl_kickoff")
    plan = plan_for(path, HOME, lost, complete=True)
    assert kinds(plan) == []
    (doubt,) = plan.needs_person
    assert doubt.location == f"{path}:8" and doubt.workspace_ids == ("ws_lost",)
    assert [r.command for r in doubt.resolutions] == [f"reconciler import {KICKOFF_ADDRESS} ws_lost {path.parent}"]


def test_a_workspace_the_state_knows_under_another_address_is_not_a_duplicate(write_manifest: Write) -> None:
    other = live_workspace("ws_other", name="Kickoff", account_id="acc_1", template_id="tpl_kickoff")
    state = State(resources={"group.elsewhere.workspace.kickoff": ResourceState(id="ws_other")})
    plan = plan_for(write_manifest(KICKOFF), HOME, other, state=state, complete=True)
    assert kinds(plan) == [("create", KICKOFF_ADDRESS), ("access", KICKOFF_ADDRESS)]


def test_a_workspace_of_another_account_is_not_a_duplicate(write_manifest: Write) -> None:
    other = live_workspace("ws_other", name="Kickoff", account_id="acc_2", template_id="tpl_kickoff")
    plan = plan_for(write_manifest(KICKOFF), HOME, other, complete=True)
    assert kinds(plan) == [("create", KICKOFF_ADDRESS), ("access", KICKOFF_ADDRESS)]


def test_a_workspace_of_another_name_or_template_is_not_a_duplicate(write_manifest: Write) -> None:
    renamed = live_workspace("ws_a", name="Kickoff 2", account_id="acc_1", template_id="tpl_kickoff")
    other_template = live_workspace("ws_b", name="Kickoff", account_id="acc_1", template_id="tpl_other")
    plan = plan_for(write_manifest(KICKOFF), HOME, renamed, other_template, complete=True)
    assert kinds(plan) == [("create", KICKOFF_ADDRESS), ("access", KICKOFF_ADDRESS)]


def company_of(count: int) -> list[LiveWorkspace]:
    """The homepage and ``count - 1`` other workspaces."""
    return [HOME, *(live_workspace(f"ws_{i}", name=f"W{i}", account_id="acc_1") for i in range(count - 1))]


def test_creations_past_ten_workspaces_warn_of_the_free_plan(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), *company_of(10), complete=True)
    assert plan.live_workspaces == 10
    (warning,) = [w for w in plan.warnings if "free plan" in w]
    assert "The company has 10 workspaces" in warning and "would make 11" in warning


def test_creations_reaching_exactly_ten_workspaces_do_not_warn(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), *company_of(9), complete=True)
    assert plan.summary.workspaces_created == 1
    assert not [w for w in plan.warnings if "free plan" in w]


def test_an_incomplete_listing_does_not_warn_of_the_free_plan(write_manifest: Write) -> None:
    plan = plan_for(write_manifest(KICKOFF), *company_of(12))
    assert plan.live_workspaces is None
    assert not [w for w in plan.warnings if "free plan" in w]


CREATED = State(resources={KICKOFF_ADDRESS: ResourceState(id="ws_new", connected_to="ws_home", template="tpl_kickoff")})


def test_drift_of_a_created_workspace_is_warned_about_and_not_planned(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    drifted = live_workspace(
        "ws_new", name="Kickoff (renamed)", account_id="acc_1", template_id="tpl_kickoff",
        start_date="2026-12-01", target_end_date="2027-02-28", crm_one_deal_id="9811",
    )
    plan = plan_for(path, HOME, drifted, state=CREATED)
    assert plan.changes == ()
    assert len(plan.warnings) == 2
    name, end = plan.warnings
    assert name.startswith(f"{path}:") and KICKOFF_ADDRESS in name
    assert "name is 'Kickoff (renamed)' in the service, 'Kickoff' in the manifest" in name
    assert "targetEndDate is '2027-02-28' in the service, '2027-01-31' in the manifest" in end
    assert "the API cannot change it after creation" in end


def test_a_created_workspace_that_matches_gives_no_warning(write_manifest: Write) -> None:
    same = live_workspace(
        "ws_new", name="Kickoff", account_id="acc_1", template_id="tpl_kickoff",
        start_date="2026-12-01", target_end_date="2027-01-31", crm_one_deal_id="9811",
    )
    plan = plan_for(write_manifest(KICKOFF), HOME, same, state=CREATED)
    assert (plan.changes, plan.warnings) == ((), ())


def test_a_created_workspace_that_is_gone_is_warned_about_and_not_planned(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, state=CREATED, complete=True)
    assert plan.changes == ()
    (warning,) = plan.warnings
    assert "ws_new" in warning
    assert f"reconciler state rm {KICKOFF_ADDRESS}" in warning


def test_a_member_of_another_account_than_the_homepage_is_refused(write_manifest: Write) -> None:
    path = write_manifest(ONE_MEMBER)
    foreign = live_workspace("ws_welcome", name="Welcome", account_id="acc_2")
    with pytest.raises(PlanError) as err:
        plan_for(path, HOME, foreign)
    message = str(err.value)
    assert f"{path}:6: group.onboarding.workspace.welcome" in message
    assert "belongs to account acc_2, the homepage ws_home to acc_1" in message


def test_a_missing_member_is_refused_with_its_location(write_manifest: Write) -> None:
    path = write_manifest(ONE_MEMBER)
    with pytest.raises(PlanError) as err:
        plan_for(path, HOME)
    assert f"{path}:6: group.onboarding.workspace.welcome: workspace ws_welcome does not exist" in str(err.value)


def test_a_missing_homepage_is_refused_with_its_location(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    with pytest.raises(PlanError) as err:
        plan_for(path)
    assert f"{path}:" in str(err.value)
    assert "group.onboarding: workspace ws_home does not exist" in str(err.value)


# --- forgotten addresses and targets ---------------------------------------------------------


def test_a_state_address_no_manifest_names_is_forgotten_with_a_warning(write_manifest: Write) -> None:
    state = State(resources={
        "group.onboarding.workspace.welcome": ResourceState(id="ws_welcome", connected_to="ws_home"),
        "group.onboarding.workspace.old": ResourceState(id="ws_old", connected_to="ws_home"),
    })
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME, state=state)
    assert plan.forgotten == ("group.onboarding.workspace.old",)
    (warning,) = plan.warnings
    assert warning.startswith("group.onboarding.workspace.old: no manifest names it any more")
    assert "ws_old" in warning


def test_a_targeted_plan_forgets_nothing(write_manifest: Write) -> None:
    state = State(resources={"group.onboarding.workspace.old": ResourceState(id="ws_old")})
    plan = plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME, state=state, targets=("group.onboarding",))
    assert plan.forgotten == ()
    assert plan.warnings == ()


def test_a_target_of_one_member_plans_only_that_members_changes(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL,
                    targets=("group.onboarding.workspace.welcome",))
    assert kinds(plan) == [
        ("connect", "group.onboarding.workspace.welcome"),
        ("section", "group.onboarding.workspace.welcome.section.sec_1"),
        ("page", "group.onboarding.workspace.welcome.page.pg_1"),
        ("task", "group.onboarding.workspace.welcome.task.task_1"),
    ]
    assert plan.addresses == ("group.onboarding.workspace.welcome",)
    assert plan.managed == ()


# --- the plan document ------------------------------------------------------------------------


def test_a_plan_with_every_kind_round_trips_through_json(write_manifest: Write) -> None:
    plan = plan_for(everything(write_manifest), HOME, WELCOME, PORTAL)
    assert {c.kind for c in plan.changes} == {"access", "connect", "create", "section", "page", "task"}
    assert Plan.model_validate_json(plan.model_dump_json()) == plan


# --- renderers ---------------------------------------------------------------------------------


@pytest.fixture
def full_plan(write_manifest: Write) -> Plan:
    return plan_for(everything(write_manifest), HOME, WELCOME, PORTAL)


def test_text_draws_a_creation_with_its_template_and_credit(full_plan: Plan) -> None:
    text = render_text(full_plan)
    assert f"  # {KICKOFF_ADDRESS}: new workspace in group.onboarding (" in text
    assert f"  # 1 call: POST {CONNECT_PATH}; uses 1 workspace credit" in text
    assert '  + workspace "Kickoff" from template tpl_kickoff {' in text
    assert "      access         the final lists of group.onboarding ride on this call" in text


def test_text_draws_a_connect_to_its_group(full_plan: Plan) -> None:
    text = render_text(full_plan)
    assert '  # group.onboarding.workspace.welcome: workspace ws_welcome "Welcome" (' in text
    assert "  + connect to group.onboarding (homepage ws_home)" in text


def test_text_draws_a_setting_from_before_to_after(full_plan: Plan) -> None:
    text = render_text(full_plan)
    assert "  ~ section sec_1 of workspace ws_welcome: hidden unknown -> true" in text
    assert "  ~ page pg_1 of workspace ws_welcome: hidden unknown -> false" in text
    assert "  ~ task task_1 of workspace ws_welcome: completed unknown -> true" in text
    assert "  # 1 call: PATCH /workspace-sections/sec_1; not recorded in the state" in text


def test_text_draws_a_known_setting_with_its_recorded_before(write_manifest: Write) -> None:
    state = State(resources={"workspace.portal": ResourceState(id="ws_portal", sections={"sec_1": False})})
    text = render_text(plan_for(write_manifest(PORTAL_SETTINGS), PORTAL_ONLY, state=state))
    assert "  ~ section sec_1 of workspace ws_portal: hidden false -> true" in text


def test_text_says_a_riding_access_change_is_carried_by_the_creation(full_plan: Plan) -> None:
    text = render_text(full_plan)
    assert f"  # no call of its own: carried by the creation of {KICKOFF_ADDRESS}" in text


def test_text_says_an_access_change_that_notifies_people(write_manifest: Write) -> None:
    text = render_text(plan_for(everything(write_manifest, notify=True), HOME, WELCOME, PORTAL))
    assert "  # 1 call and notifies 1 person: POST /workspaces/ws_home/access" in text


def test_text_summary_counts_workspaces_and_values_to_set(full_plan: Plan) -> None:
    text = render_text(full_plan)
    # 4 to add: priya on the group's list, and on ws_welcome as it joins it; jane and priya on the new
    # workspace, which the creation gives the group's final list
    assert ("Plan: 4 to add, 0 to change, 1 to remove; workspaces: 1 to create, 1 to connect; "
            "4 section/page/task values to set.") in text
    # connect + create (workspace_creation); portal access POST, four PATCHes and the two re-reads (default)
    assert ("Cost: 9 API calls: 7 in the default rate class (120/min) and 2 in the workspace_creation rate class "
            "(30/min), 2 of them re-reading the lists before and after writing; 1 workspace credit.") in text


def test_text_summary_leaves_out_workspaces_and_values_when_there_are_none(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_portal
            access:
              users: [{email: ops@acme.com, role: owner}]
    """)
    assert "Plan: 0 to add, 0 to change, 1 to remove.\n" in render_text(plan_for(path, PORTAL))


def test_text_cost_of_joins_only_counts_the_reads_of_the_lists_they_replace(write_manifest: Write) -> None:
    text = render_text(plan_for(write_manifest(ONE_MEMBER), HOME, WELCOME))
    assert ("Cost: 3 API calls: 2 in the default rate class (120/min) and 1 in the workspace_creation rate class "
            "(30/min), 2 of them re-reading the lists before and after writing; no workspace credits.") in text


def test_text_draws_changes_in_plan_order(full_plan: Plan) -> None:
    text = render_text(full_plan)
    headers = [f"  # {c.address}" for c in full_plan.changes]
    positions = [text.index(h + (":" if not isinstance(c, SettingChange) else " "))
                 for h, c in zip(headers, full_plan.changes, strict=True)]
    assert positions == sorted(positions)


def test_markdown_draws_every_kind(full_plan: Plan) -> None:
    md = render_markdown(full_plan)
    assert (f"#### `{KICKOFF_ADDRESS}`: **create** workspace “Kickoff” from template `tpl_kickoff` "
            "in `group.onboarding` (1 credit); access `the final lists of group.onboarding ride on this call`") in md
    assert ("#### `group.onboarding.workspace.welcome`: **connect** workspace `ws_welcome` to "
            "`group.onboarding` (homepage `ws_home`)") in md
    assert ("#### `group.onboarding.workspace.welcome.section.sec_1`: "
            "section sec_1 of workspace ws_welcome: hidden unknown -> true") in md
    assert f"Carried by the creation of `{KICKOFF_ADDRESS}` (no call of its own)." in md
    assert "#### `workspace.portal`: workspace `ws_portal` “Portal”" in md


def test_markdown_table_counts_workspaces_settings_and_credits(full_plan: Plan) -> None:
    md = render_markdown(full_plan)
    assert "| add | change | remove | workspaces created | connected | settings | assets | API calls | credits | least time |" in md
    assert "| 4 | 0 | 1 | 1 | 1 | 4 | 0 | 9 | 1 | 0 s |" in md
    assert ("Plan: 4 to add, 0 to change, 1 to remove; workspaces: 1 to create, 1 to connect; "
            "4 section/page/task values to set.") in md
