"""The company read's attribution: each live entry paired with the manifest line that grants it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from reconciler.company.build import company_access
from reconciler.company.model import Why
from reconciler.live import Live, LiveEntry, LiveWorkspace
from reconciler.manifest import load_desired
from reconciler.state import ResourceState, State
from reconciler.state.model import AccessRecord

MANIFEST = """\
version: 1
groups:
  customer-inc:
    homepage: ws_home
    access:
      users:
        - {email: jane@acme.com, role: owner}
        - {email: raj@customer.com, role: viewer, expires: 2031-01-31}
      domains: [{domain: customer.com, role: commenter}]
    workspaces:
      kickoff: {id: ws_kick}
      renewal: {template: tpl_renewal, name: Renewal}
workspaces:
  portal:
    id: ws_portal
    access: {users: [{email: ops@acme.com, role: owner}]}
"""


def _desired(tmp_path: Path):
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    return load_desired(tmp_path)


def _ws(wid: str, users: dict[str, str], *, ids: str = "", domains: dict[str, str] | None = None) -> LiveWorkspace:
    """A live workspace whose entries have ids ``{ids}{key}``: the same prefix on two workspaces
    means the same entries (one shared list)."""
    return LiveWorkspace(
        id=wid, name=f"Name of {wid}", account_id="acc_1", account_name="Customer Inc",
        users={k: LiveEntry(id=f"{ids or wid}:{k}", key=k, role=r) for k, r in users.items()},
        domains={k: LiveEntry(id=f"{ids or wid}:{k}", key=k, role=r) for k, r in (domains or {}).items()})


def _live(*workspaces: LiveWorkspace) -> Live:
    return Live(workspaces={w.id: w for w in workspaces}, pages_read=1, complete=True)


def test_an_explicit_entry_is_attributed_to_its_file_and_line(tmp_path: Path) -> None:
    company = company_access(_desired(tmp_path), _live(_ws("ws_home", {"jane@acme.com": "owner"})), State())
    (row,) = company.rows
    assert row.why == Why(source="entry", location=f"{tmp_path / 'manifest.yaml'}:7", address="group.customer-inc",
                          role="owner")
    assert row.why.text() == f"group.customer-inc at {tmp_path / 'manifest.yaml'}:7"


def test_an_entry_an_authoritative_list_does_not_list_is_removed_by_the_next_apply(tmp_path: Path) -> None:
    company = company_access(_desired(tmp_path), _live(_ws("ws_home", {"eve@acme.com": "editor"})), State())
    (row,) = company.rows
    at = f"{tmp_path / 'manifest.yaml'}:5"  # the group's access: line
    assert row.why == Why(source="leaving", location=at, address="group.customer-inc")
    assert row.why.text() == f"group.customer-inc at {at} does not list it: the next apply removes it"


NOT_AUTHORITATIVE = MANIFEST.replace("      domains: [{domain: customer.com, role: commenter}]\n",
                                     "      domains: [{domain: customer.com, role: commenter}]\n"
                                     "      authoritative: false\n")


def test_an_entry_a_list_that_is_not_authoritative_never_listed_is_not_managed(tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text(NOT_AUTHORITATIVE, encoding="utf-8")
    company = company_access(load_desired(tmp_path), _live(_ws("ws_home", {"eve@acme.com": "editor"})), State())
    (row,) = company.rows
    assert row.why == Why(source="unmanaged")
    assert row.why.text() == "not managed: granted in the web app"


def test_an_entry_a_list_that_is_not_authoritative_listed_before_is_removed_by_the_next_apply(
        tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text(NOT_AUTHORITATIVE, encoding="utf-8")
    state = State().with_resource("group.customer-inc", "ws_home", access=AccessRecord(
        users={"eve@acme.com": "editor"}, since={"user:eve@acme.com": "2026-01-01"}))
    company = company_access(load_desired(tmp_path), _live(_ws("ws_home", {"eve@acme.com": "editor"})), state)
    (row,) = company.rows
    assert (row.why.source, row.why.address) == ("leaving", "group.customer-inc")


def test_an_entry_of_a_workspace_no_manifest_names_is_not_managed(tmp_path: Path) -> None:
    company = company_access(_desired(tmp_path), _live(_ws("ws_other", {"jane@acme.com": "owner"})), State())
    (row,) = company.rows
    assert (row.why.source, row.group_homepage, company.workspaces[0].address) == ("unmanaged", None, None)


def test_a_declared_member_holds_its_group_list(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"jane@acme.com": "owner"}, ids="g"), _ws("ws_kick", {"jane@acme.com": "owner"}, ids="g"))
    company = company_access(_desired(tmp_path), live, State())
    kick = company.rows[1]
    assert (kick.workspace_id, kick.group_homepage, kick.probable_member, kick.why.address) == (
        "ws_kick", "ws_home", False, "group.customer-inc")


def test_a_member_the_state_records_holds_its_group_list(tmp_path: Path) -> None:
    state = State(resources={"group.customer-inc.workspace.renewal": ResourceState(id="ws_made")})
    live = _live(_ws("ws_made", {"raj@customer.com": "viewer"}))
    row = company_access(_desired(tmp_path), live, state).rows[0]
    assert (row.group_homepage, row.why.source, row.why.location) == (
        "ws_home", "entry", f"{tmp_path / 'manifest.yaml'}:8")


def test_a_workspace_showing_the_homepage_entries_is_a_probable_member(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"jane@acme.com": "owner"}, ids="g"), _ws("ws_hand", {"jane@acme.com": "owner"}, ids="g"))
    company = company_access(_desired(tmp_path), live, State())
    hand = company.workspaces[1]
    assert (hand.group_homepage, hand.probable_member, hand.address) == ("ws_home", True, "group.customer-inc")
    assert (company.rows[1].why.source, company.rows[1].probable_member) == ("entry", True)


def test_a_workspace_sharing_no_entry_with_a_homepage_is_in_no_group(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"jane@acme.com": "owner"}), _ws("ws_alone", {"jane@acme.com": "owner"}))
    assert company_access(_desired(tmp_path), live, State()).workspaces[1].group_homepage is None


def test_the_expiry_the_manifest_sets_is_on_the_row(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"raj@customer.com": "viewer"}))
    assert str(company_access(_desired(tmp_path), live, State()).rows[0].expires) == "2031-01-31"


def test_the_expiry_the_manifest_sets_on_a_domain_is_on_its_row(tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text(MANIFEST.replace(
        "{domain: customer.com, role: commenter}", "{domain: customer.com, role: commenter, expires: 2031-02-28}"))
    live = _live(_ws("ws_home", {}, domains={"customer.com": "commenter"}))
    assert str(company_access(load_desired(tmp_path), live, State()).rows[0].expires) == "2031-02-28"


def test_a_grant_whose_expires_date_has_come_is_expired_and_the_next_apply_removes_it(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"raj@customer.com": "viewer", "jane@acme.com": "owner"}))
    desired = _desired(tmp_path)
    rows = {r.key: r.why for r in company_access(desired, live, State(), date(2031, 1, 31)).rows}
    assert (rows["raj@customer.com"].source, rows["jane@acme.com"].source) == ("expired", "entry")
    assert rows["raj@customer.com"].text() == (
        f"group.customer-inc at {tmp_path / 'manifest.yaml'}:8 granted it until its expires date, which has come: "
        "the next apply removes it")


def test_a_rules_grant_whose_expires_date_has_come_names_the_rule(tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text(MANIFEST + """rules:
  baseline:
    match: {all: true}
    ensure: {users: [{email: sec@acme.com, role: viewer, expires: 2030-06-30}]}
""")
    live = _live(_ws("ws_portal", {"ops@acme.com": "owner", "sec@acme.com": "viewer"}))
    rows = {r.key: r.why for r in company_access(load_desired(tmp_path), live, State(), date(2030, 7, 1)).rows}
    assert rows["sec@acme.com"].text() == (f"rule baseline at {tmp_path / 'manifest.yaml'}:20 granted it until its "
                                           "expires date, which has come: the next apply removes it")


def test_a_grant_is_not_expired_the_day_before_its_expires_date_nor_without_a_day(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {"raj@customer.com": "viewer"}))
    desired = _desired(tmp_path)
    assert company_access(desired, live, State(), date(2031, 1, 30)).rows[0].why.source == "entry"
    assert company_access(desired, live, State()).rows[0].why.source == "entry"


def test_a_domain_entry_is_attributed_to_its_line(tmp_path: Path) -> None:
    live = _live(_ws("ws_home", {}, domains={"customer.com": "commenter"}))
    row = company_access(_desired(tmp_path), live, State()).rows[0]
    assert (row.kind, row.key, row.why.location) == ("domain", "customer.com", f"{tmp_path / 'manifest.yaml'}:9")


def test_the_live_role_is_kept_beside_the_role_the_line_asks(tmp_path: Path) -> None:
    live = _live(_ws("ws_portal", {"ops@acme.com": "editor"}))
    row = company_access(_desired(tmp_path), live, State()).rows[0]
    assert (row.role, row.why.role, row.why.address) == ("editor", "owner", "workspace.portal")


def test_rows_list_users_then_domains_each_sorted_and_count_the_calls(tmp_path: Path) -> None:
    live = _live(_ws("ws_x", {"b@acme.com": "viewer", "a@acme.com": "owner"}, domains={"z.com": "viewer"}))
    company = company_access(_desired(tmp_path), live, State())
    assert [(r.kind, r.key) for r in company.rows] == [("user", "a@acme.com"), ("user", "b@acme.com"),
                                                      ("domain", "z.com")]
    assert (company.calls, company.total) == (1, 1)


def test_each_why_line_names_its_list_team_or_rule_and_its_line_when_it_has_one() -> None:
    from reconciler.company.model import UNMANAGED_TEXT, why_texts

    whys = [("entry", "m.yaml:3", "workspace.portal", None, None, "owner"),
            ("entry", None, "workspace.portal", None, None, "owner"),
            ("team", "m.yaml:4", "group.acme", "ops", None, "viewer"),
            ("team", None, "group.acme", "ops", None, "viewer"),
            ("rule", "rules.yaml:5", None, "ops", "baseline", "viewer"),
            ("rule", "rules.yaml:6", None, None, "baseline", "viewer"),
            ("rule", None, None, None, "offboarded", None),
            ("unmanaged", None, None, None, None, None)]
    assert why_texts(whys) == [
        "workspace.portal at m.yaml:3", "workspace.portal", "team ops (group.acme at m.yaml:4)", "team ops (group.acme)",
        "rule baseline via team ops at rules.yaml:5", "rule baseline at rules.yaml:6", "rule offboarded", UNMANAGED_TEXT]
    assert why_texts(whys[-1:], unmanaged="not managed") == ["not managed"]
    assert [Why(source=s, location=at, address=a, team=t, rule=r, role=role).text()  # type: ignore[arg-type]
            for s, at, a, t, r, role in whys] == why_texts(whys)


STANDALONE = """\
version: 1
workspaces:
  portal:
    id: ws_portal
    access:
      users:
        - {email: ops@acme.com, role: owner}
        - {email: raj@customer.com, role: viewer, expires: 2031-01-31}
      domains: [{domain: customer.com, role: commenter}]
  bare: {id: ws_bare}
"""


def _standalone(tmp_path: Path):
    (tmp_path / "manifest.yaml").write_text(STANDALONE, encoding="utf-8")
    return load_desired(tmp_path)


def test_a_standalone_lists_own_entries_are_attributed_with_their_lines_roles_and_expiry(tmp_path: Path) -> None:
    live = _live(_ws("ws_portal", {"ops@acme.com": "owner", "raj@customer.com": "viewer", "eve@acme.com": "editor"},
                     domains={"customer.com": "commenter", "other.com": "viewer"}))
    rows = company_access(_standalone(tmp_path), live, State()).rows
    at = f"{tmp_path / 'manifest.yaml'}:"
    assert [(r.key, r.expires and str(r.expires), r.why) for r in rows] == [
        ("eve@acme.com", None, Why(source="leaving", location=at + "5", address="workspace.portal")),
        ("ops@acme.com", None, Why(source="entry", location=at + "7", address="workspace.portal", role="owner")),
        ("raj@customer.com", "2031-01-31",
         Why(source="entry", location=at + "8", address="workspace.portal", role="viewer")),
        ("customer.com", None, Why(source="entry", location=at + "9", address="workspace.portal", role="commenter")),
        ("other.com", None, Why(source="leaving", location=at + "5", address="workspace.portal"))]


def test_a_standalone_workspace_without_an_access_list_manages_none_of_its_entries(tmp_path: Path) -> None:
    live = _live(_ws("ws_bare", {"ops@acme.com": "owner"}, domains={"customer.com": "viewer"}))
    company = company_access(_standalone(tmp_path), live, State())
    assert company.workspaces[0].address == "workspace.bare"
    assert [r.why for r in company.rows] == [Why(source="unmanaged"), Why(source="unmanaged")]


def test_a_list_of_entries_alone_is_decided_as_expand_access_decides_it(tmp_path: Path) -> None:
    from reconciler.company.build import decided, declared
    from reconciler.plan.teams import expand_access

    access = _standalone(tmp_path).workspaces[0].access
    assert access is not None
    users = ["eve@acme.com", "ops@acme.com", "raj@customer.com"]  # eve: on the workspace, not on the list
    domains = ["customer.com", "other.com"]
    by_entries = declared(access, "workspace.portal")
    expanded = decided(expand_access(access, {}, ()), "workspace.portal")
    assert [by_entries.decide(0, users), by_entries.decide(1, domains)] == [
        expanded.decide(0, users), expanded.decide(1, domains)]
    assert by_entries.decide(0, users)[1][1].location == str(access.users[0].location)
    bare = declared(None, "workspace.bare")
    assert bare.decide(0, users) == decided(expand_access(None, {}, ()), "workspace.bare").decide(0, users)
