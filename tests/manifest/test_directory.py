"""``directory:`` in the manifests: read as directory.yaml is written, teams from its groups, each refusal at its line."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

from reconciler.manifest import load_desired
from reconciler.manifest.desired import DIRECTORY_RULE, RevokedEntry, TeamMember, UserAccess
from reconciler.manifest.location import SourceLocation

Problems = Callable[[Path], list[str]]

DIRECTORY = """\
# Written by `reconciler directory sync` from the directory of the state s.json; do not edit by hand:
# change the identity provider, then run `reconciler directory sync` again.
directory:
  groups:
    Engineering:
    - ana@acme.com
    - bo@acme.com
    Sales Team: []
  deactivated:
    cy@acme.com: {since: 2026-12-01, successor: jane@acme.com}
    dd@acme.com: {since: 2026-11-30}
"""


def manifests(tmp_path: Path, teams: str, directory: str | None = DIRECTORY) -> Path:
    (tmp_path / "teams.yaml").write_text(f"version: 1\nteams:\n{teams}", encoding="utf-8")
    if directory is not None:
        (tmp_path / "directory.yaml").write_text(directory, encoding="utf-8")
    return tmp_path


def test_a_team_from_a_directory_group_has_the_groups_members_at_their_lines(tmp_path: Path) -> None:
    desired = load_desired(manifests(tmp_path, "  eng: {directoryGroup: Engineering}\n"))
    [team] = desired.teams
    assert team.members == (TeamMember("ana@acme.com", SourceLocation(f"{tmp_path}/directory.yaml", 6)),
                            TeamMember("bo@acme.com", SourceLocation(f"{tmp_path}/directory.yaml", 7)))


def test_directory_yaml_as_sync_writes_it_needs_no_version_and_its_leavers_become_rules(tmp_path: Path) -> None:
    desired = load_desired(manifests(tmp_path, "  eng: [ana@acme.com]\n"))
    at = f"{tmp_path}/directory.yaml"
    assert [(r.key, r.match.all, r.revoke_users, r.successor) for r in desired.rules if r.from_directory] == [
        (DIRECTORY_RULE, True, (RevokedEntry("dd@acme.com", SourceLocation(at, 11), date(2026, 11, 30)),), None),
        (DIRECTORY_RULE, True, (RevokedEntry("cy@acme.com", SourceLocation(at, 10), date(2026, 12, 1)),),
         UserAccess("jane@acme.com", "owner", SourceLocation(at, 10))),
    ]


def test_a_directory_group_the_directory_does_not_hold_is_refused_at_the_teams_line(
        tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n  sales: {directoryGroup: Sales}\n")
    assert problems_of(path) == [
        f"{tmp_path}/teams.yaml:4: team.sales: directoryGroup 'Sales' is not a group of the directory at "
        f"{tmp_path}/directory.yaml:3 (its groups: 'Engineering', 'Sales Team'); spell it as the identity provider "
        "does, or run reconciler directory sync"]


def test_a_directory_group_without_any_directory_is_refused_at_the_teams_line(
        tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: {directoryGroup: Engineering}\n", directory=None)
    assert problems_of(path) == [
        f"{tmp_path}/teams.yaml:3: team.eng: directoryGroup 'Engineering': no manifest holds directory: (reconciler "
        "directory sync writes it, as directory.yaml); run it, or list the team's emails"]


def test_a_second_file_defining_the_directory_is_refused(tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n")
    (tmp_path / "more.yaml").write_text("directory:\n  groups: {}\n", encoding="utf-8")
    assert problems_of(path) == [
        f"{tmp_path}/more.yaml:1: directory: already defined at {tmp_path}/directory.yaml:3; the directory is one "
        "file (reconciler directory sync writes directory.yaml): keep one"]


def test_emails_of_the_directory_are_checked_as_every_manifest_email_at_their_line(
        tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n", directory=(
        "directory:\n  groups:\n    Eng: [ana@acme.com, 'bo at acme.com']\n  deactivated:\n"
        "    cy: {since: 2026-12-01}\n    dd@acme.com: {since: 2026-11-31, successor: jane}\n"))
    assert problems_of(path) == [
        f"{tmp_path}/directory.yaml:3: directory.groups.Eng[1]: 'bo at acme.com' is not an email address; "
        "it holds U+0020 (SPACE), which no mail system issues in an address",
        f"{tmp_path}/directory.yaml:5: directory.deactivated: key 'cy' is not an email address",
        f"{tmp_path}/directory.yaml:6: directory.deactivated.dd@acme.com.since: '2026-11-31' is not a calendar date",
        f"{tmp_path}/directory.yaml:6: directory.deactivated.dd@acme.com.successor: 'jane' is not an email "
        "address",
    ]


def test_a_successor_who_left_too_is_refused_at_the_leavers_line(tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n", directory=(
        "directory:\n  deactivated:\n    cy@acme.com: {since: 2026-12-01, successor: dd@acme.com}\n"
        "    dd@acme.com: {since: 2026-11-30}\n"))
    assert problems_of(path) == [
        f"{tmp_path}/directory.yaml:3: directory: cy@acme.com's successor dd@acme.com was deactivated too "
        f"({tmp_path}/directory.yaml:4); a successor must stay: give cy@acme.com an active manager in the identity "
        "provider and run reconciler directory sync"]


def test_a_leaver_a_manifest_still_grants_is_dropped_with_a_warning_at_the_grant(tmp_path: Path) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n")
    (tmp_path / "w.yaml").write_text(
        "version: 1\nworkspaces:\n  w:\n    id: ws_1\n    access:\n      users:\n"
        "      - {email: jane@acme.com, role: owner}\n      - {email: dd@acme.com, role: editor}\n", encoding="utf-8")
    desired = load_desired(path)
    assert [u.email for u in desired.workspaces[0].access.users] == ["jane@acme.com"]  # type: ignore[union-attr]
    assert desired.notes[0] == (
        f"{tmp_path}/w.yaml:8: workspace.w: dd@acme.com was deactivated in the directory on 2026-11-30 "
        f"({tmp_path}/directory.yaml:11): the directory wins, the grant is not made; remove the line")


def test_a_rule_named_as_the_directorys_own_rules_is_refused(tmp_path: Path, problems_of: Problems) -> None:
    path = manifests(tmp_path, "  eng: [ana@acme.com]\n")
    (tmp_path / "r.yaml").write_text("version: 1\nrules:\n  directory:\n    match: {all: true}\n"
                                     "    revoke: {users: [x@acme.com]}\n", encoding="utf-8")
    assert problems_of(path) == [
        f"{tmp_path}/r.yaml:3: rule.directory: the rules the directory's leavers make are called directory; give "
        "this rule another name"]
