"""The company read: every workspace's access, each entry with why it is there.

One value, computed once from the manifests, one listing of the service and
the state, and read by every view of the whole company: ``reconciler who``
(one person's or domain's rows), ``reconciler audit`` (the rows against the
policy and the rules) and, later, the access-review reports (CSV, JSON,
HTML).  Like the Plan, it is a pydantic value, so the JSON view is the value
itself and no renderer computes anything of its own.

Values come from the service (names, emails) and from pull requests (rule
and team names, file names): they are stored as they are, and each renderer
escapes them for where it shows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Literal, NamedTuple

from reconciler.manifest.desired import DIRECTORY_RULE
from reconciler.models import Frozen

# 1: workspaces and rows, each row with its ``why``.
COMPANY_FORMAT_VERSION = 1

EntryKind = Literal["user", "domain"]
# Where an entry comes from, most specific first: an entry of a manifest's
# access list, a team a list names, a rule matching the workspace; or none of
# them (granted in the web app, or by a tool other than reconciler). Or why the
# next apply removes it: a rule matching the workspace revokes it
# (``revoked``: a rule's ``revoke:``, or a leaver of the directory), or the
# manifest list the workspace holds does not list it and governs it
# (``leaving``: the list is authoritative, or the state records that
# reconciler put it there), or the grant that put it there has expired
# (``expired``: the entry's or the rule's line sets an ``expires`` date that has
# come; the plan removes it as an unlisted entry).
WhySource = Literal["entry", "team", "rule", "revoked", "leaving", "expired", "unmanaged"]
UNMANAGED_TEXT = "not managed: granted in the web app"
# How the manifests reach a workspace, the one definition every count uses
# (plan, audit, who, report): named by a manifest (a group's homepage or
# member, found by its shared entries too, or a standalone workspace), reached
# only by a rule's match, or neither.
ManagedBy = Literal["manifest", "rules", "none"]


class Why(Frozen):
    """The manifest line that grants an entry, or that none does.

    ``location`` is the ``file:line`` of that line: the list entry, the
    team's entry in the list (``{team: NAME, role: ...}``), or the rule's
    entry (its ``ensure`` or ``revoke`` line).  ``address`` is the access
    list's address (``group.KEY``, ``workspace.KEY``) for an entry or a
    team; ``team`` the team's name (also for a rule that ensures a team);
    ``rule`` the rule's name.  ``role`` is the role the line asks for: it
    differs from the row's live role when the service has drifted from the
    manifests.
    """

    source: WhySource
    location: str | None = None
    address: str | None = None
    team: str | None = None
    rule: str | None = None
    role: str | None = None

    def text(self) -> str:
        """One line for people (unescaped: the renderer escapes it)."""
        return why_text(self.source, self.location, self.address, self.team, self.rule)


class WhyLine(NamedTuple):
    """A ``Why`` as the company's rows hold it in memory: its fields in a tuple (a model of
    them takes 700 bytes, and a company of 10,000 workspaces has 250,000 rows)."""

    source: WhySource
    location: str | None
    address: str | None
    team: str | None
    rule: str | None
    role: str | None

    def text(self) -> str:
        """``Why.text()`` of the same fields."""
        return why_text(self.source, self.location, self.address, self.team, self.rule)

    def model(self) -> Why:
        return Why(source=self.source, location=self.location, address=self.address, team=self.team,
                   rule=self.rule, role=self.role)


def why_text(source: WhySource, location: str | None, address: str | None, team: str | None,
             rule: str | None) -> str:
    """The "why" line for people: the list and line, the team, the rule, or not managed."""
    return why_texts(((source, location, address, team, rule, None),))[0]


def why_texts(whys: Iterable[tuple[WhySource, str | None, str | None, str | None, str | None, str | None]], *,
              unmanaged: str = UNMANAGED_TEXT) -> list[str]:
    """``why_text`` of each of ``whys`` (a ``WhyLine``'s fields): a report's 250,000 rows have
    their lines made in one expression, not two function calls each."""
    return [f"{address}{' at ' + location if location else ''}" if source == "entry"
            else f"team {team} ({address}{' at ' + location if location else ''})" if source == "team"
            else f"rule {rule}{' via team ' + team if team else ''}{' at ' + location if location else ''}"
            if source == "rule" else _revoked_text(rule, location) if source == "revoked"
            else f"{address} at {location} does not list it: the next apply removes it" if source == "leaving"
            else f"{f'rule {rule}' if rule else address}{' at ' + location if location else ''} granted it until its "
                 "expires date, which has come: the next apply removes it" if source == "expired"
            else unmanaged
            for source, location, address, team, rule, _ in whys]


def _revoked_text(rule: str | None, location: str | None) -> str:
    """Why a revoked entry is still there, and what happens to it."""
    by = "deactivated in the directory" if rule == DIRECTORY_RULE else f"revoked by rule {rule}"
    return f"{by}{' at ' + location if location else ''}: the next apply removes it"


class CompanyWorkspace(Frozen):
    """One workspace of the company, as listed, and how the manifests reach it.

    ``group_homepage`` is the homepage of the group it belongs to when that
    is known: from the manifests (a group's homepage and declared members),
    the state (members an apply created), or, with ``probable_member``,
    because it shows the same access entries as a managed homepage (the API
    does not name groups; a workspace connected by hand shows its group's
    entries).  ``address`` is the manifest access list that governs it (the
    group's or its own), None when no manifest names it.
    """

    id: str
    name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    template_id: str | None = None
    group_homepage: str | None = None
    probable_member: bool = False
    address: str | None = None
    managed: ManagedBy = "none"
    rules: tuple[str, ...] = ()  # the rules matching it (their keys), in manifest order


class AccessRow(Frozen):
    """One user or domain with a role on one workspace, now, and why."""

    workspace_id: str
    workspace_name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    group_homepage: str | None = None
    probable_member: bool = False  # in the group by its shared entries only (see CompanyWorkspace)
    kind: EntryKind
    key: str  # email or domain, lower-cased
    role: str
    expires: date | None = None  # when the manifest line sets one
    why: Why


class Leaver(Frozen):
    """A user or domain a rule revokes (``revoke:``), at the rule's line: a leaver."""

    kind: EntryKind
    key: str
    rule: str
    location: str


class CompanyAccess(Frozen):
    """Every workspace of the company and every access entry on it.

    ``calls`` is how many listing pages the read took (ceil(N/100) at the
    default page size); ``total`` is the number of workspaces.  Rows are in
    listing order, users before domains within a workspace, each sorted.
    """

    format_version: int = COMPANY_FORMAT_VERSION
    workspaces: tuple[CompanyWorkspace, ...] = ()
    rows: tuple[AccessRow, ...] = ()
    calls: int = 0
    leavers: tuple[Leaver, ...] = ()

    @property
    def total(self) -> int:
        return len(self.workspaces)

    def count(self, managed: ManagedBy) -> int:
        """How many workspaces are managed so (see ``ManagedBy``)."""
        return sum(1 for w in self.workspaces if w.managed == managed)

    def rows_of(self, kind: EntryKind, key: str) -> list[AccessRow]:
        """Every row of exactly this user or domain."""
        return [row for row in self.rows if row.kind == kind and row.key == key]
