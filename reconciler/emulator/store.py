"""The emulator's data: companies and everything they own (the objects
themselves are ``entities.py``'s).

Plain dataclasses, no behaviour beyond look-ups and id generation; the rules
live in the route modules and ``access.py``.  ``seed.py`` reads and writes
this structure as the seed YAML described in README.md.

Connected workspaces share one ``AccessList`` object (held by their
``Group``), so a change made through any member shows on all members, as the
description says a group has one set of access settings.

A ``Company``'s look-ups by id and ``members`` go through indexes
(``index.py``) that check every hit against the lists, so appending to a
list needs no bookkeeping; moving a workspace onto another access list goes
through ``Company.share_access``, and replacing a list's entries in place is
reported with ``Company.access_replaced`` (``access.replace_attached`` does
both the replace and the report).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from reconciler.emulator.entities import (
    AccessEntry,
    AccessList,
    Group,
    User,
    Account,
    Deal,
    PlanItem,
    Template,
    Tag,
    CustomField,
    Workspace,
    File,
    Asset,
)
from reconciler.emulator.index import ById, CompanyIndex

T = TypeVar("T")


def iso(seconds: float) -> str:
    """An ISO 8601 UTC date-time with milliseconds and a ``Z``."""
    stamp = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Company:
    name: str
    token: str
    verified: bool = True
    plan: str = "paid"
    credits: int = 0
    users: list[User] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    deals: list[Deal] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    custom_fields: list[CustomField] = field(default_factory=list)
    workspaces: list[Workspace] = field(default_factory=list)
    groups: dict[str, Group] = field(default_factory=dict)
    files: list[File] = field(default_factory=list)
    assets: list[Asset] = field(default_factory=list)
    # An index of ``users`` by email, extended lazily (users are only appended).
    _users_by_email: dict[str, User] = field(default_factory=dict, init=False, repr=False, compare=False)
    _users_indexed: int = field(default=0, init=False, repr=False, compare=False)

    # Look-ups by id. The lists stay the source of truth and of order; the
    # indexes (``index.py``) only remember positions, check every hit and
    # fall back to the scan these look-ups always were, so they can never
    # go stale in a way that changes an answer.
    _index: CompanyIndex = field(default_factory=CompanyIndex, init=False, repr=False, compare=False)
    _by_id: dict[str, ById[Any]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _lookup(self, collection: str, items: Sequence[T], key: str) -> T | None:
        index = self._by_id.get(collection)
        if index is None:
            index = self._by_id[collection] = ById()
        found: T | None = index.get(items, key)
        return found

    def workspace(self, wid: str) -> Workspace | None:
        return self._index.workspace(self.workspaces, wid)

    def account(self, aid: str | None) -> Account | None:
        return self._lookup("accounts", self.accounts, aid) if aid else None

    def deal(self, did: str | None) -> Deal | None:
        return self._lookup("deals", self.deals, did) if did else None

    def template(self, tid: str) -> Template | None:
        return self._lookup("templates", self.templates, tid)

    def tag(self, tid: str) -> Tag | None:
        return self._lookup("tags", self.tags, tid)

    def file(self, fid: str) -> File | None:
        return self._lookup("files", self.files, fid)

    def asset(self, aid: str) -> Asset | None:
        return self._lookup("assets", self.assets, aid)

    def custom_field(self, cid: str) -> CustomField | None:
        return self._lookup("custom_fields", self.custom_fields, cid)

    def access_entry(self, entry_id: str, *, domains: bool) -> tuple[AccessList, AccessEntry] | None:
        """The list and the user (or domain) entry with ``entry_id``: the
        first on the company's distinct lists, in workspace order."""
        return self._index.entry(self.workspaces, entry_id, domains=domains)

    def plan_item(self, kind: str, item_id: str) -> PlanItem | None:
        """The first section, page or task (``kind`` is the workspace
        attribute: ``sections``, ``pages``, ``tasks``) with ``item_id``."""
        return self._index.plan_item(self.workspaces, kind, item_id)

    def share_access(self, ws: Workspace, access: AccessList) -> None:
        """Put ``ws`` on the access list ``access`` (connect). Assign
        ``Workspace.access`` of a workspace the company holds only through
        this, so that ``members`` keeps up."""
        self._index.share_access(self.workspaces, ws, access)

    def access_replaced(self, access: AccessList, old_users: list[AccessEntry],
                        old_domains: list[AccessEntry]) -> None:
        """``access``'s entries were replaced in place (they were
        ``old_users`` / ``old_domains``): keeps the entry index in step."""
        self._index.access_replaced(self.workspaces, access, old_users, old_domains)

    def user_by_email(self, email: str) -> User | None:
        # Rendering every access entry looks its person up; a linear scan made
        # listing a 5,000-workspace company quadratic. Users are only ever
        # appended, so the index is extended rather than rebuilt.
        for user in self.users[self._users_indexed:]:
            self._users_by_email.setdefault(user.email, user)
        self._users_indexed = len(self.users)
        return self._users_by_email.get(email)

    def access_lists(self) -> list[AccessList]:
        """Every distinct access list of the company, in workspace order."""
        seen: dict[int, AccessList] = {}
        for ws in self.workspaces:
            seen.setdefault(id(ws.access), ws.access)
        return list(seen.values())

    def members(self, access: AccessList) -> list[Workspace]:
        """The workspaces sharing ``access``, in workspace order."""
        return self._index.members(self.workspaces, access)


class IdSource:
    """Deterministic ids ``<prefix>_<n>``.

    Numbers only go up (the next number per prefix is persisted with the
    store), so an id removed once is never handed out again, and every id
    ever loaded is skipped.
    """

    def __init__(self, next_numbers: dict[str, int] | None = None) -> None:
        self.next_numbers: dict[str, int] = dict(next_numbers or {})
        self.taken: set[str] = set()

    def claim(self, existing: str) -> None:
        """Record an id that came from the seed so it is never generated."""
        self.taken.add(existing)

    def new(self, prefix: str) -> str:
        n = self.next_numbers.get(prefix, 1)
        while f"{prefix}_{n}" in self.taken:
            n += 1
        self.next_numbers[prefix] = n + 1
        new_id = f"{prefix}_{n}"
        self.taken.add(new_id)
        return new_id


@dataclass
class Store:
    companies: dict[str, Company] = field(default_factory=dict)
    ids: IdSource = field(default_factory=IdSource)

    def company_by_token(self, token: str) -> Company | None:
        return next((c for c in self.companies.values() if c.token == token), None)
