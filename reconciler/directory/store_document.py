"""The directory as one value: the SCIM resources, the days users left, tombstones, and the serial.

``DirectoryDocument`` is what a store's read returns and what its change edits, whichever backend keeps
it (``store`` for the file, ``store_postgres`` for PostgreSQL); it keeps the days as the store's
docstring says.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from reconciler.directory.model import Directory, directory_from_scim, person_email
from reconciler.errors import StateError

# Bumped (and read with a migration) when the document's layout changes; a newer one is refused.
DOCUMENT_FORMAT = 1
USER = "User"
GROUP = "Group"
CORE_SCHEMA = {USER: "urn:ietf:params:scim:schemas:core:2.0:User",
               GROUP: "urn:ietf:params:scim:schemas:core:2.0:Group"}


class DirectoryStoreError(StateError):
    """The directory could not be read or written (a damaged file, a lost server, bad input to mirror)."""


@dataclass
class DirectoryDocument:
    """Everything the store holds, as one value: what a read returns and a change edits.

    Resources are SCIM JSON objects keyed by id; ``deactivated`` gives by user id the day the user
    was first seen inactive; ``deleted`` gives by email the day a deleted user left."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    deactivated: dict[str, date] = field(default_factory=dict)
    deleted: dict[str, date] = field(default_factory=dict)
    serial: int = 0

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        """The users (``"User"``) or the groups (``"Group"``)."""
        return self.users if kind == USER else self.groups

    def put(self, kind: str, resource: dict[str, Any], *, today: date) -> None:
        """Store ``resource`` (created or replaced) and keep the days: see ``put_user``."""
        if kind == USER:
            self.put_user(resource, today=today)
        else:
            self.groups[str(resource["id"])] = resource

    def put_user(self, resource: dict[str, Any], *, today: date) -> None:
        """Store a user; inactive from ``today`` unless it already was (or left before, deleted)."""
        user_id = str(resource["id"])
        if resource.get("active", True) is False:
            if user_id not in self.deactivated:
                email = person_email(resource)
                # A deleted user re-created inactive has been gone since it was deleted.
                self.deactivated[user_id] = self.deleted.get(email, today) if email else today
        else:
            self.deactivated.pop(user_id, None)
        self.users[user_id] = resource
        self._drop_tombstones()

    def remove(self, kind: str, resource_id: str, *, today: date) -> None:
        """Delete a resource; a deleted user leaves a tombstone (its deactivation day, else ``today``)."""
        if kind == GROUP:
            self.groups.pop(resource_id, None)
            return
        user = self.users.pop(resource_id, None)
        day = self.deactivated.pop(resource_id, today)
        email = person_email(user) if user is not None else None
        if email is not None and email not in self._emails():
            self.deleted[email] = min(day, self.deleted.get(email, day))

    def snapshot(self) -> Directory:
        return directory_from_scim(self.users.values(), self.groups.values(), since=self.deactivated,
                                   deleted=self.deleted)

    def copy(self) -> DirectoryDocument:
        return copy.deepcopy(self)

    def _emails(self) -> set[str]:
        return {e for e in (person_email(u) for u in self.users.values()) if e is not None}

    def _drop_tombstones(self) -> None:
        """A tombstone only stands for an email no stored user holds (re-created: back again)."""
        for email in self._emails() & self.deleted.keys():
            del self.deleted[email]
