"""Okta's provisioning sequences, replayed over HTTP against `directory serve`, and the directory they leave.

The request shapes in tests/directory/recorded/okta/ are those of Okta's "SCIM 2.0 Protocol Reference"
(developer.okta.com, docs/reference/scim/scim-20): the ``userName eq`` lookup with ``startIndex=1&count=100``
before a create, the create with ``groups: []`` and the password Okta syncs, the PUT of the whole user
(``meta``, ``emails[].display`` and an empty ``middleName`` included), deactivation as a path-less
``replace`` of ``{"active": false}`` (an OIN integration) or as a PUT with ``active: false`` (an integration
made with the App Integration Wizard), the group push (create with ``members: []``), a membership update
as one PATCH removing by ``members[value eq "id"]`` and adding, the full push of the members by a
``replace`` of ``members``, the rename by a path-less replace whose value carries the group's id, and the
DELETE of an unlinked group. Okta never deletes a user. Names and ids are ours; the shapes are Okta's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.directory.model import Directory, DirectoryGroup, DirectoryPerson
from reconciler.directory.store import document_json, open_directory_store
from tests.directory.test_conformance import DAY, replay, snapshot_of

if TYPE_CHECKING:
    from tests.directory.conftest import FixedClock, Served

ANA = "ana.lima@acme.com"
BO = "bo.chen@acme.com"
CY = "cy.ortiz@acme.com"
PEOPLE_AND_GROUP = ["create-user-ana", "create-user-bo", "get-group-engineering-by-displayname",
                    "create-group-engineering", "add-members-ana-bo-to-engineering"]


def test_okta_creates_a_user_its_username_lookup_did_not_find(served: Served, state_address: str) -> None:
    # Bo is there first: a lookup that ignored its filter would find him.
    replayed = replay(served.http, "okta", ["create-user-bo", "get-user-ana-by-username", "create-user-ana",
                                       "get-user-ana-by-username"])
    _, before, _, after = (a.json() for a in replayed.answers)
    assert (before["totalResults"], before.get("Resources", [])) == (0, [])
    assert (after["totalResults"], [r["id"] for r in after["Resources"]]) == (1, [replayed.ids["ana"]])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)))


def test_okta_put_of_the_whole_user_renames_the_person(served: Served, state_address: str) -> None:
    replay(served.http, "okta", ["create-user-ana", "replace-user-ana-renamed"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson("ana.souza@acme.com"),))


def test_okta_deactivation_makes_the_user_a_leaver_since_that_day(served: Served, state_address: str) -> None:
    replay(served.http, "okta", ["create-user-ana", "deactivate-user-ana"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA, active=False, since=DAY),))


def test_okta_deactivating_a_leaver_again_later_keeps_the_first_day(served: Served, state_address: str,
                                                                    clock: FixedClock) -> None:
    first = replay(served.http, "okta", ["create-user-ana", "deactivate-user-ana"])
    clock.set_day("2026-12-04")
    replay(served.http, "okta", ["deactivate-user-ana"], ids=first.ids)
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA, active=False, since=DAY),))


def test_okta_deactivation_by_a_put_of_the_whole_user_makes_the_user_a_leaver(served: Served,
                                                                              state_address: str) -> None:
    replay(served.http, "okta", ["create-user-ana", "deactivate-user-ana-by-put"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA, active=False, since=DAY),))


def test_okta_reactivation_makes_the_leaver_active_again(served: Served, state_address: str) -> None:
    replay(served.http, "okta", ["create-user-ana", "deactivate-user-ana", "reactivate-user-ana"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA),))


def test_okta_pushes_a_group_its_displayname_lookup_did_not_find_with_its_members(served: Served,
                                                                                  state_address: str) -> None:
    replayed = replay(served.http, "okta", PEOPLE_AND_GROUP)
    assert replayed.answers[2].json()["totalResults"] == 0
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)),
                                                   groups=(DirectoryGroup("Engineering", (ANA, BO)),))


def test_okta_looks_a_group_up_by_its_displayname_only(served: Served, state_address: str) -> None:
    replayed = replay(served.http, "okta", [*PEOPLE_AND_GROUP, "rename-group-engineering", "create-group-engineering",
                                       "get-group-engineering-by-displayname"])
    found = replayed.answers[-1].json()
    assert [r["id"] for r in found["Resources"]] == [replayed.answers[-2].json()["id"]]


def test_okta_removes_a_member_by_a_value_filter_path(served: Served, state_address: str) -> None:
    replay(served.http, "okta", [*PEOPLE_AND_GROUP, "remove-member-bo-from-engineering"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)),
                                                   groups=(DirectoryGroup("Engineering", (ANA,)),))


def test_okta_removes_and_adds_members_in_one_patch(served: Served, state_address: str) -> None:
    replay(served.http, "okta", [*PEOPLE_AND_GROUP, "create-user-cy", "remove-bo-and-add-cy-to-engineering"])
    assert snapshot_of(state_address) == Directory(
        people=(DirectoryPerson(ANA), DirectoryPerson(BO), DirectoryPerson(CY)),
        groups=(DirectoryGroup("Engineering", (ANA, CY)),))


def test_okta_full_push_of_the_members_replaces_them_all(served: Served, state_address: str) -> None:
    replay(served.http, "okta", [*PEOPLE_AND_GROUP, "replace-members-of-engineering-with-bo"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)),
                                                   groups=(DirectoryGroup("Engineering", (BO,)),))


def test_okta_renames_a_group_by_a_replace_whose_value_carries_its_id(served: Served, state_address: str) -> None:
    replay(served.http, "okta", [*PEOPLE_AND_GROUP, "rename-group-engineering"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)),
                                                   groups=(DirectoryGroup("Platform Engineering", (ANA, BO)),))


def test_okta_deletes_a_pushed_group(served: Served, state_address: str) -> None:
    replay(served.http, "okta", [*PEOPLE_AND_GROUP, "delete-group-engineering"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA), DirectoryPerson(BO)))


def test_okta_full_sequence_leaves_exactly_the_expected_directory(served: Served, state_address: str) -> None:
    # Ana is pushed, put in a group, renamed, then deactivated: a leaver since the day, and no member of the
    # group any more (a leaver is revoked, never granted); Bo leaves the group for Cy, and both stay active.
    replay(served.http, "okta", ["get-user-ana-by-username", "create-user-ana", "get-user-bo-by-username",
                            "create-user-bo", *PEOPLE_AND_GROUP[2:], "create-user-cy",
                            "remove-bo-and-add-cy-to-engineering", "rename-group-engineering",
                            "replace-user-ana-renamed", "deactivate-user-ana"])
    assert snapshot_of(state_address) == Directory(
        people=(DirectoryPerson("ana.souza@acme.com", active=False, since=DAY), DirectoryPerson(BO),
                DirectoryPerson(CY)),
        groups=(DirectoryGroup("Platform Engineering", (CY,)),))


def test_the_password_okta_sends_on_create_is_stored_nowhere(served: Served, state_address: str,
                                                             tmp_path: Path) -> None:
    # Okta sends the user's password when password sync is on; this directory never needs one, and a
    # state is no place for it: not in what the store holds, nor in any file beside a file state.
    replay(served.http, "okta", ["create-user-ana"])
    with open_directory_store(state_address) as store:
        stored = document_json(store.read())
    files = [p.name for p in tmp_path.rglob("*") if p.is_file() and b"1mz050nq" in p.read_bytes()]
    assert (b"1mz050nq" in stored, files) == (False, [])
