"""``reconciler review start``: one read of the company, the campaign's files written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.errors import ConfigError
from reconciler.manifest import load_desired
from reconciler.review.start import StartOptions, check_options, is_external
from tests.review.conftest import MANIFEST, Company, workspaces

JANE = """# Access review q4, due 2027-02-01: set each decision to keep or revoke (a reason is optional).
reviewer: jane@acme.com
items:
  - workspace: ws_a
    name: Alpha
    kind: user
    key: bob@ext.com
    role: editor
    why: "not managed: granted in the web app"
    decision: null
    reason: null
  - workspace: ws_a
    name: Alpha
    kind: domain
    key: ext.com
    role: viewer
    why: "not managed: granted in the web app"
    decision: null
    reason: null
  - workspace: ws_c
    name: Gamma
    kind: user
    key: dee@acme.com
    role: editor
    why: "not managed: granted in the web app"
    decision: null
    reason: null
  - workspace: ws_c
    name: Gamma
    kind: user
    key: joe@acme.com
    role: owner
    why: "not managed: granted in the web app"
    decision: null
    reason: null
"""


def start(company: Company, *extra: str) -> tuple[int, str, str]:
    return company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01", *extra)


def test_start_writes_each_owners_items_ordered_by_workspace_kind_and_key_but_their_own(
        make_company: Callable[..., Company]) -> None:
    company = make_company()
    code, out, err = start(company, "--fallback", "sec@acme.com")
    assert code == 0, err
    assert company.file("jane@acme.com.yaml").read_text() == JANE.format(root=company.root)


def test_an_item_whose_grant_has_expired_by_the_start_says_the_next_apply_removes_it(
        make_company: Callable[..., Company]) -> None:
    """review start reads on its day (2027-01-15 here), as the plan does: bob's grant ended on the 10th."""
    manifest = MANIFEST.replace("allowedDomains: [acme.com]", "allowedDomains: [acme.com, ext.com]")
    company = make_company(manifest=manifest + "        - {email: bob@ext.com, role: editor, expires: 2027-01-10}\n")
    code, out, err = start(company, "--fallback", "sec@acme.com")
    assert code == 0, err
    items = yaml.safe_load(company.file("jane@acme.com.yaml").read_text())["items"]
    (bob,) = [item for item in items if item["key"] == "bob@ext.com"]
    assert bob["why"] == (f"workspace.alpha at {company.root}/m.yaml:13 granted it until its expires date, which has "
                          "come: the next apply removes it")


def test_start_gives_a_workspace_without_owner_to_the_fallback(make_company: Callable[..., Company]) -> None:
    company = make_company()
    start(company, "--fallback", "sec@acme.com")
    text = company.file("sec@acme.com.yaml").read_text()
    # ws_b, which has no owner, and jane's own entry on ws_a, of which she is the only owner.
    assert [line for line in text.split("\n") if line.startswith(("  - ", "    key"))] == [
        "  - workspace: ws_a", "    key: jane@acme.com", "  - workspace: ws_b", "    key: carl@acme.com"]


def test_start_refuses_a_workspace_without_owner_and_no_fallback(make_company: Callable[..., Company]) -> None:
    company = make_company()
    code, out, err = start(company)
    assert code == 1
    assert err == ("Error: review start q4: 1 workspace in scope has no owner to review it (ws_b); give --fallback "
                   "EMAIL to review those.\n")
    assert not (company.root / "reviews").exists()


def test_start_with_a_team_shares_the_workspaces_among_its_members(make_company: Callable[..., Company]) -> None:
    company = make_company()
    code, _, err = start(company, "--reviewers", "team:security")
    assert code == 0, err
    sam = company.file("sam@acme.com.yaml").read_text()
    sue = company.file("sue@acme.com.yaml").read_text()
    assert {line for line in sam.split("\n") if line.startswith("  - ")} == {"  - workspace: ws_a",
                                                                            "  - workspace: ws_c"}
    assert {line for line in sue.split("\n") if line.startswith("  - ")} == {"  - workspace: ws_b"}
    assert "reviewers: {team: security}\n" in company.file("campaign.yaml").read_text()


def test_start_with_scope_external_lists_only_entries_outside_the_allowed_domains(
        make_company: Callable[..., Company]) -> None:
    company = make_company()
    start(company, "--scope-external")
    text = company.file("jane@acme.com.yaml").read_text()
    assert [line for line in text.split("\n") if line.startswith("    key")] == ["    key: bob@ext.com",
                                                                                "    key: ext.com"]
    assert sorted(p.name for p in company.file("").iterdir()) == ["campaign.yaml", "jane@acme.com.yaml"]


def test_start_reads_the_company_in_ceil_n_over_100_calls(make_company: Callable[..., Company]) -> None:
    spaces = workspaces() + [{"id": f"ws_x{i:03}", "name": f"X{i}", "published": True,
                              "users": [{"email": "jane@acme.com", "role": "owner"}]} for i in range(200)]
    company = make_company(spaces)
    code, out, err = start(company, "--fallback", "sec@acme.com")
    assert out == ("Started review q4 in " + str(company.root) + "/reviews/q4: 208 items on 203 workspaces for 3 "
                   "reviewers, due 2027-02-01; the company was read in 3 calls.\n"), err


def test_start_writes_a_campaign_the_manifests_load(make_company: Callable[..., Company]) -> None:
    company = make_company()
    start(company, "--fallback", "sec@acme.com")
    code, out, err = company.run("validate", str(company.root), service=False)
    assert code == 0, err
    text = company.file("campaign.yaml").read_text()
    head, _, assignment = text.partition("# Which items review start gave each reviewer's file (sha256): only "
                                         "decisions may change.\nassignment:\n")
    assert head == (
        "# An access review campaign (reconciler review start); each reviewer decides in their file beside it.\n"
        "campaign: q4\nstarted: 2027-01-15\ndue: 2027-02-01\nonDue: flag\nscope:\n  entries: all\n"
        "reviewers: owners\nfallback: sec@acme.com\n")
    assert assignment == "".join(f"  {name}: {_digest_of(company.file(name))}\n"
                                 for name in ("jane@acme.com.yaml", "joe@acme.com.yaml", "sec@acme.com.yaml"))


def test_start_refuses_a_campaign_already_started(make_company: Callable[..., Company]) -> None:
    company = make_company()
    start(company, "--fallback", "sec@acme.com")
    code, _, err = start(company, "--fallback", "sec@acme.com")
    assert code == 1
    assert err == (f"Error: review start q4: {company.root}/reviews/q4 exists already; a campaign is started once "
                   "(give another name, or remove the directory to start it again).\n")


def test_start_with_scope_external_judges_a_lookalike_external_and_a_subdomain_internal(
        make_company: Callable[..., Company]) -> None:
    # allowedDomains: [acme.com]. evilacme.com merely ends with the letters "acme.com": it is another
    # domain, so external; eu.acme.com is a subdomain of acme.com, so internal.
    company = make_company([
        {"id": "ws_a", "name": "Alpha", "published": True,
         "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": "mal@evilacme.com", "role": "editor"},
                   {"email": "ann@eu.acme.com", "role": "editor"}],
         "domains": [{"domain": "evilacme.com", "role": "viewer"}, {"domain": "eu.acme.com", "role": "viewer"}]}])
    code, out, err = start(company, "--scope-external")
    assert code == 0, err
    assert out.startswith(f"Started review q4 in {company.root}/reviews/q4: 2 items on 1 workspace for 1 reviewer,")
    text = company.file("jane@acme.com.yaml").read_text()
    assert [line for line in text.split("\n") if line.startswith(("    kind", "    key"))] == [
        "    kind: user", "    key: mal@evilacme.com", "    kind: domain", "    key: evilacme.com"]


def test_start_lists_the_first_ten_ownerless_workspaces_and_says_there_are_more(
        make_company: Callable[..., Company]) -> None:
    spaces = [{"id": f"ws_{i:02}", "name": f"W{i}", "published": True,
               "users": [{"email": "carl@acme.com", "role": "viewer"}]} for i in range(11)]
    company = make_company(spaces)
    code, _, err = start(company)
    assert code == 1
    listed = ", ".join(f"ws_{i:02}" for i in range(10))
    assert err == (f"Error: review start q4: 11 workspaces in scope have no owner to review it ({listed} ...); "
                   "give --fallback EMAIL to review those.\n")


def test_start_lists_ten_ownerless_workspaces_without_dots(make_company: Callable[..., Company]) -> None:
    spaces = [{"id": f"ws_{i:02}", "name": f"W{i}", "published": True,
               "users": [{"email": "carl@acme.com", "role": "viewer"}]} for i in range(10)]
    code, _, err = start(make_company(spaces))
    listed = ", ".join(f"ws_{i:02}" for i in range(10))
    assert (code, err) == (1, f"Error: review start q4: 10 workspaces in scope have no owner to review it ({listed}); "
                              "give --fallback EMAIL to review those.\n")


def _options(**changes: Any) -> StartOptions:
    return StartOptions(name="q4", due=date(2027, 2, 1), today=date(2027, 1, 15))._replace(**changes)


def _refusal(manifest: str, options: StartOptions, tmp_path: Path) -> str:
    path = tmp_path / "m.yaml"
    path.write_text(manifest, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        check_options(load_desired(path), options)
    return str(err.value)


def test_start_may_be_due_today_but_not_before(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    check_options(load_desired(path), _options(due=date(2027, 1, 15)))  # raises if refused
    assert _refusal(MANIFEST, _options(due=date(2027, 1, 14)), tmp_path) == (
        "review start q4: --due 2027-01-14 is before today (2027-01-15); give the date the reviewers must decide by.")


def test_start_refuses_a_team_that_is_not_defined_naming_those_that_are(tmp_path: Path) -> None:
    assert _refusal(MANIFEST, _options(reviewers="team:ops:eu"), tmp_path) == (
        "review start q4: --reviewers team:ops:eu: no such team with members in the manifests (teams defined: "
        "security).")
    two_teams = MANIFEST.replace("  security: [sam@acme.com, sue@acme.com]\n",
                                 "  security: [sam@acme.com, sue@acme.com]\n  ops: [olive@acme.com]\n")
    assert _refusal(two_teams, _options(reviewers="team:audit"), tmp_path) == (
        "review start q4: --reviewers team:audit: no such team with members in the manifests (teams defined: "
        "ops, security).")
    assert _refusal(MANIFEST.replace("teams:\n  security: [sam@acme.com, sue@acme.com]\n", ""),
                    _options(reviewers="team:security"), tmp_path) == (
        "review start q4: --reviewers team:security: no such team with members in the manifests (teams defined: "
        "none).")


def test_start_refuses_a_team_without_members(tmp_path: Path) -> None:
    assert _refusal(MANIFEST.replace("security: [sam@acme.com, sue@acme.com]", "security: []"),
                    _options(reviewers="team:security"), tmp_path) == (
        "review start q4: --reviewers team:security: no such team with members in the manifests (teams defined: "
        "security).")


def test_start_refuses_reviewers_that_are_neither_owners_nor_a_team(tmp_path: Path) -> None:
    assert _refusal(MANIFEST, _options(reviewers="admins"), tmp_path) == (
        "review start q4: --reviewers admins: give owners or team:NAME.")


def test_start_refuses_scope_external_without_allowed_domains(tmp_path: Path) -> None:
    assert _refusal(MANIFEST.replace("policy:\n  allowedDomains: [acme.com]\n", ""), _options(external=True),
                    tmp_path) == (
        "review start q4: --scope-external needs policy.allowedDomains in the manifests (external means outside "
        "them).")


def test_an_address_is_judged_by_the_domain_after_its_last_at_sign() -> None:
    # A quoted local part may hold "@" (RFC 5321): the domain is what follows the last one.
    assert is_external("user", '"x@evil.com"@acme.com', ["acme.com"]) is False
    assert is_external("user", '"x@acme.com"@evil.com', ["acme.com"]) is True
    assert is_external("domain", "eu.acme.com", ["acme.com"]) is False


def test_a_domain_entry_holding_an_at_sign_is_judged_whole() -> None:
    # The service may hold a domain entry that is no domain (ext@acme.com): it is not acme.com nor below it, so
    # external; only a user's address is judged by what follows its "@".
    assert is_external("domain", "ext@acme.com", ["acme.com"]) is True
    assert is_external("user", "ext@acme.com", ["acme.com"]) is False


def test_start_with_scope_external_writes_the_scope_into_the_campaign(make_company: Callable[..., Company]) -> None:
    company = make_company()
    code, _, err = start(company, "--scope-external")
    assert code == 0, err
    assert company.file("campaign.yaml").read_text().startswith(
        "# An access review campaign (reconciler review start); each reviewer decides in their file beside it.\n"
        "campaign: q4\nstarted: 2027-01-15\ndue: 2027-02-01\nonDue: flag\nscope:\n  entries: external\n"
        "reviewers: owners\n# Which items")


@pytest.mark.parametrize("owner", [
    "a/../../../escape@acme.com",            # an RFC 5322 local part may hold "/": a path out of the folder
    "a\\..\\..\\escape@acme.com",             # the other separator
    "eve\u202e@acme.com",                     # a bidi override, hiding in a file name
    "../escape",                               # not an email at all
])
def test_start_refuses_an_owner_address_that_cannot_name_a_reviewers_file_and_writes_nothing(
        make_company: Callable[..., Company], tmp_path: Path, owner: str) -> None:
    """Issue 39 item 2: reviewer files were named after owner addresses as the service gave them; an owner
    address with a path in it wrote outside reviews/NAME/, over another campaign's files."""
    spaces = workspaces()
    # ws_b, as the service answers it: the owner reviews carl (their own entry goes to the fallback)
    spaces[1]["users"] = [{"email": owner, "role": "owner"}, {"email": "carl@acme.com", "role": "viewer"}]
    company = make_company(spaces)
    before = sorted(p for p in tmp_path.rglob("*"))
    code, out, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                                 "--fallback", "sec@acme.com")
    assert (code, out) == (1, ""), err
    assert "the owner of ws_b and so its reviewer, cannot name a reviewer's file" in err, err
    assert "Nothing was written." in err
    assert not (company.root / "reviews").exists()
    new = [p for p in tmp_path.rglob("*") if p not in before and p.name != "emulator.yaml"]
    assert new == [], new


def test_a_person_a_rule_revokes_reviews_nothing_their_workspaces_go_to_the_other_owners_or_the_fallback(
        make_company: Callable[..., Company]) -> None:
    """Issue 39 item 4: a leaver was made a reviewer of every workspace they own."""
    manifest = MANIFEST + "rules:\n  leavers:\n    match: {all: true}\n    revoke: {users: [joe@acme.com]}\n"
    company = make_company(manifest=manifest)
    code, out, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                                 "--fallback", "sec@acme.com")
    assert code == 0, err
    files = sorted(p.name for p in (company.root / "reviews" / "q4").iterdir())
    assert files == ["campaign.yaml", "jane@acme.com.yaml", "sec@acme.com.yaml"]  # joe (ws_c) is leaving


def _digest_of(path: Path) -> str:
    """The sha256 of a reviewer's items as the campaign's assignment records it, computed here the plain way:
    the JSON of [workspace, kind, key, role] of each item, in order, compact."""
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["items"]
    canonical = json.dumps([[i["workspace"], i["kind"], i["key"], i["role"]] for i in items], separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _started_and_decided(make_company: Callable[..., Company]) -> Company:
    company = make_company()
    code, _, err = start(company, "--fallback", "sec@acme.com")
    assert code == 0, err
    company.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left")})
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 0, err  # decisions are what a reviewer edits
    return company


def test_an_item_added_to_a_reviewers_file_is_refused_at_its_items(make_company: Callable[..., Company]) -> None:
    """Issue 39 item 1: any committer could add a revoke item for an entry that was never in the campaign."""
    company = _started_and_decided(make_company)
    path = company.file("joe@acme.com.yaml")
    path.write_text(path.read_text() + "  - workspace: ws_a\n    kind: user\n    key: jane@acme.com\n"
                    "    role: owner\n    decision: revoke\n", encoding="utf-8")
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 1
    assert (f"{path}:3: these items are not the ones review start assigned to this file (an item added, removed, "
            "changed, or moved from another reviewer's file)") in err, err


def test_an_item_moved_to_another_reviewers_file_is_refused_in_both(make_company: Callable[..., Company]) -> None:
    company = _started_and_decided(make_company)
    jane, sec = company.file("jane@acme.com.yaml"), company.file("sec@acme.com.yaml")
    head, first, rest = jane.read_text().partition("  - workspace:")
    moved, second, tail = rest.partition("  - workspace:")
    jane.write_text(head + second + tail, encoding="utf-8")
    sec.write_text(sec.read_text() + first + moved, encoding="utf-8")
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 1
    assert err.count("these items are not the ones review start assigned to this file") == 2, err


def test_a_deleted_reviewers_file_that_git_cannot_give_back_is_refused_not_read_as_fewer_items(
        make_company: Callable[..., Company]) -> None:
    company = _started_and_decided(make_company)  # not in git
    company.file("joe@acme.com.yaml").unlink()
    code, _, err = company.run("plan", str(company.root))
    assert code == 1
    assert (f"{company.file('campaign.yaml')}:11: the reviewer's file 'joe@acme.com.yaml' that review start wrote "
            "is missing, and git holds no copy of it to read its items from: its items cannot go unseen; put the "
            "file back as it was written (git checkout, or a copy from the commit that has it)\n") in err, err


def test_a_reviewers_file_added_by_hand_is_refused(make_company: Callable[..., Company]) -> None:
    company = _started_and_decided(make_company)
    extra = company.file("eve@acme.com.yaml")
    extra.write_text("reviewer: eve@acme.com\nitems: []\n", encoding="utf-8")
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 1
    assert f"{extra}:1: review start assigned no items to 'eve@acme.com.yaml'" in err, err


def _held(company: Company, campaign: str = "q4") -> dict[str, list[tuple[str, str]]]:
    """Reviewer -> (workspace id, email or domain) of each item of their file."""
    return {path.name.removesuffix(".yaml"): company.entries(path.name.removesuffix(".yaml"), campaign)
            for path in sorted(company.file("", campaign).glob("*@*.yaml"))}


def test_no_one_reviews_their_own_access_another_owner_or_the_fallback_does(
        make_company: Callable[..., Company]) -> None:
    """Issue 39 item 4: owners were given their own owner entries to review."""
    company = make_company()
    code, _, err = start(company, "--fallback", "sec@acme.com")
    assert code == 0, err
    assert _held(company) == {
        "jane@acme.com": [("ws_a", "bob@ext.com"), ("ws_a", "ext.com"), ("ws_c", "dee@acme.com"),
                          ("ws_c", "joe@acme.com")],
        "joe@acme.com": [("ws_c", "dee@acme.com"), ("ws_c", "jane@acme.com")],  # jane's entry on ws_c: joe's
        "sec@acme.com": [("ws_a", "jane@acme.com"), ("ws_b", "carl@acme.com")],  # jane is ws_a's only owner
    }
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 0, err  # the assignment, as sealed, is the one the files hold


def test_an_entry_only_its_holder_could_review_stops_the_start_without_a_fallback(
        make_company: Callable[..., Company]) -> None:
    spaces = [w for w in workspaces() if w["id"] != "ws_b"]  # every workspace has an owner
    company = make_company(spaces)
    code, out, err = start(company)
    assert (code, out) == (1, "")
    assert err == ("Error: review start q4: 1 entry in scope would be reviewed only by the person who holds it "
                   "(jane@acme.com on ws_a), and no one reviews their own access. Give --fallback EMAIL, someone "
                   "else, to review those. Nothing was written.\n")
    assert not (company.root / "reviews").exists()


def test_a_fallback_who_holds_the_entry_cannot_review_it_either(make_company: Callable[..., Company]) -> None:
    spaces = [w for w in workspaces() if w["id"] != "ws_b"]
    code, _, err = start(make_company(spaces), "--fallback", "jane@acme.com")
    assert code == 1
    assert err.startswith("Error: review start q4: 1 entry in scope would be reviewed only by the person who holds "
                          "it (jane@acme.com on ws_a)"), err


def test_with_a_team_a_members_own_entry_goes_to_the_next_member(make_company: Callable[..., Company]) -> None:
    spaces = workspaces()
    spaces[0]["users"].append({"email": "sam@acme.com", "role": "viewer"})  # ws_a is sam's to review
    spaces[1]["users"].append({"email": "sam@acme.com", "role": "editor"})  # ws_b is sue's
    company = make_company(spaces)
    code, _, err = start(company, "--reviewers", "team:security")
    assert code == 0, err
    held = _held(company)
    assert ("ws_a", "sam@acme.com") not in held["sam@acme.com"] and ("ws_a", "sam@acme.com") in held["sue@acme.com"]
    assert ("ws_b", "sam@acme.com") in held["sue@acme.com"]
    code, _, err = company.run("validate", str(company.root), service=False)
    assert code == 0, err
