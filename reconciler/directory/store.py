"""The directory kept in the state backend: SCIM Users and Groups, the day each user left, tombstones.

``--state`` names where the directory lives, as it names the state:

- a state file ``path/state.json`` -> the directory in ``path/state.json.directory.json``: one JSON
  document, written whole and atomically (a temp file, fsynced, ``os.replace``d), every
  read-modify-write under an exclusive ``flock`` of ``path/state.json.directory.json.lock``, so two
  processes (or two threads) never lose an update; a read needs no lock (a replace is atomic).
- a PostgreSQL state -> the table ``directory`` in the state's schema (``store_postgres``), one row per
  resource keyed by the state's ``key``; each write is one transaction that first locks the key's serial
  row ``FOR UPDATE``.

What is kept beside the resources, because SCIM itself forgets it:

- the day (UTC) the store first saw each user inactive (created inactive, or changed to ``active:
  false``); making the user active again clears it;
- a tombstone (email, day) for each deleted user, its day the day it left (the day it was deactivated,
  when it was inactive before it was deleted); re-creating a user with that email clears it;
- a serial, bumped by every write: a resource's ``meta.version`` is the serial of the write that last
  changed it, so versions never repeat across processes or restarts.

``DirectoryStore.change`` is the one read-modify-write: the SCIM server (``store_scim``) and ``mirror``
both go through it.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from reconciler.directory.model import Directory, person_email
from reconciler.directory.store_document import (
    CORE_SCHEMA, DOCUMENT_FORMAT, GROUP, USER, DirectoryDocument, DirectoryStoreError,
)
from reconciler.owned_files import MAX_STATE_BYTES, read_owned, write_owned

__all__ = ["DirectoryDocument", "DirectoryStore", "DirectoryStoreError", "MirrorCounts", "directory_path",
           "open_directory_store"]

T = TypeVar("T")
Now = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class MirrorCounts:
    """What one ``mirror`` stored and what it changed."""

    users: int
    groups: int
    deactivated: int  # users who were active (or unknown) and are stored inactive since today
    deleted: int  # users who were stored and are gone, tombstoned in this write


class DirectoryBackend(Protocol):
    """Where the document is kept: read whole, or changed under an exclusive lock."""

    address: str
    where: str

    def read(self) -> DirectoryDocument: ...

    def change(self, edit: Callable[[DirectoryDocument], T]) -> T: ...

    def close(self) -> None: ...


class DirectoryStore:
    """The directory of one state (see the module's docstring).

    ``now`` is the clock every write reads (``meta`` times, and the day, in UTC, a user is
    seen inactive or deleted); tests pass a fixed one."""

    def __init__(self, backend: DirectoryBackend, *, now: Now = utc_now) -> None:
        self.backend = backend
        self.now = now
        # One call at a time per store: a PostgreSQL store has one session, which two threads cannot share.
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        """The state's address, for messages (a password is never in one: it is refused)."""
        return self.backend.address

    @property
    def where(self) -> str:
        """The directory itself, in words for messages (a file's path, a table)."""
        return self.backend.where

    def today(self) -> date:
        return self.now().astimezone(UTC).date()

    def read(self) -> DirectoryDocument:
        """The whole document as stored now (a copy: editing it changes nothing)."""
        with self._lock:
            return self.backend.read()

    def change(self, edit: Callable[[DirectoryDocument], T]) -> T:
        """Run ``edit`` on the stored document under the exclusive lock and write what it changed, with the
        serial bumped; when ``edit`` raises, nothing is written. ``edit`` may read ``document.serial + 1``,
        the serial this write gets. ``edit`` must not call the store."""
        with self._lock:
            return self.backend.change(edit)

    def snapshot(self) -> Directory:
        """The directory as the model says: people (leaver days and tombstones included) and groups."""
        return self.read().snapshot()

    def mirror(self, users: Sequence[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]], *,
               today: date) -> MirrorCounts:
        """Replace every user and group with these (SCIM JSON as a source served them, ids kept) in one write:
        a user that was active and is now inactive is a leaver since ``today``; a user that is gone is deleted
        since ``today`` (tombstone by email; since the day it was deactivated, when it was inactive); an
        unchanged leaver keeps its first day. ``DirectoryStoreError`` for a resource without an id (nothing
        is written)."""
        new_users = _by_id(USER, users)
        new_groups = _by_id(GROUP, groups)
        now = self.now()

        def edit(document: DirectoryDocument) -> MirrorCounts:
            version = f'W/"{document.serial + 1}"'
            before = document.copy()
            old_email_ids = {person_email(u): i for i, u in before.users.items()}
            document.users, document.groups, document.deactivated = {}, {}, {}
            deactivated = 0
            for user_id, user in new_users.items():
                resource = _with_meta(USER, user, version, now)
                document.users[user_id] = resource
                if resource.get("active", True) is not False:
                    continue
                email = person_email(resource)
                old_id = user_id if user_id in before.users else old_email_ids.get(email) if email else None
                day = before.deactivated.get(old_id) if old_id is not None else None
                if day is None and email is not None:
                    day = before.deleted.get(email)
                deactivated += day is None
                document.deactivated[user_id] = day or today
            for group_id, group in new_groups.items():
                document.groups[group_id] = _with_meta(GROUP, group, version, now)
            emails = document._emails()
            document.deleted = {e: d for e, d in before.deleted.items() if e not in emails}
            deleted = 0
            for old_id, old in before.users.items():
                email = person_email(old)
                if email is not None and email not in emails and email not in document.deleted:
                    document.deleted[email] = before.deactivated.get(old_id, today)
                    deleted += 1
            return MirrorCounts(users=len(document.users), groups=len(document.groups),
                                deactivated=deactivated, deleted=deleted)

        return self.change(edit)

    def close(self) -> None:
        """Release the backend's connection, if any."""
        with self._lock:
            self.backend.close()

    def __enter__(self) -> DirectoryStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def open_directory_store(state_address: str, *, now: Now = utc_now) -> DirectoryStore:
    """The directory of the state ``state_address`` (a file path, or a ``postgresql://`` address)."""
    from reconciler.state.backend import is_postgres_address

    if is_postgres_address(state_address):
        from reconciler.directory.store_postgres import PostgresDirectory

        return DirectoryStore(PostgresDirectory(state_address), now=now)
    return DirectoryStore(FileDirectory(Path(state_address)), now=now)


def directory_path(state_path: Path) -> Path:
    """The directory file beside the state file ``state_path``."""
    return state_path.with_name(state_path.name + ".directory.json")


def _by_id(kind: str, resources: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for number, resource in enumerate(resources, start=1):
        resource_id = resource.get("id") if isinstance(resource, Mapping) else None
        if not isinstance(resource_id, str | int) or isinstance(resource_id, bool) or str(resource_id) == "":
            raise DirectoryStoreError(f"{kind} {number} of the {len(resources)} to store has no id, so it could not "
                                      "be kept under the id its source knows it by. Nothing was written.")
        if str(resource_id) in found:
            raise DirectoryStoreError(f"Two {kind.lower()}s to store have the id {str(resource_id)!r}. Nothing was "
                                      "written.")
        found[str(resource_id)] = copy.deepcopy(dict(resource))
    return found


def _with_meta(kind: str, resource: dict[str, Any], version: str, now: datetime) -> dict[str, Any]:
    """``resource`` with the ``meta`` the store keeps (its type, this write's version) and its schema."""
    resource = {**resource, "id": str(resource["id"])}
    meta = resource.get("meta") if isinstance(resource.get("meta"), Mapping) else {}
    stamp = now.isoformat()
    resource["meta"] = {"created": stamp, "lastModified": stamp, **{
        k: v for k, v in dict(meta or {}).items() if k in ("created", "lastModified")},
        "resourceType": kind, "version": version}
    if not resource.get("schemas"):
        resource["schemas"] = [CORE_SCHEMA[kind]]
    return resource


# -- the file ----------------------------------------------------------------------------------------------


class FileDirectory:
    """The directory beside a state file (the module's docstring)."""

    def __init__(self, state_path: Path) -> None:
        self.path = directory_path(state_path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.address = str(state_path)
        self.where = str(self.path)

    def read(self) -> DirectoryDocument:
        data = read_owned(self.path, what="directory file", limit=MAX_STATE_BYTES, error=DirectoryStoreError)
        return DirectoryDocument() if data is None else document_from_json(data, where=f"The directory file "
                                                                                           f"{self.path}")

    def change(self, edit: Callable[[DirectoryDocument], T]) -> T:
        with self._locked():
            document = self.read()
            serial = document.serial
            result = edit(document)
            document.serial = serial + 1
            write_owned(self.path, document_json(document), what="directory file", error=DirectoryStoreError)
            return result

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The exclusive lock of the directory: ``flock`` of a lock file beside it, which the kernel
        releases when the process ends however it ends (no stale lock)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:
            raise DirectoryStoreError(f"Cannot open the directory's lock file {self.lock_path}: "
                                      f"{exc.strerror or exc}. Nothing was written.") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock

    def close(self) -> None:
        """Nothing is held between calls."""


def document_json(document: DirectoryDocument) -> bytes:
    """The document as the file holds it: sorted, so the same directory is the same bytes."""
    body = {
        "format": DOCUMENT_FORMAT,
        "serial": document.serial,
        "users": [document.users[i] for i in sorted(document.users)],
        "groups": [document.groups[i] for i in sorted(document.groups)],
        "deactivated": {i: d.isoformat() for i, d in sorted(document.deactivated.items())},
        "deleted": {e: d.isoformat() for e, d in sorted(document.deleted.items())},
    }
    return (json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def document_from_json(data: bytes, *, where: str) -> DirectoryDocument:
    """``data`` (as ``document_json`` writes it) read back; ``DirectoryStoreError`` naming ``where``."""
    from reconciler.text import parse_json

    try:
        body = parse_json(data)
        if not isinstance(body, dict):
            raise ValueError("it is not a JSON object")
        version = body.get("format")
        if not isinstance(version, int) or version > DOCUMENT_FORMAT:
            raise DirectoryStoreError(
                f"{where} has format {version!r}; this reconciler reads format {DOCUMENT_FORMAT}. It was written "
                "by a newer reconciler: upgrade this one. Nothing was done.")
        return DirectoryDocument(
            users=_resources(body.get("users"), "users"), groups=_resources(body.get("groups"), "groups"),
            deactivated={str(i): date.fromisoformat(d) for i, d in dict(body.get("deactivated") or {}).items()},
            deleted={str(e): date.fromisoformat(d) for e, d in dict(body.get("deleted") or {}).items()},
            serial=int(body.get("serial", 0)))
    except DirectoryStoreError:
        raise
    except (ValueError, TypeError, AttributeError) as exc:
        raise DirectoryStoreError(f"{where} is not a directory reconciler wrote ({exc}). Nothing was done; "
                                  "restore it from a backup, or remove it and let the identity provider "
                                  "provision again.") from None


def _resources(value: object, name: str) -> dict[str, dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in value):
        raise ValueError(f"its {name!r} is not a list of resources with an id")
    return {r["id"]: r for r in value}
