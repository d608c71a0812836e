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
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_json

from reconciler.company.build import EntryFacts
from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Leaver, Why, WhyLine
from reconciler.gcpause import gc_paused
from reconciler.report.columns import column, each_once, plain

# 1: the first report document.
REPORT_FORMAT_VERSION = 1
REPORT_KIND = "reconciler-access-report"
# Rows of access.json serialised at a time (``MadeReport.json_parts``).
JSON_ROWS_AT_ONCE = 5000


class _Frozen(BaseModel):
    # Every field is always written, so the JSON Schema requires them all.
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)


class ReportRow(_Frozen):
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
                                        "the team, the rule, or 'not managed'.")
    why: Why
    expires: datetime.date | None = None

    @property
    def managed(self) -> bool:
        return self.why.source != "unmanaged"

    def sort_key(self) -> tuple[str, int, str]:
        """Workspace id, then users before domains, then the email or domain."""
        return (self.workspace_id, 0 if self.kind == "user" else 1, self.key)


class ReportWorkspace(_Frozen):
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


class AccessReport(_Frozen):
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


class MadeReport(NamedTuple):
    """The report ``make_report`` made: the ``AccessReport`` document's values, its rows as
    ``ReportLine`` tuples (``document_head`` is the document without its rows)."""

    generated_at: datetime.datetime
    internal_domains: tuple[str, ...]
    workspaces: tuple[ReportWorkspace, ...]
    rows: tuple[ReportLine, ...]
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
        rows = self.rows
        for start in range(0, len(rows), JSON_ROWS_AT_ONCE):
            part = ",".join(row_json(rows[start:start + JSON_ROWS_AT_ONCE]))
            yield (b"," if start else b"") + part.encode("utf-8")
        yield b"]" + tail

    def model_dump_json(self) -> str:
        """The whole document as ``AccessReport.model_dump_json`` writes it (for a small report)."""
        return b"".join(self.json_parts()).decode("utf-8")


def row_json(rows: Sequence[ReportLine]) -> list[str]:
    """Each row as pydantic dumps a ``ReportRow`` (compact, its fields in order), put together a
    column at a time (``reconciler.report.columns``; ``tests/report/test_model.py`` holds the
    result to pydantic's bytes): a model, or a dict, of each of 250,000 rows cost more than the
    plan's whole diff.  A workspace's values are written once for all of its rows, a why once
    for every row it explains."""
    heads = each_once(list(map(itemgetter(0, 1, 2, 3, 4), rows)), _workspace_json)
    kinds = each_once(column(rows, 5), json_text)
    keys = json_column(column(rows, 6))
    roles = each_once(column(rows, 7), json_text)
    managed = json_column(column(rows, 9))
    whys = _why_jsons(column(rows, 10))
    return [f'{head}{kind},"key":{key},"role":{role},"external":{"true" if external else "false"},'
            f'"managed_by":{by},"why":{why},"expires":{_NULL if expires is None else _quoted(expires.isoformat())}}}'
            for head, kind, key, role, external, by, why, expires
            in zip(heads, kinds, keys, roles, column(rows, 8), managed, whys, column(rows, 11), strict=True)]


def _workspace_json(workspace: tuple[str, str | None, str | None, str | None, str | None]) -> str:
    workspace_id, name, account_id, account_name, homepage = workspace
    return (f'{{"workspace_id":{json_text(workspace_id)},"workspace_name":{json_text(name)},'
            f'"account_id":{json_text(account_id)},"account_name":{json_text(account_name)},'
            f'"group_homepage":{json_text(homepage)},"kind":')


def _why_jsons(whys: list[WhyLine]) -> list[str]:
    """Each why's JSON, made once per why (by identity: ``attributed`` hands one object to every
    row a why explains), the distinct ones a column at a time."""
    distinct = list({id(why): why for why in whys}.values())
    sources = each_once(column(distinct, 0), json_text)
    fields = [json_column(column(distinct, n)) for n in range(1, 6)]
    made = [f'{{"source":{source},"location":{location},"address":{address},"team":{team},"rule":{rule},'
            f'"role":{role}}}'
            for source, location, address, team, rule, role in zip(sources, *fields, strict=True)]
    by_id = {id(why): text for why, text in zip(distinct, made, strict=True)}
    return [by_id[id(why)] for why in whys]


def json_column(values: list[str | None]) -> list[str]:
    """Each value as ``json_text`` writes it: the whole column at once when it is plain."""
    if plain(values, _JSON_ESCAPED):
        return [_NULL if value is None else f'"{value}"' for value in values]
    return list(map(json_text, values))


def _quoted(plain: str) -> str:
    return '"' + plain + '"'


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
    return report_of_parts(((w, ()) for w in company.workspaces), generated_at=generated_at,
                           internal_domains=internal_domains, leavers=company.leavers, min_owners=min_owners,
                           rows=company.rows)


@gc_paused()
def report_of_parts(parts: Iterable[tuple[CompanyWorkspace, Iterable[AccessRow | EntryFacts]]], *,
                    generated_at: datetime.datetime, internal_domains: Iterable[str],
                    leavers: tuple[Leaver, ...] = (), min_owners: int = 1,
                    rows: Iterable[AccessRow | EntryFacts] = ()) -> MadeReport:
    """The report of the company's workspaces, each with its rows in the report's order (users
    before domains, each sorted, as ``reconciler.company.build.attributed`` gives them one
    workspace at a time, so the company's own rows are never all held), and of ``rows``
    besides (in any order)."""
    lines = _Lines(tuple(sorted({normal_domain(d) for d in internal_domains})))
    workspaces: list[ReportWorkspace] = []
    blocks: dict[str, list[ReportLine]] = {}
    for w, entries in parts:
        workspaces.append(ReportWorkspace(
            id=w.id, name=w.name, account_id=w.account_id, account_name=w.account_name,
            group_homepage=w.group_homepage, address=w.address,
            managed=w.managed == "manifest", rules_only=w.managed == "rules", rules=w.rules))
        blocks.setdefault(w.id, []).extend(lines.of(entries))
    # Workspaces by id, each block as it came: one sort of 10,000 ids, not of 250,000 rows.
    made = [line for workspace_id in sorted(blocks) for line in blocks[workspace_id]]
    others = lines.of(rows)
    if others:
        made += others
        made.sort(key=lambda r: (r.workspace_id, r.kind != "user", r.key))
    return MadeReport(generated_at, lines.internal, tuple(sorted(workspaces, key=lambda w: w.id)), tuple(made),
                      leavers, min_owners)


class _Lines:
    """Rows made ``ReportLine``s: each domain judged internal or external once, and each why
    made a ``WhyLine`` with its "managed by" line once (``attributed`` hands out one object
    for a why that repeats on every workspace a group's list, a team or a rule reaches)."""

    def __init__(self, internal: tuple[str, ...]) -> None:
        self.internal = internal
        self._external: dict[str, bool] = {}
        # By id(): the why itself is kept in the value, so its id is not reused while this lives.
        self._whys: dict[int, tuple[Why | WhyLine, WhyLine, str]] = {}

    def of(self, rows: Iterable[AccessRow | EntryFacts]) -> list[ReportLine]:
        made: list[ReportLine] = []
        add = made.append
        external, whys, make = self._external, self._whys, tuple.__new__
        for r in rows:
            # A company row (pydantic) as the tuple of its fields an EntryFacts is.
            facts = r if isinstance(r, tuple) else (
                r.workspace_id, r.workspace_name, r.account_id, r.account_name, r.group_homepage,
                r.probable_member, r.kind, r.key, r.role, r.expires, r.why)
            workspace_id, workspace_name, account_id, account_name, homepage, _, kind, key, role, expires, reason = facts
            domain = key.rpartition("@")[2] if kind == "user" else key
            outside = external.get(domain)
            if outside is None:
                outside = external[domain] = not is_internal(domain, self.internal)
            kept = whys.get(id(reason))
            if kept is None:
                as_line = reason if isinstance(reason, WhyLine) else WhyLine(
                    reason.source, reason.location, reason.address, reason.team, reason.rule, reason.role)
                kept = whys[id(reason)] = (reason, as_line, managed_by(as_line))
            # tuple.__new__ directly: a NamedTuple's own __new__ is a Python function, called 250,000 times.
            add(make(ReportLine, (workspace_id, workspace_name, account_id, account_name, homepage, kind, key,
                                  role, outside, kept[2], kept[1], expires)))
        return made


def managed_by(why: Why | WhyLine) -> str:
    """The "how is it managed" line: ``Why.text()``, with the unmanaged case in the review's words."""
    return "not managed" if why.source == "unmanaged" else why.text()


def normal_domain(domain: str) -> str:
    return domain.strip().lower().rstrip(".")


def is_internal(domain: str, internal_domains: Iterable[str]) -> bool:
    """Whether ``domain`` is one of ``internal_domains`` or below one (as policy allowedDomains reads)."""
    domain = normal_domain(domain)
    return any(domain == d or domain.endswith(f".{d}") for d in internal_domains)


def subject_domain(kind: EntryKind, key: str) -> str:
    """The domain a row's subject belongs to: an email's part after '@', or the domain itself."""
    return key.rpartition("@")[2] if kind == "user" else key
