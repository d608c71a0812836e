"""``reconciler review report``: evidence.csv and evidence.html, decisions dated by git, revocations
marked applied from the state."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.review.conftest import Company, commit_all, git, start_q4, workspaces


def rows(company: Company) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((company.root / "out" / "evidence.csv").read_text(), newline="")))


def figures(company: Company) -> dict[str, str]:
    page = (company.root / "out" / "evidence.html").read_text()
    return dict(re.findall(r'data-figure="([a-z-]+)"><span class="value">([^<]*)<', page))


def test_the_evidence_dates_each_decision_by_its_commit_and_marks_applied_revocations(started: Company) -> None:
    git(started.root, "init", "-q")
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left"), ("ws_a", "ext.com"): ("keep", None),
                                        ("ws_c", "dee@acme.com"): ("revoke", None)})
    git(started.root, "add", "m.yaml", "reviews")
    git(started.root, "commit", "-qm", "decisions")
    commit = git(started.root, "rev-parse", "HEAD").strip()
    code, _, err = started.run("apply", str(started.root), "--auto-approve")
    assert code == 0, err
    code, out, err = started.run("review", "report", "q4", str(started.root), "--out",
                                 str(started.root / "out"), service=False)
    assert code == 0, err
    assert out.startswith(f"Wrote evidence.csv, evidence.html to {started.root}/out: 8 items, 3 decided (1 kept, "
                          "2 revoked, 2 revoked and applied), 0 overdue.\n")
    bob = next(r for r in rows(started) if r["email_or_domain"] == "bob@ext.com")
    assert (bob["decision"], bob["reason"], bob["decided_on"], bob["decided_commit"], bob["applied"],
            bob["applied_on"], bob["applied_state_serial"]) == (
        "revoke", "contractor left", "2027-01-20", commit, "applied", bob["applied_on"], "1")
    assert figures(started) == {"items": "8", "decided": "3", "kept": "1", "revoked": "2", "revoked-applied": "2",
                                "overdue": "0"}


def test_the_evidence_says_when_the_files_are_not_in_git_and_a_revocation_is_not_applied(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    (started.root / "reconciler.state.json").write_text('{"version": 1, "lineage": "x", "serial": 1, '
                                                         '"resources": {}}')
    code, out, err = started.run("review", "report", "q4", str(started.root), "--out",
                                 str(started.root / "out"), service=False)
    assert code == 0, err
    assert out.endswith("The review files are not in a git repository: decision dates and commits are not known.\n")
    bob = next(r for r in rows(started) if r["email_or_domain"] == "bob@ext.com")
    assert (bob["decided_on"], bob["decided_commit"], bob["applied"]) == ("", "", "not applied")
    assert "not in a git repository" in (started.root / "out" / "evidence.html").read_text()


def test_the_evidence_counts_items_nobody_decided_by_the_due_date_as_overdue(started: Company, monkeypatch: pytest.MonkeyPatch) -> None:
    started.decide_all("jane@acme.com", "keep")
    started.decide_on("joe@acme.com", {("ws_c", "jane@acme.com"): ("keep", None)})
    started.decide_on("sec@acme.com", {("ws_a", "jane@acme.com"): ("keep", None)})
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1800000000 + 20 * 86400))  # 2027-02-04
    started.run("review", "report", "q4", str(started.root), "--out", str(started.root / "out"), service=False)
    # joe's dee is jane's too (both own ws_c), so jane's keep decided it: only carl is open.
    assert figures(started)["overdue"] == "1"
    assert [r["email_or_domain"] for r in rows(started) if r["overdue"]] == ["carl@acme.com"]


def test_a_state_given_that_does_not_exist_is_refused_not_read_as_nothing_applied(started: Company) -> None:
    """Issue 39 item 8: 'review report --state /nonexistent' exited 0 with '0 revoked and applied'."""
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    missing = started.root / "no-such-state.json"
    code, out, err = started.run("review", "report", "q4", str(started.root), "--out", str(started.root / "out"),
                                 "--state", str(missing), service=False)
    assert (code, out) == (1, ""), out + err
    assert err == (f"Error: review report q4: --state {missing} holds no state, so whether each revocation was "
                   "applied cannot be read from it. Give the state the applies use, or leave --state out to report "
                   "from the state beside the manifests (or without one). Nothing was written.\n")
    assert not (started.root / "out").exists()


def test_the_evidence_says_who_decided_and_when_by_the_commits_and_when_the_campaign_closed(
        started: Company) -> None:
    """Issue 39 item 8: the evidence carried a date but not who decided and when."""
    commit_all(started.root, "campaign q4 started", email="ops@acme.com", when="2027-01-15T09:00:00Z")
    started.decide_on("joe@acme.com", {("ws_c", "jane@acme.com"): ("keep", "still the project lead")})
    decided = commit_all(started.root, "joe decides", email="joe@acme.com", when="2027-01-18T14:30:00+02:00")
    code, _, err = started.run("review", "close", "q4", str(started.root), "--accept-undecided", service=False)
    assert code == 0, err
    code, _, err = started.run("review", "report", "q4", str(started.root), "--out", str(started.root / "out"),
                               service=False)
    assert code == 0, err
    joe = next(r for r in rows(started) if r["reviewer"] == "joe@acme.com" and r["email_or_domain"] == "jane@acme.com")
    assert {k: joe[k] for k in ("decision", "decided_commit", "decided_at", "decided_by", "campaign_closed",
                                "file_last_commit", "file_last_commit_at", "file_last_commit_by")} == {
        "decision": "keep", "decided_commit": decided, "decided_at": "2027-01-18T12:30:00Z",
        "decided_by": "joe@acme.com", "campaign_closed": "2027-01-15", "file_last_commit": decided,
        "file_last_commit_at": "2027-01-18T12:30:00Z", "file_last_commit_by": "joe@acme.com"}
    undecided = next(r for r in rows(started) if r["reviewer"] == "sec@acme.com")
    assert (undecided["decided_by"], undecided["file_last_commit_by"]) == ("", "ops@acme.com")
    page = (started.root / "out" / "evidence.html").read_text()
    assert "<td>2027-01-18T12:30:00Z</td><td>" + decided[:12] + "</td><td>joe@acme.com</td>" in page


def test_outside_git_the_columns_of_who_and_when_are_empty(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, _, err = started.run("review", "report", "q4", str(started.root), "--out", str(started.root / "out"),
                               service=False)
    assert code == 0, err
    bob = next(r for r in rows(started) if r["email_or_domain"] == "bob@ext.com")
    assert [bob[k] for k in ("decided_at", "decided_by", "campaign_closed", "file_last_commit",
                             "file_last_commit_at", "file_last_commit_by")] == [""] * 6


def seal_of(company: Company) -> tuple[dict[str, str], str | None]:
    """campaign.yaml's assignment and closedDigest, read as an auditor would."""
    spec = yaml.safe_load(company.file("campaign.yaml").read_text(encoding="utf-8"))
    return spec["assignment"], spec.get("closedDigest")


def report(company: Company) -> None:
    code, _, err = company.run("review", "report", "q4", str(company.root), "--out", str(company.root / "out"),
                               service=False)
    assert code == 0, err


def test_the_evidence_carries_the_campaigns_seal_as_campaign_yaml_records_it(
        started: Company, make_company: Callable[..., Company], tmp_path: Path) -> None:
    """Issue 39 item 5: the evidence has the campaign's digest, so it is tied to the exact sealed campaign."""
    assignment, closed = seal_of(started)
    assert closed is None and len(assignment) == 3
    report(started)
    found = rows(started)
    assert {(r["decision_line"].rsplit(":", 1)[0].rsplit("/", 1)[1], r["assignment_digest"]) for r in found} == set(
        assignment.items())
    assert {r["campaign_closed_digest"] for r in found} == {""}
    page = (started.root / "out" / "evidence.html").read_text()
    seal = re.search(r"<p class=\"meta\" data-seal>([^<]*)</p>", page)
    assert seal is not None
    assert seal.group(1) == ("Sealed by review start (campaign.yaml&#x27;s assignment: the sha256 of each reviewer&#x27;s "
                             "items): " + "; ".join(f"{f} {d}" for f, d in sorted(assignment.items())) + ".")

    # Closed: closedDigest joins it, on every row and on the page.
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, _, err = started.run("review", "close", "q4", str(started.root), "--accept-undecided", service=False)
    assert code == 0, err
    _, closed = seal_of(started)
    assert closed is not None and re.fullmatch("[0-9a-f]{64}", closed)
    report(started)
    assert {r["campaign_closed_digest"] for r in rows(started)} == {closed}
    assert f"Closed with closedDigest {closed} (the sha256 of the reviewers&#x27; files as closed)." in (
        started.root / "out" / "evidence.html").read_text()

    # The same campaign started again on a company without bob: jane's items differ, and so does her seal.
    spaces = workspaces()
    spaces[0]["users"] = [u for u in spaces[0]["users"] if u["email"] != "bob@ext.com"]
    again = start_q4(make_company(spaces, root=tmp_path / "again"))
    other, _ = seal_of(again)
    assert other["jane@acme.com.yaml"] != assignment["jane@acme.com.yaml"]
    assert other["sec@acme.com.yaml"] == assignment["sec@acme.com.yaml"]
    report(again)
    jane = {r["assignment_digest"] for r in rows(again) if r["decision_line"].split("/")[-1].startswith("jane@")}
    assert jane == {other["jane@acme.com.yaml"]}
    assert other["jane@acme.com.yaml"] in (again.root / "out" / "evidence.html").read_text()
    assert assignment["jane@acme.com.yaml"] not in (again.root / "out" / "evidence.html").read_text()
