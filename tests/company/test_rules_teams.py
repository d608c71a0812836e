"""The company read on teams and rules: why a team member or a rule's entry
holds its role; and what the rules would change, as the plan of the same
read says (``rule_findings``)."""

from __future__ import annotations

from pathlib import Path

from reconciler.company.audit import rule_findings
from reconciler.company.build import company_access
from reconciler.company.model import Why
from reconciler.live import Live, LiveEntry, LiveWorkspace
from reconciler.manifest import load_desired
from reconciler.plan import make_plan
from reconciler.state import State

MANIFEST = """\
version: 1
teams:
  customer-success: [ana@acme.com, bo@acme.com]
rules:
  security-baseline:
    match: {all: true}
    ensure: {users: [{email: security@acme.com, role: viewer}]}
    revoke: {users: [leaver@acme.com], domains: [gmail.com]}
  partners:
    match: {accounts: [acc_partner]}
    ensure: {teams: [{team: customer-success, role: commenter}]}
workspaces:
  portal:
    id: ws_portal
    access:
      users: [{email: ops@acme.com, role: owner}, {email: security@acme.com, role: editor}]
      teams: [{team: customer-success, role: editor}]
      authoritative: false
"""


def _live(*workspaces: LiveWorkspace) -> Live:
    return Live(workspaces={w.id: w for w in workspaces}, pages_read=1, complete=True)


def _company(tmp_path: Path, *workspaces: LiveWorkspace):
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    return company_access(load_desired(tmp_path), _live(*workspaces), State())


def _portal() -> LiveWorkspace:
    """The managed workspace as its list says (the plan needs every workspace a manifest names)."""
    return _ws("ws_portal", {"ops@acme.com": "owner", "security@acme.com": "editor", "ana@acme.com": "editor",
                             "bo@acme.com": "editor"})


def _rule_changes(tmp_path: Path, *workspaces: LiveWorkspace):
    """(workspace, kind, key, role now, role after, rule, location) of each finding the rules make."""
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    desired, live = load_desired(tmp_path), _live(_portal(), *workspaces)
    company = company_access(desired, live, State())
    return [(f.workspace_id, f.entry_kind, f.key, f.role, f.wanted, f.rule, f.location)
            for f in rule_findings(make_plan(desired, live, State()), company)]


def _ws(wid: str, users: dict[str, str], domains: dict[str, str] | None = None, account: str = "acc_1",
        ids: str = ""):
    """A live workspace; two with the same ``ids`` show the same entries (one group's list)."""
    return LiveWorkspace(id=wid, name=wid, account_id=account,
                         users={k: LiveEntry(f"{ids or wid}:{k}", k, r) for k, r in users.items()},
                         domains={k: LiveEntry(f"{ids or wid}:{k}", k, r) for k, r in (domains or {}).items()})


def _loc(tmp_path: Path, needle: str) -> str:
    line = next(i for i, text in enumerate(MANIFEST.splitlines(), 1) if needle in text)
    return f"{tmp_path / 'manifest.yaml'}:{line}"


def test_a_team_member_holds_the_role_of_the_team_the_list_names(tmp_path: Path) -> None:
    row = _company(tmp_path, _ws("ws_portal", {"ana@acme.com": "editor"})).rows[0]
    assert row.why == Why(source="team", location=_loc(tmp_path, "teams: [{team: customer-success, role: editor"),
                          address="workspace.portal", team="customer-success", role="editor")
    assert row.why.text() == f"team customer-success (workspace.portal at {row.why.location})"


def test_an_entry_a_rule_ensures_is_attributed_to_the_rule(tmp_path: Path) -> None:
    row = _company(tmp_path, _ws("ws_other", {"security@acme.com": "viewer"})).rows[0]
    assert row.why == Why(source="rule", location=_loc(tmp_path, "email: security@acme.com, role: viewer"),
                          rule="security-baseline", role="viewer")


def test_a_rule_ensuring_a_team_is_attributed_to_the_rule_via_the_team(tmp_path: Path) -> None:
    row = _company(tmp_path, _ws("ws_p", {"bo@acme.com": "commenter"}, account="acc_partner")).rows[0]
    assert row.why.text() == (f"rule partners via team customer-success at "
                              f"{_loc(tmp_path, 'team: customer-success, role: commenter')}")


def test_the_list_entry_wins_over_the_rule_and_is_no_rule_change(tmp_path: Path) -> None:
    assert [r.why.source for r in _company(tmp_path, _portal()).rows if r.key == "security@acme.com"] == ["entry"]
    assert _rule_changes(tmp_path) == []


def test_a_workspace_missing_an_entry_a_rule_ensures_is_a_rule_change(tmp_path: Path) -> None:
    assert _rule_changes(tmp_path, _ws("ws_other", {"jane@acme.com": "owner"})) == [
        ("ws_other", "user", "security@acme.com", None, "viewer", "security-baseline",
         _loc(tmp_path, "email: security@acme.com, role: viewer"))]


def test_a_rule_entry_with_another_role_is_a_rule_change(tmp_path: Path) -> None:
    changes = _rule_changes(tmp_path, _ws("ws_other", {"jane@acme.com": "owner", "security@acme.com": "editor"}))
    assert [(role, wanted) for _, _, _, role, wanted, _, _ in changes] == [("editor", "viewer")]


def test_a_live_entry_a_rule_revokes_is_a_rule_change_to_no_access(tmp_path: Path) -> None:
    changes = _rule_changes(tmp_path, _ws("ws_other", {"jane@acme.com": "owner", "security@acme.com": "viewer",
                                                       "leaver@acme.com": "editor"}, {"gmail.com": "viewer"}))
    assert [(kind, key, role, wanted, location) for _, kind, key, role, wanted, _, location in changes] == [
        ("user", "leaver@acme.com", "editor", None, _loc(tmp_path, "revoke:")),
        ("domain", "gmail.com", "viewer", None, _loc(tmp_path, "revoke:")),
    ]


def test_an_entry_a_rule_revokes_is_said_to_be_removed_by_the_next_apply_not_granted_in_the_web_app(
        tmp_path: Path) -> None:
    rows = _company(tmp_path, _ws("ws_other", {"leaver@acme.com": "editor"}, {"gmail.com": "viewer"})).rows
    revoke = _loc(tmp_path, "revoke:")
    assert [(r.key, r.why) for r in rows] == [
        ("leaver@acme.com", Why(source="revoked", location=revoke, rule="security-baseline")),
        ("gmail.com", Why(source="revoked", location=revoke, rule="security-baseline"))]
    assert rows[0].why.text() == f"revoked by rule security-baseline at {revoke}: the next apply removes it"


def test_a_revoked_entry_on_a_managed_list_names_the_list(tmp_path: Path) -> None:
    portal = _ws("ws_portal", {"ops@acme.com": "owner", "leaver@acme.com": "viewer"})
    (row,) = [r for r in _company(tmp_path, portal).rows if r.key == "leaver@acme.com"]
    assert (row.why.source, row.why.address, row.why.rule) == ("revoked", "workspace.portal", "security-baseline")


# A group of two workspaces and a rule that names only the member ws_side.
SIDE_RULE_GROUP = MANIFEST.replace("rules:\n", """rules:
  side-only:
    match: {names: [ws_side]}
    ensure: {users: [{email: side@acme.com, role: viewer}]}
""") + """groups:
  partner:
    homepage: ws_home
    access: {users: [{email: jane@acme.com, role: owner}], authoritative: false}
    workspaces:
      side: {id: ws_side}
"""


def test_a_rule_matching_one_group_member_changes_every_workspace_of_the_group(tmp_path: Path) -> None:
    group = SIDE_RULE_GROUP
    (tmp_path / "manifest.yaml").write_text(group, encoding="utf-8")
    home = _ws("ws_home", {"jane@acme.com": "owner", "security@acme.com": "viewer"}, ids="g")
    side = _ws("ws_side", {"jane@acme.com": "owner", "security@acme.com": "viewer"}, ids="g")
    desired, live = load_desired(tmp_path), _live(_portal(), home, side)
    company = company_access(desired, live, State())
    # side-only matches ws_side, but the group has one list: the rule is on the homepage too.
    assert [(f.workspace_id, f.key, f.role, f.wanted) for f in rule_findings(make_plan(desired, live, State()),
                                                                             company)] == [
        ("ws_home", "side@acme.com", None, "viewer"), ("ws_side", "side@acme.com", None, "viewer")]


def test_a_rule_matching_no_workspace_changes_nothing_there(tmp_path: Path) -> None:
    assert _rule_changes(tmp_path, _ws("ws_other", {"jane@acme.com": "owner", "security@acme.com": "viewer"})) == []


def test_an_entry_a_rule_puts_on_a_group_is_attributed_on_every_workspace_of_it(tmp_path: Path) -> None:
    group = SIDE_RULE_GROUP
    (tmp_path / "manifest.yaml").write_text(group, encoding="utf-8")
    entries = {"jane@acme.com": "owner", "side@acme.com": "viewer"}
    live = _live(_ws("ws_home", entries, ids="g"), _ws("ws_side", entries, ids="g"))
    company = company_access(load_desired(tmp_path), live, State())
    assert [(r.workspace_id, r.why.rule) for r in company.rows if r.key == "side@acme.com"] == [
        ("ws_home", "side-only"), ("ws_side", "side-only")]


def test_two_workspaces_in_no_manifest_matched_by_different_rules_are_each_attributed_to_their_own(
        tmp_path: Path) -> None:
    company = _company(tmp_path, _ws("ws_a", {"bo@acme.com": "commenter"}),
                       _ws("ws_b", {"bo@acme.com": "commenter"}, account="acc_partner"))
    assert [(r.workspace_id, r.why.source, r.why.rule) for r in company.rows] == [
        ("ws_a", "unmanaged", None), ("ws_b", "rule", "partners")]


LISTS = """\
version: 1
teams:
  ops: [ana@acme.com]
rules:
  baseline:
    match: {accounts: [acc_rule]}
    ensure: {users: [{email: security@acme.com, role: viewer}]}
workspaces:
  teamed:
    id: ws_teamed
    access: {teams: [{team: ops, role: editor}], authoritative: false}
  ruled:
    id: ws_ruled
    access: {users: [{email: ops@acme.com, role: owner}]}
"""


def _lists(tmp_path: Path, *workspaces: LiveWorkspace):
    (tmp_path / "manifest.yaml").write_text(LISTS, encoding="utf-8")
    return company_access(load_desired(tmp_path), _live(*workspaces), State())


def test_a_standalone_list_naming_a_team_and_no_entry_holds_the_teams_members(tmp_path: Path) -> None:
    (row,) = _lists(tmp_path, _ws("ws_teamed", {"ana@acme.com": "editor"})).rows
    assert row.why == Why(source="team", location=f"{tmp_path / 'manifest.yaml'}:11", address="workspace.teamed",
                          team="ops", role="editor")


def test_a_rule_matching_a_standalone_workspace_is_attributed_beside_the_lists_own_entries(tmp_path: Path) -> None:
    rows = _lists(tmp_path, _ws("ws_ruled", {"ops@acme.com": "owner", "security@acme.com": "viewer"},
                                account="acc_rule")).rows
    at = f"{tmp_path / 'manifest.yaml'}:"
    assert [r.why for r in rows] == [
        Why(source="entry", location=at + "14", address="workspace.ruled", role="owner"),
        Why(source="rule", location=at + "7", rule="baseline", role="viewer")]
