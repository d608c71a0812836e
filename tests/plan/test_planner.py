"""The planner as a specification: (Desired, Live, State) → Plan, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import PlanError
from reconciler.manifest import load_desired
from reconciler.plan import Action, make_plan, render_text
from reconciler.state import AccessRecord, ResourceState, State
from tests.conftest import live_of, live_workspace

GROUP = """
    version: 1
    groups:
      onboarding:
        homepage: ws_home
        access:
          users:
            - {email: jane@acme.com, role: owner}
            - {email: raj@customer.com, role: collaborator}
            - {email: priya@customer.com, role: viewer}
          domains:
            - {domain: customer.com, role: viewer}
"""

HOME_LIVE = live_workspace(
    "ws_home",
    users={"jane@acme.com": "owner", "raj@customer.com": "viewer", "old@agency.io": "editor"},
    domains={"customer.com": "viewer"},
    name="Home",
)


def plan_for(path: Path, *workspaces, state: State | None = None, **kwargs):
    return make_plan(load_desired(path), live_of(*workspaces), state or State(), **kwargs)


def test_matching_access_gives_an_empty_plan(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP)
    live = live_workspace(
        "ws_home",
        users={"jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "viewer"},
        domains={"customer.com": "viewer"},
    )
    plan = plan_for(path, live)
    assert not plan.has_changes
    assert plan.unchanged == ("group.onboarding",)
    assert plan.cost.total_calls == 0


def test_additions_removals_and_role_changes_are_typed_entries(write_manifest: Callable[..., Path]) -> None:
    plan = plan_for(write_manifest(GROUP), HOME_LIVE)
    (change,) = plan.changes
    actions = {(e.kind, e.key): e.action for e in change.entries}
    assert actions == {
        ("user", "old@agency.io"): Action.DELETE,
        ("user", "raj@customer.com"): Action.UPDATE,
        ("user", "priya@customer.com"): Action.CREATE,
    }
    assert (plan.summary.create, plan.summary.update, plan.summary.delete) == (1, 1, 1)


def test_removals_are_listed_first(write_manifest: Callable[..., Path]) -> None:
    (change,) = plan_for(write_manifest(GROUP), HOME_LIVE).changes
    assert [e.action for e in change.entries] == [Action.DELETE, Action.UPDATE, Action.CREATE]


def test_a_list_with_additions_or_removals_is_one_access_post(write_manifest: Callable[..., Path]) -> None:
    (change,) = plan_for(write_manifest(GROUP), HOME_LIVE).changes
    assert change.strategy == "replace"
    assert [(c.method, c.path) for c in change.calls] == [("POST", "/workspaces/ws_home/access")]
    assert change.after.users == {
        "jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "viewer",
    }


def test_role_only_changes_are_patches_of_the_entries(write_manifest: Callable[..., Path]) -> None:
    live = live_workspace(
        "ws_home",
        users={"jane@acme.com": "owner", "raj@customer.com": "viewer", "priya@customer.com": "viewer"},
        domains={"customer.com": "editor"},
    )
    (change,) = plan_for(write_manifest(GROUP), live).changes
    assert change.strategy == "patch"
    assert sorted((c.method, c.path) for c in change.calls) == [
        ("PATCH", "/workspace-domains/wd_ws_home_customer.com"),
        ("PATCH", "/workspace-users/wu_ws_home_raj@customer.com"),
    ]


def test_promotion_to_owner_is_patched_before_the_demotion(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users:
                - {email: a@acme.com, role: viewer}
                - {email: b@acme.com, role: owner}
    """)
    live = live_workspace("ws_p", users={"a@acme.com": "owner", "b@acme.com": "viewer"})
    (change,) = plan_for(path, live).changes
    assert [c.path for c in change.calls] == ["/workspace-users/wu_ws_p_b@acme.com", "/workspace-users/wu_ws_p_a@acme.com"]


def test_entries_carry_their_manifest_line(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP)
    (change,) = plan_for(path, HOME_LIVE).changes
    priya = next(e for e in change.entries if e.key == "priya@customer.com")
    assert priya.location == f"{path}:9"


def test_unknown_workspace_is_refused_with_its_location(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP)
    with pytest.raises(PlanError) as err:
        plan_for(path, live_workspace("ws_other", users={"x@y.com": "owner"}))
    assert "group.onboarding: workspace ws_home does not exist" in str(err.value)
    assert f"{path}:" in str(err.value)


def test_non_authoritative_list_leaves_unlisted_entries_alone(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users: [{email: lee@partner.io, role: commenter}]
              authoritative: false
    """)
    live = live_workspace("ws_p", users={"ops@acme.com": "owner", "temp@acme.com": "editor"})
    (change,) = plan_for(path, live).changes
    assert [(e.action, e.key) for e in change.entries] == [(Action.CREATE, "lee@partner.io")]
    assert change.after.users == {"ops@acme.com": "owner", "temp@acme.com": "editor", "lee@partner.io": "commenter"}


def test_non_authoritative_list_removes_what_state_says_it_added(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users: [{email: ops@acme.com, role: owner}]
              authoritative: false
    """)
    live = live_workspace("ws_p", users={"ops@acme.com": "owner", "lee@partner.io": "commenter", "temp@acme.com": "editor"})
    state = State(resources={"workspace.portal": ResourceState(
        id="ws_p", access=AccessRecord(users={"ops@acme.com": "owner", "lee@partner.io": "commenter"}))})
    (change,) = plan_for(path, live, state=state).changes
    assert [(e.action, e.key) for e in change.entries] == [(Action.DELETE, "lee@partner.io")]


def test_an_unlisted_entry_that_predates_the_tool_is_removed_with_the_date_it_was_listed_since(
    write_manifest: Callable[..., Path],
) -> None:
    # temp@acme.com was in the service before the manifest listed it; listing it
    # made it managed, and unlisting it now revokes it (Terraform's *_iam_member rule).
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users: [{email: ops@acme.com, role: owner}]
              authoritative: false
    """)
    live = live_workspace("ws_p", users={"ops@acme.com": "owner", "temp@acme.com": "editor"})
    state = State(resources={"workspace.portal": ResourceState(id="ws_p", access=AccessRecord(
        users={"ops@acme.com": "owner", "temp@acme.com": "editor"},
        since={"user:ops@acme.com": "2026-01-05", "user:temp@acme.com": "2026-03-01"}))})
    plan = plan_for(path, live, state=state)
    (entry,) = plan.changes[0].entries
    assert (entry.action, entry.key, entry.managed_since) == (Action.DELETE, "temp@acme.com", "2026-03-01")
    assert "REMOVED: loses access (left the manifest; listed since 2026-03-01)" in render_text(plan)


def test_plan_that_leaves_no_owner_is_refused(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users: [{email: lee@partner.io, role: commenter}]
              authoritative: false
    """)
    live = live_workspace("ws_p", users={"ops@acme.com": "viewer"})
    with pytest.raises(PlanError) as err:
        plan_for(path, live)
    assert "workspace.portal (ws_p) would have no user or domain with role owner" in str(err.value)


def test_target_limits_the_plan_to_an_address(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP + """
    workspaces:
      portal:
        id: ws_p
        access: {users: [{email: ops@acme.com, role: owner}]}
    """)
    live_p = live_workspace("ws_p", users={"ops@acme.com": "owner", "x@acme.com": "viewer"})
    plan = plan_for(path, HOME_LIVE, live_p, targets=("workspace.portal",))
    assert [c.address for c in plan.changes] == ["workspace.portal"]


def test_cost_counts_calls_and_the_reads_before_and_after_writing(write_manifest: Callable[..., Path]) -> None:
    plan = plan_for(write_manifest(GROUP), HOME_LIVE)
    assert plan.cost.calls_by_class == {"default": 3}
    assert plan.cost.refresh_reads == 2
    assert plan.cost.min_seconds == 0


def test_plan_is_bound_to_its_inputs(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(GROUP)
    state = State(serial=7)
    plan = plan_for(path, HOME_LIVE, state=state)
    assert plan.manifest_digest == load_desired(path).digest
    assert (plan.state_lineage, plan.state_serial) == (state.lineage, 7)
    moved = live_workspace("ws_home", users={"jane@acme.com": "owner"})
    assert plan.live_fingerprint != plan_for(path, moved, state=state).live_fingerprint


def test_a_list_with_no_entry_in_common_is_still_diffed_entry_by_entry(write_manifest: Callable[..., Path]) -> None:
    live = live_workspace("ws_home", users={"someone@else.io": "owner", "x@else.io": "editor"}, domains={"else.io": "viewer"})
    plan = plan_for(write_manifest(GROUP), live)
    (change,) = plan.changes
    actions = sorted((e.action.value, e.kind, e.key) for e in change.entries)
    assert actions == sorted(
        [
            (Action.DELETE.value, "user", "someone@else.io"),
            (Action.DELETE.value, "user", "x@else.io"),
            (Action.DELETE.value, "domain", "else.io"),
            (Action.CREATE.value, "user", "jane@acme.com"),
            (Action.CREATE.value, "user", "raj@customer.com"),
            (Action.CREATE.value, "user", "priya@customer.com"),
            (Action.CREATE.value, "domain", "customer.com"),
        ]
    )


UNMANAGED = """
    version: 1
    groups:
      onboarding:
        homepage: ws_home
        access:
          users:
            - {email: jane@acme.com, role: owner}
    assets:
      site: {type: link, url: "https://acme.com", name: Acme}
"""


def test_a_declared_asset_the_state_does_not_know_is_created(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(UNMANAGED)
    live = live_workspace("ws_home", users={"jane@acme.com": "owner"})
    (change,) = plan_for(path, live).changes
    assert (change.kind, change.action, change.address, change.location) == ("asset", "create", "asset.site", f"{path}:9")


def test_a_target_elsewhere_leaves_assets_out(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(UNMANAGED)
    live = live_workspace("ws_home", users={"jane@acme.com": "owner"})
    assert plan_for(path, live, targets=("group.onboarding",)).changes == ()


def _in_doubt(**record: object) -> State:
    """The state an apply leaves when asset.site's creation got no answer."""
    return State(resources={"asset.site": ResourceState(id="", asset={"type": "link", "uncertain": True, **record})})


def test_a_link_in_doubt_is_no_change_but_needs_a_person(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(UNMANAGED)
    plan = plan_for(path, live_workspace("ws_home", users={"jane@acme.com": "owner"}), state=_in_doubt())
    assert plan.changes == () and not plan.settled
    (doubt,) = plan.needs_person
    assert (doubt.address, doubt.cause, doubt.location, doubt.url) == (
        "asset.site", "creation-unanswered", f"{path}:9", "https://acme.com")
    assert render_text(plan).startswith("1 resource needs a person")


def test_the_commands_carry_the_path_and_state_given_quoted(write_manifest: Callable[..., Path]) -> None:
    from reconciler.plan.assets import CommandPaths

    path = write_manifest(UNMANAGED)
    plan = plan_for(path, live_workspace("ws_home", users={"jane@acme.com": "owner"}), state=_in_doubt(),
                    paths=CommandPaths(manifest="my manifests", state="/s/state.json"))
    assert [r.command for r in plan.needs_person[0].resolutions] == [
        "reconciler import asset.site ASSET_ID 'my manifests' --state /s/state.json",
        "reconciler state rm asset.site 'my manifests' --state /s/state.json"]


def test_without_a_state_flag_the_commands_name_only_the_path(write_manifest: Callable[..., Path]) -> None:
    from reconciler.plan.assets import CommandPaths

    path = write_manifest(UNMANAGED)
    plan = plan_for(path, live_workspace("ws_home", users={"jane@acme.com": "owner"}), state=_in_doubt(),
                    paths=CommandPaths(manifest="infra/access"))
    assert plan.needs_person[0].resolutions[1].command == "reconciler state rm asset.site infra/access"


def test_a_doubt_outside_the_targets_is_left_out(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest(UNMANAGED)
    plan = plan_for(path, live_workspace("ws_home", users={"jane@acme.com": "owner"}), state=_in_doubt(),
                    targets=("group.onboarding",))
    assert plan.needs_person == () and plan.settled
