"""access.csv and changes.csv: RFC 4180, a header, formula starts neutralised."""

from __future__ import annotations

import csv
import datetime
import io

import pytest
from hypothesis import example, given, settings

from reconciler.report.diff import AccessChange
from reconciler.report.model import MadeReport
from reconciler.report.spreadsheet import ACCESS_HEADER, access_csv, cell, changes_csv, csv_text
from tests.report.conftest import ENTRY, hostile_report, made_reports, one_character_reports, report_of, row

HOSTILE_NAME = 'Evil, "Inc" =HYPERLINK("http://x.example","click")\r\n</script>'


@pytest.mark.parametrize("value", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_a_value_starting_like_a_formula_gets_a_quote_first(value: str) -> None:
    assert cell(value) == "'" + value


@pytest.mark.parametrize("value", ["jane@acme.com", "a=b", "", "'quoted"])
def test_any_other_value_is_kept_as_it_is(value: str) -> None:
    assert cell(value) == value


def test_access_csv_has_a_header_crlf_line_ends_and_one_line_per_row() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", ENTRY, account_name="Customer Inc",
                         group_homepage="ws_1", expires=datetime.date(2027, 2, 1)),
                     row("ws_1", "domain", "out.io", "viewer"))
    assert access_csv(made) == (
        "\ufeff" + ",".join(ACCESS_HEADER) + "\r\n"
        "ws_1,Name ws_1,Customer Inc,ws_1,user,jane@acme.com,owner,internal,"
        "group.customer-inc at manifests/acme.yaml:12,2027-02-01\r\n"
        "ws_1,Name ws_1,,,domain,out.io,viewer,external,not managed,\r\n")


def test_a_hostile_workspace_name_is_quoted_and_its_formula_neutralised() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", workspace_name="=" + HOSTILE_NAME))
    text = access_csv(made)
    assert '"\'=Evil, ""Inc"" =HYPERLINK(""http://x.example"",""click"")\r\n</script>"' in text
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    assert parsed[1][1] == "'=" + HOSTILE_NAME and len(parsed) == 2


def test_changes_csv_lists_each_change_with_both_roles() -> None:
    change = AccessChange("escalation", "ws_1", "-Portal", "user", "raj@out.io", "viewer", "editor", True, "not managed")
    assert changes_csv([change]).splitlines()[1] == "escalation,ws_1,'-Portal,user,raj@out.io,viewer,editor,external,not managed"


def _access_csv_is_what_the_csv_module_writes_of_any_text(made: MadeReport) -> None:
    assert access_csv(made) == csv_text(ACCESS_HEADER, (
        (r.workspace_id, r.workspace_name, r.account_name or r.account_id, r.group_homepage, r.kind, r.key, r.role,
         "external" if r.external else "internal", r.managed_by, r.expires.isoformat() if r.expires else None)
        for r in made.rows))


@settings(max_examples=300, deadline=None)
@given(made_reports())
@example(hostile_report())
def test_access_csv_is_what_the_csv_module_writes_of_any_text(made: MadeReport) -> None:
    _access_csv_is_what_the_csv_module_writes_of_any_text(made)


@pytest.mark.parametrize("made", one_character_reports())
def test_a_value_plain_but_for_one_character_is_written_as_the_csv_module_writes_it(made: MadeReport) -> None:
    _access_csv_is_what_the_csv_module_writes_of_any_text(made)


def test_access_csv_is_written_in_parts_of_whole_lines_that_make_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.report import spreadsheet

    made = report_of(*(row("ws_1", "user", f"p{i}@acme.com", "owner") for i in range(3)),
                     row("ws_2", "domain", "out.io", "viewer"), row("ws_3", "user", "q@out.io", "editor"))
    monkeypatch.setattr(spreadsheet, "CSV_ROWS_AT_ONCE", 2)
    parts = list(spreadsheet.access_csv_parts(made))
    assert [part.count("\r\n") for part in parts] == [1, 2, 2, 1] and all(p.endswith("\r\n") for p in parts)
    _access_csv_is_what_the_csv_module_writes_of_any_text(made)


def test_access_csv_of_no_rows_is_its_header() -> None:
    assert access_csv(report_of(workspaces=("ws_1",))) == "\ufeff" + ",".join(ACCESS_HEADER) + "\r\n"
