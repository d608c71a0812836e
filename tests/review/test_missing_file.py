"""A reviewer's file deleted is undecided items, never fewer (issue 39 item 1): its items, as the last copy
git holds of it, are read back undecided whatever that copy decided; ``review status`` lists them with their
reviewer, ``review close`` counts them as undecided, the plan treats them as undecided (onDue after the due
date). Without a copy in git holding the sealed items, the campaign is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.review.conftest import Company, commit_all, git

JOE = "joe@acme.com"  # reviews ws_c: dee@acme.com (jane reviews it too) and jane@acme.com (his alone)


def plan_entries(company: Company) -> set[tuple[str, str, str | None]]:
    code, out, err = company.run("plan", str(company.root), "--format", "json")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return {(c["address"], e["key"], (e["source"] or {}).get("kind")) for c in document["changes"]
            if c["kind"] == "access" for e in c["entries"] if e["action"] == "delete"}


def test_status_lists_the_items_of_a_deleted_file_as_undecided_with_their_reviewer(started: Company) -> None:
    commit_all(started.root, "campaign q4 started")
    started.file(f"{JOE}.yaml").unlink()  # deleted, not committed yet
    code, out, err = started.run("review", "status", "q4", str(started.root), service=False)
    assert (code, err) == (2, "")
    folder = started.file("")
    assert out == ("Review q4 (due 2027-02-01, onDue flag): 0 of 8 items decided.\n"
                   "  jane@acme.com  0/4 decided (0 kept, 0 revoked)\n"
                   "  joe@acme.com   0/2 decided (0 kept, 0 revoked), file missing\n"
                   "  sec@acme.com   0/2 decided (0 kept, 0 revoked)\n"
                   "Missing 1 reviewer file (joe@acme.com.yaml): 2 items read from git as review start wrote them, "
                   "each undecided (put the file back, or reconciler review reassign them):\n"
                   f"  {folder}/joe@acme.com.yaml:10: user dee@acme.com (editor) on ws_c, joe@acme.com\n"
                   f"  {folder}/joe@acme.com.yaml:18: user jane@acme.com (owner) on ws_c, joe@acme.com\n")


def test_the_decisions_of_a_deleted_file_are_not_acted_on_and_close_counts_its_items_undecided(
        started: Company) -> None:
    started.decide_on(JOE, {("ws_c", "jane@acme.com"): ("revoke", "she moved on")})
    commit_all(started.root, "joe decides")
    assert ("unmanaged.ws_c", "jane@acme.com", "review") in plan_entries(started)  # his file there: acted on
    started.file(f"{JOE}.yaml").unlink()
    commit_all(started.root, "joe's file deleted")  # and the deletion committed
    assert plan_entries(started) == set()  # undecided, whatever the copy in git says
    started.decide_all("jane@acme.com", "keep")
    started.decide_all("sec@acme.com", "keep")
    code, out, err = started.run("review", "close", "q4", str(started.root), service=False)
    assert (code, out) == (1, "")
    assert err.startswith("Error: review close q4: 1 item nobody decided yet (joe@acme.com.yaml (missing): 1); "), err
    code, out, err = started.run("review", "close", "q4", str(started.root), "--accept-undecided", service=False)
    assert code == 0, err
    assert "\nclosedUndecided: 1\n" in started.file("campaign.yaml").read_text()


def test_an_overdue_item_of_a_deleted_file_follows_on_due(started: Company) -> None:
    commit_all(started.root, "campaign q4 started")
    path = started.file("campaign.yaml")
    path.write_text(path.read_text().replace("due: 2027-02-01", "due: 2020-01-01").replace("onDue: flag",
                                                                                         "onDue: revoke"))
    started.decide_all("jane@acme.com", "keep")
    started.decide_all("sec@acme.com", "keep")
    started.file(f"{JOE}.yaml").unlink()
    assert plan_entries(started) == {("unmanaged.ws_c", "jane@acme.com", "review")}  # joe's alone, not reviewed


def test_a_deleted_file_whose_copy_in_git_holds_other_items_is_refused(started: Company) -> None:
    path = started.file(f"{JOE}.yaml")
    path.write_text(path.read_text().replace("key: dee@acme.com", "key: eve@acme.com"))
    commit = commit_all(started.root, "an item changed")
    path.unlink()
    code, out, err = started.run("plan", str(started.root))
    assert (code, out) == (1, "")
    assert (f"{started.file('campaign.yaml')}:11: the reviewer's file 'joe@acme.com.yaml' that review start wrote "
            f"is missing, and its copy in git (commit {commit[:12]}) does not hold the items review start assigned "
            "it: its items cannot go unseen") in err, err


@pytest.mark.parametrize("name", ["../q3/joe@acme.com.yaml", ".hidden.yaml"])
def test_an_assignment_naming_no_file_of_the_folder_is_refused_unread(started: Company, name: str) -> None:
    commit_all(started.root, "campaign q4 started")
    path = started.file("campaign.yaml")
    path.write_text(path.read_text() + f'  "{name}": {"a" * 64}\n')
    code, out, err = started.run("validate", str(started.root), service=False)
    assert code == 1
    assert (f"the reviewer's file '{name}' that review start wrote is missing, and it names no file of the "
            "campaign's folder: its items cannot go unseen") in err, err
    assert git(started.root, "status", "--porcelain", "--", "reviews") == " M reviews/q4/campaign.yaml\n"
