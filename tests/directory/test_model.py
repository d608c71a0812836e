"""The directory as the plan reads it, from SCIM resources (reconciler/directory/model.py)."""

from __future__ import annotations

from datetime import date

from reconciler.directory.model import (
    ENTERPRISE_USER, Directory, DirectoryGroup, DirectoryPerson, directory_from_scim, person_email)

DAY = date(2026, 12, 1)


def test_a_user_name_that_is_an_email_is_the_person_lower_cased() -> None:
    assert person_email({"userName": "Ana@Acme.com", "emails": [{"value": "other@acme.com", "primary": True}]}) \
        == "ana@acme.com"


def test_a_user_name_that_is_no_email_gives_way_to_the_primary_email() -> None:
    user = {"userName": "ana", "emails": [{"value": "a@acme.com"}, {"value": "Ana@Acme.com", "primary": True}]}
    assert person_email(user) == "ana@acme.com"


def test_without_a_primary_email_the_first_email_is_the_person() -> None:
    assert person_email({"userName": "ana", "emails": [{"value": "a1@acme.com"}, {"value": "a2@acme.com"}]}) \
        == "a1@acme.com"


def test_a_user_with_no_email_anywhere_is_left_out_and_named() -> None:
    directory = directory_from_scim([{"id": "u1", "userName": "ana"}], [], since={}, deleted={})
    assert directory.people == ()
    assert directory.unresolved == ("user u1 ('ana') has no email address: left out",)


def test_an_inactive_user_is_a_leaver_since_the_day_the_store_recorded() -> None:
    directory = directory_from_scim([{"id": "u1", "userName": "ana@acme.com", "active": False}], [],
                                    since={"u1": DAY}, deleted={})
    assert directory.leavers() == (DirectoryPerson("ana@acme.com", active=False, since=DAY),)


def test_a_group_holds_its_active_members_only_and_names_what_is_no_user() -> None:
    users = [{"id": "u1", "userName": "bo@acme.com"}, {"id": "u2", "userName": "ana@acme.com", "active": False}]
    groups = [{"displayName": "Eng", "members": [{"value": "u2"}, {"value": "u1"}, {"value": "g9"}]}]
    directory = directory_from_scim(users, groups, since={"u2": DAY}, deleted={})
    assert directory.group("Eng") == DirectoryGroup("Eng", ("bo@acme.com",))
    assert directory.unresolved == ("group 'Eng': member g9 is no user of the directory: left out",)


def test_a_deleted_user_is_a_leaver_since_its_tombstone_unless_it_is_back() -> None:
    directory = directory_from_scim([{"id": "u1", "userName": "bo@acme.com"}], [], since={},
                                    deleted={"ana@acme.com": DAY, "bo@acme.com": DAY})
    assert directory.people == (DirectoryPerson("ana@acme.com", active=False, since=DAY, deleted=True),
                                DirectoryPerson("bo@acme.com"))


def test_the_manager_is_read_from_the_enterprise_extension_by_id() -> None:
    users = [{"id": "u1", "userName": "jane@acme.com"},
             {"id": "u2", "userName": "bo@acme.com", ENTERPRISE_USER: {"manager": {"value": "u1"}}}]
    directory = directory_from_scim(users, [], since={}, deleted={})
    assert [p.manager for p in directory.people] == ["jane@acme.com", None]


def test_a_group_is_found_by_its_exact_name_only() -> None:
    directory = Directory(groups=(DirectoryGroup("Eng"),))
    assert directory.group("Eng") == DirectoryGroup("Eng")
    assert directory.group("eng") is None
