"""directory sync writing MANIFESTS_DIR/directory.yaml from the store of a state: when it writes, what it says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconciler.commands.directory import directory_sync
from reconciler.directory.store import open_directory_store
from reconciler.directory.sync import DirectorySyncError
from reconciler.errors import ConfigError
from tests.directory.conftest import FixedClock, scim_group, scim_user


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "manifests"
    folder.mkdir()
    return folder


def mirror(state: str, users: list[dict[str, object]], groups: list[dict[str, object]], day: str = "2026-12-01") -> None:
    clock = FixedClock()
    clock.set_day(day)
    with open_directory_store(state, now=clock) as store:
        store.mirror(users, groups, today=store.today())


ANA, BO, CY = scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com"), scim_user("u3", "cy@acme.com")


def test_the_first_sync_writes_the_file_and_says_it_is_new(manifests: Path, state_address: str) -> None:
    mirror(state_address, [ANA, BO], [scim_group("g1", "Engineering", "u1", "u2")])
    report = directory_sync(manifests=manifests, state_path=state_address)
    assert report.text() == (f"Wrote {manifests / 'directory.yaml'} from the directory of the state {report.address}:\n"
                             "  a new file: 1 group, 0 leavers\n")
    assert "    Engineering:\n      - ana@acme.com\n      - bo@acme.com\n" in (manifests / "directory.yaml").read_text()


def test_the_header_names_the_state_the_directory_came_from(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [])
    directory_sync(manifests=manifests, state_path=state)
    first_line = (manifests / "directory.yaml").read_text().splitlines()[0]
    assert first_line == (f"# Written by `reconciler directory sync` from the directory of the state {state}; do not "
                          "edit by hand:")


def test_a_sync_of_an_unchanged_directory_says_no_changes_and_leaves_the_file_untouched(manifests: Path,
                                                                                      tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [scim_group("g1", "Engineering", "u1")])
    directory_sync(manifests=manifests, state_path=state)
    path = manifests / "directory.yaml"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = os.stat(path)
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.text() == f"{path} already holds the directory of the state {state}: no changes.\n"
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_members_added_to_and_removed_from_a_group_are_named(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA, BO, CY], [scim_group("g1", "Engineering", "u1", "u2")])
    directory_sync(manifests=manifests, state_path=state)
    mirror(state, [ANA, BO, CY], [scim_group("g1", "Engineering", "u1", "u3")])
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.outcome.changes == ("group Engineering: +cy@acme.com -bo@acme.com",)


def test_a_new_leaver_is_named_with_the_day_and_the_successor(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    jane = scim_user("u9", "jane@acme.com")
    mirror(state, [ANA, scim_user("u3", "cy@acme.com", manager="u9"), jane], [])
    directory_sync(manifests=manifests, state_path=state)
    mirror(state, [ANA, scim_user("u3", "cy@acme.com", active=False, manager="u9"), jane], [], day="2026-12-03")
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.outcome.changes == ("new leaver cy@acme.com (since 2026-12-03, successor jane@acme.com)",)


def test_a_deleted_user_is_a_new_leaver_and_leaves_its_groups(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA, BO], [scim_group("g1", "Engineering", "u1", "u2")])
    directory_sync(manifests=manifests, state_path=state)
    mirror(state, [ANA], [scim_group("g1", "Engineering", "u1")], day="2026-12-02")
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.outcome.changes == ("group Engineering: -bo@acme.com",
                                      "new leaver bo@acme.com (since 2026-12-02)")


def test_a_group_that_appears_or_goes_is_said_so(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [scim_group("g1", "Old", "u1")])
    directory_sync(manifests=manifests, state_path=state)
    mirror(state, [ANA], [scim_group("g2", "New", "u1")])
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.outcome.changes == ("new group New (1 member) +ana@acme.com", "group Old is gone (it had 1 member)")


def test_a_previous_file_that_is_not_a_directory_file_is_written_anew_and_said_so(manifests: Path,
                                                                                tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [])
    (manifests / "directory.yaml").write_text("teams: {a: [x@acme.com]}\n")
    report = directory_sync(manifests=manifests, state_path=state)
    assert report.outcome.changes == ("the previous file was not a directory.yaml this tool can read: written anew",)
    assert (manifests / "directory.yaml").read_text().startswith("# Written by `reconciler directory sync`")


def test_a_state_without_a_directory_is_refused_and_nothing_is_written(manifests: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no directory"):
        directory_sync(manifests=manifests, state_path=str(tmp_path / "typo.state.json"))
    assert list(manifests.iterdir()) == []


def test_the_state_beside_the_manifests_is_the_default(manifests: Path) -> None:
    mirror(str(manifests / "reconciler.state.json"), [ANA], [scim_group("g1", "Eng", "u1")])
    directory_sync(manifests=manifests, state_path=None)
    assert "    Eng:\n      - ana@acme.com\n" in (manifests / "directory.yaml").read_text()


def test_a_link_planted_as_directory_yaml_is_refused(manifests: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [])
    target = tmp_path / "elsewhere.yaml"
    target.write_text("kept\n")
    (manifests / "directory.yaml").symlink_to(target)
    with pytest.raises(DirectorySyncError, match="is a symbolic link"):
        directory_sync(manifests=manifests, state_path=state)
    assert target.read_text() == "kept\n"


def test_a_missing_manifests_directory_is_refused(tmp_path: Path) -> None:
    state = str(tmp_path / "reconciler.state.json")
    mirror(state, [ANA], [])
    with pytest.raises(DirectorySyncError, match="does not exist"):
        directory_sync(manifests=tmp_path / "nowhere", state_path=state)
