"""Live: what the service reports, fetched once per command.

The dataclasses here are what the planner reads; the fetch function is the
only place that talks to the client.  ``plan/`` imports these types but never
the client, so the planner stays pure (the client is only imported for type
checking).
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring_ascii as _ascii  # what json.dumps writes a str as (ensure_ascii)
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from reconciler.gcpause import gc_paused
from reconciler.vocabulary import Role

if TYPE_CHECKING:  # pragma: no cover - typing only
    from reconciler.api.client import WorkspaceClient
    from reconciler.api.models import ListedWorkspace, Workspace

# The smallest selection the plan needs: who has which role, and the ids of
# the entries (they come unasked) so role changes can be PATCHed.
ACCESS_PROPERTIES: tuple[str, ...] = (
    "name",
    "workspaceUsers.role",
    "workspaceUsers.user.email",
    "workspaceDomains.domain",
    "workspaceDomains.role",
)


# What the plan reads besides access: the account (members must share the
# homepage's), the template and the fields fixed at creation (drift the API
# cannot fix, and recognising a workspace an earlier apply created).
PLAN_PROPERTIES: tuple[str, ...] = (
    *ACCESS_PROPERTIES,
    "accountId",
    "templateId",
    "startDate",
    "targetEndDate",
    "actualEndDate",
    "deal.crmOneDealId",
    "deal.crmTwoOpportunityId",
)


class LiveEntry(NamedTuple):
    """One user or domain on an access list; ``key`` is the email or domain.

    A tuple, not a frozen dataclass: a listing of 10,000 workspaces holds 250,000 of them, and
    a frozen dataclass's ``__init__`` (three ``object.__setattr__`` calls) made them cost half
    of reading the listing's bodies (``read_workspace``)."""

    id: str
    key: str
    role: Role


_ENTRY_ID = itemgetter(0)  # LiveEntry.id, read in C


@dataclass(frozen=True)
class LiveWorkspace:
    id: str
    name: str | None
    users: dict[str, LiveEntry] = field(default_factory=dict)
    domains: dict[str, LiveEntry] = field(default_factory=dict)
    account_id: str | None = None
    template_id: str | None = None
    start_date: str | None = None
    target_end_date: str | None = None
    actual_end_date: str | None = None
    crm_one_deal_id: str | None = None
    crm_two_opportunity_id: str | None = None
    # Read only when the listing asks for account.name (the company read does).
    account_name: str | None = None
    # When the service reports it (an adopted creation must be younger than its intent).
    created_at: str | None = None

    def entry_ids(self) -> frozenset[str]:
        """The ids of its user and domain entries (a group's members show the same ones)."""
        return frozenset(e.id for e in (*self.users.values(), *self.domains.values()) if e.id)

    def access_fingerprint(self) -> dict[str, dict[str, Role]]:
        """Who has which role: what a conflicting change would alter."""
        return {
            "users": {k: e.role for k, e in sorted(self.users.items())},
            "domains": {k: e.role for k, e in sorted(self.domains.items())},
        }

    def access_fingerprint_json(self) -> str:
        """Exactly ``json.dumps(self.access_fingerprint(), sort_keys=True)``, written straight from the
        entries: ``Live.fingerprint`` writes one per workspace (a dict of dicts and the encoder's pass over
        it: 0.1 s at 10,000 workspaces, in every plan)."""
        return f'{{"domains": {_roles_json(self.domains)}, "users": {_roles_json(self.users)}}}'


def _roles_json(entries: Mapping[str, LiveEntry]) -> str:
    """``key -> role`` of ``entries`` as ``json.dumps(sort_keys=True)`` writes it (ASCII, ", " and ": ")."""
    return "{" + ", ".join([f"{_ascii(key)}: {'null' if entry.role is None else _ascii(entry.role)}"
                            for key, entry in sorted(entries.items())]) + "}"


@dataclass(frozen=True)
class Live:
    workspaces: dict[str, LiveWorkspace]
    # Pages read to build this value; the plan uses it to cost the refresh
    # that apply does before writing.
    pages_read: int = 0
    # True when every workspace of the company was listed (not stopped early):
    # only then can the plan look for workspaces it does not know and count them.
    complete: bool = False
    # pageInfo.total of the listing: how many workspaces the company has,
    # known from the first page even when the listing stopped early.
    reported_total: int | None = None

    @cached_property
    def sharing(self) -> dict[str, set[str]]:
        """``shared_entries`` of every workspace listed, worked out once: a plan asks it of one listing up to
        four times (groups, standalone workspaces, what the rules govern), 0.4 s each at 10,000 (issue 40).
        Where no entry id shows twice in the whole listing (no list connected by hand, most companies),
        that is seen at once over every id, in C, and nothing is worked out workspace by workspace (a set of
        ids for each: 0.1 s at 10,000, in every plan)."""
        ids = list(filter(None, map(_ENTRY_ID, chain.from_iterable(chain.from_iterable(
            (w.users.values(), w.domains.values()) for w in self.workspaces.values())))))
        if len(set(ids)) == len(ids):
            return {}
        return shared_entries({w.id: w.entry_ids() for w in self.workspaces.values()})

    @property
    def total(self) -> int | None:
        """How many workspaces the company has, when the listing was complete."""
        return len(self.workspaces) if self.complete else None

    def fingerprint(self, workspace_ids: Collection[str]) -> str:
        """A digest of the access of ``workspace_ids``: binds a saved plan.

        The sha256 of ``json.dumps({id: access_fingerprint() or None, ...}, sort_keys=True)``, fed a
        workspace at a time (the same bytes: the ids in sorted order, the default separators), never built
        whole: at 10,000 lists the text and its dict were 35 MiB at the plan's peak (issue 40)."""
        digest = hashlib.sha256(b"{")
        for number, wid in enumerate(sorted(set(workspace_ids))):
            ws = self.workspaces.get(wid)
            item = ws.access_fingerprint_json() if ws is not None else "null"
            digest.update(f"{', ' if number else ''}{json.dumps(wid)}: {item}".encode())
        digest.update(b"}")
        return digest.hexdigest()


def shared_entries(entry_ids: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Workspace id → the other workspaces showing any of its access entry ids.

    Connected workspaces share one access list, so the same entry (the same
    id) appears on each of them: a strong hint of a group the API will not
    name.  ``reconciler export`` writes it as a comment; the plan uses it to
    find a group's members no manifest names, which a change of the group's
    list reaches too.  Workspaces sharing nothing are left out.
    """
    # An entry id -> the first workspace showing it, and a set only for the ids more than one shows: a set
    # per id of 250,000 was 60 MiB at the plan's peak (issue 40), and most entries are on one workspace.
    first: dict[str, str] = {}
    held: dict[str, set[str]] = {}
    for workspace_id, ids in entry_ids.items():
        for entry_id in ids:
            seen = first.setdefault(entry_id, workspace_id)
            if seen != workspace_id:
                holders = held.get(entry_id)
                if holders is None:
                    held[entry_id] = {seen, workspace_id}
                else:
                    holders.add(workspace_id)
    sharing: dict[str, set[str]] = {}
    for holders in held.values():
        for workspace_id in holders:
            sharing.setdefault(workspace_id, set()).update(holders)
    for workspace_id, others in sharing.items():
        others.discard(workspace_id)
    return sharing


def one_list_each(workspaces: Iterable[LiveWorkspace], sharing: Mapping[str, Collection[str]],
                  joined: Iterable[tuple[str, str]] = ()) -> list[list[str]]:
    """The workspace ids grouped by the access list they hold: those showing
    the same entry ids share one list (``sharing``: ``Live.sharing`` of the
    listing that holds them, taken transitively among ``workspaces``), and so
    does each pair of ``joined`` (known to be in one group).  Each group
    sorted, the groups in the order of their first workspace; a workspace
    sharing nothing is a group of its own.  Union-find over the workspaces
    that share: reading every entry id again cost 0.3 s at 10,000 workspaces,
    twice a plan (issue 40)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression: the walk stays short at any size
            parent[x], x = root, parent[x]
        return root

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    ids = [ws.id for ws in workspaces]
    known = set(ids)
    for workspace_id in ids:
        for other in sharing.get(workspace_id, ()):
            if other in known:
                union(workspace_id, other)
    for a, b in joined:
        if a in known and b in known:
            union(a, b)
    groups: dict[str, list[str]] = {}
    for workspace_id in ids:
        groups.setdefault(find(workspace_id), []).append(workspace_id)
    return [sorted(group) for group in groups.values()]


@gc_paused()
def fetch_live(
    client: WorkspaceClient,
    wanted: Collection[str],
    *,
    complete: bool = False,
    properties: tuple[str, ...] = ACCESS_PROPERTIES,
) -> Live:
    """List workspaces page by page until every wanted id has been seen.

    Stopping early saves pages when the managed workspaces come first; an id
    that is never seen simply stays absent, and the planner reports it.
    ``complete`` lists every workspace (the plan needs them all before it
    creates any: to find one an earlier apply created, and to count them).
    """
    wanted_set = set(wanted)
    found: dict[str, LiveWorkspace] = {}
    calls_before = client.stats.calls
    for ws in client.list_workspace_access(properties=properties):
        if complete or ws["id"] in wanted_set:
            found[ws["id"]] = read_listed(ws)
            if not complete and wanted_set <= found.keys():
                break
    return Live(workspaces=found, pages_read=client.stats.calls - calls_before, complete=complete,
                reported_total=client.listed_total)


def read_workspace(ws: Workspace) -> LiveWorkspace:
    """Who has which role on a workspace the service answered with (a write's answer), as the planner
    reads it."""
    return read_listed(ws.model_dump())  # type: ignore[arg-type]  # the model's fields, as a listing has them


def read_listed(ws: ListedWorkspace) -> LiveWorkspace:
    """Who has which role on a workspace of a listing, as the planner reads it."""
    new = tuple.__new__  # a NamedTuple's own __new__ is a Python function: 250,000 calls at 10,000 workspaces
    users: dict[str, LiveEntry] = {}
    for wu in ws.get("workspaceUsers") or ():
        user = wu.get("user")
        email = ((user.get("email") if user is not None else None) or "").lower()
        users[email] = new(LiveEntry, (wu["id"], email, wu.get("role")))
    domains: dict[str, LiveEntry] = {}
    for wd in ws.get("workspaceDomains") or ():
        domain = (wd.get("domain") or "").lower().rstrip(".")
        domains[domain] = new(LiveEntry, (wd["id"], domain, wd.get("role")))
    deal = ws.get("deal") or {}
    account = ws.get("account") or {}
    return LiveWorkspace(
        id=ws["id"],
        name=ws.get("name"),
        users=users,
        domains=domains,
        account_id=ws.get("accountId") or account.get("id"),
        template_id=ws.get("templateId"),
        start_date=ws.get("startDate"),
        target_end_date=ws.get("targetEndDate"),
        actual_end_date=ws.get("actualEndDate"),
        crm_one_deal_id=deal.get("crmOneDealId"),
        crm_two_opportunity_id=deal.get("crmTwoOpportunityId"),
        account_name=account.get("name"),
        created_at=ws.get("createdAt"),
    )
