"""Microsoft Entra ID's provisioning sequences, replayed over HTTP against `directory serve`, and the
directory they leave.

The request shapes in tests/directory/recorded/entra/ are the request examples of Microsoft Entra's
"Tutorial: Develop and plan provisioning for a SCIM endpoint in Microsoft Entra ID" (learn.microsoft.com,
entra/identity/app-provisioning/use-scim-to-provision-users-and-groups): the ``userName eq`` lookup (and
``externalId eq``, the other matching attribute) before a create, the create with the enterprise
extension in ``schemas``, "Disable User" as ``"op": "Replace"`` capitalised, the group create whose
``schemas`` carries Microsoft's ``ADSCIM/2.0/Group`` URN, the ``displayName eq`` group lookup with
``excludedAttributes=members``, member ``Add``/``Remove`` with ``"$ref": null`` in the value, and DELETE.
``active`` as the string ``"False"``/``"True"`` is what Entra sends without the ``aadOptscim062020`` flag
("Known issues and resolutions with SCIM 2.0 protocol compliance of the Microsoft Entra user provisioning
service", "Requests made to disable users: Without feature flag"). The manager PATCH ``Add`` whose value
is the manager's bare id is in neither page: it is what Entra sends for its default ``manager`` mapping,
as SCIM services that serve Entra report. Names and ids are ours; the shapes are Entra's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.directory.model import Directory, DirectoryGroup, DirectoryPerson
from tests.directory.test_conformance import DAY, replay, snapshot_of

if TYPE_CHECKING:
    from tests.directory.conftest import FixedClock, Served

ANA = "ana.lima@acme.com"
BO = "bo.chen@acme.com"
CY = "cy.ortiz@acme.com"
PEOPLE = ["create-user-cy", "create-user-ana-managed-by-cy", "create-user-bo"]
PEOPLE_AND_GROUP = [*PEOPLE, "get-group-engineering-by-displayname", "create-group-engineering",
                    "add-member-ana-to-engineering", "add-member-bo-to-engineering"]


def test_entra_creates_a_user_its_username_and_external_id_lookups_did_not_find(served: Served) -> None:
    # Cy is there first: a lookup that ignored its filter would find him.
    lookups = ["get-user-ana-by-username", "get-user-ana-by-externalid"]
    replayed = replay(served.http, "entra", ["create-user-cy", *lookups, "create-user-ana-managed-by-cy", *lookups])
    found = [[r["id"] for r in a.json().get("Resources", [])] for a in replayed.answers]
    assert (found[1:3], found[4:]) == ([[], []], [[replayed.ids["ana"]], [replayed.ids["ana"]]])


def test_entra_creates_a_user_whose_enterprise_extension_names_its_manager(served: Served, state_address: str) -> None:
    replay(served.http, "entra", ["create-user-cy", "create-user-ana-managed-by-cy"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA, manager=CY), DirectoryPerson(CY)))


def test_entra_sets_a_manager_by_a_patch_add_whose_value_is_the_bare_id(served: Served, state_address: str) -> None:
    replay(served.http, "entra", ["create-user-cy", "create-user-bo", "set-manager-of-bo-to-cy"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(BO, manager=CY), DirectoryPerson(CY)))


def test_entra_disables_a_user_with_active_as_the_string_false(served: Served, state_address: str) -> None:
    replay(served.http, "entra", ["create-user-cy", "create-user-ana-managed-by-cy",
                                  "disable-user-ana-with-string-false"])
    assert snapshot_of(state_address) == Directory(
        people=(DirectoryPerson(ANA, active=False, since=DAY, manager=CY), DirectoryPerson(CY)))


def test_entra_enables_a_user_again_with_active_as_the_string_true(served: Served, state_address: str) -> None:
    replay(served.http, "entra", ["create-user-cy", "create-user-ana-managed-by-cy",
                                  "disable-user-ana-with-string-false",
                             "enable-user-ana-with-string-true"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(ANA, manager=CY), DirectoryPerson(CY)))


def test_entra_disables_a_user_with_a_capitalised_replace(served: Served, state_address: str) -> None:
    replay(served.http, "entra", ["create-user-bo", "disable-user-bo"])
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(BO, active=False, since=DAY),))


def test_entra_adds_group_members_with_a_null_ref(served: Served, state_address: str) -> None:
    replayed = replay(served.http, "entra", PEOPLE_AND_GROUP)
    assert replayed.answers[3].json()["totalResults"] == 0
    assert snapshot_of(state_address).groups == (DirectoryGroup("Engineering", (ANA, BO)),)


def test_entra_removes_only_the_member_its_remove_value_names(served: Served, state_address: str) -> None:
    # RFC 7644 §3.5.2.2 has a remove of "members" without a filter remove them all; Entra puts the members to
    # remove in the value instead, and means only those.
    replay(served.http, "entra", [*PEOPLE_AND_GROUP, "remove-member-bo-from-engineering"])
    assert snapshot_of(state_address).groups == (DirectoryGroup("Engineering", (ANA,)),)


def test_entra_deletes_a_user_leaving_a_leaver_deleted_since_that_day(served: Served, state_address: str) -> None:
    replay(served.http, "entra", [*PEOPLE_AND_GROUP, "delete-user-bo"])
    assert snapshot_of(state_address) == Directory(
        people=(DirectoryPerson(ANA, manager=CY), DirectoryPerson(BO, active=False, since=DAY, deleted=True),
                DirectoryPerson(CY)),
        groups=(DirectoryGroup("Engineering", (ANA,)),))


def test_entra_deleting_a_user_disabled_days_before_keeps_the_day_it_was_disabled(served: Served, state_address: str,
                                                                                  clock: FixedClock) -> None:
    first = replay(served.http, "entra", ["create-user-bo", "disable-user-bo"])
    clock.set_day("2026-12-04")
    replay(served.http, "entra", ["delete-user-bo"], ids=first.ids)
    assert snapshot_of(state_address) == Directory(people=(DirectoryPerson(BO, active=False, since=DAY, deleted=True),))


def test_entra_full_sequence_leaves_exactly_the_expected_directory(served: Served, state_address: str) -> None:
    # Ana is disabled (a leaver, out of the group, her manager kept), Bo gets Cy as manager, leaves the group
    # by a Remove, is disabled, then deleted: a deleted leaver since the day he was disabled.
    replay(served.http, "entra", ["get-user-ana-by-username", "get-user-ana-by-externalid", *PEOPLE_AND_GROUP,
                             "set-manager-of-bo-to-cy", "remove-member-bo-from-engineering",
                             "disable-user-ana-with-string-false", "disable-user-bo", "delete-user-bo"])
    assert snapshot_of(state_address) == Directory(
        people=(DirectoryPerson(ANA, active=False, since=DAY, manager=CY),
                DirectoryPerson(BO, active=False, since=DAY, deleted=True), DirectoryPerson(CY)),
        groups=(DirectoryGroup("Engineering", ()),))
