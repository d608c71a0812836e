"""The two pure pieces of governance: expanding an access list's teams and
rules into who gets which role and why, and which workspaces a rule matches."""

from __future__ import annotations

import pytest

from reconciler.manifest.desired import (
    AccessList,
    DesiredRule,
    DesiredTeam,
    DomainAccess,
    RevokedEntry,
    RuleMatch,
    TeamAccess,
    TeamMember,
    UserAccess,
)
from reconciler.manifest.location import SourceLocation
from reconciler.plan.rules import matching_rules, rule_matches
from reconciler.plan.teams import Alternative, GrantSource, expand_access
from tests.conftest import live_workspace


def at(line: int) -> SourceLocation:
    return SourceLocation("m.yaml", line)


def team(key: str, *emails: str) -> DesiredTeam:
    return DesiredTeam(key=key, location=at(1), members=tuple(TeamMember(e, at(1)) for e in emails))


TEAMS = {t.key: t for t in (team("cs", "ana@acme.com", "bo@acme.com"), team("sales", "bo@acme.com", "cy@acme.com"))}


def rule(key: str, match: RuleMatch | None = None, **fields: object) -> DesiredRule:
    return DesiredRule(key=key, location=at(50), match=match or RuleMatch(all=True, location=at(51)),
                       **fields)  # type: ignore[arg-type]


# --- expand_access ---------------------------------------------------------------------------


def test_a_team_reference_gives_each_member_the_teams_role() -> None:
    access = AccessList(location=at(2), users=(UserAccess("jane@acme.com", "owner", at(3)),),
                        teams=(TeamAccess("cs", "editor", at(4)),))
    expanded = expand_access(access, TEAMS)
    assert expanded.user_roles() == {"jane@acme.com": "owner", "ana@acme.com": "editor", "bo@acme.com": "editor"}
    assert expanded.users["ana@acme.com"].source == GrantSource("team", at(4), team="cs")
    assert expanded.users["jane@acme.com"].source == GrantSource("entry", at(3))


def test_an_explicit_entry_wins_over_a_higher_team_role_and_says_so() -> None:
    access = AccessList(location=at(2), users=(UserAccess("ana@acme.com", "viewer", at(3)),),
                        teams=(TeamAccess("cs", "editor", at(4)),))
    grant = expand_access(access, TEAMS).users["ana@acme.com"]
    assert (grant.role, grant.source) == ("viewer", GrantSource("entry", at(3)))
    assert grant.also == (Alternative("editor", GrantSource("team", at(4), team="cs")),)
    assert grant.explanation() == ("viewer from entry m.yaml:3 (an explicit entry wins over editor from "
                                   "team cs (m.yaml:4))")


def test_two_teams_reaching_one_person_give_the_highest_role() -> None:
    access = AccessList(location=at(2), teams=(TeamAccess("cs", "viewer", at(4)), TeamAccess("sales", "editor", at(5))))
    grant = expand_access(access, TEAMS).users["bo@acme.com"]
    assert (grant.role, grant.source) == ("editor", GrantSource("team", at(5), team="sales"))
    assert grant.explanation() == ("editor from team sales (m.yaml:5) (the highest role wins over viewer from "
                                   "team cs (m.yaml:4))")


def test_on_equal_roles_the_first_team_decides() -> None:
    access = AccessList(location=at(2), teams=(TeamAccess("cs", "editor", at(4)), TeamAccess("sales", "editor", at(5))))
    assert expand_access(access, TEAMS).users["bo@acme.com"].source.team == "cs"


def test_a_person_reached_once_has_no_explanation() -> None:
    access = AccessList(location=at(2), teams=(TeamAccess("cs", "editor", at(4)),))
    assert expand_access(access, TEAMS).users["ana@acme.com"].explanation() is None


def test_a_rules_ensure_entries_join_the_list_with_the_rule_as_reason() -> None:
    baseline = rule("baseline", ensure_users=(UserAccess("sec@acme.com", "viewer", at(52)),),
                    ensure_teams=(TeamAccess("sales", "commenter", at(53)),),
                    ensure_domains=(DomainAccess("acme.com", "viewer", at(54)),))
    expanded = expand_access(AccessList(location=at(2), users=(UserAccess("jane@acme.com", "owner", at(3)),)),
                             TEAMS, [baseline])
    assert expanded.user_roles() == {"jane@acme.com": "owner", "sec@acme.com": "viewer",
                                     "bo@acme.com": "commenter", "cy@acme.com": "commenter"}
    assert expanded.users["cy@acme.com"].source == GrantSource("rule", at(53), team="sales", rule="baseline")
    assert expanded.domains["acme.com"].source == GrantSource("rule", at(54), rule="baseline")


def test_an_explicit_entry_wins_over_a_rules_ensure() -> None:
    baseline = rule("baseline", ensure_users=(UserAccess("jane@acme.com", "viewer", at(52)),))
    grant = expand_access(AccessList(location=at(2), users=(UserAccess("jane@acme.com", "owner", at(3)),)),
                          TEAMS, [baseline]).users["jane@acme.com"]
    assert (grant.role, grant.also) == ("owner", (Alternative("viewer", GrantSource("rule", at(52), rule="baseline")),))


def test_an_explicit_domain_entry_wins_over_a_rules_domain() -> None:
    baseline = rule("baseline", ensure_domains=(DomainAccess("acme.com", "editor", at(52)),))
    access = AccessList(location=at(2), domains=(DomainAccess("acme.com", "viewer", at(3)),))
    assert expand_access(access, TEAMS, [baseline]).domain_roles() == {"acme.com": "viewer"}


def test_a_workspace_no_manifest_names_holds_only_what_rules_ensure() -> None:
    baseline = rule("baseline", ensure_users=(UserAccess("sec@acme.com", "viewer", at(52)),),
                    revoke_users=(RevokedEntry("leaver@acme.com", at(55)),),
                    revoke_domains=(RevokedEntry("gmail.com", at(56)),))
    expanded = expand_access(None, TEAMS, [baseline])
    assert expanded.user_roles() == {"sec@acme.com": "viewer"}
    assert expanded.revoked_users == {"leaver@acme.com": GrantSource("rule", at(55), rule="baseline")}
    assert expanded.revoked_domains == {"gmail.com": GrantSource("rule", at(56), rule="baseline")}


def test_an_explicit_entry_keeps_its_expiry() -> None:
    from datetime import date

    access = AccessList(location=at(2), users=(UserAccess("jane@acme.com", "owner", at(3), date(2030, 1, 1)),))
    assert expand_access(access, TEAMS).users["jane@acme.com"].expires == date(2030, 1, 1)


# --- rule_matches ----------------------------------------------------------------------------


def test_all_matches_every_workspace() -> None:
    assert rule_matches(rule("r"), live_workspace("ws_1"))


def test_accounts_match_any_of_the_listed_accounts() -> None:
    r = rule("r", RuleMatch(accounts=("acc_1", "acc_2"), location=at(51)))
    assert rule_matches(r, live_workspace("ws_1", account_id="acc_2"))
    assert not rule_matches(r, live_workspace("ws_2", account_id="acc_3"))


def test_templates_match_the_template_a_workspace_was_made_from() -> None:
    r = rule("r", RuleMatch(templates=("tpl_1",), location=at(51)))
    assert rule_matches(r, live_workspace("ws_1", template_id="tpl_1"))
    assert not rule_matches(r, live_workspace("ws_2"))


def test_names_are_case_sensitive_shell_patterns_on_the_whole_name() -> None:
    r = rule("r", RuleMatch(names=("Northwind*", "Acme ?"), location=at(51)))
    assert rule_matches(r, live_workspace("ws_1", name="Northwind onboarding"))
    assert rule_matches(r, live_workspace("ws_2", name="Acme 2"))
    assert not rule_matches(r, live_workspace("ws_3", name="northwind onboarding"))
    assert not rule_matches(r, live_workspace("ws_4", name="The Northwind"))
    assert not rule_matches(r, live_workspace("ws_5"))


def test_criteria_are_anded() -> None:
    r = rule("r", RuleMatch(accounts=("acc_1",), names=("N*",), location=at(51)))
    assert rule_matches(r, live_workspace("ws_1", name="North", account_id="acc_1"))
    assert not rule_matches(r, live_workspace("ws_2", name="North", account_id="acc_2"))
    assert not rule_matches(r, live_workspace("ws_3", name="South", account_id="acc_1"))


def test_except_ids_never_match() -> None:
    r = rule("r", RuleMatch(all=True, except_ids=("ws_1",), location=at(51)))
    assert not rule_matches(r, live_workspace("ws_1"))
    assert rule_matches(r, live_workspace("ws_2"))


@pytest.mark.parametrize("match", [
    RuleMatch(names=("North*",), except_ids=("ws_1",), location=at(51)),
    RuleMatch(accounts=("acc_1",), except_ids=("ws_1",), location=at(51)),
    RuleMatch(templates=("tpl_1",), except_ids=("ws_1",), location=at(51)),
], ids=["names", "accounts", "templates"])
def test_except_ids_never_match_whatever_the_criterion(match: RuleMatch) -> None:
    fields = {"name": "North", "account_id": "acc_1", "template_id": "tpl_1"}
    r = rule("r", match)
    assert not rule_matches(r, live_workspace("ws_1", **fields))
    assert rule_matches(r, live_workspace("ws_2", **fields))


def test_a_match_without_criteria_matches_nothing() -> None:
    assert not rule_matches(rule("r", RuleMatch(location=at(51))), live_workspace("ws_1"))


def test_matching_rules_keeps_manifest_order() -> None:
    first, second = rule("a"), rule("b", RuleMatch(names=("X*",), location=at(51)))
    third = rule("c")
    assert [r.key for r in matching_rules([first, second, third], live_workspace("ws_1", name="Y"))] == ["a", "c"]
