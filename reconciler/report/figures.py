"""The headline figures and the pictures' data, computed from the report alone.

Pure functions of an ``AccessReport``: the page draws them, the command
prints a summary line from them, and the tests check them by hand.
"""

from __future__ import annotations

import datetime
from collections import Counter, defaultdict
from typing import NamedTuple

from reconciler.report.model import AccessReport, ReportRow
from reconciler.vocabulary import ROLE_ORDER

# Within this many days an expiring grant is counted (and listed) as due.
EXPIRY_WINDOW_DAYS = 30
# The bins of the histogram of workspaces by number of external people.
EXTERNAL_BINS: tuple[tuple[int, int | None], ...] = ((0, 0), (1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, None))
TOP_REACH = 20


class OwnerFlag(NamedTuple):
    """A workspace with no owner, or with one (domain owners count)."""

    workspace_id: str
    workspace_name: str | None
    owners: int


class LeaverAccess(NamedTuple):
    """A leaver (someone a rule revokes) who still holds a role somewhere:
    their own entry, or a domain entry of their email's domain (``through``)."""

    key: str
    rule: str
    location: str
    workspace_id: str
    workspace_name: str | None
    role: str
    through: str | None  # the domain entry that reaches them; None: their own entry


class Headline(NamedTuple):
    workspaces: int
    people: int
    external_people: int
    domain_grants: int
    owners_min: int
    owners_median: float
    owners_max: int
    no_owner: tuple[OwnerFlag, ...]
    # One owner: shown, and a problem only when policy.minOwners asks for more (``one_owner_alert``).
    one_owner: tuple[OwnerFlag, ...]
    one_owner_alert: bool
    expiring: tuple[ReportRow, ...]  # within EXPIRY_WINDOW_DAYS of today, soonest first
    unmanaged_workspaces: int  # in no manifest (company.model.ManagedBy), whether or not a rule reaches them
    rules_only_workspaces: int  # of those, the ones a rule reaches
    leavers: tuple[LeaverAccess, ...]


def headline(report: AccessReport, *, today: datetime.date) -> Headline:
    """The figures at the top of the page."""
    people = {r.key for r in report.rows if r.kind == "user"}
    external = {r.key for r in report.rows if r.kind == "user" and r.external}
    owners = owner_counts(report)
    counts = sorted(owners.values()) or [0]
    middle = len(counts) // 2
    median = float(counts[middle]) if len(counts) % 2 else (counts[middle - 1] + counts[middle]) / 2
    names = {w.id: w.name for w in report.workspaces}
    flags = [OwnerFlag(wid, names.get(wid), n) for wid, n in sorted(owners.items()) if n <= 1]
    horizon = today + datetime.timedelta(days=EXPIRY_WINDOW_DAYS)
    expiring = tuple(sorted((r for r in report.rows if r.expires is not None and today <= r.expires <= horizon),
                            key=lambda r: (r.expires, *r.sort_key())))
    return Headline(
        workspaces=len(report.workspaces), people=len(people), external_people=len(external),
        domain_grants=sum(1 for r in report.rows if r.kind == "domain"),
        owners_min=counts[0], owners_median=median, owners_max=counts[-1],
        no_owner=tuple(f for f in flags if f.owners == 0), one_owner=tuple(f for f in flags if f.owners == 1),
        one_owner_alert=report.min_owners > 1,
        expiring=expiring, unmanaged_workspaces=sum(1 for w in report.workspaces if not w.managed),
        rules_only_workspaces=sum(1 for w in report.workspaces if w.rules_only),
        leavers=leavers_holding(report),
    )


def leavers_holding(report: AccessReport) -> tuple[LeaverAccess, ...]:
    """Every row through which someone a rule revokes still holds a role: their own
    entry (a rule not yet applied, or not matching there) or a domain entry of their
    email's domain, which no user revoke can remove."""
    users = {v.key: v for v in report.leavers if v.kind == "user"}
    by_domain: dict[str, list[str]] = defaultdict(list)
    for email in users:
        by_domain[email.rpartition("@")[2]].append(email)
    found = []
    for row in report.rows:
        reached = [row.key] if row.kind == "user" and row.key in users else (
            by_domain.get(row.key, []) if row.kind == "domain" else [])
        for email in reached:
            leaver = users[email]
            found.append(LeaverAccess(email, leaver.rule, leaver.location, row.workspace_id, row.workspace_name,
                                      row.role, row.key if row.kind == "domain" else None))
    return tuple(sorted(found, key=lambda a: (a.key, a.workspace_id)))


def owner_counts(report: AccessReport) -> dict[str, int]:
    """Workspace id → how many users and domains hold the owner role on it (every workspace, 0 included)."""
    counts = dict.fromkeys((w.id for w in report.workspaces), 0)
    for row in report.rows:
        if row.role == "owner":
            counts[row.workspace_id] = counts.get(row.workspace_id, 0) + 1
    return counts


def roles_by_reach(report: AccessReport) -> list[tuple[str, int, int]]:
    """(role, internal rows, external rows) for every role present, highest role first."""
    internal: Counter[str] = Counter()
    external: Counter[str] = Counter()
    for row in report.rows:
        (external if row.external else internal)[row.role] += 1
    present = set(internal) | set(external)
    order = [r for r in reversed(ROLE_ORDER) if r in present] + sorted(present - set(ROLE_ORDER))
    return [(role, internal[role], external[role]) for role in order]


def external_histogram(report: AccessReport) -> list[tuple[str, int]]:
    """(bin label, workspaces) of workspaces by how many external people have access."""
    per_workspace: dict[str, set[str]] = {w.id: set() for w in report.workspaces}
    for row in report.rows:
        if row.kind == "user" and row.external:
            per_workspace.setdefault(row.workspace_id, set()).add(row.key)
    bins = Counter[tuple[int, int | None]]()
    for people in per_workspace.values():
        n = len(people)
        bins[next(b for b in EXTERNAL_BINS if b[0] <= n and (b[1] is None or n <= b[1]))] += 1
    return [(_bin_label(low, high), bins[(low, high)]) for low, high in EXTERNAL_BINS]


def _bin_label(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}–{high}"


def widest_reach(report: AccessReport, *, limit: int = TOP_REACH) -> list[tuple[str, int]]:
    """(email, workspaces) of the ``limit`` people with access to the most workspaces; ties by email."""
    reach: defaultdict[str, set[str]] = defaultdict(set)
    for row in report.rows:
        if row.kind == "user":
            reach[row.key].add(row.workspace_id)
    ranked = sorted(reach.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(email, len(ids)) for email, ids in ranked[:limit]]
