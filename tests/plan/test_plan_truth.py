"""The plan says only what is true: entries of non-authoritative lists left
alone for lack of state are named; a group's list reaches the members no
manifest names (found by the homepage's shared entries); each workspace of a
group is counted from the list it holds now.  Pure: Desired from YAML, Live
and State by hand.  The emulator versions are in tests/e2e/test_plan_truth.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from reconciler.live import LiveEntry, LiveWorkspace
from reconciler.manifest import load_desired
from reconciler.plan import make_plan, render_markdown, render_text
from reconciler.plan.people import people
from reconciler.plan.planner import needs_complete_listing
from reconciler.state import AccessRecord, ResourceState, State
from tests.conftest import live_of, live_workspace

Write = Callable[..., Path]

PORTAL = """
    version: 1
    workspaces:
      partner-portal:
        id: ws_portal
        access:
          users:
            - {email: ops@acme.com, role: owner}
          authoritative: false
"""
PORTAL_LIVE = live_workspace("ws_portal", users={"ops@acme.com": "owner", "kim@partner.io": "viewer"},
                             domains={"partner.io": "commenter"}, name="Portal")

GROUP = """
    version: 1
    groups:
      acme:
        homepage: ws_home
        access:
          users:
            - {email: jane@acme.com, role: owner}
"""


def _shared(workspace_id: str, users: dict[str, str], *, entry_of: str, name: str) -> LiveWorkspace:
    """A workspace showing the very entries (same ids) of ``entry_of``: connected to it."""
    return LiveWorkspace(id=workspace_id, name=name, users={
        k: LiveEntry(id=f"wu_{entry_of}_{k}", key=k, role=r) for k, r in users.items()})


# --- entries left alone for lack of state ------------------------------------------------------

def test_without_state_every_unlisted_entry_of_a_non_authoritative_list_is_named(write_manifest: Write) -> None:
    plan = make_plan(load_desired(write_manifest(PORTAL)), live_of(PORTAL_LIVE), State())
    assert not plan.has_changes
    assert [(e.address, e.kind, e.key, e.role) for e in plan.left_alone] == [
        ("workspace.partner-portal", "user", "kim@partner.io", "viewer"),
        ("workspace.partner-portal", "domain", "partner.io", "commenter"),
    ]
    assert plan.left_alone[0].location is not None and plan.left_alone[0].location.endswith("manifest.yaml:5")


def test_the_left_alone_entries_are_shown_in_text_markdown_and_json(write_manifest: Write) -> None:
    plan = make_plan(load_desired(write_manifest(PORTAL)), live_of(PORTAL_LIVE), State())
    line = "kim@partner.io viewer on workspace.partner-portal: not listed; no state says whether reconciler granted it"
    assert f"  {line}\n" in render_text(plan)
    assert ("> - user `kim@partner.io` viewer on `workspace.partner-portal`: not listed; no state says whether "
            "reconciler granted it\n") in render_markdown(plan)
    assert json.loads(plan.model_dump_json())["left_alone"][0] == {
        "address": "workspace.partner-portal", "workspace_id": "ws_portal", "kind": "user", "key": "kim@partner.io",
        "role": "viewer", "location": plan.left_alone[0].location}


def test_with_a_state_nothing_is_left_alone_for_lack_of_it(write_manifest: Write) -> None:
    state = State(lineage="l-1", resources={"workspace.partner-portal": ResourceState(
        id="ws_portal", access=AccessRecord(users={"ops@acme.com": "owner"}))})
    plan = make_plan(load_desired(write_manifest(PORTAL)), live_of(PORTAL_LIVE), state)
    assert plan.left_alone == ()


def test_an_authoritative_list_leaves_nothing_alone(write_manifest: Write) -> None:
    text = PORTAL.replace("          authoritative: false\n", "")
    plan = make_plan(load_desired(write_manifest(text)), live_of(PORTAL_LIVE), State())
    assert plan.left_alone == ()
    assert {e.key for _, e in plan.removals} == {"kim@partner.io", "partner.io"}


# --- a group's reach: members no manifest names --------------------------------------------------

def test_a_workspace_showing_the_homepages_entries_is_reached_as_a_probable_member(write_manifest: Write) -> None:
    home = live_workspace("ws_home", users={"jane@acme.com": "owner", "raj@customer.com": "viewer"}, name="Home")
    kickoff = _shared("ws_kickoff", {"jane@acme.com": "owner", "raj@customer.com": "viewer"},
                      entry_of="ws_home", name="Kickoff")
    alike = live_workspace("ws_alike", users={"jane@acme.com": "owner", "raj@customer.com": "viewer"}, name="Alike")
    plan = make_plan(load_desired(write_manifest(GROUP)), live_of(home, kickoff, alike, complete=True), State())
    (change,) = plan.access_changes
    # The same roles under other entry ids is a list of its own, not the group's.
    assert [(r.workspace_id, r.probable) for r in change.reach] == [("ws_home", False), ("ws_kickoff", True)]
    assert change.reaches[1].startswith('ws_kickoff "Kickoff" (probably a member')
    assert any("ws_kickoff" in w and "probably connected to the group by hand" in w for w in plan.warnings)
    raj = next(p for p in people(plan) if p.key == "raj@customer.com")
    assert [(c.workspace.split()[0], c.privilege) for c in raj.changes] == [("ws_home", "revocation"),
                                                                            ("ws_kickoff", "revocation")]


def test_a_declared_member_is_not_called_probable(write_manifest: Write) -> None:
    home = live_workspace("ws_home", users={"jane@acme.com": "owner", "raj@customer.com": "viewer"}, name="Home")
    kickoff = _shared("ws_kickoff", {"jane@acme.com": "owner", "raj@customer.com": "viewer"},
                      entry_of="ws_home", name="Kickoff")
    text = GROUP + "        workspaces:\n          kickoff: {id: ws_kickoff}\n"
    plan = make_plan(load_desired(write_manifest(text)), live_of(home, kickoff, complete=True), State())
    change = plan.access_changes[0]
    assert [(r.workspace_id, r.probable) for r in change.reach] == [("ws_home", False), ("ws_kickoff", False)]
    assert not any("probably" in w for w in plan.warnings)


def test_a_group_with_a_list_makes_the_plan_list_every_workspace(write_manifest: Write) -> None:
    assert needs_complete_listing(load_desired(write_manifest(GROUP)), State())
    assert not needs_complete_listing(load_desired(write_manifest(GROUP)), State(), targets=("workspace.x",))


def test_a_standalone_workspace_with_a_list_makes_the_plan_list_every_workspace(write_manifest: Write) -> None:
    """Issue 38: its list may be shared, by hand, with a workspace no manifest names."""
    assert needs_complete_listing(load_desired(write_manifest(PORTAL)), State())
    assert not needs_complete_listing(load_desired(write_manifest(PORTAL)), State(), targets=("group.x",))
    without_list = "\n    version: 1\n    workspaces:\n      portal: {id: ws_portal}\n"
    assert not needs_complete_listing(load_desired(write_manifest(without_list)), State())


# --- each workspace counted from the list it holds -------------------------------------------

def test_a_member_joining_with_a_list_of_its_own_is_counted_from_that_list(write_manifest: Write) -> None:
    # ws_qbr joins: the service replaces its own list (jane owner, bob editor) by the group's.
    home = live_workspace("ws_home", users={"jane@acme.com": "owner", "old@agency.io": "editor"}, name="Home")
    qbr = live_workspace("ws_qbr", users={"jane@acme.com": "owner", "bob@acme.com": "editor"}, name="QBR")
    text = GROUP + "        workspaces:\n          qbr: {id: ws_qbr}\n"
    plan = make_plan(load_desired(write_manifest(text)), live_of(home, qbr), State())
    rows = {(p.key, c.workspace.split()[0]): (c.before, c.after) for p in people(plan) for c in p.changes}
    assert rows == {("old@agency.io", "ws_home"): ("editor", None), ("bob@acme.com", "ws_qbr"): ("editor", None)}
    assert "loses editor on 1 workspace" in render_text(plan)
