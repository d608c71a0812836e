"""Who has access where, and why: the company read as a pure function.

``company_access(desired, live, state)`` pairs each live entry of each
workspace with the manifest line that grants it.  It does no I/O: the
listing is read before (``reconciler.company.read``), so a test can build
all three inputs by hand.

Precedence is the manifests': an entry of the list wins over a team the
list names, which wins over a rule matching the workspace; what none of them
grants is "not managed".  A group's list is on every workspace of the group:
the homepage, the members the manifests declare or the state records, and
the workspaces that show the homepage's access entries (connected by hand;
``reconciler.live.shared_entries``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import date
from typing import NamedTuple

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Why
from reconciler.live import Live, LiveEntry, LiveWorkspace, shared_entries
from reconciler.manifest.desired import AccessList, Desired
from reconciler.manifest.location import SourceLocation
from reconciler.state import State


class ListReach(NamedTuple):
    """The manifest list a workspace holds: its address, the list, and the
    homepage of its group (None for a standalone workspace)."""

    address: str
    access: AccessList | None
    homepage: str | None
    probable: bool = False


class Grant(NamedTuple):
    """What a manifest line asks for one user or domain on one workspace."""

    role: str
    why: Why
    expires: date | None = None


def company_access(desired: Desired, live: Live, state: State) -> CompanyAccess:
    """Every workspace of ``live`` (a complete listing) and every entry on it, with why."""
    reaches = list_reaches(desired, live, state)
    workspaces: list[CompanyWorkspace] = []
    rows: list[AccessRow] = []
    for ws in live.workspaces.values():
        reach = reaches.get(ws.id)
        workspaces.append(CompanyWorkspace(
            id=ws.id, name=ws.name, account_id=ws.account_id, account_name=ws.account_name,
            template_id=ws.template_id, group_homepage=reach.homepage if reach else None,
            probable_member=reach.probable if reach else False, address=reach.address if reach else None))
        granted = grants(desired, reach)
        rows += _rows(ws, reach, granted)
    return CompanyAccess(workspaces=tuple(workspaces), rows=tuple(rows), calls=live.pages_read)


def list_reaches(desired: Desired, live: Live, state: State) -> dict[str, ListReach]:
    """Workspace id → the manifest list it holds, for every workspace a
    manifest reaches: groups (homepage, declared and recorded members,
    probable members) and standalone workspaces."""
    reaches: dict[str, ListReach] = {}
    for group in desired.groups:
        reaches[group.homepage] = ListReach(group.address, group.access, group.homepage)
        for member in group.members:
            recorded = state.resources.get(member.address)
            workspace_id = member.id or (recorded.id if recorded is not None else None)
            if workspace_id:
                reaches[workspace_id] = ListReach(group.address, group.access, group.homepage)
    for ws in desired.workspaces:
        reaches[ws.id] = ListReach(ws.address, ws.access, None)
    homepages = {g.homepage: g for g in desired.groups}
    sharing = shared_entries({w.id: w.entry_ids() for w in live.workspaces.values()})
    for workspace_id in live.workspaces.keys() - reaches.keys():
        found = sorted(sharing.get(workspace_id, set()) & homepages.keys())
        if found:
            group = homepages[found[0]]
            reaches[workspace_id] = ListReach(group.address, group.access, group.homepage, probable=True)
    return reaches


def grants(desired: Desired, reach: ListReach | None) -> dict[tuple[EntryKind, str], Grant]:
    """(kind, key) → the grant that wins for a workspace the list ``reach``
    governs (None: a workspace no manifest names)."""
    found: dict[tuple[EntryKind, str], Grant] = {}
    if reach is not None and reach.access is not None:
        for kind, key, grant in _entry_grants(reach.address, reach.access):
            found[(kind, key)] = grant
    return found


def _entry_grants(address: str, access: AccessList) -> Iterator[tuple[EntryKind, str, Grant]]:
    for user in access.users:
        yield "user", user.email, Grant(user.role, Why(source="entry", location=location_text(user.location),
                                                       address=address, role=user.role), user.expires)
    for domain in access.domains:
        yield "domain", domain.domain, Grant(domain.role, Why(source="entry", location=location_text(domain.location),
                                                              address=address, role=domain.role), domain.expires)


def location_text(location: SourceLocation) -> str:
    """``file:line`` unescaped: ``str(SourceLocation)`` escapes the file name
    for a terminal, while the model keeps the raw value and each renderer
    escapes it for where it shows it (a terminal, markdown, CSV)."""
    return f"{location.file}:{location.line}"


_UNMANAGED = Why(source="unmanaged")


def _rows(ws: LiveWorkspace, reach: ListReach | None,
          granted: Mapping[tuple[EntryKind, str], Grant]) -> list[AccessRow]:
    homepage = reach.homepage if reach is not None else None
    probable = reach.probable if reach is not None else False
    rows: list[AccessRow] = []
    kinds: tuple[tuple[EntryKind, dict[str, LiveEntry]], ...] = (("user", ws.users), ("domain", ws.domains))
    for kind, entries in kinds:
        for key in sorted(entries):
            grant = granted.get((kind, key))
            rows.append(AccessRow(
                workspace_id=ws.id, workspace_name=ws.name, account_id=ws.account_id,
                account_name=ws.account_name, group_homepage=homepage, probable_member=probable, kind=kind, key=key,
                role=entries[key].role, expires=grant.expires if grant else None,
                why=grant.why if grant else _UNMANAGED))
    return rows
