"""``index.html``: the access report as one self-contained page.

No network: the CSS, the pictures (inline SVG, drawn by
``reconciler.report.svg``) and a small script are inside the file, so it
opens from disk, from a CI artifact or an e-mail.  The headline figures, the
lists that need attention, the changes and the pictures are written as
markup; the person and workspace views are drawn by the script from an
inline JSON block, one page of rows at a time, so 10,000 workspaces open as
fast as ten.

Every value (names and emails come from the service, file names from
manifests) is escaped where it is written: ``html.escape`` in markup, and
the JSON block has ``<``, ``>``, ``&`` and U+2028/U+2029 written as
``\\uXXXX`` escapes, so no value can end its ``<script>`` element or open
another.  The script sets values with ``textContent`` only.  Characters
that change how text is displayed (bidi and invisible controls) are shown
as escapes, as on the terminal (``reconciler.text.printable``).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Iterator, Sequence
from html import escape
from importlib import resources
from itertools import chain, count
from typing import Any

from reconciler.report import figures as fig
from reconciler.report import svg
from reconciler.report.columns import TextFacts, each_once, each_run, plain
from reconciler.report.diff import CHANGE_ORDER, ChangeSet
from reconciler.report.model import KEY_FIELD, MANAGED_BY_FIELD, MadeReport, ReportLine
from reconciler.text import plural, printable

# The lists that need attention show this many lines; the rest is in the views and the CSV.
ATTENTION_LINES = 100
CHANGE_LINES = 1000


def _asset(name: str) -> str:
    return resources.files("reconciler.report").joinpath(name).read_text(encoding="utf-8")


def page_css() -> str:
    """The report's style sheet, for the pages that share it (the review's evidence and reviewer pages)."""
    return _asset("page.css")


def text(value: object) -> str:
    """A value for markup: display controls made visible, then HTML-escaped (quotes too)."""
    return escape(printable(str(value)), quote=True)


def script_json(value: Any) -> str:
    """``value`` as JSON that can sit inside ``<script>``: ASCII only (so U+2028/U+2029 and lone
    surrogates are escapes), and ``<``, ``>``, ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``,
    so neither ``</script>`` nor ``<!--`` can appear in it."""
    dumped = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        dumped = dumped.replace(raw, escaped)
    return dumped


def view_json(report: MadeReport, counted: fig.Tally | None = None) -> str:
    """The compact block the script reads, as ``script_json`` writes it (``view_json_parts``)."""
    return "".join(view_json_parts(report, counted))


def view_json_parts(report: MadeReport, counted: fig.Tally | None = None) -> Iterator[str]:
    """``view_json`` a part at a time (each column of rows is made as it is written: the block is
    never whole in memory).  Workspaces as arrays, the rows a column at a time, the "why" lines
    once each.

    ``w``: [id, name, account, group homepage, managed 0/1, owners]; ``r``: the columns
    [workspace index, kind 0 user/1 domain, email or domain, role, external 0/1, why index,
    expires], row i at index i of each.  Each value shown through ``printable``.  A column is
    one join of its values (``reconciler.report.columns``): 250,000 rows at 10,000 workspaces,
    and a block of rows, each put together on its own, cost four times as much to write."""
    owners = (counted or fig.tally(report)).owners
    index = {w.id: i for i, w in enumerate(report.workspaces)}
    workspaces: list[list[Any]] = [
        [printable(w.id), printable(w.name or ""), printable(w.account_name or w.account_id or ""),
         printable(w.group_homepage or ""), int(w.managed), owners.get(w.id, 0)]
        for w in report.workspaces
    ]
    ids, names, _, _, _, kinds, keys, roles, external, managed, _, expires = report.rows.columns
    if not index.keys() >= set(ids):  # a row always has its workspace; kept safe for a hand-made report
        for workspace_id, name in dict.fromkeys(zip(ids, names, strict=True)):
            if workspace_id not in index:
                index[workspace_id] = len(workspaces)
                workspaces.append([printable(workspace_id), printable(name or ""), "", "", 0, 0])
    # A column's facts serve its shown values too: a column not all printable ASCII is shown
    # otherwise, and its facts say it is not plain, so its shown values are written the long way.
    managed_facts, key_facts = report.rows.text_facts(MANAGED_BY_FIELD), report.rows.text_facts(KEY_FIELD)
    # In the order the rows first name them ("not managed", plain, first: the facts hold for the list).
    whys, why_numbers = numbered(chain(("not managed",), shown_column(managed, managed_facts)))
    del why_numbers[0]  # "not managed" itself, put first: not a row's
    heads, lengths = report.rows.workspace_runs(0)

    def columns() -> Iterator[str]:  # each made as it is written
        yield ",".join(each_run([str(index[workspace_id]) for workspace_id in heads[0]], lengths))
        yield ",".join(each_once(kinds, _kind_number))
        yield script_strings(shown_column(keys, key_facts), key_facts)
        yield ",".join(each_once(roles, shown_text))
        yield ",".join(map(_NUMBERS.__getitem__, external))
        yield _INTEGERS(why_numbers)[1:-1]
        yield ",".join(each_once(expires, _shown_date))

    yield f'{{"w":{script_json(workspaces)},"r":['
    for n, column in enumerate(columns()):
        yield "[" if n == 0 else ",["
        yield column
        yield "]"
    yield '],"why":['
    yield script_strings(whys, managed_facts)
    yield '],"unmanaged":0}'


_NUMBERS = ("0", "1")
_INTEGERS = json.JSONEncoder(separators=(",", ":")).encode  # a list of ints, by C code


def numbered(values: Iterable[str]) -> tuple[list[str], list[int]]:
    """The distinct values in the order they first come, and each value's number in that list.

    Each value is hashed once (a dict of where each first came): a page of 10,000 workspaces
    numbers 250,000 "why" lines, most of them a line of their own."""
    first: dict[str, int] = {}
    at = list(map(first.setdefault, values, count()))
    if len(first) != len(at):  # some value came again: where each first came, as its number
        number = dict(zip(first.values(), count()))
        at = list(map(number.__getitem__, at))
    return list(first), at


def _kind_number(kind: str) -> str:
    return "0" if kind == "user" else "1"


def _shown_date(value: datetime.date | None) -> str:
    return f'"{value.isoformat() if value else ""}"'


# What ``script_json`` escapes in printable ASCII (which ``printable`` leaves as it is): a string of
# printable ASCII without them is written as it is between quotes.
_SCRIPT_ESCAPED = '"\\<>&'


def shown_column(values: Sequence[str], facts: TextFacts | None = None) -> Sequence[str]:
    """``printable`` of each value: the column as it is when it is printable ASCII (``facts``:
    as ``columns.plain`` takes them)."""
    return values if plain(values, "", facts) else list(map(printable, values))


def shown_text(value: str) -> str:
    """``script_json(printable(value))``, the plain case written directly."""
    return f'"{value}"' if plain((value,), _SCRIPT_ESCAPED) else script_json(printable(value))


def script_strings(values: Sequence[str], facts: TextFacts | None = None) -> str:
    """The values, already shown (``printable``), as ``script_json`` writes each, between commas
    (``facts``: as ``columns.plain`` takes them)."""
    if values and plain(values, _SCRIPT_ESCAPED, facts):
        return '"' + '","'.join(values) + '"'
    return ",".join(map(script_json, values))


def render_page(report: MadeReport, *, today: datetime.date, changes: ChangeSet | None = None,
                counted: fig.Tally | None = None) -> str:
    """The whole page (``counted``: the report's ``tally``, when made already; ``page_parts``)."""
    return "".join(page_parts(report, today=today, changes=changes, counted=counted))


def page_parts(report: MadeReport, *, today: datetime.date, changes: ChangeSet | None = None,
               counted: fig.Tally | None = None) -> Iterator[str]:
    """The page a part at a time, its data block (28 MiB at 10,000 workspaces) a column at a time."""
    counted = counted or fig.tally(report)
    head = fig.headline(report, today=today, counted=counted)
    generated = report.generated_at.strftime("%Y-%m-%d %H:%M UTC")
    internal = ", ".join(report.internal_domains) or "none given (every person counts as external)"
    yield "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        # No request may leave the page: a report opened from an artifact must not phone anywhere.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>Access review – {text(generated)}</title><style>{_asset('page.css')}</style></head><body>",
        f"<header><h1>Access review</h1><p class=\"meta\">Who can see which workspace, as read from the "
        f"service on {text(generated)}. Internal domains: {text(internal)}.</p></header><main>",
        _figures(head),
        _attention(head),
        _changes(changes) if changes is not None else "",
        _pictures(report, counted),
        _views(),
        "</main><footer>Made by <code>reconciler report</code>. The same rows are in access.csv and "
        "access.json beside this file.</footer>",
        "<script type=\"application/json\" id=\"report-data\">",
    ])
    yield from view_json_parts(report, counted)
    yield f"</script><script>{_asset('page.js')}</script></body></html>\n"


def _figure(key: str, value: object, label: str, *, alert: bool = False) -> str:
    cls = "figure alert" if alert else "figure"
    return (f"<div class=\"{cls}\" data-figure=\"{key}\"><span class=\"value\">{text(value)}</span>"
            f"<span class=\"label\">{text(label)}</span></div>")


def _figures(head: fig.Headline) -> str:
    median = f"{head.owners_median:g}"
    cards = [
        _figure("workspaces", head.workspaces, "workspaces"),
        _figure("people", head.people, "people with access"),
        _figure("external-people", head.external_people, "external people", alert=head.external_people > 0),
        _figure("domain-grants", head.domain_grants, "domain-wide grants", alert=head.domain_grants > 0),
        _figure("owners", f"{head.owners_min} / {median} / {head.owners_max}", "owners per workspace (min / median / max)"),
        _figure("no-owner", len(head.no_owner), "workspaces with no owner", alert=bool(head.no_owner)),
        _figure("one-owner", len(head.one_owner), "workspaces with one owner",
                alert=head.one_owner_alert and bool(head.one_owner)),
        _figure("expiring", len(head.expiring), f"grants expiring within {fig.EXPIRY_WINDOW_DAYS} days",
                alert=bool(head.expiring)),
        _figure("unmanaged", head.unmanaged_workspaces,
                f"workspaces in no manifest ({head.rules_only_workspaces} reached only by rules)",
                alert=head.unmanaged_workspaces > head.rules_only_workspaces),
        _figure("leavers", len({a.key for a in head.leavers}), "leavers still holding access",
                alert=bool(head.leavers)),
    ]
    return f"<section><h2>Headline figures</h2><div class=\"figures\">{''.join(cards)}</div></section>"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]], *, total: int, limit: int, cls: str) -> str:
    head = "".join(f"<th>{text(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{text(v)}</td>" for v in row) + "</tr>" for row in rows)
    more = (f"<p class=\"note\">The first {limit} of {total}; all of them are in the views below and in "
            f"access.csv.</p>" if total > limit else "")
    return f"<table class=\"{cls}\"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _attention(head: fig.Headline) -> str:
    parts = ["<section><h2>Needs attention</h2>"]
    for flags, what, cls in ((head.no_owner, "no owner", "no-owner"), (head.one_owner, "one owner", "one-owner")):
        if flags:
            parts.append(f"<h3>{text(plural(len(flags), 'workspace'))} with {what}</h3>")
            parts.append(_table(("Workspace", "Name", "Owners"),
                                ((f.workspace_id, f.workspace_name or "", f.owners) for f in flags[:ATTENTION_LINES]),
                                total=len(flags), limit=ATTENTION_LINES, cls=cls))
    if head.leavers:
        parts.append(f"<h3>{text(plural(len({a.key for a in head.leavers}), 'leaver'))} still holding access</h3>")
        parts.append(_table(("Leaver", "Revoked by", "Workspace", "Name", "Role", "Through"),
                            ((a.key, f"rule {a.rule} at {a.location}", a.workspace_id, a.workspace_name or "",
                              a.role, f"domain {a.through}" if a.through else "own entry")
                             for a in head.leavers[:ATTENTION_LINES]),
                            total=len(head.leavers), limit=ATTENTION_LINES, cls="leavers"))
    if head.expiring:
        parts.append(f"<h3>{text(plural(len(head.expiring), 'grant'))} expiring within "
                     f"{fig.EXPIRY_WINDOW_DAYS} days</h3>")
        parts.append(_table(("Expires", "Workspace", "Person or domain", "Role", "Managed by"),
                            (_expiring(r) for r in head.expiring[:ATTENTION_LINES]),
                            total=len(head.expiring), limit=ATTENTION_LINES, cls="expiring"))
    if not head.no_owner and not head.one_owner and not head.expiring and not head.leavers:
        parts.append("<p>Every workspace has at least two owners, no leaver holds access, and no grant expires "
                     f"within {fig.EXPIRY_WINDOW_DAYS} days.</p>")
    parts.append("</section>")
    return "".join(parts)


def _expiring(r: ReportLine) -> tuple[str, str, str, str, str]:
    return (r.expires.isoformat() if r.expires else "", r.workspace_id, r.key, r.role, r.managed_by)


def _changes(changes: ChangeSet) -> str:
    counts = ", ".join(plural(changes.count(c), c) for c in CHANGE_ORDER)
    head = (f"<section id=\"changes\"><h2>Changes since {text(changes.baseline.label)}</h2>"
            f"<p data-changes=\"{len(changes.changes)}\">{text(counts)} (all of them in changes.csv).</p>")
    if not changes.changes:
        return head + "<p>No access changed.</p></section>"
    table = _table(("Change", "Workspace", "Name", "Person or domain", "Before", "After", "Managed by"),
                   ((c.change, c.workspace_id, c.workspace_name or "", c.key, c.before or "", c.after or "",
                     c.managed_by) for c in changes.changes[:CHANGE_LINES]),
                   total=len(changes.changes), limit=CHANGE_LINES, cls="changes")
    return head + table + "</section>"


def _pictures(report: MadeReport, counted: fig.Tally) -> str:
    roles = fig.roles_by_reach(report, counted)
    role_chart = svg.grouped_bars(
        "Access rows by role, internal and external", [r for r, _, _ in roles],
        [("internal", svg.INTERNAL_COLOUR), ("external", svg.EXTERNAL_COLOUR)], [[i, e] for _, i, e in roles])
    histogram = svg.histogram("Workspaces by number of external people", fig.external_histogram(report, counted),
                              x_label="external people on the workspace", y_label="workspaces")
    reach = svg.bars(f"The {fig.TOP_REACH} people with the widest reach (workspaces)",
                     [(printable(email), n) for email, n in fig.widest_reach(report, counted=counted)])
    charts = [("Roles, internal and external", role_chart),
              ("Workspaces by number of external people", histogram),
              (f"The {fig.TOP_REACH} people with the widest reach", reach)]
    body = "".join(f"<figure><figcaption>{text(title)}</figcaption>{chart}</figure>" for title, chart in charts)
    return f"<section><h2>Pictures</h2><div class=\"charts\">{body}</div></section>"


def _views() -> str:
    return (
        "<section id=\"explore\"><h2>Who can see what</h2>"
        "<div class=\"controls\"><span class=\"tabs\">"
        "<button type=\"button\" data-view=\"people\" aria-pressed=\"true\">By person</button>"
        "<button type=\"button\" data-view=\"workspaces\" aria-pressed=\"false\">By workspace</button></span>"
        "<input type=\"search\" id=\"search\" placeholder=\"Search email, domain, workspace or account\" "
        "aria-label=\"Search\">"
        "<label><input type=\"checkbox\" id=\"only-external\"> external only</label>"
        "<label><input type=\"checkbox\" id=\"only-owners\"> owners only</label>"
        "<label><input type=\"checkbox\" id=\"only-unmanaged\"> not managed</label></div>"
        "<div class=\"pager\"><button type=\"button\" id=\"prev\">Previous</button><span id=\"page\"></span>"
        "<button type=\"button\" id=\"next\">Next</button><span id=\"count\" class=\"note\"></span></div>"
        "<div id=\"rows\"><noscript>The views need JavaScript; every row is in access.csv.</noscript></div>"
        "</section>"
    )
