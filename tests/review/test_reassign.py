"""``reconciler review reassign``: one reviewer's undecided items moved to another, recorded in campaign.yaml
(who, when, why, the new digests); the new assignment is the one every later command accepts, the old one is
refused (issue 39 item 1)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
import yaml

from tests.review.conftest import MANIFEST, Company, commit_all, git, start_q4

# jane: bob@ext.com, ext.com (ws_a), dee, joe (ws_c); joe: dee, jane (ws_c); sec: jane (ws_a), carl (ws_b)


def reassign(company: Company, source: str, target: str, *extra: str,
             reason: str = "joe left the company") -> tuple[int, str, str]:
    return company.run("review", "reassign", "q4", str(company.root), "--from", source, "--to", target,
                       "--reason", reason, *extra, service=False)


def test_reassign_moves_the_undecided_items_and_records_who_when_why_and_the_new_digests(started: Company) -> None:
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "Ops@Acme.com")
    assert code == 0, err
    assert out == ("Reassigned 2 undecided items of review q4 from joe@acme.com to sec@acme.com; recorded in "
                   f"{started.file('campaign.yaml')} (by ops@acme.com, 2027-01-15T08:00:00Z). Commit the diff.\n")
    assert not started.file("joe@acme.com.yaml").exists()  # nothing left in it
    assert started.entries("sec@acme.com") == [("ws_a", "jane@acme.com"), ("ws_b", "carl@acme.com"),
                                               ("ws_c", "dee@acme.com"), ("ws_c", "jane@acme.com")]
    campaign = yaml.safe_load(started.file("campaign.yaml").read_text())
    assert set(campaign["assignment"]) == {"jane@acme.com.yaml", "sec@acme.com.yaml"}
    assert campaign["reassignments"] == [{
        "from": "joe@acme.com", "to": "sec@acme.com", "by": "ops@acme.com", "at": "2027-01-15T08:00:00Z",
        "reason": "joe left the company", "items": 2,
        "assignment": {"joe@acme.com.yaml": None, "sec@acme.com.yaml": campaign["assignment"]["sec@acme.com.yaml"]}}]
    code, out, err = started.run("review", "status", "q4", str(started.root), service=False)
    assert (code, err) == (2, "")
    assert "  sec@acme.com   0/4 decided (0 kept, 0 revoked)\n" in out and "joe@acme.com" not in out


def test_decided_items_stay_with_their_reviewer_and_their_decisions(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left")})
    code, out, err = reassign(started, "jane@acme.com", "sec@acme.com", "--by", "ops@acme.com", reason="on leave")
    assert code == 0, err
    assert out.startswith("Reassigned 3 undecided items of review q4 from jane@acme.com to sec@acme.com;"), out
    assert started.entries("jane@acme.com") == [("ws_a", "bob@ext.com")]
    assert '    decision: revoke\n    reason: "contractor left"\n' in started.file("jane@acme.com.yaml").read_text()
    code, out, err = started.run("plan", str(started.root), "--format", "json")
    assert code == 0, err
    assert [(e["key"], e["source"]["reviewer"]) for c in json.loads(out)["changes"] if c["kind"] == "access"
            for e in c["entries"]] == [("bob@ext.com", "jane@acme.com")]


def test_an_entry_the_new_reviewer_reviews_already_is_not_given_twice(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_c", "joe@acme.com"): ("keep", None)})  # joe's own: decided, it stays
    code, out, err = reassign(started, "jane@acme.com", "joe@acme.com", "--by", "ops@acme.com", reason="on leave")
    assert code == 0, err
    assert out.startswith("Reassigned 2 undecided items of review q4 from jane@acme.com to joe@acme.com; 1 item of "
                          "an entry joe@acme.com reviews already left jane@acme.com's file; recorded in "), out
    assert started.entries("joe@acme.com") == [("ws_a", "bob@ext.com"), ("ws_a", "ext.com"), ("ws_c", "dee@acme.com"),
                                               ("ws_c", "jane@acme.com")]
    assert started.entries("jane@acme.com") == [("ws_c", "joe@acme.com")]
    assert yaml.safe_load(started.file("campaign.yaml").read_text())["reassignments"][0]["items"] == 3


def test_items_of_the_new_reviewers_own_access_are_refused_naming_them(started: Company) -> None:
    code, out, err = reassign(started, "joe@acme.com", "jane@acme.com", "--by", "ops@acme.com")
    assert (code, out) == (1, ""), out
    assert err == ("Error: review reassign q4: jane@acme.com would review their own access: user jane@acme.com on "
                   f"ws_c ({started.file('joe@acme.com.yaml')}:18). No one reviews their own access: reassign to "
                   "someone else, or leave that item with joe@acme.com. Nothing was changed.\n")


def test_reassign_to_a_person_being_offboarded_is_refused(make_company: Callable[..., Company]) -> None:
    manifest = MANIFEST + "rules:\n  leavers:\n    match: {all: true}\n    revoke: {users: [ann@acme.com]}\n"
    company = start_q4(make_company(manifest=manifest))
    before = {p.name: p.read_text() for p in company.file("").iterdir()}
    code, out, err = reassign(company, "joe@acme.com", "ann@acme.com", "--by", "ops@acme.com")
    assert (code, out) == (1, "")
    assert err == (f"Error: review reassign q4: --to ann@acme.com is being offboarded (rule leavers revokes them at "
                   f"{company.root}/m.yaml:16), and a person leaving reviews nothing. Give another reviewer. Nothing "
                   "was changed.\n")
    assert {p.name: p.read_text() for p in company.file("").iterdir()} == before


def test_reassign_is_refused_after_close(started: Company) -> None:
    code, _, err = started.run("review", "close", "q4", str(started.root), "--accept-undecided", service=False)
    assert code == 0, err
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "ops@acme.com")
    assert (code, out) == (1, "")
    assert err == ("Error: review reassign q4: the campaign was closed on 2027-01-15; a closed campaign's decisions "
                   "are final, and so is who made them. Nothing was changed.\n")


def test_after_a_reassignment_the_old_files_are_refused(started: Company) -> None:
    old = {name: started.file(name).read_text() for name in ("joe@acme.com.yaml", "sec@acme.com.yaml")}
    code, _, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "ops@acme.com")
    assert code == 0, err
    code, _, err = started.run("validate", str(started.root), service=False)
    assert code == 0, err  # the new assignment is accepted
    for name, text in old.items():
        started.file(name).write_text(text)  # the files as they were before the reassignment
    code, _, err = started.run("plan", str(started.root))
    assert code == 1
    assert (f"{started.file('joe@acme.com.yaml')}:1: review start assigned no items to 'joe@acme.com.yaml'") in err
    assert (f"{started.file('sec@acme.com.yaml')}:3: these items are not the ones review start assigned to this "
            "file") in err, err


def test_who_reassigns_is_git_config_user_email_or_refused_without_it(
        started: Company, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(started.root.parent))  # no global git config of this machine
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    commit_all(started.root, "campaign q4 started")
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com")
    assert (code, out) == (1, "")
    assert err == ("Error: review reassign: who reassigns is recorded in the campaign, and git config user.email is "
                   "not set here: give --by EMAIL. Nothing was changed.\n")
    git(started.root, "config", "user.email", "Lead@Acme.com")
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com")
    assert code == 0, err
    assert yaml.safe_load(started.file("campaign.yaml").read_text())["reassignments"][0]["by"] == "lead@acme.com"


def test_the_items_of_a_deleted_file_can_be_reassigned(started: Company) -> None:
    commit_all(started.root, "campaign q4 started")
    started.file("joe@acme.com.yaml").unlink()
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "ops@acme.com")
    assert code == 0, err
    assert ("ws_c", "jane@acme.com") in started.entries("sec@acme.com")
    code, out, err = started.run("review", "status", "q4", str(started.root), service=False)
    assert "missing" not in out.lower() and "0 of 8 items decided" in out, out


@pytest.mark.parametrize(("source", "target", "message"), [
    ("eve@acme.com", "sec@acme.com", "--from eve@acme.com has no reviewer's file in the campaign (its reviewers: "
                                     "jane@acme.com, joe@acme.com, sec@acme.com). Nothing was changed."),
    ("joe@acme.com", "joe@acme.com", "--to is --from (joe@acme.com); give another reviewer. Nothing was changed."),
    ("joe@acme.com", "a/../x@acme.com", "--to a/../x@acme.com cannot name a reviewer's file: it holds a path "
                                        "separator, so the reviewer's file would be written outside the campaign's "
                                        "folder. Nothing was changed."),
])
def test_reassign_refuses_a_reviewer_it_cannot_move_items_from_or_to(
        started: Company, source: str, target: str, message: str) -> None:
    code, out, err = reassign(started, source, target, "--by", "ops@acme.com")
    assert (code, out, err) == (1, "", f"Error: review reassign q4: {message}\n")


def test_reassign_of_a_reviewer_with_nothing_undecided_is_refused(started: Company) -> None:
    started.decide_all("joe@acme.com", "keep")
    code, out, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "ops@acme.com")
    assert (code, err) == (1, "Error: review reassign q4: joe@acme.com has no undecided item to reassign. Nothing "
                              "was changed.\n")


def test_the_record_is_in_the_campaign_file_after_the_assignment_every_other_line_kept(started: Company) -> None:
    before = started.file("campaign.yaml").read_text()
    code, _, err = reassign(started, "joe@acme.com", "sec@acme.com", "--by", "ops@acme.com", reason="joe: left")
    assert code == 0, err
    after = started.file("campaign.yaml").read_text()
    head = before.split("assignment:\n")[0]
    assert after.startswith(head + "assignment:\n  jane@acme.com.yaml: "), after
    assert re.search(r"\nreassignments:\n  - from: joe@acme.com\n    to: sec@acme.com\n    by: ops@acme.com\n"
                     r"    at: '2027-01-15T08:00:00Z'\n    reason: 'joe: left'\n    items: 2\n    assignment:\n"
                     r"      joe@acme.com.yaml:\n      sec@acme.com.yaml: [0-9a-f]{64}\n\Z", after), after
