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

from collections.abc import Iterator
from typing import NamedTuple

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, RuleChange, Why
from reconciler.live import Live, LiveEntry, LiveWorkspace, shared_entries
from reconciler.manifest.desired import AccessList, Desired
from reconciler.manifest.location import SourceLocation
from reconciler.plan.rules import matching_rules
from reconciler.plan.teams import ExpandedAccess, Grant, GrantSource, expand_access
from reconciler.state import State


class ListReach(NamedTuple):
    """The manifest list a workspace holds: its address, the list, and the
    homepage of its group (None for a standalone workspace)."""

    address: str
    access: AccessList | None
    homepage: str | None
    probable: bool = False


def company_access(desired: Desired, live: Live, state: State) -> CompanyAccess:
    """Every workspace of ``live`` (a complete listing) and every entry on
    it, with why; and every change the rules would make."""
    reaches = list_reaches(desired, live, state)
    teams = {team.key: team for team in desired.teams}
    workspaces: list[CompanyWorkspace] = []
    rows: list[AccessRow] = []
    changes: list[RuleChange] = []
    for ws in live.workspaces.values():
        reach = reaches.get(ws.id)
        workspaces.append(CompanyWorkspace(
            id=ws.id, name=ws.name, account_id=ws.account_id, account_name=ws.account_name,
            template_id=ws.template_id, group_homepage=reach.homepage if reach else None,
            probable_member=reach.probable if reach else False, address=reach.address if reach else None))
        expanded = expand_access(reach.access if reach else None, teams, matching_rules(desired.rules, ws))
        rows += _rows(ws, reach, expanded)
        changes += _rule_changes(ws, reach, expanded)
    return CompanyAccess(workspaces=tuple(workspaces), rows=tuple(rows), rule_changes=tuple(changes),
                         calls=live.pages_read)


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


def location_text(location: SourceLocation) -> str:
    """``file:line`` unescaped: ``str(SourceLocation)`` escapes the file name
    for a terminal, while the model keeps the raw value and each renderer
    escapes it for where it shows it (a terminal, markdown, CSV)."""
    return f"{location.file}:{location.line}"


_UNMANAGED = Why(source="unmanaged")


def why(source: GrantSource, role: str | None, address: str | None) -> Why:
    """The model's ``Why`` of a grant ``expand_access`` decided (``role``
    None: of a revocation)."""
    return Why(source=source.kind, location=location_text(source.location),
               address=address if source.kind != "rule" else None, team=source.team, rule=source.rule, role=role)


def _kinds(ws: LiveWorkspace, expanded: ExpandedAccess) -> Iterator[
        tuple[EntryKind, dict[str, LiveEntry], dict[str, Grant], dict[str, GrantSource]]]:
    yield "user", ws.users, expanded.users, expanded.revoked_users
    yield "domain", ws.domains, expanded.domains, expanded.revoked_domains


def _rows(ws: LiveWorkspace, reach: ListReach | None, expanded: ExpandedAccess) -> list[AccessRow]:
    homepage = reach.homepage if reach is not None else None
    probable = reach.probable if reach is not None else False
    address = reach.address if reach is not None else None
    rows: list[AccessRow] = []
    for kind, entries, granted, _ in _kinds(ws, expanded):
        for key in sorted(entries):
            grant = granted.get(key)
            rows.append(AccessRow(
                workspace_id=ws.id, workspace_name=ws.name, account_id=ws.account_id,
                account_name=ws.account_name, group_homepage=homepage, probable_member=probable, kind=kind, key=key,
                role=entries[key].role, expires=grant.expires if grant else None,
                why=why(grant.source, grant.role, address) if grant else _UNMANAGED))
    return rows


def _rule_changes(ws: LiveWorkspace, reach: ListReach | None, expanded: ExpandedAccess) -> list[RuleChange]:
    """What the rules would change on ``ws``: an entry a rule decides (no
    explicit entry, no team with a higher role) whose live role differs, and
    a live entry a rule revokes.  Users before domains, each sorted."""
    address = reach.address if reach is not None else None
    found: list[RuleChange] = []
    for kind, entries, granted, revoked in _kinds(ws, expanded):
        wanted: dict[str, tuple[str | None, Why]] = {
            key: (grant.role, why(grant.source, grant.role, address)) for key, grant in granted.items()
            if grant.source.kind == "rule" and (key not in entries or entries[key].role != grant.role)}
        wanted.update({key: (None, why(source, None, address))
                       for key, source in revoked.items() if key in entries})
        found += [RuleChange(workspace_id=ws.id, workspace_name=ws.name, account_id=ws.account_id,
                             account_name=ws.account_name, address=address, kind=kind, key=key,
                             before=entries[key].role if key in entries else None, after=after, why=reason)
                  for key, (after, reason) in sorted(wanted.items())]
    return found
