"""Teams and rules in the manifests: their shapes, their checks, their Desired nodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.manifest import SourceLocation, load_desired
from reconciler.manifest.desired import RevokedEntry, RuleMatch, TeamAccess, TeamMember, UserAccess

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]

COMPANY = """
    version: 1
    teams:
      customer-success: [Ana@acme.com, bo@acme.com]
    groups:
      customer-inc:
        homepage: ws_home
        access:
          users: [{email: jane@acme.com, role: owner}]
          teams: [{team: customer-success, role: editor}]
    rules:
      security-baseline:
        match: {all: true}
        ensure:
          users: [{email: security@acme.com, role: viewer}]
          teams: [{team: customer-success, role: commenter}]
          domains: []
        revoke:
          users: [leaver@acme.com]
          domains: [gmail.com]
      northwind:
        match: {names: ["Northwind*"], accounts: [acc_1], except: [ws_9]}
        revoke: {users: [x@acme.com]}
"""


def test_teams_become_located_desired_teams(write_manifest: Write) -> None:
    path = write_manifest(COMPANY)
    desired = load_desired(path)
    (team,) = desired.teams
    assert team.address == "team.customer-success"
    assert team.location == SourceLocation(str(path), 3)
    assert team.members == (TeamMember("ana@acme.com", SourceLocation(str(path), 3)),
                            TeamMember("bo@acme.com", SourceLocation(str(path), 3)))


def test_an_access_list_keeps_its_team_references(write_manifest: Write) -> None:
    path = write_manifest(COMPANY)
    access = load_desired(path).groups[0].access
    assert access is not None
    assert access.teams == (TeamAccess("customer-success", "editor", SourceLocation(str(path), 9)),)


def test_rules_become_located_desired_rules(write_manifest: Write) -> None:
    path = write_manifest(COMPANY)
    baseline, northwind = load_desired(path).rules
    assert baseline.address == "rule.security-baseline"
    assert baseline.match == RuleMatch(all=True, location=SourceLocation(str(path), 12))
    assert [(u.email, u.role, u.location.line) for u in baseline.ensure_users] == [("security@acme.com", "viewer", 14)]
    assert baseline.ensure_teams == (TeamAccess("customer-success", "commenter", SourceLocation(str(path), 15)),)
    assert baseline.revoke_users == (RevokedEntry("leaver@acme.com", SourceLocation(str(path), 18)),)
    assert baseline.revoke_domains == (RevokedEntry("gmail.com", SourceLocation(str(path), 19)),)
    assert northwind.match == RuleMatch(names=("Northwind*",), accounts=("acc_1",), except_ids=("ws_9",),
                                        except_locations=(SourceLocation(str(path), 21),),
                                        location=SourceLocation(str(path), 21))


def test_an_unknown_team_is_named_with_the_defined_ones(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        teams:
          sales: [a@acme.com]
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}]
              teams: [{team: suport, role: viewer}]
    """)
    assert problems_of(path) == [
        f"{path}:9: workspace.w: team 'suport' is not defined (the teams defined are sales); "
        "define it under teams: or fix the name"
    ]


def test_a_rule_naming_an_unknown_team_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {all: true}
            ensure: {teams: [{team: ghosts, role: viewer}]}
    """)
    assert problems_of(path) == [
        f"{path}:5: rule.r: team 'ghosts' is not defined (no manifest defines teams:); "
        "define it under teams: or fix the name"
    ]


def test_a_team_referenced_with_an_unknown_role_lists_the_roles(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        teams: {t: [a@acme.com]}
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}]
              teams: [{team: t, role: admin}]
    """)
    assert problems_of(path) == [
        f"{path}:8: workspaces.w.access.teams[0].role: 'admin' is not a role; "
        "use one of owner, editor, collaborator, viewer, commenter"
    ]


def test_a_team_listing_an_email_twice_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        teams:
          t:
            - ana@acme.com
            - bo@acme.com
            - ANA@acme.com
    """)
    assert problems_of(path) == [
        f"{path}:6: teams.t[2]: 'ana@acme.com' is listed twice (first at line 4); keep one entry per person"
    ]


def test_a_team_member_that_is_not_an_email_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nteams:\n  t: [ana]\n")
    assert len(problems_of(path)) == 1
    assert problems_of(path)[0].startswith(f"{path}:3: teams.t[0]: 'ana' is not an email address")


def test_a_team_named_twice_in_one_list_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        teams: {t: [a@acme.com]}
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}]
              teams:
                - {team: t, role: viewer}
                - {team: t, role: editor}
    """)
    assert problems_of(path) == [
        f"{path}:10: workspaces.w.access.teams[1]: team 't' is listed twice (first at line 9); keep one entry per team"
    ]


def test_an_invalid_name_pattern_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {names: ["North[wind*"]}
            revoke: {users: [x@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:4: rules.r.match.names[0]: 'North[wind*' is not a valid name pattern: "
        "the [ at character 6 has no closing ] (write [[] for a literal [)"
    ]


def test_a_rule_with_nothing_to_ensure_or_revoke_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {all: true}
            ensure: {users: []}
    """)
    assert problems_of(path) == [
        f"{path}:3: rule.r: has nothing to ensure and nothing to revoke; give ensure: (users, teams, domains) "
        "or revoke: (users, domains)"
    ]


def test_an_empty_match_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {}
            revoke: {users: [x@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:4: rule.r: match has no criterion; give all: true (every workspace of the company), "
        "or accounts, templates or names (except alone only narrows)"
    ]


def test_a_match_with_an_unknown_key_names_the_allowed_ones(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {workspaces: [ws_1]}
            revoke: {users: [x@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:4: rules.r.match: unknown key 'workspaces'; allowed keys: all, accounts, templates, names, except"
    ]


def test_all_false_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {all: false}
            revoke: {users: [x@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:4: rules.r.match.all: false is not a criterion: all: true matches every workspace of the company; "
        "to match fewer, leave all out and give accounts, templates or names"]


def test_revoking_someone_an_explicit_entry_grants_names_both_lines(write_manifest: Write,
                                                                      problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}, {email: ana@acme.com, role: editor}]
        rules:
          offboarded:
            match: {all: true}
            revoke: {users: [ana@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:10: rule.offboarded: revokes user ana@acme.com, which workspace.w grants at {path}:6; "
        "a person is either granted or revoked: remove one of the two (to offboard someone, take them out of "
        "their teams and lists as well)"
    ]


def test_revoking_a_member_of_a_named_team_names_the_team_line(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        teams:
          customer-success: [ana@acme.com, bo@acme.com]
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}]
              teams: [{team: customer-success, role: editor}]
        rules:
          offboarded:
            match: {all: true}
            revoke: {users: [ana@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:13: rule.offboarded: revokes user ana@acme.com, which team.customer-success (named by "
        f"workspace.w at {path}:9) grants at {path}:3; a person is either granted or revoked: remove one of "
        "the two (to offboard someone, take them out of their teams and lists as well)"
    ]


def test_a_member_of_a_team_nobody_names_may_be_revoked(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        teams:
          alumni: [ana@acme.com]
        rules:
          offboarded:
            match: {all: true}
            revoke: {users: [ana@acme.com]}
    """)
    assert load_desired(path).rules[0].revoke_users[0].key == "ana@acme.com"


def test_a_domain_ensured_by_one_rule_and_revoked_by_another_is_refused(write_manifest: Write,
                                                                        problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          open:
            match: {all: true}
            ensure: {domains: [{domain: gmail.com, role: viewer}]}
          closed:
            match: {names: ["*"]}
            revoke: {domains: [gmail.com]}
    """)
    assert problems_of(path) == [
        f"{path}:8: rule.closed: revokes domain gmail.com, which rule.open grants at {path}:5; a person is "
        "either granted or revoked: remove one of the two (to offboard someone, take them out of their teams "
        "and lists as well)"
    ]


def test_a_team_defined_in_two_files_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    first = write_manifest("version: 1\nteams:\n  t: [a@acme.com]\n", name="a.yaml")
    write_manifest("version: 1\nteams:\n  t: [b@acme.com]\n", name="b.yaml")
    assert problems_of(first.parent) == [
        f"{first.parent / 'b.yaml'}:3: teams.t: already defined at {first}:3; a key may be defined in one file only"
    ]


def test_a_team_defined_in_one_file_is_named_in_another(write_manifest: Write) -> None:
    first = write_manifest("version: 1\nteams:\n  t: [a@acme.com]\n", name="a.yaml")
    write_manifest("""
        version: 1
        workspaces:
          w:
            id: ws_1
            access: {users: [{email: j@acme.com, role: owner}], teams: [{team: t, role: viewer}]}
    """, name="b.yaml")
    desired = load_desired(first.parent)
    assert [t.key for t in desired.teams] == ["t"]
    assert desired.workspaces[0].access is not None and desired.workspaces[0].access.teams[0].team == "t"


def test_an_except_id_that_is_not_an_id_is_refused_at_its_line(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          r:
            match:
              all: true
              except: [ws_1, "a/b"]
            revoke: {users: [x@acme.com]}
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:6: rules.r.match.except[1]: 'a/b' is not an id as the service shows it")


def test_a_team_member_outside_the_allowed_domains_is_refused_at_the_members_line(
        write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        policy: {allowedDomains: [acme.com]}
        teams:
          t: [ana@acme.com, guest@gmail.com]
        workspaces:
          w:
            id: ws_1
            access:
              users: [{email: jane@acme.com, role: owner}]
              teams: [{team: t, role: viewer}]
    """)
    assert problems_of(path) == [
        f"{path}:4: workspace.w (team t, {path}:10): user guest@gmail.com is outside the allowed domains "
        f"(policy allowedDomains at {path}:2) and may not be granted access"
    ]


def test_a_rule_ensuring_a_domain_outside_the_allowed_ones_is_refused(write_manifest: Write,
                                                                       problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        policy: {allowedDomains: [acme.com]}
        rules:
          r:
            match: {all: true}
            ensure: {domains: [{domain: gmail.com, role: viewer}]}
    """)
    assert problems_of(path) == [
        f"{path}:6: rule.r: domain gmail.com is outside the allowed domains (policy allowedDomains at {path}:2) "
        "and may not be granted access"
    ]


def test_a_rules_successor_outside_the_allowed_domains_is_refused_at_its_line(write_manifest: Write,
                                                                             problems_of: Problems) -> None:
    """Issue 38 repro 6: a successor is made owner wherever the leaver was the last owner; that is an owner grant
    and the policy judges it like any other (it used to pass without a word)."""
    path = write_manifest("""
        version: 1
        policy: {allowedDomains: [acme.com]}
        rules:
          leavers:
            match: {all: true}
            revoke: {users: [ana@acme.com], successor: heir@gmail.com}
    """)
    assert problems_of(path) == [
        f"{path}:6: rule.leavers (successor): user heir@gmail.com is outside the allowed domains (policy "
        f"allowedDomains at {path}:2) and may not be granted access"
    ]


def test_a_rules_successor_outside_the_allowed_domains_is_held_to_max_role_outside(write_manifest: Write,
                                                                                   problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        policy: {allowedDomains: [acme.com], maxRoleOutside: editor}
        rules:
          leavers:
            match: {all: true}
            revoke: {users: [ana@acme.com], successor: heir@partner.com}
    """)
    assert problems_of(path) == [
        f"{path}:6: rule.leavers (successor): user heir@partner.com is outside the allowed domains and may be "
        f"given at most editor (policy maxRoleOutside at {path}:2), not owner"
    ]


def test_a_rules_successor_in_a_subdomain_of_an_allowed_domain_is_accepted(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        policy: {allowedDomains: [acme.com]}
        rules:
          leavers:
            match: {all: true}
            revoke: {users: [ana@acme.com], successor: heir@eu.acme.com}
    """)
    successor = load_desired(path).rules[0].successor
    assert successor is not None and successor.email == "heir@eu.acme.com"


def test_an_ensure_written_as_null_is_read_as_absent(write_manifest: Write, problems_of: Problems) -> None:
    # Found by the schema fuzz test: 'ensure: null' crashed the build of the rule.
    path = write_manifest("""
        version: 1
        rules:
          r:
            match: {all: true}
            ensure: null
            revoke: {users: [x@acme.com]}
    """)
    assert load_desired(path).rules[0].ensure_users == ()


def test_a_revoke_successor_becomes_a_located_owner_entry_of_the_rule(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        rules:
          offboarded:
            match: {all: true}
            revoke:
              users: [bo@acme.com]
              successor: Cy@acme.com
    """)
    (rule,) = load_desired(path).rules
    assert rule.successor == UserAccess("cy@acme.com", "owner", SourceLocation(str(path), 7))


def test_a_successor_without_revoked_users_is_refused_at_its_line(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          closed:
            match: {all: true}
            revoke: {domains: [gmail.com], successor: cy@acme.com}
    """)
    assert problems_of(path) == [
        f"{path}:5: rule.closed: revoke.successor takes over from the users the rule revokes, and it revokes "
        "none; give revoke.users or remove successor"
    ]


def test_a_successor_some_rule_revokes_is_refused_naming_that_rule(write_manifest: Write,
                                                                   problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        rules:
          offboarded:
            match: {all: true}
            revoke: {users: [bo@acme.com], successor: cy@acme.com}
          also-gone:
            match: {names: ["Tailspin*"]}
            revoke: {users: [cy@acme.com]}
    """)
    assert problems_of(path) == [
        f"{path}:5: rule.offboarded: successor cy@acme.com is revoked by rule.also-gone at {path}:8; "
        "name a successor who stays"
    ]


def test_a_team_no_list_or_rule_names_is_a_warning_at_its_line(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        teams:
          alumni: [ana@acme.com]
    """)
    assert load_desired(path).notes == (
        f"{path}:3: team.alumni: no access list or rule names it, so it grants nothing; name it in a list's or a "
        "rule's teams, or remove it",)


def test_a_load_without_lint_notes_looks_for_no_warnings(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        teams:
          alumni: [ana@acme.com]
    """)
    assert load_desired(path, lint_notes=False).notes == ()
    assert load_desired(path).notes != ()  # the same manifest has a warning to find


def test_an_empty_team_is_a_warning_at_its_line(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        teams:
          security: []
        rules:
          baseline:
            match: {all: true}
            ensure: {teams: [{team: security, role: viewer}]}
    """)
    assert load_desired(path).notes == (
        f"{path}:3: team.security: has no members, so every list and rule naming it grants nobody; add its people "
        "or remove it",)


def test_two_rules_ensuring_one_team_with_different_roles_is_a_warning(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        teams:
          security: [sec@acme.com]
        rules:
          baseline:
            match: {all: true}
            ensure: {teams: [{team: security, role: viewer}]}
          reviews:
            match: {names: ["Review*"]}
            ensure: {teams: [{team: security, role: editor}]}
    """)
    assert load_desired(path).notes == (
        f"{path}:10: rule.reviews: ensures team security as editor, while rule.baseline ensures it as viewer at "
        f"{path}:7; where both match, the higher role wins: give both the same role",)


def test_one_mailbox_spelled_twice_is_a_warning_at_gmail_and_googlemail_and_nowhere_else(write_manifest: Write) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          w:
            id: ws_1
            access:
              users:
                - {email: jane@acme.com, role: owner}
                - {email: j.doe@googlemail.com, role: viewer}
                - {email: jdoe@gmail.com, role: viewer}
                - {email: a.b@acme.com, role: viewer}
                - {email: ab@acme.com, role: viewer}
    """)
    assert load_desired(path).notes == (
        f"{path}:9: workspace.w: user jdoe@gmail.com is the same mailbox as j.doe@googlemail.com at {path}:8 "
        "(the provider ignores dots); use one spelling",)
