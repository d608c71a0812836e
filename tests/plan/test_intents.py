"""Creations the state does not bind: adopted by their intent, created again, or left to a person
(reconciler/plan/intents.py).  Desired, Live and State built by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.live import LiveWorkspace
from reconciler.plan import render_markdown, render_text
from reconciler.plan.model import ConnectChange, CreateChange
from reconciler.state import CreationIntent, ResourceState, State
from tests.conftest import live_workspace
from tests.plan.test_workspace_changes import HOME, KICKOFF, KICKOFF_ADDRESS, ONE_MEMBER, WELCOME, kinds, plan_for

Write = Callable[..., Path]

INTENDED_AT = "2026-11-27T20:00:00Z"
INTENT = CreationIntent(at=INTENDED_AT, name="Kickoff", account="acc_1", template="tpl_kickoff",
                        group="group.onboarding", homepage="ws_home")
OPEN = State(resources={KICKOFF_ADDRESS: ResourceState(id="", intent=INTENT)})

# A member to connect, and a member to create.
CONNECT_AND_CREATE = ONE_MEMBER + """          kickoff:
            template: tpl_kickoff
            name: Kickoff
"""


def made(workspace_id: str, created_at: str | None = "2026-11-27T20:00:01.000Z", *,
         name: str = "Kickoff", account_id: str = "acc_1") -> LiveWorkspace:
    """A workspace of the kickoff's template, as the listing shows it."""
    return live_workspace(workspace_id, name=name, account_id=account_id, template_id="tpl_kickoff",
                          created_at=created_at)


def test_an_open_intent_matched_by_one_workspace_is_adopted_and_nothing_is_created(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_000033"), state=OPEN, complete=True)
    assert [(a.address, a.workspace_id, a.homepage_id, a.template_id) for a in plan.adopted] == [
        (KICKOFF_ADDRESS, "ws_000033", "ws_home", "tpl_kickoff")]
    assert not any(isinstance(c, CreateChange) for c in plan.changes)
    assert plan.cost.workspace_credits == 0 and plan.needs_person == ()
    assert not plan.settled, "an adoption is recorded by apply: never 'No changes'"


def test_the_plan_says_what_it_adopted_in_text_and_markdown(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_000033"), state=OPEN, complete=True)
    said = (f"adopted ws_000033: created by the interrupted apply of {INTENDED_AT}, name, account and template "
            "match its recorded intent")
    assert render_text(plan).splitlines()[:2] == [
        "1 workspace created by an interrupted apply, found again by its recorded intent (apply records it; no "
        "call, no credit):",
        f"  {KICKOFF_ADDRESS} ({path}:8): {said}"]
    assert f"- `{KICKOFF_ADDRESS}` ({path}:8): {said}" in render_markdown(plan)
    assert render_markdown(plan).splitlines()[0] == "### reconciler plan: adoptions to record"
    assert "Nothing else to change (1 access list checked)." in render_text(plan).splitlines()


def test_an_adopted_member_connected_elsewhere_by_its_intent_is_connected_to_its_group(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    moved = State(resources={KICKOFF_ADDRESS: ResourceState(
        id="", intent=INTENT.model_copy(update={"homepage": "ws_old_home"}))})
    plan = plan_for(path, HOME, made("ws_000033"), state=moved, complete=True)
    assert [a.workspace_id for a in plan.adopted] == ["ws_000033"]
    assert ("connect", KICKOFF_ADDRESS) in kinds(plan), "recorded as connected where the intent sent it"
    assert not any(isinstance(c, CreateChange) for c in plan.changes)


def test_a_workspace_created_before_the_intent_is_not_adopted_and_needs_a_person(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    older = made("ws_old", created_at="2026-11-27T19:00:00.000Z")  # an hour before the intent
    plan = plan_for(path, HOME, older, state=OPEN, complete=True)
    assert plan.adopted == () and kinds(plan) == []
    (doubt,) = plan.needs_person
    assert (doubt.kind, doubt.cause, doubt.workspace_ids) == ("workspace", "namesake-exists", ("ws_old",))
    assert doubt.reason == (
        "workspace ws_old \"Kickoff\" of the same account and template tpl_kickoff already exists, the state does "
        f"not know it and it was created before the interrupted apply of {INTENDED_AT} recorded its intent, so it "
        "is not that apply's creation; creating another would spend a second credit, so the creation is not "
        "planned")


def test_a_workspace_created_within_the_clock_skew_before_the_intent_is_adopted(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_000033", created_at="2026-11-27T19:57:00.000Z"), state=OPEN,
                    complete=True)
    assert [a.workspace_id for a in plan.adopted] == ["ws_000033"]


def test_a_listing_without_created_at_adopts_on_name_account_and_template(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_000033", created_at=None), state=OPEN, complete=True)
    assert [a.workspace_id for a in plan.adopted] == ["ws_000033"]


def test_a_workspace_of_another_name_or_account_is_not_adopted(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_a", name="Kickoff 2"), made("ws_b", account_id="acc_2"), state=OPEN,
                    complete=True)
    assert plan.adopted == () and kinds(plan) == [("create", KICKOFF_ADDRESS), ("access", KICKOFF_ADDRESS)]


def test_two_workspaces_matching_an_intent_need_a_person_with_an_import_for_each(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, made("ws_1"), made("ws_2"), state=OPEN, complete=True)
    assert plan.adopted == () and kinds(plan) == []
    (doubt,) = plan.needs_person
    assert doubt.cause == "several-candidates"
    assert render_text(plan).splitlines()[:5] == [
        "1 resource needs a person (nothing is sent for it until then):",
        f"  {KICKOFF_ADDRESS} ({path}:8): the interrupted apply of {INTENDED_AT} sent its creation, and 2 "
        "workspaces match its recorded intent (ws_1, ws_2: \"Kickoff\", account acc_1, template tpl_kickoff); "
        "which one it made cannot be told, so none is adopted and no other is created.",
        "    Open ws_1 and ws_2 in the web app and find the one this entry stands for.",
        f"    If ws_1 is the one it stands for: reconciler import {KICKOFF_ADDRESS} ws_1 {path.parent}",
        f"    If ws_2 is the one it stands for: reconciler import {KICKOFF_ADDRESS} ws_2 {path.parent}",
    ]


def test_an_open_intent_matched_by_none_is_created_again_saying_why(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    plan = plan_for(path, HOME, state=OPEN, complete=True)
    (create,) = [c for c in plan.changes if isinstance(c, CreateChange)]
    assert create.reason == (f"the interrupted apply of {INTENDED_AT} recorded this creation and no workspace "
                             "matches it: it was not made, so it is created now (uses 1 workspace credit)")
    assert plan.cost.workspace_credits == 1 and plan.adopted == () and plan.needs_person == ()


def test_a_namesake_without_an_intent_needs_a_person_and_the_rest_is_planned(write_manifest: Write) -> None:
    path = write_manifest(CONNECT_AND_CREATE)
    plan = plan_for(path, HOME, WELCOME, made("ws_000033"), complete=True)
    assert kinds(plan) == [("connect", "group.onboarding.workspace.welcome")]
    assert isinstance(plan.changes[0], ConnectChange)
    kickoff = "group.onboarding.workspace.kickoff"
    assert render_text(plan).splitlines()[:5] == [
        "1 resource needs a person (nothing is sent for it until then):",
        f"  {kickoff} ({path}:8): workspace ws_000033 \"Kickoff\" of the same account and template tpl_kickoff "
        "already exists, the state does not know it and records no intent to create it (an apply whose state was "
        "lost may have made it); creating another would spend a second credit, so the creation is not planned.",
        "    Open ws_000033 in the web app: if it is the one this entry stands for, import it; if not, give the "
        "member another name in the manifest.",
        f"    If ws_000033 is the one it stands for: reconciler import {kickoff} ws_000033 {path.parent}",
        "",
    ]
    assert not plan.settled


def test_a_creation_the_state_binds_is_neither_adopted_nor_doubted(write_manifest: Write) -> None:
    path = write_manifest(KICKOFF)
    state = State(resources={KICKOFF_ADDRESS: ResourceState(id="ws_000033", connected_to="ws_home",
                                                            template="tpl_kickoff")})
    plan = plan_for(path, HOME, made("ws_000033"), made("ws_other"), state=state, complete=True)
    assert plan.adopted == () and plan.needs_person == () and kinds(plan) == []
