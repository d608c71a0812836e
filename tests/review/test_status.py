"""``reconciler review status``: decided out of total per reviewer, overdue items, exit 0/2/1."""

from __future__ import annotations

import json

import pytest

from tests.review.conftest import Company


def status(company: Company, *extra: str) -> tuple[int, str, str]:
    return company.run("review", "status", "q4", str(company.root), *extra, service=False)


def test_status_exits_2_and_counts_each_reviewer_while_items_are_open(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left"),
                                        ("ws_a", "ext.com"): ("keep", None)})
    code, out, err = status(started)
    assert (code, err) == (2, "")
    assert out == ("Review q4 (due 2027-02-01, onDue flag): 2 of 8 items decided.\n"
                   "  jane@acme.com  2/4 decided (1 kept, 1 revoked)\n"
                   "  joe@acme.com   0/2 decided (0 kept, 0 revoked)\n"
                   "  sec@acme.com   0/2 decided (0 kept, 0 revoked)\n")


def test_status_exits_0_when_every_item_is_decided(started: Company) -> None:
    started.decide_all("jane@acme.com", "keep")
    started.decide_all("joe@acme.com", "keep")
    started.decide_on("sec@acme.com", {("ws_a", "jane@acme.com"): ("keep", None), ("ws_b", "carl@acme.com"): ("revoke", None)})
    code, out, _ = status(started)
    assert code == 0
    assert out.startswith("Review q4 (due 2027-02-01, onDue flag): 8 of 8 items decided.\n")


def test_status_names_the_items_still_open_after_the_due_date(started: Company,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    started.decide_all("jane@acme.com", "keep")
    started.decide_all("joe@acme.com", "keep")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1800000000 + 20 * 86400))  # 2027-02-04
    code, out, _ = status(started)
    assert code == 2
    assert out.endswith("Overdue since 2027-02-01: 2 items undecided (onDue flag: reconciler audit names them and "
                        "exits 2):\n"
                        f"  {started.root}/reviews/q4/sec@acme.com.yaml:10: user jane@acme.com (owner) on ws_a, "
                        "sec@acme.com\n"
                        f"  {started.root}/reviews/q4/sec@acme.com.yaml:18: user carl@acme.com (viewer) on ws_b, "
                        "sec@acme.com\n")


def test_status_as_json_is_the_model(started: Company) -> None:
    code, out, _ = status(started, "--format", "json")
    document = json.loads(out)
    assert (document["total"], document["decided"], [r["reviewer"] for r in document["reviewers"]]) == (
        8, 0, ["jane@acme.com", "joe@acme.com", "sec@acme.com"])


def test_status_as_markdown_is_a_table(started: Company) -> None:
    code, out, _ = status(started, "--format", "markdown")
    assert out.split("\n")[:4] == ["### Review q4 (due 2027-02-01, onDue flag): 0 of 8 items decided.", "",
                                   "| Reviewer | Decided | Kept | Revoked |", "|---|---|---|---|"]


def test_status_of_a_campaign_that_does_not_exist_exits_1(started: Company) -> None:
    code, _, err = started.run("review", "status", "q3", str(started.root), service=False)
    assert code == 1
    assert err == (f"Error: review q3: no campaign {started.root}/reviews/q3/campaign.yaml (campaigns here: q4); "
                   f"start one with reconciler review start q3 {started.root} --due DATE.\n")
