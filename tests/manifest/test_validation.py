"""Every validation rule: the problem is at the offending line, in plain words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]

ROLES = "owner, editor, collaborator, viewer, commenter"


def group_with_access(users: str, domains: str = "[]", extra: str = "") -> str:
    """A one-group manifest; the users list starts at line 6, domains follow it."""
    return f"""
        version: 1
        groups:
          g:
            homepage: ws_home
            access:
              users: {users}
              domains: {domains}
              {extra}
    """


def test_unknown_key_names_it_and_the_allowed_ones(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            members: {}
    """)
    assert problems_of(path) == [
        f"{path}:5: groups.g: unknown key 'members'; allowed keys: homepage, access, workspaces"
    ]


def test_unknown_top_level_key(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\ngroup: {}\n")
    assert problems_of(path) == [f"{path}:2: unknown key 'group'; allowed keys: version, groups, workspaces, assets, policy, teams, rules, moved, directory"]


def test_bad_role_lists_the_five_roles(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: raj@acme.com, role: admin}"""))
    assert problems_of(path) == [
        f"{path}:8: groups.g.access.users[1].role: 'admin' is not a role; use one of {ROLES}"
    ]


def test_role_of_the_wrong_type_is_not_a_role(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("[{email: jane@acme.com, role: owner}]", "[{domain: acme.com, role: 3}]"))
    assert problems_of(path) == [f"{path}:7: groups.g.access.domains[0].role: 3 is not a role; use one of {ROLES}"]


def test_malformed_email(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: "raj at acme", role: viewer}"""))
    assert problems_of(path) == [f"{path}:8: groups.g.access.users[1].email: 'raj at acme' is not an email address; "
                                 "it holds U+0020 (SPACE), which no mail system issues in an address"]


def test_keys_spelled_like_the_email_checks_labels_are_reported_as_written(
    write_manifest: Write, problems_of: Problems
) -> None:
    # An email is checked quickly, then wholly; pydantic names the two ways at the end of an
    # error's place, and only the pair an email's own value made is told once.
    path = write_manifest("""
        version: 1
        workspaces:
          portal:
            id: ws_1
            sections: {"(quick check)": x, "(whole check)": x}
            access: {users: [{email: jane@acme.com, role: owner}]}
    """)
    assert [problem for problem in problems_of(path) if "got the text" in problem] == [
        f"{path}:5: workspaces.portal.sections.(quick check): expected a mapping (key: value), got the text 'x'",
        f"{path}:5: workspaces.portal.sections.(whole check): expected a mapping (key: value), got the text 'x'",
    ]


def test_a_value_that_is_not_text_where_an_email_goes_is_one_problem(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: [raj@acme.com], role: viewer}"""))
    assert problems_of(path) == [f"{path}:8: groups.g.access.users[1].email: expected text, got a list"]


def test_only_the_unusual_email_and_hostname_reach_the_whole_check(write_manifest: Write) -> None:
    # 250,000 entries at 10,000 workspaces: the usual ones are taken by pydantic's own pattern.
    from reconciler.manifest import load_desired, models

    path = write_manifest(group_with_access(
        "[{email: Jane@Acme.com, role: owner}, {email: raj@acme.com, role: viewer}, {email: ops@acme.1c, role: viewer}]",
        "[{domain: Acme.com, role: viewer}, {domain: acme.2d, role: viewer}]"))
    calls = [sum(models._checked_email.cache_info()[:2]), sum(models._checked_hostname.cache_info()[:2])]
    access = load_desired(path).groups[0].access
    assert access is not None
    assert [u.email for u in access.users] == ["jane@acme.com", "raj@acme.com", "ops@acme.1c"]
    assert [d.domain for d in access.domains] == ["acme.com", "acme.2d"]
    assert [sum(models._checked_email.cache_info()[:2]) - calls[0],
            sum(models._checked_hostname.cache_info()[:2]) - calls[1]] == [1, 1]


def test_malformed_domain(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("[{email: jane@acme.com, role: owner}]", "[{domain: 'https://acme.com', role: viewer}]"))
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:7: groups.g.access.domains[0].domain: 'https://acme.com' is not a hostname")


def test_duplicate_email_after_lower_casing_points_at_the_second(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: JANE@Acme.com, role: viewer}"""))
    assert problems_of(path) == [
        f"{path}:8: groups.g.access.users[1]: email 'jane@acme.com' is listed twice (first at line 7); "
        "keep one entry per email"
    ]


def test_a_duplicate_is_found_beside_an_entry_whose_email_is_not_text(write_manifest: Write,
                                                                       problems_of: Problems) -> None:
    """An email that is not text (a number) is its own problem, and the others are still compared."""
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: 42, role: viewer}
                - {email: ' Jane@acme.com', role: viewer}"""))
    assert (f"{path}:9: groups.g.access.users[2]: email 'jane@acme.com' is listed twice (first at line 7); "
            "keep one entry per email") in problems_of(path)


def test_duplicate_domain_points_at_the_second(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          w:
            id: ws_1
            access:
              domains:
                - {domain: acme.com, role: owner}
                - {domain: ACME.com, role: viewer}
    """)
    assert problems_of(path) == [
        f"{path}:8: workspaces.w.access.domains[1]: domain 'acme.com' is listed twice (first at line 7); "
        "keep one entry per domain"
    ]


def test_authoritative_access_without_owner(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("[{email: jane@acme.com, role: editor}]"))
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:5: groups.g.access: no user or domain has role owner")


def test_non_authoritative_access_may_omit_owners(write_manifest: Write) -> None:
    from reconciler.manifest import load_desired

    path = write_manifest(group_with_access("[{email: jane@acme.com, role: editor}]", extra="authoritative: false"))
    access = load_desired(path).groups[0].access
    assert access is not None and access.authoritative is False


def test_both_deal_ids(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k:
                template: tpl_1
                name: Kickoff
                deal: {crmOneDealId: "1", crmTwoOpportunityId: "2"}
    """)
    assert problems_of(path) == [
        f"{path}:9: groups.g.workspaces.k.deal: has both crmOneDealId and crmTwoOpportunityId; give exactly one"
    ]


def test_neither_deal_id(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k: {template: tpl_1, name: Kickoff, deal: {}}
    """)
    assert problems_of(path) == [
        f"{path}:6: groups.g.workspaces.k.deal: needs one of crmOneDealId and crmTwoOpportunityId; give exactly one"
    ]


def test_unquoted_deal_id_asks_for_quotes(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k: {template: tpl_1, name: Kickoff, deal: {crmOneDealId: 9811}}
    """)
    assert problems_of(path) == [
        f'{path}:6: groups.g.workspaces.k.deal.crmOneDealId: expected text, got the number 9811; '
        'quote it ("9811") so it is read as text'
    ]


def test_member_with_id_and_template(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k:
                id: ws_1
                template: tpl_1
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:8: groups.g.workspaces.k: has both id and template")


def test_member_with_neither_id_nor_template(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k: {name: Kickoff}
    """)
    assert problems_of(path) == [
        f"{path}:6: groups.g.workspaces.k: give id (an existing workspace) or template (create one from a template)"
    ]


def test_template_fields_on_an_existing_member(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k:
                id: ws_1
                startDate: 2026-12-01
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:8: groups.g.workspaces.k.startDate: only a workspace created from a template")


def test_embed_with_url_and_custom_code(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        assets:
          booking: {type: embed, url: "https://cal.example", customCode: "<iframe></iframe>"}
    """)
    assert problems_of(path) == [f"{path}:3: assets.booking: an embed has both url and customCode; give exactly one"]


def test_embed_with_neither_url_nor_custom_code(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  booking: {type: embed, name: Book}\n")
    assert problems_of(path) == [f"{path}:3: assets.booking: an embed needs url or customCode; give exactly one"]


def test_link_without_url(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  site: {type: link, name: Site}\n")
    assert problems_of(path) == [f"{path}:3: assets.site: missing required key 'url'"]


def test_url_must_be_http(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  site: {type: link, url: 'ftp://acme.com'}\n")
    assert problems_of(path) == [f"{path}:3: assets.site.url: 'ftp://acme.com' is not an http(s) URL"]


def test_unknown_asset_type_lists_the_types(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  deck:\n    type: keynote\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:4: assets.deck.type: 'keynote' is not an asset type; use one of pdf, image,")


def test_file_on_a_link_is_an_unknown_key(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  site:\n    type: link\n    url: https://acme.com\n    file: a.pdf\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:6: assets.site: unknown key 'file'; allowed keys:")


def test_missing_asset_file(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    path = write_manifest("version: 1\nassets:\n  deck:\n    type: pdf\n    file: decks/missing.pdf\n")
    assert problems_of(path) == [
        f"{path}:5: assets.deck.file: 'decks/missing.pdf' does not exist (looked for {tmp_path / 'decks/missing.pdf'})"
    ]


def test_asset_file_escaping_with_dot_dot(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    (tmp_path.parent / "outside.pdf").write_bytes(b"%PDF")
    path = write_manifest("version: 1\nassets:\n  deck: {type: pdf, file: ../outside.pdf}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: assets.deck.file: '../outside.pdf' is outside the manifest root")


def test_absolute_asset_file(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    target = tmp_path / "deck.pdf"
    target.write_bytes(b"%PDF")
    path = write_manifest(f"version: 1\nassets:\n  deck: {{type: pdf, file: '{target}'}}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: assets.deck.file: '{target}' must be a path relative to the manifest file")


def test_asset_file_symlinked_out_of_the_root(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    outside = tmp_path.parent / "secret.pdf"
    outside.write_bytes(b"%PDF")
    (tmp_path / "deck.pdf").symlink_to(outside)
    path = write_manifest("version: 1\nassets:\n  deck: {type: pdf, file: deck.pdf}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: assets.deck.file: 'deck.pdf' is outside the manifest root")


def test_unguessable_mime_type_asks_for_one(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    (tmp_path / "deck.weird").write_bytes(b"?")
    path = write_manifest("version: 1\nassets:\n  deck: {type: pdf, file: deck.weird}\n")
    assert problems_of(path) == [
        f"{path}:3: assets.deck.file: cannot tell the MIME type of 'deck.weird' from its extension; add mimeType"
    ]


def test_video_metadata_needs_all_three(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    (tmp_path / "tour.mp4").write_bytes(b"mp4")
    path = write_manifest("version: 1\nassets:\n  tour:\n    type: video\n    file: tour.mp4\n    metadata: {width: 10, duration: 3}\n")
    assert problems_of(path) == [f"{path}:6: assets.tour.metadata: missing required key 'height'"]


def test_metadata_on_a_pdf_is_an_unknown_key(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    (tmp_path / "deck.pdf").write_bytes(b"%PDF")
    path = write_manifest("version: 1\nassets:\n  deck:\n    type: pdf\n    file: deck.pdf\n    metadata: {duration: 3}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:6: assets.deck: unknown key 'metadata'")


@pytest.mark.parametrize("key", ["Acme", "-acme", "acme_onboarding", "acme onboarding"])
def test_keys_must_be_lower_case_slugs(write_manifest: Write, problems_of: Problems, key: str) -> None:
    path = write_manifest(f"version: 1\nworkspaces:\n  '{key}': {{id: ws_1}}\n")
    assert problems_of(path) == [
        f"{path}:3: workspaces: key {key!r} must be lower-case letters, digits and '-', starting with a letter or digit"
    ]


def test_same_workspace_as_homepage_and_standalone_names_both_places(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g: {homepage: ws_1}
        workspaces:
          w:
            id: ws_1
    """)
    assert problems_of(path) == [
        f"{path}:6: workspace.w: workspace ws_1 is already managed as group.g (homepage) at {path}:3; "
        "manage each workspace in one place only"
    ]


def test_same_workspace_as_two_members(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              a: {id: ws_1}
              b: {id: ws_1}
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:7: group.g.workspace.b: workspace ws_1 is already managed as group.g.workspace.a at {path}:6")


def test_missing_required_field_points_at_its_parent(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\ngroups:\n  g:\n    access: {authoritative: false}\n")
    assert problems_of(path) == [f"{path}:3: groups.g: missing required key 'homepage'"]


def test_users_as_a_mapping_is_a_type_error(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  w:\n    id: ws_1\n    access:\n      users: {}\n")
    assert problems_of(path) == [f"{path}:6: workspaces.w.access.users: expected a list, got a mapping"]


def test_hidden_must_be_a_boolean(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nworkspaces:\n  w:\n    id: ws_1\n    sections:\n      sec_1: {hidden: 'no'}\n")
    assert problems_of(path) == [f"{path}:6: workspaces.w.sections.sec_1.hidden: expected true or false, got the text 'no'"]


def test_version_missing(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("groups: {}\n")
    assert problems_of(path) == [f"{path}:1: missing required key 'version'"]


@pytest.mark.parametrize("value", ["2", "true", "'1'"])
def test_version_other_than_1(write_manifest: Write, problems_of: Problems, value: str) -> None:
    path = write_manifest(f"# comment\nversion: {value}\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: version must be 1")


def test_every_problem_in_a_file_is_reported_at_once_in_line_order(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          w:
            id: ws_1
            access:
              users:
                - {email: jane@acme.com, role: owner}
                - {email: jane@acme.com, role: viewer}
                - {email: bob@acme.com, role: boss}
          Bad: {id: ws_2}
    """)
    assert [p.split(": ")[0] for p in problems_of(path)] == [f"{path}:8", f"{path}:9", f"{path}:10"]


def test_key_defined_in_two_files_names_both(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    write_manifest("version: 1\nworkspaces:\n  portal: {id: ws_1}\n", name="a.yaml")
    second = write_manifest("version: 1\n\nworkspaces:\n  portal: {id: ws_2}\n", name="b.yaml")
    assert problems_of(tmp_path) == [
        f"{second}:4: workspaces.portal: already defined at {tmp_path / 'a.yaml'}:3; a key may be defined in one file only"
    ]


def test_problems_from_several_files_are_sorted_by_file(write_manifest: Write, problems_of: Problems, tmp_path: Path) -> None:
    write_manifest("version: 1\ngroups:\n  g: {homepage: ws_1, x: 1}\n", name="b.yaml")
    write_manifest("version: 3\n", name="a.yaml")
    assert [p.split(": ")[0] for p in problems_of(tmp_path)] == [f"{tmp_path / 'a.yaml'}:1", f"{tmp_path / 'b.yaml'}:3"]


def test_a_template_member_needs_a_name(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k: {template: tpl_1}
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:6: groups.g.workspaces.k: a workspace created from a template needs a name")
    assert "a credit is never spent twice" in problem


def test_section_page_and_task_ids_on_a_template_member_are_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          g:
            homepage: ws_home
            workspaces:
              k:
                template: tpl_1
                name: Kickoff
                sections: {sec_1: {hidden: true}}
                tasks: {task_1: {completed: true}}
    """)
    problems = problems_of(path)
    assert [p.split(": ", 2)[:2] for p in problems] == [
        [f"{path}:9", "groups.g.workspaces.k.sections"],
        [f"{path}:10", "groups.g.workspaces.k.tasks"],
    ]
    assert all("has no" in p and "before it exists" in p for p in problems)


def test_one_workspace_in_two_groups_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("""
        version: 1
        groups:
          a:
            homepage: ws_home_a
            workspaces:
              x: {id: ws_1}
          b:
            homepage: ws_home_b
            workspaces:
              y: {id: ws_1}
    """)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:10: group.b.workspace.y: workspace ws_1 is already managed as "
                              f"group.a.workspace.x at {path}:6")


def test_embed_with_blank_custom_code(write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest("version: 1\nassets:\n  booking:\n    type: embed\n    customCode: \"  \\n\\t\"\n")
    assert problems_of(path) == [f"{path}:5: assets.booking.customCode: is blank; give the embed code, or a url instead"]


def test_an_email_written_with_spaces_around_it_is_still_the_same_entry(write_manifest: Write,
                                                                         problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - {email: jane@acme.com, role: owner}
                - {email: " jane@acme.com ", role: viewer}"""))
    assert f"{path}:8: groups.g.access.users[1]: email 'jane@acme.com' is listed twice (first at line 7); " \
           "keep one entry per email" in problems_of(path)


def test_an_entry_that_is_not_a_mapping_is_named_and_the_missing_owner_is_not_guessed(
        write_manifest: Write, problems_of: Problems) -> None:
    path = write_manifest(group_with_access("""
                - jane@acme.com
                - {email: raj@acme.com, role: viewer}"""))
    assert problems_of(path) == [
        f"{path}:7: groups.g.access.users[0]: expected a mapping (key: value), got the text 'jane@acme.com'"]
