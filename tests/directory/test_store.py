"""The directory store on both state backends: mirror, snapshot, the days leavers are kept with."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path

import pytest

from reconciler.directory.model import DirectoryGroup, DirectoryPerson
from reconciler.directory.store import DirectoryStore, DirectoryStoreError, MirrorCounts, open_directory_store
from tests.directory.conftest import FixedClock, scim_group, scim_user

DAY1 = date(2026, 12, 1)
DAY2 = date(2026, 12, 5)


def test_an_empty_store_has_an_empty_directory(store: DirectoryStore) -> None:
    assert store.snapshot().people == ()
    assert store.snapshot().groups == ()


def test_mirror_stores_people_and_groups_as_the_model_reads_them(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "Ana@Acme.com"), scim_user("u2", "bo@acme.com", manager="u1")],
                 [scim_group("g1", "Engineering", "u1", "u2")], today=DAY1)
    directory = store.snapshot()
    assert directory.people == (DirectoryPerson("ana@acme.com"), DirectoryPerson("bo@acme.com", manager="ana@acme.com"))
    assert directory.groups == (DirectoryGroup("Engineering", ("ana@acme.com", "bo@acme.com")),)


def test_mirror_counts_what_it_stored_and_who_left(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com")], [], today=DAY1)
    counts = store.mirror([scim_user("u1", "ana@acme.com", active=False)], [scim_group("g", "G")], today=DAY2)
    assert counts == MirrorCounts(users=1, groups=1, deactivated=1, deleted=1)


def test_mirror_makes_a_user_turned_inactive_a_leaver_since_today(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
    store.mirror([scim_user("u1", "ana@acme.com", active=False)], [], today=DAY2)
    assert store.snapshot().people == (DirectoryPerson("ana@acme.com", active=False, since=DAY2),)


def test_mirror_keeps_the_first_day_of_an_unchanged_leaver(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com", active=False)], [], today=DAY1)
    store.mirror([scim_user("u1", "ana@acme.com", active=False)], [], today=DAY2)
    assert store.snapshot().people[0].since == DAY1


def test_mirror_tombstones_a_user_that_is_gone_since_today(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com"), scim_user("u2", "bo@acme.com")], [], today=DAY1)
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY2)
    assert store.snapshot().people[1] == DirectoryPerson("bo@acme.com", active=False, since=DAY2, deleted=True)


def test_mirror_keeps_the_deactivation_day_of_a_leaver_that_is_then_gone(store: DirectoryStore) -> None:
    store.mirror([scim_user("u2", "bo@acme.com", active=False)], [], today=DAY1)
    store.mirror([], [], today=DAY2)
    assert store.snapshot().people == (DirectoryPerson("bo@acme.com", active=False, since=DAY1, deleted=True),)


def test_mirror_keeps_a_tombstone_while_the_user_stays_gone(store: DirectoryStore) -> None:
    store.mirror([scim_user("u2", "bo@acme.com")], [], today=DAY1)
    store.mirror([], [], today=DAY1)
    store.mirror([], [], today=DAY2)
    assert store.snapshot().people[0].since == DAY1


def test_mirror_clears_the_leaver_day_of_a_user_active_again(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com", active=False)], [], today=DAY1)
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY2)
    assert store.snapshot().people == (DirectoryPerson("ana@acme.com"),)


def test_mirror_clears_the_tombstone_of_a_user_that_is_back(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
    store.mirror([], [], today=DAY1)
    store.mirror([scim_user("u9", "ana@acme.com")], [], today=DAY2)
    assert store.snapshot().people == (DirectoryPerson("ana@acme.com"),)


def test_mirror_keeps_the_ids_of_the_source(store: DirectoryStore) -> None:
    store.mirror([scim_user("00u1abc", "ana@acme.com")], [scim_group("00g7", "Sales")], today=DAY1)
    document = store.read()
    assert (list(document.users), list(document.groups)) == (["00u1abc"], ["00g7"])


def test_mirror_refuses_a_user_without_an_id_and_writes_nothing(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
    with pytest.raises(DirectoryStoreError, match="User 2 of the 2 to store has no id"):
        store.mirror([scim_user("u1", "ana@acme.com"), {"userName": "bo@acme.com"}], [], today=DAY2)
    assert store.read().serial == 1


def test_every_write_bumps_the_serial_and_versions_what_it_wrote(store: DirectoryStore) -> None:
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
    store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
    document = store.read()
    assert (document.serial, document.users["u1"]["meta"]["version"]) == (2, 'W/"2"')


def test_a_second_store_of_the_same_state_reads_what_the_first_wrote(state_address: str, clock: FixedClock) -> None:
    with open_directory_store(state_address, now=clock) as first, open_directory_store(state_address) as second:
        first.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
        assert [p.email for p in second.snapshot().people] == ["ana@acme.com"]


def test_a_change_that_raises_writes_nothing(store: DirectoryStore) -> None:
    def fail(document: object) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        store.change(fail)
    assert store.read().serial == 0


def test_concurrent_changes_from_two_stores_lose_no_update(state_address: str) -> None:
    """Two stores (two sessions, or two open lock files, as two processes have) each add 25 users."""
    def add(tag: str) -> None:
        with open_directory_store(state_address) as own:
            for n in range(25):
                own.change(lambda d, n=n: d.put_user(scim_user(f"{tag}{n}", f"{tag}{n}@acme.com"), today=DAY1))

    threads = [threading.Thread(target=add, args=(tag,)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open_directory_store(state_address) as reader:
        assert (len(reader.read().users), reader.read().serial) == (50, 50)


def test_the_file_directory_lives_beside_the_state_file(tmp_path: Path, clock: FixedClock) -> None:
    state = tmp_path / "s.json"
    with open_directory_store(str(state), now=clock) as store:
        store.mirror([scim_user("u1", "ana@acme.com")], [], today=DAY1)
        assert store.where == str(tmp_path / "s.json.directory.json")
    assert (tmp_path / "s.json.directory.json").is_file()
    assert not state.exists()


def test_the_file_directory_is_the_same_bytes_for_the_same_directory(tmp_path: Path, clock: FixedClock) -> None:
    files = []
    for name, order in (("a", [("u1", "ana@acme.com"), ("u2", "bo@acme.com")]),
                        ("b", [("u2", "bo@acme.com"), ("u1", "ana@acme.com")])):
        with open_directory_store(str(tmp_path / name), now=clock) as store:
            store.mirror([scim_user(i, e) for i, e in order], [], today=DAY1)
        files.append((tmp_path / f"{name}.directory.json").read_bytes())
    assert files[0] == files[1]


def test_a_damaged_directory_file_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "s.json.directory.json").write_text("{not json")
    with open_directory_store(str(tmp_path / "s.json")) as store, pytest.raises(DirectoryStoreError) as caught:
        store.snapshot()
    assert str(caught.value).startswith(f"The directory file {tmp_path / 's.json.directory.json'} is not a "
                                        "directory reconciler wrote (")


def test_a_directory_file_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.json.directory.json").write_text('{"format": 2}')
    with open_directory_store(str(tmp_path / "s.json")) as store, pytest.raises(DirectoryStoreError,
                                                                                 match="upgrade this one"):
        store.snapshot()
