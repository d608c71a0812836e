"""The effects model on its own: changes followed on live lists by the
service's documented rules (reconciler/plan/effects.py).  Pure: the
changes and the live lists are built by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.live import LiveEntry, LiveWorkspace
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.plan.effects import effects, simulate
from reconciler.plan.model import (
    AccessChange,
    AccessSnapshot,
    ApiCall,
    ConnectChange,
    CreateChange,
    EntryChange,
)
from reconciler.state import ResourceState, State
from tests.conftest import live_of, live_workspace

Write = Callable[..., Path]
POST = (ApiCall(method="POST", path="/workspaces/x/access"),)


def shared(workspace_id: str, users: dict[str, str], name: str | None = None) -> LiveWorkspace:
    """A group member: the same entry ids as every other member built with the same users."""
    return LiveWorkspace(id=workspace_id, name=name,
                         users={k: LiveEntry(id=f"wu_shared_{k}", key=k, role=r) for k, r in users.items()})  # type: ignore[arg-type]


def post(workspace_id: str, after: dict[str, str], entries: tuple[EntryChange, ...]) -> AccessChange:
    return AccessChange(address=f"workspace.{workspace_id}", workspace_id=workspace_id, strategy="replace",
                        entries=entries, before=AccessSnapshot(), after=AccessSnapshot(users=after),  # type: ignore[arg-type]
                        calls=POST)


def added(key: str, role: str) -> EntryChange:
    return EntryChange(kind="user", key=key, action="create", after=role)  # type: ignore[arg-type]


def test_a_post_on_one_member_changes_every_workspace_sharing_its_list() -> None:
    live = live_of(shared("ws_h", {"jane@acme.com": "owner"}), shared("ws_m", {"jane@acme.com": "owner"}),
                   live_workspace("ws_other", users={"jane@acme.com": "owner"}))
    sim = simulate([post("ws_m", {"jane@acme.com": "owner", "bo@acme.com": "viewer"},
                         (added("bo@acme.com", "viewer"),))], live)
    found = {e.workspace: e for e in effects(sim, live)}
    assert set(found) == {"ws_h", "ws_m"}  # ws_other holds a list of its own with the same content
    assert found["ws_h"].after.snapshot().users == {"jane@acme.com": "owner", "bo@acme.com": "viewer"}
    assert found["ws_h"].because == ("workspace.ws_m",)


def test_a_post_of_users_only_keeps_the_domains() -> None:
    ws = live_workspace("ws_1", users={"jane@acme.com": "owner"}, domains={"acme.com": "viewer"})
    live = live_of(ws)
    sim = simulate([post("ws_1", {"jane@acme.com": "owner", "bo@acme.com": "editor"},
                         (added("bo@acme.com", "editor"),))], live)
    (effect,) = effects(sim, live)
    assert effect.after.snapshot().domains == {"acme.com": "viewer"}


def test_a_patch_changes_one_role_on_the_shared_list() -> None:
    live = live_of(shared("ws_h", {"jane@acme.com": "owner", "bo@acme.com": "viewer"}),
                   shared("ws_m", {"jane@acme.com": "owner", "bo@acme.com": "viewer"}))
    patch = AccessChange(address="group.g", workspace_id="ws_h", strategy="patch",
                         entries=(EntryChange(kind="user", key="bo@acme.com", action="update",  # type: ignore[arg-type]
                                              before="viewer", after="editor"),),
                         before=AccessSnapshot(), after=AccessSnapshot(),
                         calls=(ApiCall(method="PATCH", path="/workspace-users/wu"),))
    sim = simulate([patch], live)
    assert {e.workspace: e.after.snapshot().users["bo@acme.com"] for e in effects(sim, live)} == {
        "ws_h": "editor", "ws_m": "editor"}


def test_a_connect_gives_the_joining_workspace_the_groups_list() -> None:
    live = live_of(live_workspace("ws_h", users={"jane@acme.com": "owner"}),
                   live_workspace("ws_j", users={"cfo@acme.com": "owner"}, name="J"))
    connect = ConnectChange(address="group.g.workspace.j", group="group.g", homepage_id="ws_h", workspace_id="ws_j")
    (effect,) = effects(simulate([connect], live), live)
    assert (effect.workspace, effect.name, effect.because) == ("ws_j", "J", ("group.g.workspace.j",))
    assert effect.before.snapshot().users == {"cfo@acme.com": "owner"}
    assert effect.after.snapshot().users == {"jane@acme.com": "owner"}


def test_connecting_a_workspace_already_in_the_group_changes_nothing() -> None:
    live = live_of(shared("ws_h", {"jane@acme.com": "owner"}), shared("ws_j", {"jane@acme.com": "owner"}))
    connect = ConnectChange(address="group.g.workspace.j", group="group.g", homepage_id="ws_h", workspace_id="ws_j")
    sim = simulate([connect], live)
    assert effects(sim, live) == ()
    assert sim.joined == set()


def test_a_creation_without_lists_holds_the_groups_list_and_changes_no_other() -> None:
    live = live_of(shared("ws_h", {"jane@acme.com": "owner"}), shared("ws_m", {"jane@acme.com": "owner"}))
    create = CreateChange(address="group.g.workspace.new", group="group.g", homepage_id="ws_h",
                          template_id="tpl", name="New")
    (effect,) = effects(simulate([create], live), live)
    assert (effect.workspace, effect.creates, effect.name) == (None, "group.g.workspace.new", "New")
    assert effect.before.snapshot() == AccessSnapshot()
    assert effect.after.snapshot().users == {"jane@acme.com": "owner"}


def test_a_creation_with_lists_replaces_them_for_the_whole_group() -> None:
    live = live_of(shared("ws_h", {"jane@acme.com": "owner"}), shared("ws_m", {"jane@acme.com": "owner"}))
    lists = AccessSnapshot(users={"ana@acme.com": "owner"})
    create = CreateChange(address="group.g.workspace.new", group="group.g", homepage_id="ws_h",
                          template_id="tpl", name="New", access=lists, access_address="group.g")
    found = {e.workspace: e for e in effects(simulate([create], live), live)}
    assert set(found) == {"ws_h", "ws_m", None}
    assert all(e.after.snapshot() == lists for e in found.values())
    assert found["ws_m"].because == ("group.g",)


def test_a_member_recorded_with_another_workspace_id_shows_that_workspaces_loss(write_manifest: Write) -> None:
    # A state edited (or gone stale) to bind the member to ws_other: the plan connects ws_other, and
    # shows what ws_other loses, instead of "0 changes".
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_h
            workspaces:
              margins: {template: tpl, name: Margins}
    """)
    state = State(resources={"group.g.workspace.margins": ResourceState(id="ws_other", template="tpl")})
    live = live_of(live_workspace("ws_h", users={"jane@acme.com": "owner"}, account_id="acc"),
                   live_workspace("ws_other", users={"cfo@acme.com": "owner"}, name="Margins", account_id="acc",
                                  template_id="tpl"))
    plan = make_plan(load_desired(path), live, state)
    (join,) = [c for c in plan.access_changes if c.governs == "join"]
    assert (join.workspace_id, [(e.key, e.action.value) for e in join.entries]) == (
        "ws_other", [("cfo@acme.com", "delete"), ("jane@acme.com", "create")])
    assert plan.summary.delete == 1


def test_the_per_person_view_shows_who_gains_a_workspace_created_in_an_unchanged_group(write_manifest: Write) -> None:
    from reconciler.plan.people import people

    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_h
            workspaces:
              kickoff: {template: tpl, name: Kickoff}
    """)
    live = live_of(live_workspace("ws_h", users={"jane@acme.com": "owner"}, domains={"customer.com": "viewer"},
                                  account_id="acc"))
    found = {p.key: [(c.workspace, c.address, c.before, c.after, c.privilege) for c in p.changes]
             for p in people(make_plan(load_desired(path), live, State()))}
    assert found == {
        "jane@acme.com": [('new "Kickoff"', "group.g.workspace.kickoff", None, "owner", "grant")],
        "customer.com": [('new "Kickoff"', "group.g.workspace.kickoff", None, "viewer", "grant")],
    }


def test_a_connect_to_a_list_holding_what_the_workspace_holds_is_not_a_cause_of_its_change() -> None:
    # ws_j's own list holds what the group's does (other entries, the same content): the connect changes nothing
    # for it; the post on the group's list after it does.
    live = live_of(live_workspace("ws_h", users={"jane@acme.com": "owner"}),
                   live_workspace("ws_j", users={"jane@acme.com": "owner"}))
    connect = ConnectChange(address="group.g.workspace.j", group="group.g", homepage_id="ws_h", workspace_id="ws_j")
    sim = simulate([connect, post("ws_h", {"jane@acme.com": "owner", "bo@acme.com": "viewer"},
                                  (added("bo@acme.com", "viewer"),))], live)
    found = {e.workspace: e.because for e in effects(sim, live)}
    assert found == {"ws_h": ("workspace.ws_h",), "ws_j": ("workspace.ws_h",)}


def test_workspaces_holding_one_list_share_one_view_of_it_and_their_entries() -> None:
    """Shared, not copied (issue 40): one view after per list, and an entry unchanged by the plan is the very
    object of the view before."""
    live = live_of(shared("ws_h", {"jane@acme.com": "owner"}), shared("ws_m", {"jane@acme.com": "owner"}))
    sim = simulate([post("ws_m", {"jane@acme.com": "owner", "bo@acme.com": "viewer"},
                         (added("bo@acme.com", "viewer"),))], live)
    found = {e.workspace: e for e in effects(sim, live)}
    assert found["ws_h"].after is found["ws_m"].after
    assert found["ws_h"].after.users[1] is found["ws_h"].before.users[0] is found["ws_m"].before.users[0]
    assert [(u.email, u.role) for u in found["ws_h"].after.users] == [("bo@acme.com", "viewer"),
                                                                      ("jane@acme.com", "owner")]


def test_workspaces_of_different_lists_each_get_the_view_of_their_own() -> None:
    live = live_of(live_workspace("ws_1", users={"jane@acme.com": "owner"}),
                   live_workspace("ws_2", users={"jane@acme.com": "owner"}))
    sim = simulate([post("ws_1", {"jane@acme.com": "owner", "bo@acme.com": "viewer"}, (added("bo@acme.com", "viewer"),)),
                    post("ws_2", {"jane@acme.com": "owner", "cy@acme.com": "editor"}, (added("cy@acme.com", "editor"),))],
                   live)
    found = {e.workspace: e.after.snapshot().users for e in effects(sim, live)}
    assert found == {"ws_1": {"bo@acme.com": "viewer", "jane@acme.com": "owner"},
                     "ws_2": {"cy@acme.com": "editor", "jane@acme.com": "owner"}}


def test_workspaces_the_plan_creates_come_last_in_the_order_of_their_creations() -> None:
    """The effects name live workspaces by id, then the new ones in plan order, whichever list each holds: a
    change of group b's list comes first here, and still group a's creation is the first new one."""
    live = live_of(live_workspace("ws_a", users={"jane@acme.com": "owner"}),
                   live_workspace("ws_b", users={"kim@acme.com": "owner"}))
    first = CreateChange(address="group.a.workspace.new", group="group.a", homepage_id="ws_a", template_id="tpl",
                         name="New in a")
    second = CreateChange(address="group.b.workspace.new", group="group.b", homepage_id="ws_b", template_id="tpl",
                          name="New in b")
    changes = [post("ws_b", {"kim@acme.com": "owner", "bo@acme.com": "viewer"}, (added("bo@acme.com", "viewer"),)),
               first, second]
    assert [e.workspace or e.name for e in effects(simulate(changes, live), live)] == ["ws_b", "New in a", "New in b"]
