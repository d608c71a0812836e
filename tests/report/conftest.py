"""Hand-made company reads for the report's unit tests."""

from __future__ import annotations

import datetime

from hypothesis import strategies as st

from reconciler.company.model import AccessRow, CompanyAccess, CompanyWorkspace, EntryKind, Why, WhyLine
from reconciler.report.model import MadeReport, ReportLine, ReportRows, make_report

GENERATED = datetime.datetime(2027, 1, 15, 9, 30, tzinfo=datetime.UTC)
TODAY = GENERATED.date()
ENTRY = Why(source="entry", location="manifests/acme.yaml:12", address="group.customer-inc", role="owner")
UNMANAGED = Why(source="unmanaged")


def row(wid: str, kind: EntryKind, key: str, role: str, why: Why = UNMANAGED, **extra: object) -> AccessRow:
    fields: dict[str, object] = {"workspace_name": f"Name {wid}", **extra}
    return AccessRow(workspace_id=wid, kind=kind, key=key, role=role, why=why,
                     **fields)  # type: ignore[arg-type]  # the optional fields, by name


def company(*rows: AccessRow, workspaces: tuple[str, ...] = ()) -> CompanyAccess:
    names = {r.workspace_id: r.workspace_name for r in rows}
    ids = workspaces or tuple(names)
    # As the company read decides it: a workspace a manifest's line reaches is named by a manifest.
    named = {r.workspace_id for r in rows if r.why.source in ("entry", "team")}
    return CompanyAccess(workspaces=tuple(CompanyWorkspace(id=w, name=names.get(w, f"Name {w}"),
                                                           managed="manifest" if w in named else "none")
                                          for w in ids),
                         rows=rows, calls=1)


def report_of(*rows: AccessRow, workspaces: tuple[str, ...] = (),
              internal: tuple[str, ...] = ("acme.com",)) -> MadeReport:
    return make_report(company(*rows, workspaces=workspaces), generated_at=GENERATED, internal_domains=internal)


# Any text a service or a manifest could hold (but a lone surrogate: see test_model), hostile characters
# made likelier than chance would.
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(',"\\\r\n<>&=+-@\t\u2028\u2029\u202e\x7f\x01é')),
                   max_size=8)


@st.composite
def made_reports(draw: st.DrawFn) -> MadeReport:
    """A report of hand-written lines: each value any text, lines of one workspace together."""
    lines = []
    for n in range(draw(st.integers(1, 3))):
        workspace = (f"ws_{n}{draw(ANY_TEXT)}", draw(st.none() | ANY_TEXT), draw(st.none() | ANY_TEXT),
                     draw(st.none() | ANY_TEXT), draw(st.none() | ANY_TEXT))
        for _ in range(draw(st.integers(1, 3))):
            why = WhyLine(draw(st.sampled_from(["entry", "team", "rule", "unmanaged"])),
                          *(draw(st.none() | ANY_TEXT) for _ in range(5)))
            lines.append(ReportLine(*workspace, draw(st.sampled_from(["user", "domain"])), draw(ANY_TEXT),
                                    draw(ANY_TEXT), draw(st.booleans()), draw(ANY_TEXT), why,
                                    draw(st.none() | st.dates())))
    return MadeReport(GENERATED, ("acme.com",), (), ReportRows.of(lines))


# Every character a hand-written serialisation must treat apart, in one value.
EVERY_HOSTILE = ',"\\\r\n<>&=+-@\t\u2028\u2029\u202e\x7f\x01é漢 '


def hostile_report() -> MadeReport:
    """Every string of every line holds every hostile character (a formula start first), and two
    workspaces share an id but not their names: the example each hypothesis test always runs."""
    text = "=" + EVERY_HOSTILE
    why = WhyLine("rule", *(text + str(n) for n in range(5)))
    lines = [
        ReportLine("ws_1", text, text, text, text, "user", text, text, True, text, why, datetime.date(2027, 2, 1)),
        ReportLine("ws_1", "other", None, None, None, "domain", text, text, False, text, why, None),
        ReportLine("ws_2" + text, None, None, None, None, "user", "-" + text, "@" + text, False, "+" + text, why,
                   None)]
    # And each character alone in otherwise plain text, where a fast path for plain text could take it.
    for n, c in enumerate(EVERY_HOSTILE):
        one = f"a{c}b"
        lines.append(ReportLine(f"ws_{n}{one}", one, one, one, one, "user", one, one, False, one,
                                WhyLine("team", *(one,) * 5), None))
    return MadeReport(GENERATED, ("acme.com",), (), ReportRows.of(lines))


def one_character_reports() -> list[MadeReport]:
    """For each hostile character, inside a value and at its start (a formula's), a report whose every
    value is plain but for that one character: a column is written as it is only when all of it is
    plain, so each character must spoil it alone."""
    reports = []
    for one in [f"a{c}b" for c in EVERY_HOSTILE] + [f"{c}ab" for c in EVERY_HOSTILE]:
        reports.append(MadeReport(GENERATED, ("acme.com",), (), ReportRows.of((
            ReportLine("ws_1", one, one, one, one, "user", one, one, False, one, WhyLine("team", *(one,) * 5), None),
            ReportLine("ws_1", one, one, one, one, "user", "plain@acme.com", "viewer", False, "plain",
                       WhyLine("rule", "m.yaml:1", None, None, "r", "viewer"), None)))))
    return reports
