"""The company read on teams and rules: why a team member or a rule's entry
holds its role, and what the rules would change."""

from __future__ import annotations

from pathlib import Path

from reconciler.company.build import company_access
from reconciler.company.model import Why
from reconciler.live import Live, LiveEntry, LiveWorkspace
from reconciler.manifest import load_desired
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


def _company(tmp_path: Path, *workspaces: LiveWorkspace):
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    live = Live(workspaces={w.id: w for w in workspaces}, pages_read=1, complete=True)
    return company_access(load_desired(tmp_path), live, State())


def _ws(wid: str, users: dict[str, str], domains: dict[str, str] | None = None, account: str = "acc_1"):
    return LiveWorkspace(id=wid, name=wid, account_id=account,
                         users={k: LiveEntry(f"{wid}:{k}", k, r) for k, r in users.items()},
                         domains={k: LiveEntry(f"{wid}:{k}", k, r) for k, r in (domains or {}).items()})


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
    company = _company(tmp_path, _ws("ws_portal", {"ops@acme.com": "owner", "security@acme.com": "editor",
                                                   "ana@acme.com": "editor", "bo@acme.com": "editor"}))
    assert [r.why.source for r in company.rows if r.key == "security@acme.com"] == ["entry"]
    assert company.rule_changes == ()


def test_a_workspace_missing_an_entry_a_rule_ensures_is_a_rule_change(tmp_path: Path) -> None:
    (change,) = _company(tmp_path, _ws("ws_other", {"jane@acme.com": "owner"})).rule_changes
    assert (change.workspace_id, change.kind, change.key, change.before, change.after, change.why.rule) == (
        "ws_other", "user", "security@acme.com", None, "viewer", "security-baseline")


def test_a_rule_entry_with_another_role_is_a_rule_change(tmp_path: Path) -> None:
    (change,) = _company(tmp_path, _ws("ws_other", {"security@acme.com": "editor"})).rule_changes
    assert (change.before, change.after) == ("editor", "viewer")


def test_a_live_entry_a_rule_revokes_is_a_rule_change_to_no_access(tmp_path: Path) -> None:
    company = _company(tmp_path, _ws("ws_other", {"security@acme.com": "viewer", "leaver@acme.com": "editor"},
                                     {"gmail.com": "viewer"}))
    assert [(c.kind, c.key, c.before, c.after, c.why.location) for c in company.rule_changes] == [
        ("user", "leaver@acme.com", "editor", None, _loc(tmp_path, "revoke:")),
        ("domain", "gmail.com", "viewer", None, _loc(tmp_path, "revoke:")),
    ]


def test_a_rule_matching_no_workspace_changes_nothing_there(tmp_path: Path) -> None:
    company = _company(tmp_path, _ws("ws_other", {"security@acme.com": "viewer"}))
    assert company.rule_changes == ()
