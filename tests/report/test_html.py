"""index.html: self-contained, every value escaped, the data block unable to end its <script>."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings

from reconciler.report.diff import changes_since, report_baseline
from reconciler.report.html import numbered, render_page, script_json, view_json
from reconciler.report.model import MadeReport
from reconciler.text import printable
from tests.report.conftest import ENTRY, TODAY, hostile_report, made_reports, one_character_reports, report_of, row

HOSTILE = '<script>alert(1)</script> "Evil" =HYPERLINK("http://x.example","x") </script><!-- & \u2028'
DATA_BLOCK = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def _hostile_page() -> str:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", workspace_name=HOSTILE),
                     row("ws_1", "user", "x@out.io", "viewer", workspace_name=HOSTILE,
                         why=ENTRY.model_copy(update={"location": f"{HOSTILE}.yaml:3"})))
    return render_page(made, today=TODAY)


def test_script_json_has_no_character_that_could_end_or_open_markup() -> None:
    dumped = script_json({"name": HOSTILE})
    assert not set(dumped) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(dumped) == {"name": HOSTILE}


def test_a_hostile_name_never_opens_a_script_element() -> None:
    page = _hostile_page()
    # Ours only: the data block and the view script.
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_a_hostile_name_is_escaped_in_the_markup() -> None:
    page = _hostile_page()
    assert ("&lt;script&gt;alert(1)&lt;/script&gt; &quot;Evil&quot; =HYPERLINK(&quot;http://x.example&quot;,"
            "&quot;x&quot;) &lt;/script&gt;&lt;!-- &amp; \\u2028") in page


def test_the_data_block_reads_back_the_names_as_shown() -> None:
    block = DATA_BLOCK.search(_hostile_page())
    assert block is not None
    data = json.loads(block.group(1))
    assert data["w"][0][1] == printable(HOSTILE)
    assert data["why"] == ["not managed", f"group.customer-inc at {printable(HOSTILE)}.yaml:3"]


def test_a_bidi_control_in_a_name_is_shown_as_an_escape() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", workspace_name="moc.\u202egnp.exe"))
    assert "moc.\\u202egnp.exe" in render_page(made, today=TODAY)


def test_the_page_fetches_nothing() -> None:
    page = _hostile_page().replace(HOSTILE, "")
    assert not re.search(r"<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import", page)
    assert "default-src 'none'" in page


def test_view_data_indexes_rows_by_workspace_and_shares_why_lines() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner", ENTRY), row("ws_2", "user", "jane@acme.com", "owner", ENTRY),
                     row("ws_2", "domain", "out.io", "viewer"))
    data = json.loads(view_json(made))
    assert data["w"] == [["ws_1", "Name ws_1", "", "", 1, 1], ["ws_2", "Name ws_2", "", "", 1, 1]]
    # A column at a time: workspace index, kind, email or domain, role, external, why index, expires.
    assert data["r"] == [[0, 1, 1], [0, 0, 1], ["jane@acme.com", "jane@acme.com", "out.io"], ["owner", "owner", "viewer"],
                         [0, 0, 1], [1, 1, 0], ["", "", ""]]
    assert data["why"] == ["not managed", "group.customer-inc at manifests/acme.yaml:12"]


def test_view_data_of_a_workspace_nobody_can_see_has_seven_empty_columns() -> None:
    data = json.loads(view_json(report_of(workspaces=("ws_1",))))
    assert data["r"] == [[], [], [], [], [], [], []]
    assert data["w"] == [["ws_1", "Name ws_1", "", "", 0, 0]]  # in no manifest, no owner


def test_the_headline_figures_are_in_the_markup() -> None:
    made = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "x@out.io", "viewer"))
    page = render_page(made, today=TODAY)
    figures = dict(re.findall(r'data-figure="([a-z-]+)"><span class="value">([^<]*)<', page))
    assert figures == {"workspaces": "1", "people": "2", "external-people": "1", "domain-grants": "0",
                       "owners": "1 / 1 / 1", "no-owner": "0", "one-owner": "1", "expiring": "0", "unmanaged": "1",
                       "leavers": "0"}


def test_the_changes_section_counts_each_kind() -> None:
    before = report_of(row("ws_1", "user", "jane@acme.com", "owner"))
    now = report_of(row("ws_1", "user", "jane@acme.com", "owner"), row("ws_1", "user", "x@out.io", "viewer"))
    page = render_page(now, today=TODAY, changes=changes_since(report_baseline(before, label="the report a"), now))
    assert '<p data-changes="1">1 grant, 0 escalations, 0 revocations, 0 downgrades (all of them in changes.csv).</p>' in page


def _rows_as_the_page_reads_them(made: MadeReport) -> dict[str, Any]:
    """The data block's meaning, written plainly: what view_json must say of any report."""
    index = {w.id: i for i, w in enumerate(made.workspaces)}
    workspaces: list[list[Any]] = []
    whys = {"not managed": 0}
    rows = []
    for r in made.rows:
        if r.workspace_id not in index:
            index[r.workspace_id] = len(workspaces)
            workspaces.append([printable(r.workspace_id), printable(r.workspace_name or ""), "", "", 0, 0])
        rows.append([index[r.workspace_id], int(r.kind == "domain"), printable(r.key), printable(r.role),
                     int(r.external), whys.setdefault(printable(r.managed_by), len(whys)),
                     r.expires.isoformat() if r.expires else ""])
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(7)]
    return {"w": workspaces, "r": columns, "why": list(whys), "unmanaged": 0}


def _the_data_block_is_script_json_of_the_rows_for_any_text(made: MadeReport) -> None:
    assert view_json(made) == script_json(_rows_as_the_page_reads_them(made))


@settings(max_examples=300, deadline=None)
@given(made_reports())
@example(hostile_report())
def test_the_data_block_is_script_json_of_the_rows_for_any_text(made: MadeReport) -> None:
    _the_data_block_is_script_json_of_the_rows_for_any_text(made)


@pytest.mark.parametrize("made", one_character_reports())
def test_a_value_plain_but_for_one_character_is_written_as_script_json_writes_it(made: MadeReport) -> None:
    _the_data_block_is_script_json_of_the_rows_for_any_text(made)


def test_numbered_gives_each_value_the_place_it_first_took_among_the_distinct_values() -> None:
    assert numbered(["b", "a", "b", "c", "a"]) == (["b", "a", "c"], [0, 1, 0, 2, 1])


def test_numbered_values_that_never_repeat_are_numbered_in_order() -> None:
    assert numbered(["z", "y", "x"]) == (["z", "y", "x"], [0, 1, 2])
