"""The directory as the plan sees it: who is active, who left and since when, which groups hold whom.

Built from SCIM resources (RFC 7643 §4: a User's ``userName``, ``emails``,
``active`` and the enterprise extension's ``manager``; a Group's
``displayName`` and ``members``), whoever served them: ``directory serve``'s
own store, or a SCIM service pulled with ``directory pull``.

- A person is known by one lower-cased email: the ``userName`` when it is an
  email address (Okta, and Entra ID's UPN usually are), else the primary
  email, else the first email.  A user with neither is not a person this tool
  can grant anything to: it is left out and named in ``unresolved``.
- A user with ``active: false``, or deleted from the directory, is a leaver
  from ``since`` (the day the store saw it happen).
- A group's ``members`` are its active users' emails, sorted; a member that is
  a deactivated user is left out (a leaver is revoked, never granted); a
  member that is no user of the directory (a nested group, an id the
  directory does not hold) is left out and named in ``unresolved``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

ENTERPRISE_USER = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


@dataclass(frozen=True, slots=True)
class DirectoryPerson:
    """One user of the directory, by the email access is granted to."""

    email: str
    active: bool = True
    # The day the user was deactivated or deleted; None while active.
    since: date | None = None
    # The manager's email, when the directory names one who is a user of it: a leaver's successor
    # candidate where the leaver was a workspace's last owner (the plan takes only an active one).
    manager: str | None = None
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class DirectoryGroup:
    """One group of the directory: its name as the identity provider spells it, its active members."""

    name: str
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Directory:
    """People and groups, each sorted (people by email, groups by name)."""

    people: tuple[DirectoryPerson, ...] = ()
    groups: tuple[DirectoryGroup, ...] = ()
    # What could not be read as a person or a member, one sentence each, for the user to fix upstream.
    unresolved: tuple[str, ...] = field(default=())

    def leavers(self) -> tuple[DirectoryPerson, ...]:
        """Every person deactivated or deleted, by email."""
        return tuple(p for p in self.people if not p.active)

    def group(self, name: str) -> DirectoryGroup | None:
        """The group called exactly ``name``, or None."""
        for group in self.groups:
            if group.name == name:
                return group
        return None


def person_email(user: Mapping[str, Any]) -> str | None:
    """The email a SCIM User is known by (see the module's docstring), lower-cased; None when it has none."""
    user_name = user.get("userName")
    if isinstance(user_name, str) and "@" in user_name:
        return user_name.strip().lower()
    emails = [e for e in user.get("emails") or () if isinstance(e, Mapping) and isinstance(e.get("value"), str)]
    primary = [e for e in emails if e.get("primary") is True]
    chosen = primary or emails
    return str(chosen[0]["value"]).strip().lower() if chosen else None


def directory_from_scim(users: Iterable[Mapping[str, Any]], groups: Iterable[Mapping[str, Any]], *,
                        since: Mapping[str, date], deleted: Mapping[str, date]) -> Directory:
    """The directory of SCIM ``users`` and ``groups`` (resources as JSON objects).

    ``since`` gives, by user id, the day each inactive user was deactivated;
    ``deleted`` gives, by email, the day each user no longer in ``users`` was
    deleted (the store keeps these: SCIM itself forgets a deleted user).
    """
    unresolved: list[str] = []
    by_id: dict[str, DirectoryPerson] = {}
    users = list(users)
    email_of_id = {str(u.get("id")): person_email(u) for u in users}
    for user in users:
        user_id = str(user.get("id"))
        email = email_of_id[user_id]
        if email is None:
            unresolved.append(f"user {user_id} ({user.get('userName')!r}) has no email address: left out")
            continue
        active = user.get("active", True) is not False
        by_id[user_id] = DirectoryPerson(email=email, active=active, since=None if active else since.get(user_id),
                                         manager=_manager(user, email_of_id))
    people = {p.email: p for p in by_id.values()}
    for email, day in deleted.items():
        if email not in people:
            people[email] = DirectoryPerson(email=email, active=False, since=day, deleted=True)
    active_ids = {i for i, p in by_id.items() if p.active}
    found_groups = []
    for group in groups:
        name = str(group.get("displayName", ""))
        members = set()
        for member in group.get("members") or ():
            value = str(member.get("value")) if isinstance(member, Mapping) else str(member)
            if value in active_ids:
                members.add(by_id[value].email)
            elif value not in by_id:
                unresolved.append(f"group {name!r}: member {value} is no user of the directory: left out")
        found_groups.append(DirectoryGroup(name=name, members=tuple(sorted(members))))
    return Directory(people=tuple(sorted(people.values(), key=lambda p: p.email)),
                     groups=tuple(sorted(found_groups, key=lambda g: g.name)), unresolved=tuple(unresolved))


def _manager(user: Mapping[str, Any], email_of_id: Mapping[str, str | None]) -> str | None:
    extension = user.get(ENTERPRISE_USER)
    if not isinstance(extension, Mapping):
        return None
    manager = extension.get("manager")
    if not isinstance(manager, Mapping):
        return None
    return email_of_id.get(str(manager.get("value")))
