"""``reconciler review close``: the manifest lines the revocations contradict removed (every other line
and comment kept), ``closed: <date>`` set; the plan refused before it accepts the revocation after."""

from __future__ import annotations

import json
import locale
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from reconciler.state import DEFAULT_STATE_NAME, ResourceState, State, write_state
from tests.review.conftest import Company, workspaces

MANIFEST = """version: 1
# Alpha is the customer's portal.
teams:
  partners: [dee@acme.com, carl@acme.com]  # who helps customers
workspaces:
  alpha:
    id: ws_a
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
        - {email: bob@ext.com, role: editor}  # the contractor, until the project ends
      domains:
        - {domain: ext.com, role: viewer}
  gamma:
    id: ws_c
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
      teams:
        - {team: partners, role: editor}
"""


@pytest.fixture
def started(make_company: Callable[..., Company]) -> Company:
    company = make_company(manifest=MANIFEST)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    return company


def close(company: Company, *extra: str) -> tuple[int, str, str]:
    """Close q4; most tests leave items undecided, which close records as such (the refusal is tested apart)."""
    return company.run("review", "close", "q4", str(company.root), "--accept-undecided", *extra, service=False)


def test_a_revoke_of_an_explicit_entry_is_refused_until_close_removes_the_line(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "project ended")})
    code, _, err = started.run("plan", str(started.root))
    assert code == 1
    assert f"which an explicit entry grants as editor at {started.root}/m.yaml:12" in err
    code, out, err = close(started)
    assert code == 0, err
    code, out, err = started.run("plan", str(started.root), "--format", "json")
    assert code == 0, err
    (change,) = [c for c in json.loads(out)["changes"] if c["address"] == "workspace.alpha"]
    assert [(e["key"], e["action"], e["source"]["kind"]) for e in change["entries"]] == [
        ("bob@ext.com", "delete", "review")]


def test_close_removes_only_the_revoked_line_and_keeps_every_comment(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None), ("ws_a", "ext.com"): ("revoke", None)})
    code, out, err = close(started)
    assert code == 0, err
    assert (started.root / "m.yaml").read_text() == MANIFEST.replace(
        "        - {email: bob@ext.com, role: editor}  # the contractor, until the project ends\n", "").replace(
        "      domains:\n        - {domain: ext.com, role: viewer}\n", "      domains: []\n")
    assert out == (
        "Closed review q4 on 2027-01-15: 2 manifest lines removed:\n"
        f"  {started.root}/m.yaml:12: user bob@ext.com from workspace.alpha (revoked by jane@acme.com)\n"
        f"  {started.root}/m.yaml:14: domain ext.com from workspace.alpha (revoked by jane@acme.com)\n"
        "Commit the diff with the decisions; the next plan carries out the revocations.\n")


def test_close_marks_the_campaign_closed(started: Company) -> None:
    close(started)
    text = started.file("campaign.yaml").read_text()
    assert text.startswith("# An access review campaign (reconciler review start)")
    assert re.search(r"fallback: sec@acme\.com\n# Which items .*\nassignment:\n(  .*: [0-9a-f]{64}\n)+"
                     r"closed: 2027-01-15\nclosedUndecided: 7\nclosedDigest: [0-9a-f]{64}\n\Z", text), text
    code, _, err = close(started)
    assert (code, err) == (1, f"Error: review close q4: the campaign was closed on 2027-01-15 already "
                              f"({started.root}/reviews/q4/campaign.yaml).\n")


def test_close_keeps_a_team_membership_unless_the_reviewer_asked_to_remove_it(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    code, out, _ = close(started)
    assert (started.root / "m.yaml").read_text() == MANIFEST
    assert (f"Left as they are: {started.root}/reviews/q4/jane@acme.com.yaml:26: dee@acme.com on ws_c is granted "
            f"by team partners ({started.root}/m.yaml:4); kept in the team (set removeFromTeam: true on the item to "
            "remove them from it)\n") in out


def test_close_removes_a_team_membership_where_the_reviewer_chose_so(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    path = started.file("jane@acme.com.yaml")
    path.write_text(path.read_text().replace("    decision: revoke\n", "    decision: revoke\n    removeFromTeam: true\n"))
    code, out, err = close(started)
    assert code == 0, err
    # ruamel.yaml keeps the comment at the column it was written at.
    assert (started.root / "m.yaml").read_text() == MANIFEST.replace(
        "partners: [dee@acme.com, carl@acme.com]  #", "partners: [carl@acme.com]                #")


def test_a_revoke_of_a_team_grant_without_remove_from_team_is_kept_naming_the_team_line(started: Company) -> None:
    """It was refused, and the refusal stopped every plan, after close too (close keeps the team as it is)."""
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    code, out, err = started.run("plan", str(started.root))
    assert code == 0, err
    assert "dee@acme.com" not in out.partition("Warning")[0]
    assert (
        f"{started.root}/reviews/q4/jane@acme.com.yaml:26: review q4 by jane@acme.com revokes user dee@acme.com "
        f"on ws_c, which team partners grants as editor at {started.root}/m.yaml:22: not carried out, and kept (a "
        "revoke takes no one out of a team by itself). To carry it out, set removeFromTeam: true on the item "
        "(before review close), or change the team.") in out


def test_close_with_two_revokes_of_one_entry_makes_one_edit_and_one_note(started: Company) -> None:
    # Both owners of gamma (ws_c) revoke dee (granted by team partners, which close leaves as it is): one note,
    # from the first revoke (jane's file sorts first), not one per reviewer; joe revokes jane there (an explicit
    # line, m.yaml:20, and jane's own entry, so joe's alone to decide): one line removed.
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    started.decide_on("joe@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None), ("ws_c", "jane@acme.com"): ("revoke", None)})
    code, out, err = close(started)
    assert code == 0, err
    assert out == (
        "Closed review q4 on 2027-01-15: 1 manifest line removed:\n"
        f"  {started.root}/m.yaml:20: user jane@acme.com from workspace.gamma (revoked by joe@acme.com)\n"
        f"Left as they are: {started.root}/reviews/q4/jane@acme.com.yaml:26: dee@acme.com on ws_c is granted by "
        f"team partners ({started.root}/m.yaml:4); kept in the team (set removeFromTeam: true on the item to remove "
        "them from it)\n"
        "Commit the diff with the decisions; the next plan carries out the revocations.\n")
    assert (started.root / "m.yaml").read_text() == MANIFEST.replace(
        "      users:\n        - {email: jane@acme.com, role: owner}\n      teams:",
        "      users: []\n      teams:")


GROUPED = """version: 1
teams:
  helpers: [zed@acme.com]
  partners: [dee@acme.com, carl@acme.com]
rules:
  baseline:
    match: {all: true}
    ensure: {users: [{email: joe@acme.com, role: owner}], domains: [{domain: ext.com, role: viewer}]}
groups:
  aside:
    homepage: ws_c  # its list is not managed: close edits none of it
  portal:
    homepage: ws_a
    access:
      authoritative: false
      users:
        - {email: "jane@acme.com", role: 'owner'}  # quoted as someone typed it, and kept so
        - {email: 'bob@ext.com', role: "editor"}
      teams:
        - {team: helpers, role: viewer}
        - {team: partners, role: editor}
    workspaces:
      beta: {id: ws_b}
"""


def test_close_edits_a_groups_list_for_its_homepage_and_its_members_and_notes_what_rules_and_teams_grant(
        make_company: Callable[..., Company]) -> None:
    spaces = workspaces()
    spaces[0]["users"].append({"email": "ann@acme.com", "role": "viewer"})  # in no manifest, on no team
    company = make_company(spaces, manifest=GROUPED)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "ann@acme.com"): ("revoke", None), ("ws_a", "bob@ext.com"): ("revoke", None),
                                        ("ws_a", "ext.com"): ("revoke", None), ("ws_c", "joe@acme.com"): ("revoke", None)})
    company.decide_on("sec@acme.com", {("ws_b", "carl@acme.com"): ("revoke", None)})
    code, out, err = close(company)
    assert code == 0, err
    reviews = company.root / "reviews" / "q4"
    assert out == (
        "Closed review q4 on 2027-01-15: 1 manifest line removed:\n"
        f"  {company.root}/m.yaml:18: user bob@ext.com from group.portal (revoked by jane@acme.com)\n"
        f"Left as they are: {reviews}/jane@acme.com.yaml:26: ext.com is ensured by rule baseline "
        f"({company.root}/m.yaml:8) wherever it matches; change the rule by hand if it should not reach ws_a\n"
        f"Left as they are: {reviews}/jane@acme.com.yaml:42: joe@acme.com is ensured by rule baseline "
        f"({company.root}/m.yaml:8) wherever it matches; change the rule by hand if it should not reach ws_c\n"
        f"Left as they are: {reviews}/sec@acme.com.yaml:18: carl@acme.com on ws_b is granted by team partners "
        f"({company.root}/m.yaml:4); kept in the team (set removeFromTeam: true on the item to remove them from "
        "it)\n"
        "Commit the diff with the decisions; the next plan carries out the revocations.\n")
    assert (company.root / "m.yaml").read_text() == GROUPED.replace(
        "        - {email: 'bob@ext.com', role: \"editor\"}\n", "")


def test_close_removes_two_members_of_one_team_where_their_reviewers_chose_so(
        make_company: Callable[..., Company]) -> None:
    spaces = workspaces()
    spaces[0]["users"].append({"email": "dee@acme.com", "role": "viewer"})
    company = make_company(spaces, manifest=GROUPED)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "dee@acme.com"): ("revoke", None)})
    company.decide_on("sec@acme.com", {("ws_b", "carl@acme.com"): ("revoke", None)})
    for reviewer in ("jane@acme.com", "sec@acme.com"):
        path = company.file(f"{reviewer}.yaml")
        path.write_text(path.read_text().replace("    decision: revoke\n",
                                                 "    decision: revoke\n    removeFromTeam: true\n"))
    code, out, err = close(company)
    assert code == 0, err
    assert out == (
        "Closed review q4 on 2027-01-15: 2 manifest lines removed:\n"
        f"  {company.root}/m.yaml:4: dee@acme.com from team partners (revoked by jane@acme.com)\n"
        f"  {company.root}/m.yaml:4: carl@acme.com from team partners (revoked by sec@acme.com)\n"
        "Commit the diff with the decisions; the next plan carries out the revocations.\n")
    assert (company.root / "m.yaml").read_text() == GROUPED.replace(
        "partners: [dee@acme.com, carl@acme.com]", "partners: []")


def test_close_finds_a_template_members_list_by_the_id_the_state_recorded(
        make_company: Callable[..., Company]) -> None:
    # beta was made from a template: the manifest has no id for it, the state has (ws_b); gamma is not made yet.
    manifest = GROUPED.replace("      beta: {id: ws_b}\n",
                               "      beta: {template: tpl_beta, name: Beta}\n"
                               "      gamma: {template: tpl_gamma, name: Gamma 2}\n")
    company = make_company(manifest=manifest)
    write_state(company.root / DEFAULT_STATE_NAME,
                State(resources={"group.portal.workspace.beta": ResourceState(id="ws_b")}))
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("sec@acme.com", {("ws_b", "carl@acme.com"): ("revoke", None)})  # carl@acme.com on ws_b
    code, out, err = close(company)
    assert code == 0, err
    assert out == (
        "Closed review q4 on 2027-01-15: 0 manifest lines removed.\n"
        f"Left as they are: {company.root}/reviews/q4/sec@acme.com.yaml:18: carl@acme.com on ws_b is granted by "
        f"team partners ({company.root}/m.yaml:4); kept in the team (set removeFromTeam: true on the item to remove "
        "them from it)\n"
        "Commit the diff with the decisions; the next plan carries out the revocations.\n")


BLOCK = MANIFEST.replace(
    "  partners: [dee@acme.com, carl@acme.com]  # who helps customers\n",
    "  partners:  # who helps customers\n    - dee@acme.com\n    - carl@acme.com\n").replace(
    "        - {email: jane@acme.com, role: owner}\n        - {email: bob@ext.com",
    "        - email: jane@acme.com  # written as a block\n          role: owner\n        - {email: bob@ext.com", 1)


def test_close_keeps_block_style_items_and_lists_as_written(make_company: Callable[..., Company]) -> None:
    # The manifests' own style: a list indented under its key ("users:\n  - ..."), its items' keys under
    # the first one's; an item written as a block keeps its second key under its first.
    company = make_company(manifest=BLOCK)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, out, err = close(company)
    assert code == 0, err
    assert (company.root / "m.yaml").read_text() == BLOCK.replace(
        "        - {email: bob@ext.com, role: editor}  # the contractor, until the project ends\n", "")


@contextmanager
def ascii_locale() -> Iterator[None]:
    """The process's locale set to C, whose encoding is ASCII, as on a server without a UTF-8 locale."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_close_reads_the_manifests_as_utf8_whatever_the_locale(make_company: Callable[..., Company]) -> None:
    # Manifests are UTF-8 (as load reads them), not the locale's encoding. (Python in UTF-8 mode, as under
    # LANG unset, reads UTF-8 whatever the locale: there the test cannot tell.)
    manifest = MANIFEST.replace("# Alpha is the customer's portal.", "# Alpha is the customer's portal (Zoë's).")
    company = make_company(manifest=manifest)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    with ascii_locale():
        code, out, err = close(company)
    assert code == 0, err
    assert (company.root / "m.yaml").read_text(encoding="utf-8") == manifest.replace(
        "        - {email: bob@ext.com, role: editor}  # the contractor, until the project ends\n", "")


def test_close_takes_no_one_off_a_team_for_a_domain_item_holding_their_email(started: Company) -> None:
    # A reviewer's file edited by hand: the item of dee@acme.com on ws_c (whom team partners grants) made a
    # domain item. A domain is never a team member: nothing is removed and nothing is noted. (A campaign
    # started since its items are sealed refuses that edit; one started before, without an assignment, not.)
    campaign = started.file("campaign.yaml")
    campaign.write_text(campaign.read_text().split("# Which items")[0])
    path = started.file("jane@acme.com.yaml")
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    text = path.read_text()
    assert "    kind: user\n    key: dee@acme.com\n" in text
    path.write_text(text.replace("    kind: user\n    key: dee@acme.com\n", "    kind: domain\n    key: dee@acme.com\n")
                    .replace("    decision: revoke\n", "    decision: revoke\n    removeFromTeam: true\n"))
    code, out, err = close(started)
    assert code == 0, err
    assert out == ("Closed review q4 on 2027-01-15: 0 manifest lines removed.\n"
                   "Commit the diff with the decisions; the next plan carries out the revocations.\n")
    assert (started.root / "m.yaml").read_text() == MANIFEST


def test_close_keeps_a_line_longer_than_any_fold_width_as_written(make_company: Callable[..., Company]) -> None:
    """A team of 250 written on one line (5,000+ characters): close removes bob's line and nothing else;
    ruamel.yaml folded any line past its width (4,096 then), splitting the team's line in two."""
    everyone = ", ".join(f"person{n:03}@acme.com" for n in range(250))
    manifest = MANIFEST.replace("teams:\n", f"teams:\n  everyone: [{everyone}]\n", 1)
    assert len(max(manifest.splitlines(), key=len)) > 5000
    company = make_company(manifest=manifest)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, out, err = close(company)
    assert code == 0, err
    assert (company.root / "m.yaml").read_text(encoding="utf-8") == manifest.replace(
        "        - {email: bob@ext.com, role: editor}  # the contractor, until the project ends\n", "")


def test_close_is_refused_while_items_are_undecided_and_nothing_changes(started: Company) -> None:
    """Issue 39 item 4: close with undecided items closed silently."""
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    manifest, campaign = (started.root / "m.yaml").read_text(), started.file("campaign.yaml").read_text()
    code, out, err = started.run("review", "close", "q4", str(started.root), service=False)
    assert (code, out) == (1, "")
    # An entry two owners hold (jane and joe both own ws_c) is one item to decide, counted in one file.
    assert err == ("Error: review close q4: 6 items nobody decided yet (jane@acme.com.yaml: 3, joe@acme.com.yaml: "
                   "1, sec@acme.com.yaml: 2); a closed campaign acts on no later decision. Decide them, or close with --accept-undecided "
                   "to record in campaign.yaml that they were left undecided. Nothing was changed.\n"), err
    assert ((started.root / "m.yaml").read_text(), started.file("campaign.yaml").read_text()) == (manifest, campaign)


def test_close_with_accept_undecided_records_how_many_were_left(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, _, err = close(started)
    assert code == 0, err
    text = started.file("campaign.yaml").read_text()
    assert "\nclosed: 2027-01-15\nclosedUndecided: 6\nclosedDigest: " in text, text


def test_close_of_a_campaign_everyone_decided_needs_no_flag_and_records_no_count(started: Company) -> None:
    for reviewer in ("jane@acme.com", "joe@acme.com", "sec@acme.com"):
        started.decide_all(reviewer, "keep")
    code, _, err = started.run("review", "close", "q4", str(started.root), service=False)
    assert code == 0, err
    assert "closedUndecided" not in started.file("campaign.yaml").read_text()


def test_a_closed_campaign_whose_decisions_are_edited_afterwards_is_refused_at_its_digest(started: Company) -> None:
    """Issue 39 item 4: a closed campaign stayed editable, and its later edits were acted on."""
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, _, err = close(started)
    assert code == 0, err
    code, out, err = started.run("plan", str(started.root))
    assert code == 0, err  # as closed: accepted
    started.decide_on("joe@acme.com", {("ws_c", "dee@acme.com"): ("revoke", "changed my mind after the close")})
    code, out, err = started.run("plan", str(started.root))
    campaign = started.file("campaign.yaml")
    line = next(n for n, text in enumerate(campaign.read_text().splitlines(), 1) if text.startswith("closedDigest:"))
    assert (code, out) == (1, "")
    assert (f"{campaign}:{line}: the campaign was closed on 2027-01-15 and its reviewers' files have changed since "
            "(closedDigest no longer matches them): a closed campaign's decisions are final. Put the files back as "
            "they were closed (git checkout of reviews/q4/), or start a new campaign for new decisions") in err, err


TEAM_ON_TWO_LISTS = MANIFEST + """  beta:
    id: ws_b
    access:
      authoritative: false
      teams:
        - {team: partners, role: editor}
"""


def test_a_removal_from_a_team_never_overrides_another_reviewers_keep_on_another_list(
        make_company: Callable[..., Company]) -> None:
    # Team partners grants dee on gamma (ws_c: jane and joe review it) and on beta (ws_b: sec reviews it). Jane
    # revokes dee with removeFromTeam: true, sec keeps dee on beta: taking dee out of the team would take them off
    # beta too. Close names both decisions and changes nothing (it used to remove dee from the team).
    spaces = workspaces()
    spaces[1]["users"].append({"email": "dee@acme.com", "role": "editor"})
    company = make_company(spaces, manifest=TEAM_ON_TWO_LISTS)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    path = company.file("jane@acme.com.yaml")
    path.write_text(path.read_text().replace("    decision: revoke\n", "    decision: revoke\n    removeFromTeam: true\n"))
    company.decide_on("sec@acme.com", {("ws_b", "dee@acme.com"): ("keep", "helps the customer")})
    reviews = company.root / "reviews" / "q4"
    campaign = (reviews / "campaign.yaml").read_text()
    code, out, err = close(company)
    assert (code, out) == (1, "")
    assert err == (
        "Error: review close q4: a removal from a team would override another reviewer's keep:\n"
        f"  {reviews}/jane@acme.com.yaml:26: jane@acme.com revokes user dee@acme.com on ws_c with removeFromTeam: "
        f"true, which takes them out of team partners ({company.root}/m.yaml:4) and so off workspace.beta too, "
        f"where sec@acme.com decided keep on ws_b ({reviews}/sec@acme.com.yaml:26)\n"
        "Neither is carried out: decide one of them again (keep on both, or revoke on both with removeFromTeam: "
        "true; a revoke without it is not carried out, and keeps the person). Nothing was changed.\n")
    assert (company.root / "m.yaml").read_text() == TEAM_ON_TWO_LISTS
    assert (reviews / "campaign.yaml").read_text() == campaign
    # Revoked on both: no one's keep is overridden, and close takes dee out of the team.
    company.decide_on("sec@acme.com", {("ws_b", "dee@acme.com"): ("revoke", None)})
    code, out, err = close(company)
    assert code == 0, err
    assert f"  {company.root}/m.yaml:4: dee@acme.com from team partners (revoked by jane@acme.com)\n" in out


def test_a_keep_on_a_list_the_team_does_not_grant_is_no_conflict_for_a_removal_from_the_team(
        make_company: Callable[..., Company]) -> None:
    # Beta's list names another team (helpers, dee among them): sec's keep of dee there stands whatever team
    # partners holds, so jane's removal of dee from partners overrides no one.
    spaces = workspaces()
    spaces[1]["users"].append({"email": "dee@acme.com", "role": "editor"})
    manifest = TEAM_ON_TWO_LISTS.replace("  partners: [dee@acme.com, carl@acme.com]  # who helps customers\n",
                                         "  partners: [dee@acme.com, carl@acme.com]  # who helps customers\n"
                                         "  helpers: [dee@acme.com]\n")
    manifest = manifest[:manifest.rindex("{team: partners, role: editor}")] + "{team: helpers, role: editor}\n"
    company = make_company(spaces, manifest=manifest)
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    path = company.file("jane@acme.com.yaml")
    path.write_text(path.read_text().replace("    decision: revoke\n", "    decision: revoke\n    removeFromTeam: true\n"))
    company.decide_on("sec@acme.com", {("ws_b", "dee@acme.com"): ("keep", None)})
    code, out, err = close(company)
    assert code == 0, err
    assert f"  {company.root}/m.yaml:4: dee@acme.com from team partners (revoked by jane@acme.com)\n" in out
