"""The plan carries out the reviewers' decisions: revocations with source kind review, stale decisions
reported and not acted on, overdue items by onDue, a revoke against a manifest grant refused, and review
revocations held to the same checks as every other revocation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


from tests.review.conftest import MANIFEST, Company, workspaces
from tests.review.conftest import start_q4 as start


def plan_json(company: Company, *extra: str) -> dict[str, Any]:
    code, out, err = company.run("plan", str(company.root), "--format", "json", *extra)
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def entries(document: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(address, kind, key, source kind) of every entry change."""
    return [(c["address"], e["kind"], e["key"], (e["source"] or {}).get("kind"))
            for c in document["changes"] if c["kind"] == "access" for e in c["entries"]]


def reviews_warnings(document: dict[str, Any]) -> list[str]:
    return [w for w in document["warnings"] if "review q4" in w]


def overdue(company: Company, on_due: str) -> None:
    path = company.file("campaign.yaml")
    text = path.read_text().replace("due: 2027-02-01", "due: 2020-01-01").replace("onDue: flag", f"onDue: {on_due}")
    path.write_text(text)


def test_a_revoke_decision_becomes_a_revocation_with_source_kind_review(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", "contractor left")})
    document = plan_json(started)
    (change,) = [c for c in document["changes"] if c["kind"] == "access"]
    (entry,) = change["entries"]
    assert (change["address"], entry["key"], entry["action"]) == ("workspace.alpha", "bob@ext.com", "delete")
    shown = ("kind", "campaign", "reviewer", "location", "team", "rule", "due")
    assert {key: entry["source"].get(key, "missing") for key in shown} == {
        "kind": "review", "campaign": "q4", "reviewer": "jane@acme.com",
        "location": f"{started.root}/reviews/q4/jane@acme.com.yaml:10", "team": None, "rule": None, "due": None}


def test_the_text_plan_says_who_revoked_it_in_which_review(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None)})
    code, out, err = started.run("plan", str(started.root))
    assert code == 0, err
    assert "- user   bob@ext.com  editor   REMOVED: loses access  (revoked in review q4 by jane@acme.com)\n" in out


def test_a_revoke_on_a_workspace_no_manifest_names_is_planned_there(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    assert entries(plan_json(started)) == [("unmanaged.ws_c", "user", "dee@acme.com", "review")]


def test_a_keep_decision_changes_nothing(started: Company) -> None:
    started.decide_all("jane@acme.com", "keep")
    assert entries(plan_json(started)) == []


def test_a_revoke_of_an_entry_whose_role_changed_is_stale_reported_and_not_acted_on(
        make_company: Callable[..., Company]) -> None:
    company = start(make_company())
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    spaces = workspaces()
    spaces[2]["users"][2]["role"] = "viewer"  # dee was editor when the review started
    company.root.joinpath("emulator.yaml").unlink()
    company.root.joinpath("seed.yaml").write_text(json.dumps({"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 10, "workspaces": spaces}}}))
    document = plan_json(company)
    assert entries(document) == []
    assert reviews_warnings(document) == [
        f"{company.root}/reviews/q4/jane@acme.com.yaml:26: review q4: stale decision (revoke by jane@acme.com): "
        "user dee@acme.com on ws_c is viewer in the service, editor when the review started; not acted on: decide "
        "it again in a new review"]


def test_a_keep_of_an_entry_removed_since_the_snapshot_is_reported_stale(make_company: Callable[..., Company]) -> None:
    company = start(make_company())
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("keep", None)})
    spaces = workspaces()
    del spaces[2]["users"][2]
    company.root.joinpath("emulator.yaml").unlink()
    company.root.joinpath("seed.yaml").write_text(json.dumps({"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 10, "workspaces": spaces}}}))
    assert reviews_warnings(plan_json(company)) == [
        f"{company.root}/reviews/q4/jane@acme.com.yaml:26: review q4: stale decision (keep by jane@acme.com): "
        "user dee@acme.com on ws_c has been removed since the review started"]


def test_overdue_items_with_on_due_revoke_are_revoked_as_not_reviewed(started: Company) -> None:
    started.decide_on("jane@acme.com", dict.fromkeys([("ws_a", "bob@ext.com"), ("ws_a", "ext.com"), ("ws_c", "joe@acme.com")], ("keep", None)))  # dee left open
    started.decide_on("joe@acme.com", {("ws_c", "jane@acme.com"): ("keep", None)})  # joe left dee open too
    started.decide_all("sec@acme.com", "keep")
    overdue(started, "revoke")
    document = plan_json(started)
    (change,) = [c for c in document["changes"] if c["kind"] == "access"]
    (entry,) = change["entries"]
    assert (change["address"], entry["key"], entry["source"]["due"], entry["source"]["reviewer"]) == (
        "unmanaged.ws_c", "dee@acme.com", "2020-01-01", "jane@acme.com")
    assert entry["reason"] == (f"revoked by review q4 (not reviewed by 2020-01-01) ({started.root}/reviews/q4/"
                               "jane@acme.com.yaml:26): loses editor access")
    code, out, _ = started.run("plan", str(started.root))
    assert "REMOVED: loses access  (revoked in review q4: not reviewed by 2020-01-01)\n" in out


def test_overdue_items_with_on_due_keep_are_kept(started: Company) -> None:
    overdue(started, "keep")
    assert entries(plan_json(started)) == []


def test_overdue_items_with_on_due_flag_are_not_revoked_and_audit_names_them(started: Company) -> None:
    started.decide_all("jane@acme.com", "keep")
    started.decide_all("joe@acme.com", "keep")
    overdue(started, "flag")
    assert entries(plan_json(started)) == []
    code, out, err = started.run("audit", str(started.root))
    assert code == 2, err
    assert (f"review q4: user carl@acme.com viewer on ws_b was not reviewed by 2020-01-01 (sec@acme.com, "
            f"{started.root}/reviews/q4/sec@acme.com.yaml:18)") in out


def test_audit_is_clean_of_reviews_before_the_due_date(started: Company) -> None:
    path = started.file("campaign.yaml")  # audit reads today's date: a due date far ahead, whenever this runs
    path.write_text(path.read_text().replace("due: 2027-02-01", "due: 2099-01-01"))
    code, out, _ = started.run("audit", str(started.root))
    assert "not reviewed by" not in out


def test_a_revoke_against_an_explicit_manifest_entry_is_refused_naming_both_lines(started: Company) -> None:
    started.decide_on("sec@acme.com", {("ws_a", "jane@acme.com"): ("revoke", None)})
    code, out, err = started.run("plan", str(started.root))
    assert code == 1
    assert err == (
        "Error: The plan cannot be made: a review revokes what the manifests grant.\n"
        f"  {started.root}/reviews/q4/sec@acme.com.yaml:10: review q4 by sec@acme.com revokes user jane@acme.com "
        f"on ws_a, which an explicit entry grants as owner at {started.root}/m.yaml:12; run reconciler review close "
        "to remove that line, or decide keep.\n")


def test_a_review_revoking_a_protected_owner_is_refused_by_the_policy(make_company: Callable[..., Company]) -> None:
    manifest = MANIFEST.replace("  allowedDomains: [acme.com]\n", "  allowedDomains: [acme.com]\n"
                                "  protectedOwners: [joe@acme.com]\n")
    company = start(make_company(manifest=manifest))
    company.decide_on("jane@acme.com", {("ws_c", "joe@acme.com"): ("revoke", None)})
    code, out, err = company.run("plan", str(company.root))
    assert code == 1
    assert (f"policy protectedOwners: unmanaged.ws_c would revoke protected owner joe@acme.com "
            f"({company.root}/reviews/q4/jane@acme.com.yaml:34) on ws_c \"Gamma\"; this tool never takes ownership") in err, err


def test_review_revocations_count_toward_max_removals(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None), ("ws_c", "dee@acme.com"): ("revoke", None)})
    code, out, err = started.run("apply", str(started.root), "--auto-approve", "--max-removals", "1")
    assert code == 1
    assert err.endswith("Error: The plan removes 2 access entries, each a person or domain losing all access to "
                        'one workspace (ws_a "Alpha": user bob@ext.com (workspace.alpha), ws_c "Gamma": user '
                        "dee@acme.com (unmanaged.ws_c)), more than --max-removals 1 allows. Nothing was changed. If "
                        "these removals are intended, raise --max-removals.\n"), err


def test_a_review_revoking_every_owner_is_refused_by_the_no_owner_check(started: Company) -> None:
    # ws_c is in no manifest: like a rule's revocation that would leave it without an owner, the
    # review's is not sent; the workspace waits for a person, and the plan says something is open.
    started.decide_on("jane@acme.com", {("ws_c", "joe@acme.com"): ("revoke", None)})
    started.decide_on("joe@acme.com", {("ws_c", "jane@acme.com"): ("revoke", None)})
    code, out, err = started.run("plan", str(started.root), "--detailed-exitcode")
    assert code == 2, err
    assert (f"  unmanaged.ws_c ({started.root}/reviews/q4/jane@acme.com.yaml:34): ws_c \"Gamma\": an access review "
            "would take the owner role from jane@acme.com, joe@acme.com, its only owners; nothing is changed on it "
            "until then.\n") in out


def test_review_revocations_are_applied_and_the_next_plan_has_no_changes(started: Company) -> None:
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None), ("ws_c", "dee@acme.com"): ("revoke", "left the project")})
    code, out, err = started.run("apply", str(started.root), "--auto-approve")
    assert code == 0, err
    code, out, err = started.run("plan", str(started.root))
    assert (code, out.split(" ")[:2]) == (0, ["No", "changes."]), err


def test_a_revoke_by_one_owner_wins_over_a_keep_by_the_other(started: Company) -> None:
    started.decide_on("joe@acme.com", {("ws_c", "dee@acme.com"): ("keep", None)})  # joe keeps dee on ws_c ...
    started.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", "not on the project")})  # ... jane revokes her
    document = plan_json(started)
    (entry,) = [e for c in document["changes"] if c["kind"] == "access" for e in c["entries"]]
    assert (entry["key"], entry["source"]["reviewer"]) == ("dee@acme.com", "jane@acme.com")


def test_the_per_person_view_names_the_review_behind_a_revocation_not_team_none(started: Company) -> None:
    """Issue 41 item 5: plan --by-person summed a review's revocations as '1 via team None'."""
    started.decide_on("jane@acme.com", {("ws_a", "bob@ext.com"): ("revoke", None), ("ws_c", "dee@acme.com"): ("revoke", None)})
    code, out, err = started.run("plan", str(started.root), "--by-person")
    assert code == 0, err
    assert "None" not in out
    assert "bob@ext.com loses access to 1 workspace: 1 via review q4 by jane@acme.com" in out
    assert "dee@acme.com loses access to 1 workspace: 1 via review q4 by jane@acme.com" in out


def test_an_overdue_campaign_revokes_what_nobody_decided_and_keeps_what_the_manifests_grant_without_blocking(
        started: Company) -> None:
    """Issue 39 item 3: an overdue onDue: revoke campaign blocked every plan: an undecided item on an entry a
    manifest line grants (jane, owner of alpha) was a 'review revokes what the manifests grant' refusal. Now
    that item is kept and named, and the plan goes on with the rest."""
    overdue(started, "revoke")
    code, out, err = started.run("plan", str(started.root), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    revoked = {(c["address"], e["key"]) for c in document["changes"] if c["kind"] == "access"
               for e in c["entries"] if e["action"] == "delete"}
    assert ("workspace.alpha", "bob@ext.com") in revoked and ("workspace.alpha", "jane@acme.com") not in revoked
    (kept,) = [w for w in document["warnings"] if "jane@acme.com on ws_a was not reviewed" in w]
    assert kept == (f"{started.root}/reviews/q4/sec@acme.com.yaml:10: review q4: user jane@acme.com on ws_a was "
                    "not reviewed by 2020-01-01 (onDue: revoke), but an explicit entry grants it as owner at "
                    f"{started.root}/m.yaml:12: kept, as the manifests say. Decide it in the review, or change "
                    "what grants it.")
