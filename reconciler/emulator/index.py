"""Indexes over a company's data, so that the requests plan and apply make
cost O(1) or O(page) instead of a scan of the whole company: a workspace by
id, the workspaces sharing an access list (touched by every access change),
one access entry by id (``PATCH /workspace-users/{id}``,
``PATCH /workspace-domains/{id}``), one section, page or task by id, and an
account, deal, template, tag, file, asset or custom field by id (rendering a
page of ``GET /workspaces`` looks up each workspace's account and deal).

The company's lists stay the one source of truth and of order; an index only
remembers where things are, and never changes an answer (given the one rule
below):

- it is built on first use and extended as ``Company.workspaces`` (or the
  list it covers) grows — routes and seeds only ever append — and rebuilt
  from scratch when that list shrank or was replaced by another list;
- every hit is checked against the lists before it is used: the workspace
  is still at the remembered position, the entry is still on the remembered
  access list and that list still belongs to one of the company's
  workspaces, the plan item is still on the remembered workspace;
- a miss, or a hit that fails the check, is answered by the same scan the
  emulator always made (so an unknown id costs what it always did), and when
  that scan finds something the index had gone stale and is rebuilt on the
  next look-up;
- an id found on more than one object when the index was built (a seed may
  repeat explicit ids) is always answered by the scan, whose first match is
  the answer.

The rule: a workspace of the company moves onto another access list only
through ``Company.share_access`` (connect, and groups formed by a seed),
since a check cannot see a workspace that joined a list and ``members``
would miss it. The routes also report an in-place replace of a list's
entries (``Company.access_replaced``: ``POST /access``, creation from a
template with lists); that one only saves time, since without it a look-up
of a new entry would take the scan once and rebuild. A write undone after a failed save replaces the store's
companies with ones read back from the data file, and their indexes start
empty, so nothing of the undone change survives in an index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reconciler.emulator.entities import AccessEntry, AccessList, PlanItem, Workspace

PLAN_ITEM_KINDS = ("sections", "pages", "tasks")


class _HasId(Protocol):
    id: str


T = TypeVar("T", bound=_HasId)
V = TypeVar("V")


class ById(Generic[T]):
    """Id -> first position in one list of the company (accounts, deals, ...)."""

    def __init__(self) -> None:
        self._source: Sequence[T] | None = None
        self._count = 0
        self._first: dict[str, int] = {}
        self._repeated: set[str] = set()

    def get(self, items: Sequence[T], key: str) -> T | None:
        """The first item of ``items`` whose id is ``key``, as
        ``next(x for x in items if x.id == key)`` would find it."""
        if items is not self._source or len(items) < self._count:
            self._source, self._count = items, 0
            self._first.clear()
            self._repeated.clear()
        for pos in range(self._count, len(items)):
            item_id = items[pos].id
            if item_id in self._first:
                self._repeated.add(item_id)
            else:
                self._first[item_id] = pos
        self._count = len(items)
        if key not in self._repeated:
            first = self._first.get(key)
            if first is not None and items[first].id == key:
                return items[first]
        found = next((x for x in items if x.id == key), None)
        if found is not None and key not in self._repeated:
            self._source = None  # stale (an id changed in place): rebuilt on the next look-up
        return found


class CompanyIndex:
    """Where each workspace, access list, access entry and plan item of one
    company is (see the module docstring for why it cannot go wrong)."""

    def __init__(self) -> None:
        self._source: list[Workspace] | None = None
        self._count = 0
        self._position: dict[str, int] = {}          # workspace id -> first position
        self._place: dict[int, int] = {}              # id(workspace) -> its position
        # id(access list) -> (the list, its workspaces in workspace order)
        self._members: dict[int, tuple[AccessList, list[Workspace]]] = {}
        # entry id -> the access list holding it; users and domains apart
        self._entries: tuple[dict[str, AccessList], dict[str, AccessList]] = ({}, {})
        # plan item id -> the workspace holding it, per kind
        self._items: dict[str, dict[str, Workspace]] = {kind: {} for kind in PLAN_ITEM_KINDS}
        # (kind, id) found on more than one object: answered by the scan
        self._repeated: set[tuple[str, str]] = set()

    # -- keeping up with the list ---------------------------------------------
    def _reset(self, workspaces: list[Workspace] | None) -> None:
        self._source, self._count = workspaces, 0
        self._position.clear()
        self._place.clear()
        self._members.clear()
        for entries in self._entries:
            entries.clear()
        for items in self._items.values():
            items.clear()
        self._repeated.clear()

    def _sync(self, workspaces: list[Workspace]) -> None:
        if workspaces is not self._source or len(workspaces) < self._count:
            self._reset(workspaces)
        for pos in range(self._count, len(workspaces)):
            self._add(pos, workspaces[pos])
        self._count = len(workspaces)

    def _add(self, pos: int, ws: Workspace) -> None:
        if ws.id in self._position:
            self._repeated.add(("ws", ws.id))
        else:
            self._position[ws.id] = pos
        self._place[id(ws)] = pos
        held = self._members.get(id(ws.access))
        if held is not None and held[0] is ws.access:
            held[1].append(ws)  # the last position so far: workspace order is kept
        else:
            self._members[id(ws.access)] = (ws.access, [ws])
            self._note_entries(ws.access)
        for kind in PLAN_ITEM_KINDS:
            items = self._items[kind]
            for item in getattr(ws, kind):
                self._note(items, kind, item.id, ws)

    def _note(self, mapping: dict[str, V], kind: str, key: str, value: V) -> None:
        held = mapping.get(key)
        if held is None:
            mapping[key] = value
        elif held is not value:
            self._repeated.add((kind, key))

    def _note_entries(self, access: AccessList) -> None:
        for domains, entries in ((False, access.users), (True, access.domains)):
            mapping = self._entries[domains]
            kind = "wd" if domains else "wu"
            for entry in entries:
                self._note(mapping, kind, entry.id, access)

    def _drop_entries(self, access: AccessList, entries: Sequence[AccessEntry], *, domains: bool) -> None:
        mapping = self._entries[domains]
        for entry in entries:
            if mapping.get(entry.id) is access:
                del mapping[entry.id]

    def _holds(self, workspaces: list[Workspace], ws: Workspace) -> bool:
        pos = self._place.get(id(ws))
        return pos is not None and pos < len(workspaces) and workspaces[pos] is ws

    def _live(self, workspaces: list[Workspace], access: AccessList) -> bool:
        """``access`` is the list of some workspace of the company."""
        held = self._members.get(id(access))
        return (held is not None and held[0] is access
                and any(m.access is access and self._holds(workspaces, m) for m in held[1]))

    # -- look-ups ---------------------------------------------------------------
    def workspace(self, workspaces: list[Workspace], wid: str) -> Workspace | None:
        self._sync(workspaces)
        if ("ws", wid) not in self._repeated:
            pos = self._position.get(wid)
            if pos is not None and workspaces[pos].id == wid:
                return workspaces[pos]
        found = next((w for w in workspaces if w.id == wid), None)
        if found is not None and ("ws", wid) not in self._repeated:
            self._source = None
        return found

    def members(self, workspaces: list[Workspace], access: AccessList) -> list[Workspace]:
        self._sync(workspaces)
        held = self._members.get(id(access))
        if (held is not None and held[0] is access
                and all(m.access is access and self._holds(workspaces, m) for m in held[1])):
            return list(held[1])
        found = [w for w in workspaces if w.access is access]
        if found:
            self._source = None
        return found

    def entry(self, workspaces: list[Workspace], entry_id: str, *,
              domains: bool) -> tuple[AccessList, AccessEntry] | None:
        self._sync(workspaces)
        kind = "wd" if domains else "wu"
        if (kind, entry_id) not in self._repeated:
            access = self._entries[domains].get(entry_id)
            if access is not None and self._live(workspaces, access):
                for entry in access.domains if domains else access.users:
                    if entry.id == entry_id:
                        return access, entry
        found = scan_entry(workspaces, entry_id, domains=domains)
        if found is not None and (kind, entry_id) not in self._repeated:
            self._source = None
        return found

    def plan_item(self, workspaces: list[Workspace], kind: str, item_id: str) -> PlanItem | None:
        self._sync(workspaces)
        if (kind, item_id) not in self._repeated:
            ws = self._items[kind].get(item_id)
            if ws is not None and self._holds(workspaces, ws):
                for item in plan_items(ws, kind):
                    if item.id == item_id:
                        return item
        found = scan_plan_item(workspaces, kind, item_id)
        if found is not None and (kind, item_id) not in self._repeated:
            self._source = None
        return found

    # -- changes the checks cannot see -------------------------------------------
    def share_access(self, workspaces: list[Workspace], ws: Workspace, access: AccessList) -> None:
        """Put ``ws`` on ``access`` (connect), keeping the members in step."""
        self._sync(workspaces)
        old = ws.access
        ws.access = access
        if old is access or not self._holds(workspaces, ws):
            return
        held = self._members.get(id(old))
        if held is not None and held[0] is old:
            held[1][:] = [m for m in held[1] if m is not ws]
            if not held[1]:
                del self._members[id(old)]
                self._drop_entries(old, old.users, domains=False)
                self._drop_entries(old, old.domains, domains=True)
        joined = self._members.get(id(access))
        if joined is None or joined[0] is not access:
            self._members[id(access)] = (access, [ws])
            self._note_entries(access)
            return
        pos = self._place[id(ws)]
        at = next((i for i, m in enumerate(joined[1]) if self._place.get(id(m), -1) > pos), len(joined[1]))
        joined[1].insert(at, ws)

    def access_replaced(self, workspaces: list[Workspace], access: AccessList, old_users: Sequence[AccessEntry],
                        old_domains: Sequence[AccessEntry]) -> None:
        """``access``'s entries were replaced in place: forget the entries
        that went, remember the new ones."""
        self._sync(workspaces)
        held = self._members.get(id(access))
        if held is None or held[0] is not access:
            return  # not a list of the company's: nothing indexed
        kept_users = {e.id for e in access.users}
        kept_domains = {e.id for e in access.domains}
        self._drop_entries(access, [e for e in old_users if e.id not in kept_users], domains=False)
        self._drop_entries(access, [e for e in old_domains if e.id not in kept_domains], domains=True)
        self._note_entries(access)


def scan_entry(workspaces: list[Workspace], entry_id: str, *,
               domains: bool) -> tuple[AccessList, AccessEntry] | None:
    """The first entry ``entry_id`` on the company's distinct lists, in
    workspace order: the emulator's answer, which the index stands in for."""
    seen: set[int] = set()
    for ws in workspaces:
        if id(ws.access) in seen:
            continue
        seen.add(id(ws.access))
        for entry in ws.access.domains if domains else ws.access.users:
            if entry.id == entry_id:
                return ws.access, entry
    return None


def scan_plan_item(workspaces: list[Workspace], kind: str, item_id: str) -> PlanItem | None:
    """The first section, page or task (``kind``) with ``item_id``, in workspace order."""
    for ws in workspaces:
        for item in plan_items(ws, kind):
            if item.id == item_id:
                return item
    return None


def plan_items(ws: Workspace, kind: str) -> list[PlanItem]:
    """The workspace's sections, pages or tasks (``kind``, one of ``PLAN_ITEM_KINDS``)."""
    items: list[PlanItem] = getattr(ws, kind)
    return items
