"""The report document made from the company read: internal or external, how managed, order."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import example, given, settings

from reconciler.company.model import CompanyAccess, CompanyWorkspace, Leaver, Why
from reconciler.report import model
from reconciler.report.columns import run_lengths
from reconciler.report.model import AccessReport, ReportRow, make_report
from tests.report.conftest import ENTRY, GENERATED, hostile_report, made_reports, one_character_reports, report_of, row


def test_a_person_of_an_internal_domain_or_below_it_is_internal() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "bo@eu.acme.com", "editor"),
                     row("ws_1", "user", "eve@acme.com.evil", "editor"), row("ws_1", "domain", "acme.com", "viewer"),
                     row("ws_1", "user", "mo@notacme.com", "editor"), row("ws_1", "domain", "notacme.com", "viewer"))
    assert [(r.key, r.external) for r in made.rows] == [
        ("bo@eu.acme.com", False), ("eve@acme.com.evil", True), ("jane@acme.com", False), ("mo@notacme.com", True),
        ("acme.com", False), ("notacme.com", True)]


def test_without_internal_domains_everyone_is_external() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), internal=())
    assert [r.external for r in made.rows] == [True]


def test_internal_domains_are_normalised_and_sorted() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), internal=(" Acme.COM. ", "b.io", "acme.com"))
    assert made.internal_domains == ("acme.com", "b.io")


def test_managed_by_names_the_manifest_line_or_says_not_managed() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", ENTRY), row("ws_1", "user", "x@acme.com", "viewer"))
    assert [r.managed_by for r in made.rows] == ["group.customer-inc at manifests/acme.yaml:12", "not managed"]


def test_rows_are_ordered_by_workspace_then_users_before_domains() -> None:
    made = report_of(row("ws_2", "user", "b@acme.com", "owner"), row("ws_1", "domain", "a.com", "viewer"),
                     row("ws_1", "user", "z@acme.com", "owner"))
    assert [(r.workspace_id, r.key) for r in made.rows] == [("ws_1", "z@acme.com"), ("ws_1", "a.com"),
                                                            ("ws_2", "b@acme.com")]


def test_a_workspace_is_managed_when_a_manifest_names_it_and_a_rule_alone_does_not_make_it_so() -> None:
    rule = Why(source="rule", location="rules.yaml:5", rule="baseline", role="viewer")
    company = CompanyAccess(
        workspaces=(CompanyWorkspace(id="ws_list", address="workspace.portal", managed="manifest"),
                    CompanyWorkspace(id="ws_rule", managed="rules", rules=("baseline",)),
                    CompanyWorkspace(id="ws_none")),
        rows=(row("ws_rule", "user", "sec@acme.com", "viewer", rule), row("ws_none", "user", "x@acme.com", "owner")))
    made = make_report(company, generated_at=GENERATED, internal_domains=())
    assert [(w.id, w.managed, w.rules_only) for w in made.workspaces] == [
        ("ws_list", True, False), ("ws_none", False, False), ("ws_rule", False, True)]


def test_source_date_epoch_dates_the_report_and_a_bad_one_is_refused() -> None:
    from reconciler.errors import ConfigError
    from reconciler.commands.report import source_date

    assert source_date({"SOURCE_DATE_EPOCH": "1800000000"}) == datetime.datetime(2027, 1, 15, 8, 0,
                                                                                  tzinfo=datetime.UTC)
    assert source_date({}) is None
    with pytest.raises(ConfigError, match=r"SOURCE_DATE_EPOCH='soon' is not a number of seconds"):
        source_date({"SOURCE_DATE_EPOCH": "soon"})


def test_access_json_is_the_access_report_document_as_pydantic_dumps_it() -> None:
    tricky = ('Q"uo\\te', "tab\there", "line\nbreak", "\x7f\x01", "é 漢 \u2028", "</script>")
    made = report_of(*(row(f"ws_{i}", "user", f"p{i}@acme.com", "owner", ENTRY, workspace_name=name,
                           expires=datetime.date(2027, 2, i + 1)) for i, name in enumerate(tricky)),
                     row("ws_9", "domain", "acme.com", "viewer"))
    # The fields after the rows too: the rows are spliced in where the document's empty rows stand.
    made = made._replace(leavers=(Leaver(kind="user", key='a"rows":[]@acme.com', rule="r", location="m.yaml:1"),),
                         min_owners=2)
    document = AccessReport(generated_at=made.generated_at, internal_domains=made.internal_domains,
                            workspaces=made.workspaces, leavers=made.leavers, min_owners=2,
                            rows=tuple(ReportRow(**{**line._asdict(), "why": line.why._asdict()})
                                      for line in made.rows)).model_dump_json()
    assert made.model_dump_json() == document


def test_access_json_written_in_parts_is_the_same_document(monkeypatch: pytest.MonkeyPatch) -> None:
    made = report_of(*(row(f"ws_{i}", "user", f"p{i}@acme.com", "owner", ENTRY) for i in range(5)))
    whole = made.model_dump_json()
    monkeypatch.setattr(model, "JSON_ROWS_AT_ONCE", 2)
    parts = list(made.json_parts())
    assert len(parts) == 5  # the head, three parts of rows (2, 2, 1), the end
    assert b"".join(parts).decode() == whole


def test_access_json_written_in_parts_that_cut_a_workspaces_rows_is_the_same_document(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = report_of(*(row("ws_1", "user", f"p{i}@acme.com", "owner", ENTRY) for i in range(3)),
                     row("ws_2", "user", "q@acme.com", "viewer"))
    whole = made.model_dump_json()
    monkeypatch.setattr(model, "JSON_ROWS_AT_ONCE", 2)
    assert b"".join(made.json_parts()).decode() == whole


def _rows_written_by_hand_are_the_bytes_pydantic_dumps_of_any_text(made: model.MadeReport) -> None:
    document = AccessReport(generated_at=made.generated_at, internal_domains=made.internal_domains,
                            rows=tuple(ReportRow(**{**line._asdict(), "why": line.why._asdict()})
                                       for line in made.rows)).model_dump_json()
    assert made.model_dump_json() == document


@settings(max_examples=300, deadline=None)
@given(made_reports())
@example(hostile_report())
def test_rows_written_by_hand_are_the_bytes_pydantic_dumps_of_any_text(made: model.MadeReport) -> None:
    _rows_written_by_hand_are_the_bytes_pydantic_dumps_of_any_text(made)


def test_a_lone_surrogate_from_the_service_is_written_as_a_question_mark() -> None:
    made = report_of(row("ws_1", "user", "a\ud800@acme.com", "owner"))
    assert '"key":"a?@acme.com"' in made.model_dump_json()


@pytest.mark.parametrize("made", one_character_reports())
def test_a_value_plain_but_for_one_character_is_written_as_pydantic_writes_it(made: model.MadeReport) -> None:
    _rows_written_by_hand_are_the_bytes_pydantic_dumps_of_any_text(made)


def _lines() -> list[model.ReportLine]:
    return list(hostile_report().rows)[:4]


def test_report_rows_give_back_the_rows_they_hold_a_column_at_a_time() -> None:
    lines = _lines()
    rows = model.ReportRows.of(lines)
    assert len(rows) == 4 and list(rows) == lines and rows[2] == lines[2] and rows[-1] == lines[-1]
    assert list(rows[1:3]) == lines[1:3] and isinstance(rows[1:3], model.ReportRows)
    assert list(rows.column(6)) == [line.key for line in lines]
    assert all(type(r) is model.ReportLine for r in rows)


def test_report_rows_are_equal_when_their_rows_are() -> None:
    lines = _lines()
    assert model.ReportRows.of(lines) == model.ReportRows.of(tuple(lines))
    assert model.ReportRows.of(lines) != model.ReportRows.of(lines[:3])
    assert model.ReportRows.of(lines) != model.ReportRows.of([*lines[:3], lines[0]])
    assert model.ReportRows.of(lines) != lines


def test_report_rows_of_no_row_are_a_column_of_nothing_for_each_field() -> None:
    rows = model.ReportRows.of(())
    assert len(rows) == 0 and list(rows) == [] and len(rows.columns) == len(model.ReportLine._fields)


def _three_workspaces() -> model.ReportRows:
    return report_of(*(row("ws_1", "user", f"p{i}@acme.com", "owner") for i in range(3)),
                     *(row("ws_2", "user", f"q{i}@acme.com", "owner") for i in range(2)),
                     row("ws_3", "domain", "acme.com", "viewer")).rows


def test_report_rows_know_the_run_of_rows_of_each_workspace_and_its_values() -> None:
    rows = _three_workspaces()
    assert rows.runs == (3, 2, 1)
    assert rows.workspace_runs(0) == ([["ws_1", "ws_2", "ws_3"]], (3, 2, 1))
    assert rows.workspace_runs(0, 6) == ([["ws_1", "ws_2", "ws_3"], ["p0@acme.com", "q0@acme.com", "acme.com"]],
                                         (3, 2, 1))


def test_a_slice_of_report_rows_cuts_the_runs_at_its_ends() -> None:
    rows = _three_workspaces()
    ids = list(rows.column(0))
    for start in range(len(ids) + 1):
        for stop in range(len(ids) + 1):
            expected = tuple(run_lengths(ids[start:stop]))
            assert rows[start:stop].runs == expected, (start, stop)
    assert rows[::2].runs == (2, 1) and rows[-2:].runs == (1, 1)


def test_report_rows_refuse_runs_that_do_not_cover_their_rows_or_an_empty_run() -> None:
    columns = _three_workspaces().columns
    with pytest.raises(ValueError, match="runs of rows cover its rows"):
        model.ReportRows(columns, [3, 2])
    with pytest.raises(ValueError, match="runs of rows cover its rows"):
        model.ReportRows(columns, [3, 0, 2, 1])
    assert model.ReportRows(columns, [1, 2, 2, 1]).runs == (1, 2, 2, 1)


def test_report_rows_refuse_columns_of_different_lengths_or_a_missing_column() -> None:
    columns = [[value] for value in _lines()[0]]
    with pytest.raises(ValueError, match="12 columns of one length"):
        model.ReportRows([*columns[:-1], []])
    with pytest.raises(ValueError, match="12 columns of one length"):
        model.ReportRows(columns[:-1])


def test_a_workspace_given_with_no_entries_adds_no_rows() -> None:
    from reconciler.company.build import Entries

    empty = Entries(("ws_1", "One", None, None, None, False), [], [], [], [], [])
    made = model.report_of_parts((), generated_at=GENERATED, internal_domains=(), more=[empty])
    assert (len(made.rows), made.rows.runs) == (0, ())


def test_report_rows_find_a_columns_text_facts_once_and_a_slice_its_own() -> None:
    from reconciler.report.columns import TextFacts

    rows = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_2", "user", 'q"uote@acme.com', "owner")).rows
    assert rows.text_facts(model.KEY_FIELD) == TextFacts(True, '"')
    assert rows.text_facts(model.KEY_FIELD) is rows.text_facts(model.KEY_FIELD)
    assert rows[:1].text_facts(model.KEY_FIELD) == TextFacts(True, "")  # "a@acme.com" alone
    assert rows.text_facts(model.MANAGED_BY_FIELD) == TextFacts(True, "")


def test_access_json_of_parts_whose_other_part_holds_a_quote_is_the_same_document(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_2", "user", 'q"uote@acme.com', "owner"))
    whole = made.model_dump_json()
    monkeypatch.setattr(model, "JSON_ROWS_AT_ONCE", 1)
    assert b"".join(made.json_parts()).decode() == whole


def test_report_rows_in_parts_are_every_row_in_order_a_part_of_size_rows_at_a_time() -> None:
    rows = _three_workspaces()
    assert [[line.key for line in part] for part in rows.parts(4)] == [
        ["p0@acme.com", "p1@acme.com", "p2@acme.com", "q0@acme.com"], ["q1@acme.com", "acme.com"]]
    assert [part.runs for part in rows.parts(4)] == [(3, 1), (1, 1)]
    assert [len(part) for part in rows.parts(6)] == [6] and list(model.ReportRows.of(()).parts(3)) == []


def test_a_part_of_report_rows_takes_the_text_facts_of_the_rows_it_is_a_part_of() -> None:
    from reconciler.report.columns import TextFacts

    rows = report_of(row("ws_1", "user", "a@acme.com", "owner"), row("ws_2", "user", 'q"uote@acme.com', "owner")).rows
    first, _ = rows.parts(1)
    assert first.text_facts(model.KEY_FIELD) == TextFacts(True, '"')  # the whole's: its own would say ""
    assert rows.text_facts(model.KEY_FIELD) is first.text_facts(model.KEY_FIELD)
