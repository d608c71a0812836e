"""Loading valid manifests: normalised values, locations, merging, the digest."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from reconciler.errors import ManifestError
from reconciler.manifest import SourceLocation, load_desired

FULL = """
    version: 1
    groups:
      acme-onboarding:
        homepage: ws_8f2c
        access:
          users:
            - {email: Jane@ACME.com, role: owner}
            - {email: raj@customer.com, role: collaborator}
          domains:
            - {domain: Customer.COM, role: viewer}
          authoritative: true
          notify: true
          message: Welcome aboard
        workspaces:
          kickoff:
            template: tpl_kickoff
            name: Acme – Kickoff
            startDate: 2026-12-01
            targetEndDate: "2027-01-31"
            deal: {crmOneDealId: "9811"}
          renewal:
            id: ws_77aa
            sections:
              sec_41: {hidden: true}
            pages:
              pg_9: {hidden: false}
            tasks:
              task_3: {completed: true}
    workspaces:
      partner-portal:
        id: ws_1234
        access: {users: [{email: ops@acme.com, role: owner}], authoritative: false}
        sections: {sec_77: {hidden: true}}
    assets:
      pricing-deck:
        type: pdf
        file: assets/pricing-2027.pdf
        name: Pricing 2027
        description: Current price book
        tags: [tag_123]
        internal: true
      product-tour:
        type: video
        file: assets/tour.mp4
        metadata: {width: 1920, height: 1080, duration: 93}
      website: {type: link, url: "https://acme.com", name: Acme}
      booking: {type: embed, customCode: "<iframe src='https://cal.example/acme'></iframe>", name: Book a call}
"""


@pytest.fixture
def full_manifest(write_manifest: Callable[..., Path], tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "pricing-2027.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / "assets" / "tour.mp4").write_bytes(b"mp4")
    return write_manifest(FULL)


def test_group_access_is_normalised_and_located(full_manifest: Path) -> None:
    (group,) = load_desired(full_manifest).groups
    file = str(full_manifest)
    assert (group.address, group.homepage, group.location) == ("group.acme-onboarding", "ws_8f2c", SourceLocation(file, 3))
    access = group.access
    assert access is not None
    assert [(u.email, u.role, u.location.line) for u in access.users] == [
        ("jane@acme.com", "owner", 7),
        ("raj@customer.com", "collaborator", 8),
    ]
    assert [(d.domain, d.role, d.location.line) for d in access.domains] == [("customer.com", "viewer", 10)]
    assert (access.authoritative, access.notify, access.message) == (True, True, "Welcome aboard")
    assert str(access.location) == f"{file}:5"


def test_template_member_has_parsed_dates_and_deal(full_manifest: Path) -> None:
    kickoff = load_desired(full_manifest).groups[0].members[0]
    assert kickoff.address == "group.acme-onboarding.workspace.kickoff"
    assert (kickoff.id, kickoff.template, kickoff.name) == (None, "tpl_kickoff", "Acme – Kickoff")
    assert (kickoff.start_date, kickoff.target_end_date, kickoff.actual_end_date) == (
        date(2026, 12, 1),
        date(2027, 1, 31),
        None,
    )
    assert kickoff.deal is not None
    assert (kickoff.deal.crm_one_deal_id, kickoff.deal.crm_two_opportunity_id) == ("9811", None)
    assert kickoff.location.line == 15


def test_existing_member_keeps_sections_pages_and_tasks_with_lines(full_manifest: Path) -> None:
    renewal = load_desired(full_manifest).groups[0].members[1]
    assert renewal.id == "ws_77aa"
    assert [(s.id, s.hidden, s.location.line) for s in renewal.sections] == [("sec_41", True, 24)]
    assert [(p.id, p.hidden, p.location.line) for p in renewal.pages] == [("pg_9", False, 26)]
    assert [(t.id, t.completed, t.location.line) for t in renewal.tasks] == [("task_3", True, 28)]


def test_standalone_workspace_loads(full_manifest: Path) -> None:
    (portal,) = load_desired(full_manifest).workspaces
    assert (portal.address, portal.id, portal.location.line) == ("workspace.partner-portal", "ws_1234", 30)
    assert portal.access is not None and portal.access.authoritative is False
    assert [s.id for s in portal.sections] == ["sec_77"]


def test_file_assets_resolve_inside_the_root_and_guess_mime_types(full_manifest: Path, tmp_path: Path) -> None:
    deck, tour, _, _ = load_desired(full_manifest).assets
    assert (deck.address, deck.type, deck.file, deck.mime_type) == (
        "asset.pricing-deck",
        "pdf",
        (tmp_path / "assets" / "pricing-2027.pdf").resolve(),
        "application/pdf",
    )
    assert (deck.name, deck.description, deck.tags, deck.internal) == ("Pricing 2027", "Current price book", ("tag_123",), True)
    assert tour.mime_type == "video/mp4"
    assert tour.metadata is not None
    assert (tour.metadata.width, tour.metadata.height, tour.metadata.duration) == (1920, 1080, 93)


def test_link_and_embed_assets_load(full_manifest: Path) -> None:
    _, _, website, booking = load_desired(full_manifest).assets
    assert (website.type, website.url, website.file, website.location.line) == ("link", "https://acme.com", None, 46)
    assert (booking.type, booking.url, booking.custom_code) == (
        "embed",
        None,
        "<iframe src='https://cal.example/acme'></iframe>",
    )


def test_explicit_mime_type_wins_over_the_guess(write_manifest: Callable[..., Path], tmp_path: Path) -> None:
    (tmp_path / "page.bin").write_bytes(b"<html>")
    path = write_manifest("""
        version: 1
        assets:
          page: {type: htmlPage, file: page.bin, mimeType: text/html}
    """)
    assert load_desired(path).assets[0].mime_type == "text/html"


def test_access_lists_lists_groups_then_workspaces(full_manifest: Path) -> None:
    lists = load_desired(full_manifest).access_lists()
    assert [(address, wid) for address, wid, _ in lists] == [
        ("group.acme-onboarding", "ws_8f2c"),
        ("workspace.partner-portal", "ws_1234"),
    ]


def test_list_holders_are_a_groups_homepage_and_members_with_an_id_then_standalone_workspaces(
        full_manifest: Path) -> None:
    desired = load_desired(full_manifest)
    recorded = {"group.acme-onboarding.workspace.kickoff": "ws_made"}.get  # an earlier apply created it
    assert [(wid, node.address) for wid, node in desired.list_holders(recorded)] == [
        ("ws_8f2c", "group.acme-onboarding"), ("ws_made", "group.acme-onboarding"),
        ("ws_77aa", "group.acme-onboarding"), ("ws_1234", "workspace.partner-portal")]


def test_a_member_not_created_yet_holds_no_list(full_manifest: Path) -> None:
    desired = load_desired(full_manifest)
    assert [wid for wid, _ in desired.list_holders(lambda address: None)] == ["ws_8f2c", "ws_77aa", "ws_1234"]


def test_single_file_root_is_its_directory(full_manifest: Path, tmp_path: Path) -> None:
    desired = load_desired(full_manifest)
    assert (desired.root, desired.files, desired.version) == (tmp_path, (full_manifest,), 1)


def test_directory_of_two_files_merges_in_name_order(write_manifest: Callable[..., Path], tmp_path: Path) -> None:
    write_manifest("""
        version: 1
        workspaces:
          second: {id: ws_2}
    """, name="b.yml")
    write_manifest("""
        version: 1
        workspaces:
          first: {id: ws_1}
        groups:
          team: {homepage: ws_home}
    """, name="a.yaml")
    (tmp_path / "notes.txt").write_text("not a manifest")
    desired = load_desired(tmp_path)
    assert [w.address for w in desired.workspaces] == ["workspace.first", "workspace.second"]
    assert [g.address for g in desired.groups] == ["group.team"]
    assert desired.files == (tmp_path / "a.yaml", tmp_path / "b.yml")
    assert desired.workspaces[1].location == SourceLocation(str(tmp_path / "b.yml"), 3)
    assert desired.root == tmp_path


def test_directory_skips_emulator_seed_files(write_manifest: Callable[..., Path], tmp_path: Path) -> None:
    write_manifest("version: 1\n")
    write_manifest("companies:\n  acme: {token: t}\n", name="seed.yaml")
    assert load_desired(tmp_path).files == (tmp_path / "manifest.yaml",)


def test_digest_is_stable_and_follows_the_bytes(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("version: 1\n")
    first = load_desired(path).digest
    assert first == load_desired(path).digest
    assert len(first) == 64
    write_manifest("version: 1\n# a comment\n")
    assert load_desired(path).digest != first


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"no manifest files \(\*\.yaml, \*\.yml\)"):
        load_desired(tmp_path)


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such file or directory"):
        load_desired(tmp_path / "nowhere.yaml")


def test_error_text_counts_and_lists_every_problem(write_manifest: Callable[..., Path]) -> None:
    path = write_manifest("""
        version: 1
        workspaces:
          a: {id: ws_1, colour: red}
    """)
    with pytest.raises(ManifestError) as caught:
        load_desired(path)
    assert str(caught.value).splitlines() == [
        "1 problem in the manifest:",
        f"  {path}:3: workspaces.a: unknown key 'colour'; allowed keys: id, access, sections, pages, tasks",
    ]


def test_directory_of_only_emulator_files_has_no_manifests(write_manifest: Callable[..., Path], tmp_path: Path) -> None:
    write_manifest("companies: {}\n", name="seed.yaml")
    with pytest.raises(ManifestError, match="only emulator seed or data files"):
        load_desired(tmp_path)


def _workspaces(count: int, bad: tuple[int, ...] = ()) -> str:
    return "version: 1\nworkspaces:\n" + "".join(
        f"  w{n}:\n    id: ws_{n}\n    access:\n      users: [{{email: {'x at y' if n in bad else f'o{n}@acme.com'}, "
        "role: owner}]\n" for n in range(count))


def test_workspaces_validated_a_piece_at_a_time_keep_their_order_and_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reconciler.manifest.load.PIECE_SIZE", 2)
    (tmp_path / "m.yaml").write_text(_workspaces(5), encoding="utf-8")
    desired = load_desired(tmp_path / "m.yaml")
    assert [(w.key, w.id, w.access.users[0].location.line) for w in desired.workspaces if w.access] == [
        (f"w{n}", f"ws_{n}", 6 + 4 * n) for n in range(5)]


def test_a_problem_in_every_piece_is_reported_at_its_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reconciler.manifest.load.PIECE_SIZE", 2)
    path = tmp_path / "m.yaml"
    path.write_text(_workspaces(5, bad=(0, 3, 4)), encoding="utf-8")
    with pytest.raises(ManifestError) as caught:
        load_desired(path)
    assert [problem.split(": ")[0:2] for problem in caught.value.problems] == [
        [f"{path}:6", "workspaces.w0.access.users[0].email"], [f"{path}:18", "workspaces.w3.access.users[0].email"],
        [f"{path}:22", "workspaces.w4.access.users[0].email"]]
