"""Issue 39 repro 7: a reviewer's revoke of an entry a team grants. With ``removeFromTeam: true`` it is the team
change that takes the person off every list the team alone grants them, before ``review close`` as after, shown
as the review's (campaign, reviewer, file:line), never "left team"; against another reviewer's keep through the
same team it is named and neither is carried out; without it, the entry is kept and named. No plan is blocked."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.review.conftest import Company

# Team partners grants dee and carl on gamma (ws_c: jane and joe own it) and beta (ws_b: kim owns it); delta
# (ws_d: kim's too) names dee by an entry of its own as well, which wins over the team.
MANIFEST = """version: 1
teams:
  partners: [dee@acme.com, carl@acme.com]
workspaces:
  gamma:
    id: ws_c
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
      teams:
        - {team: partners, role: editor}
  beta:
    id: ws_b
    access:
      authoritative: false
      users:
        - {email: kim@acme.com, role: owner}
      teams:
        - {team: partners, role: editor}
  delta:
    id: ws_d
    access:
      authoritative: false
      users:
        - {email: kim@acme.com, role: owner}
        - {email: dee@acme.com, role: viewer}
      teams:
        - {team: partners, role: editor}
"""


def spaces() -> list[dict[str, Any]]:
    def user(email: str, role: str) -> dict[str, str]:
        return {"email": email, "role": role}
    return [
        {"id": "ws_b", "name": "Beta", "published": True,
         "users": [user("kim@acme.com", "owner"), user("dee@acme.com", "editor"), user("carl@acme.com", "editor")]},
        {"id": "ws_c", "name": "Gamma", "published": True,
         "users": [user("joe@acme.com", "owner"), user("jane@acme.com", "owner"), user("dee@acme.com", "editor"),
                   user("carl@acme.com", "editor")]},
        {"id": "ws_d", "name": "Delta", "published": True,
         "users": [user("kim@acme.com", "owner"), user("dee@acme.com", "viewer"), user("carl@acme.com", "editor")]},
    ]


@pytest.fixture
def company(make_company: Callable[..., Company]) -> Company:
    """The company applied once (the state records that team partners put dee and carl on each list), then
    campaign q4 started."""
    return started(make_company(spaces(), manifest=MANIFEST))


def started(company: Company) -> Company:
    code, _, err = company.run("apply", str(company.root), "--auto-approve")
    assert code == 0, err
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com")
    assert code == 0, err
    return company


def remove_from_team(company: Company, reviewer: str) -> None:
    path = company.file(f"{reviewer}.yaml")
    path.write_text(path.read_text().replace("    decision: revoke\n", "    decision: revoke\n    removeFromTeam: true\n"))


def plan_json(company: Company) -> dict[str, Any]:
    code, out, err = company.run("plan", str(company.root), "--format", "json")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def removals(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(address, key, action) of every entry change."""
    return [(c["address"], e["key"], e["action"]) for c in document["changes"] if c["kind"] == "access"
            for e in c["entries"]]


def jane_line(company: Company) -> str:
    return f"{company.root}/reviews/q4/jane@acme.com.yaml:18"  # her decision on dee on ws_c


def test_a_revoke_with_remove_from_team_takes_the_person_off_every_list_the_team_alone_grants_before_close(
        company: Company) -> None:
    """It blocked the whole plan ('set removeFromTeam: true', when it was set)."""
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", "no longer on the account")})
    remove_from_team(company, "jane@acme.com")
    document = plan_json(company)
    # Delta names dee by an entry of its own: out of the team, dee stays there as that entry says.
    assert removals(document) == [("workspace.gamma", "dee@acme.com", "delete"),
                                  ("workspace.beta", "dee@acme.com", "delete")]
    assert [w for w in document["warnings"] if "review q4" in w] == []


def test_another_team_granting_the_person_on_a_list_decides_their_role_there_once_they_leave_the_team(
        make_company: Callable[..., Company]) -> None:
    # Beta names team helpers too (dee, viewer): out of partners, dee stays on beta as helpers says.
    manifest = MANIFEST.replace("  partners: [dee@acme.com, carl@acme.com]\n",
                                "  partners: [dee@acme.com, carl@acme.com]\n  helpers: [dee@acme.com]\n")
    manifest = manifest.replace("        - {team: partners, role: editor}\n  delta:",
                                "        - {team: partners, role: editor}\n        - {team: helpers, role: viewer}\n"
                                "  delta:")
    company = started(make_company(spaces(), manifest=manifest))
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    remove_from_team(company, "jane@acme.com")
    document = plan_json(company)
    assert removals(document) == [("workspace.gamma", "dee@acme.com", "delete"),
                                  ("workspace.beta", "dee@acme.com", "update")]
    (beta,) = [e for c in document["changes"] if c["address"] == "workspace.beta" for e in c["entries"]]
    assert (beta["before"], beta["after"], beta["source"]["team"]) == ("editor", "viewer", "helpers")


def test_a_removal_from_a_team_against_another_reviewers_keep_is_named_and_neither_is_carried_out(
        company: Company) -> None:
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    remove_from_team(company, "jane@acme.com")
    company.decide_on("kim@acme.com", {("ws_b", "dee@acme.com"): ("keep", "helps the customer")})
    document = plan_json(company)
    assert removals(document) == []
    reviews = company.root / "reviews" / "q4"
    assert [w for w in document["warnings"] if "review q4" in w] == [
        f"{jane_line(company)}: review q4: jane@acme.com revokes user dee@acme.com on ws_c with removeFromTeam: "
        f"true, which takes them out of team partners ({company.root}/m.yaml:3) and so off workspace.beta too, "
        f"where kim@acme.com decided keep on ws_b ({reviews}/kim@acme.com.yaml:18): neither is carried out; "
        "decide one of them again (keep on both, or revoke on both)"]
    # Close refuses the same conflict, naming the same two lines.
    code, _, err = company.run("review", "close", "q4", str(company.root), "--accept-undecided", service=False)
    assert code == 1
    assert f"{jane_line(company)}: jane@acme.com revokes user dee@acme.com on ws_c" in err
    assert f"decided keep on ws_b ({reviews}/kim@acme.com.yaml:18)" in err


def test_a_revoke_of_a_team_grant_without_remove_from_team_is_kept_and_named_and_the_plan_goes_on(
        company: Company) -> None:
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None),
                                        ("ws_c", "joe@acme.com"): ("revoke", "left the project")})
    document = plan_json(company)
    assert removals(document) == [("workspace.gamma", "joe@acme.com", "delete")]
    assert [w for w in document["warnings"] if "review q4" in w] == [
        f"{jane_line(company)}: review q4 by jane@acme.com revokes user dee@acme.com on ws_c, which team partners "
        f"grants as editor at {company.root}/m.yaml:12: not carried out, and kept (a revoke takes no one out of a "
        "team by itself). To carry it out, set removeFromTeam: true on the item (before review close), or change "
        "the team."]


def explained(document: dict[str, Any]) -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """(address, key, action, reason, source) of every entry change."""
    return [(c["address"], e["key"], e["action"], e["reason"], e["source"]) for c in document["changes"]
            if c["kind"] == "access" for e in c["entries"]]


def test_the_removal_from_the_team_is_the_reviews_before_and_after_close_never_left_team(company: Company) -> None:
    """After close the team no longer lists dee, and every list the team put dee on read 'left team partners':
    the consequence, not the review that caused it."""
    company.decide_on("jane@acme.com", {("ws_c", "dee@acme.com"): ("revoke", None)})
    remove_from_team(company, "jane@acme.com")
    before = explained(plan_json(company))
    code, out, err = company.run("review", "close", "q4", str(company.root), "--accept-undecided", service=False)
    assert code == 0, err
    assert f"{company.root}/m.yaml:3: dee@acme.com from team partners (revoked by jane@acme.com)" in out
    after = explained(plan_json(company))
    assert after == before
    review = {"kind": "review", "location": jane_line(company), "team": None, "rule": None, "campaign": "q4",
              "reviewer": "jane@acme.com", "due": None}
    assert after == [
        ("workspace.gamma", "dee@acme.com", "delete",
         f"revoked by review q4 by jane@acme.com ({jane_line(company)}): loses editor access", review),
        ("workspace.beta", "dee@acme.com", "delete",
         f"revoked by review q4 by jane@acme.com ({jane_line(company)}), which takes them out of team partners: "
         "loses editor access", {**review, "team": "partners"})]
    code, out, err = company.run("plan", str(company.root))
    assert code == 0, err
    assert out.count("REMOVED: loses access (left the manifest; listed since") == 2
    assert out.count("(revoked in review q4 by jane@acme.com)\n") == 2
    assert "left team" not in out
