"""What a reviewer reads first: privilege classes, flags, the per-person view,
who gets emailed, drift.  Pure: Desired from YAML, Live and State by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.commands.plan import command_paths
from reconciler.manifest import load_desired
from reconciler.plan import make_plan, render_text
from reconciler.plan.assets import CommandPaths
from reconciler.plan.people import people, totals
from reconciler.vocabulary import ROLE_ORDER, privilege, rank
from reconciler.state import AccessRecord, ResourceState, State
from tests.conftest import live_of, live_workspace

Write = Callable[..., Path]

GROUP_OF_THREE = """
    version: 1
    groups:
      acme:
        homepage: ws_home
        access:
          users:
            - {email: jane@acme.com, role: owner}
            - {email: raj@customer.com, role: editor}
            - {email: priya@customer.com, role: viewer}
          domains:
            - {domain: customer.com, role: commenter}
          notify: true
        workspaces:
          a: {id: ws_a}
          b: {template: tpl_1, name: Kickoff}
"""

LIVE = (
    live_workspace("ws_home", users={"jane@acme.com": "editor", "raj@customer.com": "viewer",
                                     "old@agency.io": "owner", "bob@customer.com": "collaborator"},
                   domains={"customer.com": "viewer"}, name="Home"),
    live_workspace("ws_a", name="A"),
)


def _plan(path: Path, state: State | None = None):  # type: ignore[no-untyped-def]
    return make_plan(load_desired(path), live_of(*LIVE), state or State())


def _entries(plan) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {e.key: e for c in plan.access_changes for e in c.entries}


def test_the_role_order_is_written_down_once() -> None:
    assert ROLE_ORDER == ("viewer", "commenter", "collaborator", "editor", "owner")
    assert rank("owner") > rank("editor") > rank("collaborator") > rank("commenter") > rank("viewer")


@pytest.mark.parametrize(("before", "after", "expected"), [
    (None, "viewer", "grant"), ("viewer", "editor", "escalation"), ("commenter", "collaborator", "escalation"),
    ("editor", "owner", "escalation"), ("owner", "viewer", "downgrade"), ("collaborator", "commenter", "downgrade"),
    ("editor", None, "revocation"),
])
def test_each_change_of_role_has_its_privilege_class(before, after, expected) -> None:  # type: ignore[no-untyped-def]
    assert privilege(before, after) == expected


def test_every_entry_change_of_a_plan_is_classified(write_manifest: Write) -> None:
    entries = _entries(_plan(write_manifest(GROUP_OF_THREE)))
    assert {k: e.privilege for k, e in entries.items()} == {
        "old@agency.io": "revocation", "bob@customer.com": "revocation", "jane@acme.com": "escalation",
        "raj@customer.com": "escalation", "priya@customer.com": "grant", "customer.com": "escalation",
    }


def test_changes_touching_owner_or_a_whole_domain_are_flagged(write_manifest: Write) -> None:
    entries = _entries(_plan(write_manifest(GROUP_OF_THREE)))
    assert entries["jane@acme.com"].flags == ("owner",)
    assert entries["old@agency.io"].flags == ("owner",)
    assert entries["customer.com"].flags == ("domain-wide",)
    assert entries["priya@customer.com"].flags == ()


def test_the_text_plan_leads_with_revocations_then_escalations(write_manifest: Write) -> None:
    text = render_text(_plan(write_manifest(GROUP_OF_THREE)))
    head = text[: text.index("  # group.acme")]
    assert (head.index("Review first: 2 revocations, 3 escalations, 2 owner grants, 2 domain grants")
            < head.index("revocation group.acme"))
    lines = [line.split()[0] for line in head.splitlines()[3:] if line.startswith("  ")]
    assert lines == ["revocation", "revocation", "escalation", "escalation", "escalation", "owner", "owner", "domain",
                     "domain"]
    # ws_a joins with an empty list of its own and Kickoff is new: there jane and customer.com are
    # granted their roles; the escalations happen on the homepage only.
    assert "user jane@acme.com editor -> owner on 1 workspace [owner]" in head
    assert "domain customer.com viewer -> commenter on 1 workspace [domain-wide]" in head
    # ws_a's join and Kickoff's creation are access changes of their own: jane's new ownership and the
    # domain's grant there are read first (issue 38 item 5: a creation's grants are judged like any).
    for member in ("a", "b"):
        assert f"owner grant group.acme.workspace.{member}: user jane@acme.com gains owner [owner]" in head
        assert (f"domain grant group.acme.workspace.{member}: domain customer.com gains commenter [domain-wide]"
                in head)


def test_a_group_change_names_every_workspace_it_reaches(write_manifest: Write) -> None:
    change = next(c for c in _plan(write_manifest(GROUP_OF_THREE)).access_changes if c.address == "group.acme")
    assert change.reaches == ('ws_home "Home"', 'ws_a "A"', 'new "Kickoff"')
    assert "# the group's list reaches 3 workspaces: ws_home \"Home\", ws_a \"A\", new \"Kickoff\"" in render_text(
        _plan(write_manifest(GROUP_OF_THREE)))


def test_the_per_person_view_expands_a_group_to_each_of_its_workspaces(write_manifest: Write) -> None:
    # Each workspace from the list it holds now: the homepage its own, ws_a (joining) its own empty
    # one, the new Kickoff none; each ends with the group's list.  ws_a's row comes from its join,
    # Kickoff's from its creation (each counted once: the group's change leaves them out of its reach).
    found = {p.key: p for p in people(_plan(write_manifest(GROUP_OF_THREE)))}
    raj = found["raj@customer.com"]
    assert [(c.workspace, c.address, c.before, c.after, c.privilege) for c in raj.changes] == [
        ('ws_a "A"', "group.acme.workspace.a", None, "editor", "grant"),
        ('new "Kickoff"', "group.acme.workspace.b", None, "editor", "grant"),
        ('ws_home "Home"', "group.acme", "viewer", "editor", "escalation"),
    ]
    assert list(found) == ["bob@customer.com", "jane@acme.com", "old@agency.io", "priya@customer.com",
                           "raj@customer.com", "customer.com"]
    # home: 2 revocations (bob, old), 3 escalations (jane, raj, customer.com), 1 grant (priya);
    # ws_a and Kickoff: 4 grants each (jane, priya, raj, customer.com).
    assert totals(list(found.values())) == {"grant": 9, "escalation": 3, "downgrade": 0, "revocation": 2}


def test_by_person_text_lists_each_person_and_the_totals(write_manifest: Write) -> None:
    text = render_text(_plan(write_manifest(GROUP_OF_THREE)), by_person=True)
    section = text[text.index("By person:"):]
    assert section.startswith("By person: 6 people or domains; on workspaces: 9 grants, 3 escalations, "
                              "0 downgrades, 2 revocations")
    assert '    revocation ws_home "Home": loses owner (group.acme)' in section
    assert '    grant      ws_a "A": gains owner (group.acme.workspace.a)' in section


def test_the_plan_lists_who_the_service_will_email(write_manifest: Write) -> None:
    plan = _plan(write_manifest(GROUP_OF_THREE))
    change = next(c for c in plan.access_changes if c.address == "group.acme")
    assert change.notified == ("priya@customer.com",)  # newly added users only: no domain, no role change
    assert "# emails priya@customer.com" in render_text(plan)


def test_a_change_that_undoes_one_made_outside_the_tool_is_labelled_drift(write_manifest: Write) -> None:
    # Last applied: raj collaborator. The service shows raj viewer: someone changed it since, and
    # the manifest's editor undoes that (drift).  jane, old and customer.com are as recorded.
    path = write_manifest(GROUP_OF_THREE)
    state = State(resources={"group.acme": ResourceState(id="ws_home", access=AccessRecord(
        users={"jane@acme.com": "editor", "raj@customer.com": "collaborator", "old@agency.io": "owner"},
        domains={"customer.com": "viewer"}))})
    entries = _entries(_plan(path, state))
    assert "drift" in entries["raj@customer.com"].flags
    assert "changed outside reconciler" in entries["raj@customer.com"].reason
    assert [k for k, e in entries.items() if "drift" in e.flags] == ["raj@customer.com"]
    assert "[drift]" in render_text(_plan(path, state))


def test_an_entry_the_state_never_recorded_is_labelled_not_managed_before(write_manifest: Write) -> None:
    # bob is in the service and was never recorded (there before the tool, or granted in the web
    # app): removing him undoes nothing reconciler did, so it is not drift.
    path = write_manifest(GROUP_OF_THREE)
    state = State(resources={"group.acme": ResourceState(id="ws_home", access=AccessRecord(
        users={"jane@acme.com": "editor", "raj@customer.com": "viewer", "old@agency.io": "owner"},
        domains={"customer.com": "viewer"}))})
    plan = _plan(path, state)
    bob = _entries(plan)["bob@customer.com"]
    assert bob.flags == ("not managed before",)
    assert bob.reason.endswith("; never recorded by reconciler")
    assert not any("drift" in e.flags for e in _entries(plan).values())
    assert "bob@customer.com    collaborator   REMOVED: loses access [not managed before]" in render_text(plan)


def test_a_recorded_entry_removed_by_hand_and_listed_again_is_drift(write_manifest: Write) -> None:
    path = write_manifest(GROUP_OF_THREE)
    state = State(resources={"group.acme": ResourceState(id="ws_home", access=AccessRecord(
        users={"jane@acme.com": "editor", "raj@customer.com": "viewer", "old@agency.io": "owner",
               "priya@customer.com": "viewer"},
        domains={"customer.com": "viewer"}))})
    assert "drift" in _entries(_plan(path, state))["priya@customer.com"].flags


# A list and a section value only the state can say were applied.
PORTAL = """
    version: 1
    workspaces:
      portal:
        id: ws_p
        access: {users: [{email: ops@acme.com, role: owner}], authoritative: false}
        sections: {sec_1: {hidden: true}}
"""


def test_a_plan_without_a_state_file_says_what_it_cannot_know(write_manifest: Write) -> None:
    path = write_manifest(PORTAL)
    live = live_of(live_workspace("ws_p", users={"ops@acme.com": "owner"}))
    (warning,) = make_plan(load_desired(path), live, State()).warnings
    assert warning.startswith("There is no state file: reconciler cannot know which entries of non-authoritative "
                              "lists it manages, so it removes none; which memberships and section, page and task "
                              "values it applied, so it sends them all.")
    assert make_plan(load_desired(path), live, State(lineage="x", serial=3)).warnings == ()


def test_the_plan_counts_the_workspaces_no_manifest_names(write_manifest: Write) -> None:
    from reconciler.live import Live

    path = write_manifest(GROUP_OF_THREE)
    home, a = LIVE
    listed = Live(workspaces={w.id: w for w in (*LIVE, live_workspace("ws_x", name="X"))}, pages_read=1,
                  complete=True, reported_total=3)
    assert make_plan(load_desired(path), listed, State()).unmanaged_count == 1
    shown = make_plan(load_desired(path), listed, State(), show_unmanaged=True)
    assert shown.unmanaged == ('ws_x "X"',)
    assert '1 workspace of the company is in no manifest:\n  ws_x "X"' in render_text(shown)
    assert make_plan(load_desired(path), listed, State(), targets=("group.acme",)).unmanaged_count is None


def test_a_plan_on_an_empty_postgresql_state_does_not_speak_of_a_state_file(write_manifest: Write) -> None:
    path = write_manifest(PORTAL)
    live = live_of(live_workspace("ws_p", users={"ops@acme.com": "owner"}))
    paths = CommandPaths(manifest=str(path), state="postgresql://u@h/db", state_in_postgres=True)
    assert make_plan(load_desired(path), live, State(), paths=paths).warnings == (
        "The PostgreSQL state is empty: reconciler cannot know which entries of non-authoritative lists it manages, "
        "so it removes none; which memberships and section, page and task values it applied, so it sends them all. "
        "If the state is kept elsewhere (another database, schema or key, or a state file), plan with it "
        "(--state).",)


def test_a_postgresql_state_address_is_told_apart_from_a_file() -> None:
    assert command_paths(Path("m"), "postgresql://u@h/db").state_in_postgres is True
    assert command_paths(Path("m"), "reconciler.state.json").state_in_postgres is False


def test_an_editor_lowered_to_viewer_is_not_under_review_first_and_an_owner_lowered_is(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_p
            access:
              users: [{email: ops@acme.com, role: owner}, {email: ed@acme.com, role: viewer},
                      {email: was.owner@acme.com, role: editor}]
    """)
    live = live_of(live_workspace("ws_p", users={"ops@acme.com": "owner", "ed@acme.com": "editor",
                                                 "was.owner@acme.com": "owner"}))
    text = render_text(make_plan(load_desired(path), live, State(lineage="x", serial=1)))
    assert [line for line in text.splitlines() if line.startswith(("Review first", "  owner"))] == [
        "Review first: 1 owner downgrade",
        "  owner downgrade workspace.portal: user was.owner@acme.com owner -> editor [owner]"]
