"""``access.csv`` and ``changes.csv``: the report as a spreadsheet opens it.

RFC 4180 (comma separated, CRLF line ends, a field quoted when it holds a
comma, a quote or a line break, quotes doubled), UTF-8 with a byte-order
mark (for Excel), a header row.
Values come from the service and from manifests, and a spreadsheet runs a
cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (a workspace
named ``=HYPERLINK(...)`` would become a link on the reviewer's screen), so
such a value, and one starting with a tab or a carriage return, is written
with a leading ``'``: shown as text, never run (OWASP "CSV injection").
"""

from __future__ import annotations

import csv
import datetime
import io
import re
from collections.abc import Iterable, Iterator, Sequence

from reconciler.report.diff import AccessChange
from reconciler.report.columns import Piece, TextFacts, each_once, each_run, formatted, plain
from reconciler.report.model import KEY_FIELD, MANAGED_BY_FIELD, MadeReport, ReportRows

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

ACCESS_HEADER = ("workspace_id", "workspace_name", "account", "group_homepage", "kind", "email_or_domain", "role",
                 "internal_or_external", "managed_by", "expires")
CHANGES_HEADER = ("change", "workspace_id", "workspace_name", "kind", "email_or_domain", "role_before", "role_after",
                  "internal_or_external", "managed_by")


def cell(value: str | None) -> str:
    """One value as a cell: empty for None, a formula start neutralised."""
    if value is None:
        return ""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


# A UTF-8 byte-order mark first: without it Excel reads the file as the
# system's code page and shows "–" as "â€“"; every other reader skips it.
BOM = "\ufeff"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[str | None]]) -> str:
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out, dialect="excel", lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue()


_REACH = ("internal", "external")


def _reach(external: bool) -> str:
    return _REACH[external]


def access_csv(report: MadeReport) -> str:
    """One line per (workspace, person or domain), in the report's order (``access_csv_parts``)."""
    return "".join(access_csv_parts(report))


# Lines of access.csv put together at a time (``access_csv_parts``).
CSV_ROWS_AT_ONCE = 5000


def access_csv_parts(report: MadeReport) -> Iterator[str]:
    """``access_csv`` a part at a time: the header, then ``CSV_ROWS_AT_ONCE`` lines a part, each
    with its line end (the text is never whole in memory: 31 MiB at 10,000 workspaces).

    The lines are the ones ``csv_text`` writes, put together a column at a time
    (``reconciler.report.columns``; ``tests/report/test_spreadsheet.py`` holds the two to the
    same text): the csv module spent more on 250,000 rows than the plan spends on its whole
    diff.  A workspace's four values are written once for all of its rows, a role once."""
    yield BOM + ",".join(ACCESS_HEADER) + "\r\n"
    for rows in report.rows.parts(CSV_ROWS_AT_ONCE):
        lines = formatted(_line_pieces(rows))
        lines.append("")  # the last line's end, in the same join
        yield "\r\n".join(lines)


def _line_pieces(rows: ReportRows) -> list[Piece]:
    """The lines of ``rows`` as pieces to put together (``columns.formatted``)."""
    *_, kinds, keys, roles, external, managed, _, expires = rows.columns
    heads, lengths = rows.workspace_runs(0, 1, 2, 3, 4)
    return [
        ("", each_run(_workspace_fields(*heads), lengths)),
        (",", kinds),
        (",", cell_column(keys, rows.text_facts(KEY_FIELD))),
        (",", each_once(roles, _cell_field)),
        (",", list(map(_REACH.__getitem__, external))),
        (",", cell_column(managed, rows.text_facts(MANAGED_BY_FIELD))),
        (",", each_once(expires, _cell_date)),
    ]


def _cell_date(value: datetime.date | None) -> str:
    return value.isoformat() if value else ""


def _workspace_fields(ids: list[str], names: list[str | None], account_ids: list[str | None],
                      account_names: list[str | None], homepages: list[str | None]) -> list[str]:
    """Each run's workspace cells (id, name, account name or else id, group homepage), a column
    at a time."""
    accounts = [name or account_id or "" for name, account_id in zip(account_names, account_ids, strict=True)]
    return formatted([("", cell_column(ids)), (",", cell_column([name or "" for name in names])),
                      (",", cell_column(accounts)), (",", cell_column([homepage or "" for homepage in homepages]))])


def _cell_field(value: str | None) -> str:
    return field(cell(value))


_FORMULA_AFTER_BREAK = re.compile("\n[" + "".join(map(re.escape, FORMULA_STARTS)) + "]")
# A field the csv module writes as it is: none of the delimiter, the quote or a line break.
_PLAIN_FIELD = re.compile(r'[^,"\r\n]*').fullmatch


def field(value: str) -> str:
    """``value`` as RFC 4180 (and the csv module's excel dialect, minimal quoting) writes it."""
    return value if _PLAIN_FIELD(value) else '"' + value.replace('"', '""') + '"'


def cell_column(values: Sequence[str], facts: TextFacts | None = None) -> Sequence[str]:
    """Each value as ``field(cell(value))`` writes it: the column as it is when it is plain
    and no value starts like a formula (``facts``: as ``columns.plain`` takes them)."""
    if plain(values, ',"', facts):
        # Each value's start after a line break, looked for in one pass.
        if not _FORMULA_AFTER_BREAK.search("\n" + "\n".join(values)):
            return values
    return list(map(_cell_field, values))


def changes_csv(changes: Iterable[AccessChange]) -> str:
    """One line per grant, revocation, escalation or downgrade, in the change list's order."""
    return csv_text(CHANGES_HEADER, (
        (c.change, c.workspace_id, c.workspace_name, c.kind, c.key, c.before, c.after, _reach(c.external),
         c.managed_by)
        for c in changes))
