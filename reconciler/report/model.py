"""The access report: the company read, as the quarterly access review reads it.

An ``AccessReport`` is made from the one company read
(``reconciler.company.CompanyAccess``) by ``make_report``, a pure function
that adds only what a review needs on top: whether each person or domain is
internal or external, and the "how is it managed" line.  ``access.json`` is
this document; ``access.csv``, the page and the change list are drawn from
it and compute nothing it does not hold, so the views cannot disagree (as
the plan's renderers read one plan).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, count, groupby, repeat
from operator import attrgetter, is_
from typing import Any, NamedTuple, overload

from pydantic import Field
from pydantic_core import to_json

from reconciler.company.build import Entries, WorkspaceHead
from reconciler.company.model import (AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Leaver, Why, WhyLine,
                                      why_texts)
from reconciler.domains import within
from reconciler.gcpause import gc_paused
from reconciler.models import Frozen
from reconciler.report.columns import (Piece, TextFacts, each_once, each_run, formatted, plain,
                                       run_lengths, text_facts)

# 1: the first report document.
REPORT_FORMAT_VERSION = 1
REPORT_KIND = "reconciler-access-report"
# Rows of access.json serialised at a time (``MadeReport.json_parts``).
JSON_ROWS_AT_ONCE = 5000


class ReportRow(Frozen):
    """One person (email) or domain with a role on one workspace, and why."""

    workspace_id: str
    workspace_name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    group_homepage: str | None = Field(default=None, description="The homepage of the workspace's group, when known.")
    kind: EntryKind
    key: str = Field(description="The email (kind user) or the domain (kind domain), lower-case.")
    role: str
    external: bool = Field(description="Outside the internal domains (policy allowedDomains or --internal-domain).")
    managed_by: str = Field(description="How the row is managed, for people: the manifest list and file:line, "
                                        "the team, the rule, why the next apply removes it (a rule's revoke:, a "
                                        "leaver of the directory, a list that does not list it, a grant whose "
                                        "expires date has come), or 'not managed'.")
    why: Why
    expires: datetime.date | None = None

    @property
    def managed(self) -> bool:
        return self.why.source != "unmanaged"

    def sort_key(self) -> tuple[str, int, str]:
        """Workspace id, then users before domains, then the email or domain."""
        return (self.workspace_id, 0 if self.kind == "user" else 1, self.key)


class ReportWorkspace(Frozen):
    """One workspace of the company, whether or not anyone has access to it."""

    id: str
    name: str | None = None
    account_id: str | None = None
    account_name: str | None = None
    group_homepage: str | None = None
    address: str | None = Field(default=None, description="The manifest access list that governs it, if any.")
    managed: bool = Field(description="Whether a manifest names it: a group's homepage or member (found by its "
                                      "shared entries too), or a standalone workspace.")
    rules_only: bool = Field(default=False, description="In no manifest, but a rule matches it (reached only by rules).")
    rules: tuple[str, ...] = Field(default=(), description="The rules matching it, in manifest order.")


class AccessReport(Frozen):
    """The company's access at ``generated_at``: every workspace and every row, in a stable order
    (workspaces by id; rows by workspace id, users before domains, then email or domain)."""

    kind: str = Field(default=REPORT_KIND, pattern=f"^{REPORT_KIND}$")
    format_version: int = Field(default=REPORT_FORMAT_VERSION, ge=1, le=REPORT_FORMAT_VERSION)
    generated_at: datetime.datetime
    internal_domains: tuple[str, ...] = ()
    workspaces: tuple[ReportWorkspace, ...] = ()
    rows: tuple[ReportRow, ...] = ()
    leavers: tuple[Leaver, ...] = Field(default=(), description="Every user and domain a rule revokes, at its line.")
    min_owners: int = Field(default=1, ge=1, description="policy.minOwners: fewer owners than this is flagged.")


class ReportLine(NamedTuple):
    """A ``ReportRow`` as the report holds it in memory: a tuple, a tenth of a model's size (a
    company of 10,000 workspaces has 250,000 rows).  ``access.json`` writes each as the
    ``ReportRow`` it is (``reconciler.report.files``); the fields are the same, in the same order."""

    workspace_id: str
    workspace_name: str | None
    account_id: str | None
    account_name: str | None
    group_homepage: str | None
    kind: EntryKind
    key: str
    role: str
    external: bool
    managed_by: str
    why: WhyLine
    expires: datetime.date | None

    @property
    def managed(self) -> bool:
        return self.why.source != "unmanaged"

    def sort_key(self) -> tuple[str, int, str]:
        """Workspace id, then users before domains, then the email or domain."""
        return (self.workspace_id, 0 if self.kind == "user" else 1, self.key)


class ReportRows(Sequence[ReportLine]):
    """The report's rows, held a column at a time: one list per ``ReportLine`` field, in that
    order, each row at the same index of every list, in the report's order.

    A company of 10,000 workspaces has 250,000 rows, and the three files and the figures read
    them a column at a time (``reconciler.report.columns``): held as rows, each file first took
    every column out of 250,000 tuples again.  A row is made a ``ReportLine`` only when one is
    asked for (the lists that need attention, the change list)."""

    __slots__ = ("columns", "runs", "_facts", "_whole")

    def __init__(self, columns: Sequence[Sequence[Any]], runs: Sequence[int] | None = None) -> None:
        if len(columns) != len(ReportLine._fields) or len({len(c) for c in columns}) > 1:
            raise ValueError(f"a report's rows are {len(ReportLine._fields)} columns of one length")
        self.columns: tuple[Sequence[Any], ...] = tuple(columns)
        # The length of each run of rows of one workspace (its id and the values shown with it), in
        # order: the files write a workspace's values once for each run (``workspace_runs``).
        self.runs: tuple[int, ...] = tuple(runs if runs is not None else
                                           run_lengths(zip(*self.columns[:_WORKSPACE_FIELDS], strict=True)))
        if sum(self.runs) != len(self.columns[0]) or 0 in self.runs:
            raise ValueError("a report's runs of rows cover its rows, each run one row or more")
        self._facts: dict[int, TextFacts] = {}
        self._whole: ReportRows | None = None  # the rows a part (``parts``) is of

    @classmethod
    def of(cls, rows: Iterable[ReportLine]) -> ReportRows:
        """Rows given one at a time, held as columns."""
        columns = list(zip(*rows, strict=True))
        return cls(columns or [()] * len(ReportLine._fields))

    def workspace_runs(self, *fields: int) -> tuple[list[list[Any]], tuple[int, ...]]:
        """The values of each of ``fields`` at the first row of each run of one workspace's rows
        (a column each, a value a run), and each run's length (``columns.each_run``)."""
        starts = list(accumulate(self.runs[:-1], initial=0)) if self.runs else []
        return [list(map(self.columns[field].__getitem__, starts)) for field in fields], self.runs

    def parts(self, size: int) -> Iterator[ReportRows]:
        """The rows ``size`` at a time, in order: a file made a part at a time from each part's own
        rows holds the pieces of one part only (a column of 250,000 values is 2 MiB, and a file
        takes a dozen of them).  A part's text facts are these rows' (``text_facts``)."""
        runs, left = iter(self.runs), 0  # the runs not reached yet; the rows left of the one reached
        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            cut: list[int] = []  # the runs cut at the part's ends, not found again from its rows
            wanted = stop - start
            while wanted:
                left = left or next(runs)
                cut.append(min(left, wanted))
                left, wanted = left - cut[-1], wanted - cut[-1]
            part = ReportRows([column[start:stop] for column in self.columns], cut)
            part._whole = self
            yield part

    def text_facts(self, index: int) -> TextFacts:
        """The ``columns.text_facts`` of the ``index``-th column (the three files ask of the same
        emails and "managed by" lines): found once.  A part's are its whole rows' (facts that
        hold for a column hold for any part of it; a part they call not plain is only written
        the long way, to the same text), so the files' parts do not each look again."""
        if self._whole is not None:
            return self._whole.text_facts(index)
        found = self._facts.get(index)
        if found is None:
            found = self._facts[index] = text_facts(self.columns[index])
        return found

    def column(self, index: int) -> Sequence[Any]:
        """The ``index``-th field of every row (``ReportLine._fields[index]``)."""
        return self.columns[index]

    def __len__(self) -> int:
        return len(self.columns[0])

    @overload
    def __getitem__(self, index: int) -> ReportLine: ...

    @overload
    def __getitem__(self, index: slice) -> ReportRows: ...

    def __getitem__(self, index: int | slice) -> ReportLine | ReportRows:
        if isinstance(index, slice):
            return ReportRows([c[index] for c in self.columns])  # its runs found again
        return ReportLine._make(c[index] for c in self.columns)

    def __iter__(self) -> Iterator[ReportLine]:
        # tuple.__new__ directly: a NamedTuple's own __new__ is a Python function.
        return map(tuple.__new__, repeat(ReportLine), zip(*self.columns, strict=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReportRows) and all(
            list(mine) == list(theirs) for mine, theirs in zip(self.columns, other.columns, strict=True))

    __hash__ = None  # type: ignore[assignment]  # compared by value, as the tuple of rows it stands for

    def __repr__(self) -> str:
        return f"ReportRows({list(self)!r})"


# A row's first five fields are its workspace's: id, name, account id and name, group homepage.
_WORKSPACE_FIELDS = 5
# The fields the three files ask text facts of (``ReportRows.text_facts``): ``ReportLine``'s key and managed_by.
KEY_FIELD, MANAGED_BY_FIELD = 6, 9


class MadeReport(NamedTuple):
    """The report ``make_report`` made: the ``AccessReport`` document's values, its rows held a
    column at a time (``document_head`` is the document without its rows)."""

    generated_at: datetime.datetime
    internal_domains: tuple[str, ...]
    workspaces: tuple[ReportWorkspace, ...]
    rows: ReportRows
    leavers: tuple[Leaver, ...] = ()
    min_owners: int = 1

    def json_parts(self) -> Iterator[bytes]:
        """The ``AccessReport`` document as compact JSON (at 10,000 workspaces an indented one is
        twice the size, for machines that do not care), in parts of ``JSON_ROWS_AT_ONCE`` rows,
        so that its text (105 MiB at 10,000 workspaces) is never whole in memory.

        The rest is pydantic's own dump of the document without rows, cut where its empty
        ``rows`` stands (inside a JSON string a quote is escaped, so ``"rows":[]`` is only ever
        that key); each row is dumped from its fields, in ``ReportRow``'s order, as that model
        dumps itself (``tests/report/test_model.py`` holds the two to the same bytes)."""
        document = utf8(AccessReport(generated_at=self.generated_at, internal_domains=self.internal_domains,
                                      workspaces=self.workspaces, leavers=self.leavers,
                                      min_owners=self.min_owners).model_dump_json())
        head, empty, tail = document.partition(b'"rows":[]')
        if not empty:  # pragma: no cover - AccessReport always writes its rows
            raise AssertionError("AccessReport's dump has no rows key")
        yield head + b'"rows":['
        for start, rows in enumerate(self.rows.parts(JSON_ROWS_AT_ONCE)):
            part = formatted(row_pieces(rows))
            if start:
                part.insert(0, "")  # the comma after the part before, in the same join (not a copy of the part)
            yield ",".join(part).encode("utf-8")
        yield b"]" + tail

    def model_dump_json(self) -> str:
        """The whole document as ``AccessReport.model_dump_json`` writes it (for a small report)."""
        return b"".join(self.json_parts()).decode("utf-8")


def row_pieces(rows: ReportRows) -> list[Piece]:
    """The rows as pydantic dumps each ``ReportRow``, as pieces to put together a column at a
    time (``reconciler.report.columns``; ``tests/report/test_model.py`` holds the result to
    pydantic's bytes): a model, or a dict, of each of 250,000 rows cost more than the plan's
    whole diff.  A workspace's values are written once for all of its rows; a why's fields are
    columns too (most whys are one row's own: its manifest line)."""
    *_, kinds, keys, roles, external, managed, whys, expires = rows.columns
    heads, lengths = rows.workspace_runs(*range(_WORKSPACE_FIELDS))
    sources, locations, addresses, teams, rules, why_roles = list(zip(*whys, strict=True)) or [()] * len(
        WhyLine._fields)
    return [
        ("", each_run(_workspace_json(heads), lengths)),
        ("", each_once(kinds, json_text)),
        *json_pieces(',"key":', keys, rows.text_facts(KEY_FIELD)),
        (',"role":', each_once(roles, json_text)),
        (',"external":', list(map(_JSON_BOOLEANS.__getitem__, external))),
        *json_pieces(',"managed_by":', managed, rows.text_facts(MANAGED_BY_FIELD)),
        (',"why":{"source":', each_once(sources, json_text)),
        *json_pieces(',"location":', locations),
        *json_pieces(',"address":', addresses),
        *json_pieces(',"team":', teams),
        *json_pieces(',"rule":', rules),
        *json_pieces(',"role":', why_roles),
        ('},"expires":', each_once(expires, _json_date)),
        ("}", None),
    ]


_JSON_BOOLEANS = ("false", "true")


def _json_date(value: datetime.date | None) -> str:
    return _NULL if value is None else f'"{value.isoformat()}"'


def _workspace_json(heads: list[list[str | None]]) -> list[str]:
    """Each run's workspace fields (id, name, account id and name, group homepage), as the start
    of a row of access.json, up to its "kind" key."""
    ids, names, account_ids, account_names, homepages = heads
    return formatted([*json_pieces('{"workspace_id":', ids), *json_pieces(',"workspace_name":', names),
                      *json_pieces(',"account_id":', account_ids), *json_pieces(',"account_name":', account_names),
                      *json_pieces(',"group_homepage":', homepages), (',"kind":', None)])


def json_pieces(before: str, values: Sequence[str | None], facts: TextFacts | None = None) -> list[Piece]:
    """A field of ``formatted`` rows, each value as ``json_text`` writes it: a column of nulls
    is the text null, a plain column is put between quotes in the text around it, and any
    other column is written a value at a time (``facts``: as ``columns.plain`` takes them)."""
    if plain(values, _JSON_ESCAPED, facts):
        if None not in values:
            return [(before + '"', values), ('"', None)]
        nulls = list(compress(count(), map(is_, values, repeat(None))))  # by C code: 250,000 values
        if len(nulls) == len(values):
            return [(before + _NULL, None)]
        # A few nulls among plain values (a row nothing manages has no line): the quotes are
        # columns of their own, empty on a null's row, so no other value is written again.
        opening, shown = ['"'] * len(values), list(values)
        for at in nulls:
            opening[at], shown[at] = "", _NULL
        return [(before, opening), ("", shown), ("", opening)]
    return [(before, list(map(json_text, values)))]


_NULL = "null"
# What JSON escapes in printable ASCII: a string of printable ASCII without them is written as it is.
_JSON_ESCAPED = '"\\'


def json_text(value: str | None) -> str:
    """``value`` as pydantic's JSON writes it (non-ASCII as UTF-8, controls escaped); a lone
    surrogate, which UTF-8 cannot carry, as "?" (as ``utf8`` writes it)."""
    if value is None:
        return _NULL
    if plain((value,), _JSON_ESCAPED):
        return f'"{value}"'
    return to_json(value.encode("utf-8", errors="replace").decode("utf-8")).decode("utf-8")


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 for a report file."""
    # A value the service sent may hold a lone surrogate, which UTF-8 cannot carry: replaced, not fatal.
    return text.encode("utf-8", errors="replace")


def make_report(company: CompanyAccess, *, generated_at: datetime.datetime,
                internal_domains: Iterable[str], min_owners: int = 1) -> MadeReport:
    """The report of ``company``: each row judged internal or external by ``internal_domains``
    (an email's domain, or a domain entry, equal to one of them or below it)."""
    lines: dict[int, WhyLine] = {}  # one WhyLine for each Why, as ``attributed`` hands them out
    for row in company.rows:
        if id(row.why) not in lines:
            w = row.why
            lines[id(w)] = WhyLine(w.source, w.location, w.address, w.team, w.rule, w.role)
    ordered = sorted(company.rows, key=lambda r: (r.workspace_id, r.kind != "user", r.key))
    # Each run of rows with the same workspace values, a column at a time, as ``attributed`` gives them.
    runs = [Entries(head, [r.kind for r in run], [r.key for r in run], [r.role for r in run],
                    [r.expires for r in run], [lines[id(r.why)] for r in run])
            for head, run in ((head, list(run)) for head, run in groupby(ordered, key=_workspace_head))]
    return report_of_parts(((w, None) for w in company.workspaces), generated_at=generated_at,
                           internal_domains=internal_domains, leavers=company.leavers, min_owners=min_owners,
                           more=runs)


def _workspace_head(row: AccessRow) -> WorkspaceHead:
    return (row.workspace_id, row.workspace_name, row.account_id, row.account_name, row.group_homepage,
            row.probable_member)


@gc_paused()
def report_of_parts(parts: Iterable[tuple[CompanyWorkspace, Entries | None]], *,
                    generated_at: datetime.datetime, internal_domains: Iterable[str],
                    leavers: tuple[Leaver, ...] = (), min_owners: int = 1,
                    more: Iterable[Entries] = ()) -> MadeReport:
    """The report of the company's workspaces, each with its entries in the report's order (users
    before domains, each sorted, as ``reconciler.company.build.attributed`` gives them one
    workspace at a time, so the company's own rows are never all held), and of the entries
    ``more`` besides (in the report's order)."""
    workspaces: list[ReportWorkspace] = []
    blocks: dict[str, list[Entries]] = {}
    for w, entries in parts:
        workspaces.append(ReportWorkspace(
            id=w.id, name=w.name, account_id=w.account_id, account_name=w.account_name,
            group_homepage=w.group_homepage, address=w.address,
            managed=w.managed == "manifest", rules_only=w.managed == "rules", rules=w.rules))
        if entries is not None and entries.keys:
            blocks.setdefault(w.id, []).append(entries)
    for entries in more:
        if entries.keys:
            blocks.setdefault(entries.workspace[0], []).append(entries)
    # Workspaces by id, each block as it came: one sort of 10,000 ids, not of 250,000 rows.
    ordered = [entries for workspace_id in sorted(blocks) for entries in blocks[workspace_id]]
    internal = tuple(sorted({normal_domain(d) for d in internal_domains}))
    return MadeReport(generated_at, internal, tuple(sorted(workspaces, key=lambda w: w.id)),
                      _columns(ordered, internal), leavers, min_owners)


def _columns(blocks: list[Entries], internal: tuple[str, ...]) -> ReportRows:
    """The report's rows of ``blocks``, made a column at a time: a workspace's values repeated
    for each of its rows, each domain judged internal or external once, each "managed by" line
    made from the why's fields (``why_texts``)."""
    counts = [len(block.keys) for block in blocks]

    def spread(field: int) -> list[Any]:
        return list(chain.from_iterable(map(repeat, [block.workspace[field] for block in blocks], counts)))

    def joined(column: Callable[[Entries], list[Any]]) -> list[Any]:
        return list(chain.from_iterable(map(column, blocks)))

    kinds, keys, whys = joined(attrgetter("kinds")), joined(attrgetter("keys")), joined(attrgetter("whys"))
    domains = [key.rpartition("@")[2] if kind == "user" else key for kind, key in zip(kinds, keys, strict=True)]
    distinct = list(dict.fromkeys(domains))
    external = dict(zip(distinct, [not inside for inside in are_internal(distinct, internal)], strict=True))
    return ReportRows([spread(0), spread(1), spread(2), spread(3), spread(4), kinds, keys,
                       joined(attrgetter("roles")), list(map(external.__getitem__, domains)),
                       why_texts(whys, unmanaged=UNMANAGED_LINE), whys, joined(attrgetter("expires"))],
                      counts)


# The "how is it managed" line of a row nothing manages, in the review's words.
UNMANAGED_LINE = "not managed"


def managed_by(why: Why | WhyLine) -> str:
    """The "how is it managed" line: ``Why.text()``, with the unmanaged case in the review's words."""
    return UNMANAGED_LINE if why.source == "unmanaged" else why.text()


def normal_domain(domain: str) -> str:
    return domain.strip().lower().rstrip(".")


def is_internal(domain: str, internal_domains: Iterable[str]) -> bool:
    """Whether ``domain`` is one of ``internal_domains`` or below one (as policy allowedDomains reads)."""
    return are_internal((domain,), internal_domains)[0]


def are_internal(domains: Iterable[str], internal_domains: Iterable[str]) -> list[bool]:
    """``is_internal`` of each of ``domains`` (``reconciler.domains.within``, each domain normalised)."""
    return within(map(normal_domain, domains), internal_domains)


def subject_domain(kind: EntryKind, key: str) -> str:
    """The domain a row's subject belongs to: an email's part after '@', or the domain itself."""
    return key.rpartition("@")[2] if kind == "user" else key
