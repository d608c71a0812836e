"""The headline figures and the pictures' data, computed from the report alone.

Pure functions of an ``MadeReport``: the page draws them, the command
prints a summary line from them, and the tests check them by hand.
"""

from __future__ import annotations

import datetime
import heapq
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import compress, islice
from operator import and_, eq, neg, not_
from typing import NamedTuple

from reconciler.company.model import Leaver
from reconciler.gcpause import gc_paused
from reconciler.report.model import MadeReport, ReportLine
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
    expiring: tuple[ReportLine, ...]  # within EXPIRY_WINDOW_DAYS of today, soonest first
    unmanaged_workspaces: int  # in no manifest (company.model.ManagedBy), whether or not a rule reaches them
    rules_only_workspaces: int  # of those, the ones a rule reaches
    leavers: tuple[LeaverAccess, ...]


class Tally(NamedTuple):
    """What the figures and pictures count, from one pass over the report's rows (a company of
    10,000 workspaces has 250,000 of them; a pass per figure cost more than writing a file)."""

    people: int  # distinct emails with access
    external_people: int  # of those, the ones outside
    domain_grants: int
    owners: dict[str, int]  # workspace id -> users and domains with the owner role (every workspace, 0 too)
    dated: tuple[ReportLine, ...]  # every row with an expiry
    internal_roles: Counter[str]
    external_roles: Counter[str]
    external_on: dict[str, int]  # workspace id -> external people (every workspace, 0 too)
    widest: tuple[tuple[str, int], ...]  # (email, workspaces) of the TOP_REACH people on the most workspaces
    leavers: tuple[LeaverAccess, ...]


@gc_paused()
def tally(report: MadeReport) -> Tally:
    """Every count the page and the summary show, a column at a time (``reconciler.report.columns``:
    a report of 10,000 workspaces has 250,000 rows, and C code counts them)."""
    rows = report.rows
    ids, kinds, keys, roles, external = (rows.column(n) for n in (0, 5, 6, 7, 8))
    is_user = list(map("user".__eq__, kinds))
    outside = list(map(bool, external))
    # A person's reach and a workspace's external people count distinct (workspace, person) pairs.
    first = _first_of_each_pair(ids, keys)
    people = list(map(and_, is_user, first)) if first is not None else is_user
    outside_people = list(map(and_, people, outside))
    reach = Counter(compress(keys, people))
    external_on = dict.fromkeys((w.id for w in report.workspaces), 0)
    external_on.update(Counter(compress(ids, outside_people)))
    owners = dict.fromkeys((w.id for w in report.workspaces), 0)
    owners.update(Counter(compress(ids, map("owner".__eq__, roles))))
    return Tally(len(reach), len(set(compress(keys, outside_people))), len(rows) - sum(is_user), owners,
                 tuple(rows[n] for n, expires in enumerate(rows.column(11)) if expires is not None),
                 Counter(compress(roles, map(not_, outside))), Counter(compress(roles, outside)),
                 external_on, _widest(reach, TOP_REACH), _leavers_holding(report))


def _first_of_each_pair(ids: Sequence[str], keys: Sequence[str]) -> list[bool] | None:
    """Whether each row is the first to name its (workspace, email or domain), or None when every
    row is (a report's own rows: a workspace lists an entry once).  The rows are in the report's
    order, so a pair named twice is named on rows next to each other; looked for by C code."""
    if not any(map(and_, map(eq, islice(ids, 1, None), ids), map(eq, islice(keys, 1, None), keys))):
        return None
    seen: set[tuple[str, str]] = set()
    first: list[bool] = []
    for pair in zip(ids, keys, strict=True):
        first.append(pair not in seen)
        seen.add(pair)
    return first


def _leavers_holding(report: MadeReport) -> tuple[LeaverAccess, ...]:
    """Every row through which someone a rule revokes still holds a role: their own entry, or a
    domain entry of their email's domain."""
    users = {v.key: v for v in report.leavers if v.kind == "user"}
    if not users:
        return ()
    by_domain: dict[str, list[str]] = defaultdict(list)
    for email in users:
        by_domain[email.rpartition("@")[2]].append(email)
    held: list[LeaverAccess] = []
    watched = users.keys() | by_domain.keys()
    rows = report.rows
    for row in [rows[n] for n, key in enumerate(rows.column(6)) if key in watched]:
        if row.kind == "user":
            if row.key in users:
                held.append(_held(users[row.key], row, None))
        elif row.key in by_domain:
            held += (_held(users[email], row, row.key) for email in by_domain[row.key])
    return tuple(sorted(held, key=lambda a: (a.key, a.workspace_id)))


def _held(leaver: Leaver, row: ReportLine, through: str | None) -> LeaverAccess:
    return LeaverAccess(leaver.key, leaver.rule, leaver.location, row.workspace_id, row.workspace_name, row.role,
                        through)


def headline(report: MadeReport, *, today: datetime.date, counted: Tally | None = None) -> Headline:
    """The figures at the top of the page (``counted``: the report's ``tally``, when made already)."""
    counted = counted or tally(report)
    owners = counted.owners
    counts = sorted(owners.values()) or [0]
    middle = len(counts) // 2
    median = float(counts[middle]) if len(counts) % 2 else (counts[middle - 1] + counts[middle]) / 2
    names = {w.id: w.name for w in report.workspaces}
    flags = [OwnerFlag(wid, names.get(wid), n) for wid, n in sorted(owners.items()) if n <= 1]
    horizon = today + datetime.timedelta(days=EXPIRY_WINDOW_DAYS)
    expiring = tuple(sorted((r for r in counted.dated if r.expires is not None and today <= r.expires <= horizon),
                            key=lambda r: (r.expires, *r.sort_key())))
    return Headline(
        workspaces=len(report.workspaces), people=counted.people, external_people=counted.external_people,
        domain_grants=counted.domain_grants,
        owners_min=counts[0], owners_median=median, owners_max=counts[-1],
        no_owner=tuple(f for f in flags if f.owners == 0), one_owner=tuple(f for f in flags if f.owners == 1),
        one_owner_alert=report.min_owners > 1,
        expiring=expiring, unmanaged_workspaces=sum(1 for w in report.workspaces if not w.managed),
        rules_only_workspaces=sum(1 for w in report.workspaces if w.rules_only),
        leavers=counted.leavers,
    )


def roles_by_reach(report: MadeReport, counted: Tally | None = None) -> list[tuple[str, int, int]]:
    """(role, internal rows, external rows) for every role present, highest role first."""
    counted = counted or tally(report)
    internal, external = counted.internal_roles, counted.external_roles
    present = set(internal) | set(external)
    order = [r for r in reversed(ROLE_ORDER) if r in present] + sorted(present - set(ROLE_ORDER))
    return [(role, internal[role], external[role]) for role in order]


def external_histogram(report: MadeReport, counted: Tally | None = None) -> list[tuple[str, int]]:
    """(bin label, workspaces) of workspaces by how many external people have access."""
    bins = Counter[tuple[int, int | None]]()
    for n in (counted or tally(report)).external_on.values():
        bins[next(b for b in EXTERNAL_BINS if b[0] <= n and (b[1] is None or n <= b[1]))] += 1
    return [(_bin_label(low, high), bins[(low, high)]) for low, high in EXTERNAL_BINS]


def _bin_label(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}–{high}"


def widest_reach(report: MadeReport, *, limit: int = TOP_REACH, counted: Tally | None = None) -> list[tuple[str, int]]:
    """(email, workspaces) of the ``limit`` people (``TOP_REACH`` at most) with access to the most
    workspaces; ties by email."""
    if limit > TOP_REACH:
        raise ValueError(f"the report ranks the {TOP_REACH} people of widest reach, not {limit}")
    return list((counted or tally(report)).widest[:limit])


def _widest(reach: dict[str, int], limit: int) -> tuple[tuple[str, int], ...]:
    """The ``limit`` people of ``reach`` (email → workspaces) on the most workspaces; ties by email.
    Only these are kept: the count of every person (240,000 at 10,000 workspaces) is let go."""
    # (-workspaces, email) pairs made and compared by C code: a key function is a call per person.
    ranked = heapq.nsmallest(limit, zip(map(neg, reach.values()), reach.keys(), strict=True))
    return tuple((email, -negated) for negated, email in ranked)
